//! Runtime values and their Python 3 operator semantics.
//!
//! Ints are `i64` (Python's are unbounded: overflow is an error here, never a silent wrap),
//! floats are `f64`, `bool` is an int for arithmetic (`True + 1 == 2`), strings and lists are
//! reference counted so cloning a value is cheap.
//!
//! Here: the values and operator names; `ops` holds the operator semantics.

use std::fmt;
use std::sync::Arc;

mod ops;

pub use self::ops::{binop, compare, int_floordiv, int_mod, less_than, py_eq, unop};

/// A Python `range(start, stop, step)` (step is never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PyRange {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
}

impl PyRange {
    /// Number of elements, as Python's `len(range(...))`.
    #[inline]
    pub fn len(&self) -> u64 {
        let (lo, hi, step) = (self.start, self.stop, self.step);
        if step > 0 {
            if lo >= hi {
                return 0;
            }
            if let Some(d) = hi.checked_sub(lo) {
                return ((d - 1) / step + 1) as u64;
            }
        } else {
            if lo <= hi {
                return 0;
            }
            if let (Some(d), Some(st)) = (lo.checked_sub(hi), step.checked_neg()) {
                return ((d - 1) / st + 1) as u64;
            }
        }
        let (lo, hi, step) = (lo as i128, hi as i128, step as i128);
        let n = if step > 0 {
            (hi - lo - 1) / step + 1
        } else {
            (lo - hi - 1) / (-step) + 1
        };
        n as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the integer `v` is an element.
    #[inline]
    pub fn contains(&self, v: i64) -> bool {
        let in_bounds = if self.step > 0 {
            v >= self.start && v < self.stop
        } else {
            v <= self.start && v > self.stop
        };
        if !in_bounds {
            return false;
        }
        match (v.checked_sub(self.start), self.step) {
            (Some(d), st) if st != -1 => d % st == 0,
            _ => (v as i128 - self.start as i128) % self.step as i128 == 0,
        }
    }

    /// Element `i` (0-based, no bounds check beyond the caller's).
    #[inline]
    pub fn get(&self, i: u64) -> i64 {
        self.start.wrapping_add((i as i64).wrapping_mul(self.step))
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

/// A value of the expression language.
#[derive(Clone, Debug)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    List(Arc<[Value]>),
    Range(PyRange),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }

    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Arc::from(v))
    }

    /// Python's `type(x).__name__`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Range(_) => "range",
        }
    }

    /// The integer value of an `int` or `bool`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Bool(b) => Some(*b as i64 as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python truthiness.
    #[inline]
    pub fn truthy(&self) -> bool {
        match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Range(r) => !r.is_empty(),
        }
    }

    /// The elements of an iterable (`list`, `range`, `str` as characters).
    pub fn iter_values(&self) -> Result<Vec<Value>, String> {
        match self {
            Value::List(l) => Ok(l.to_vec()),
            Value::Range(r) => Ok(r.iter().map(Value::Int).collect()),
            Value::Str(s) => Ok(s.chars().map(|c| Value::str(&c.to_string())).collect()),
            other => Err(format!(
                "TypeError: '{}' object is not iterable",
                other.type_name()
            )),
        }
    }

    /// JSON form (ranges become arrays; non-finite floats become null).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::None => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => serde_json::Value::String(s.to_string()),
            Value::List(l) => serde_json::Value::Array(l.iter().map(Value::to_json).collect()),
            Value::Range(r) => {
                serde_json::Value::Array(r.iter().map(serde_json::Value::from).collect())
            }
        }
    }
}

impl fmt::Display for Value {
    /// Python `repr`-like rendering.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => write!(f, "None"),
            Value::Bool(true) => write!(f, "True"),
            Value::Bool(false) => write!(f, "False"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            Value::Str(s) => write!(f, "'{s}'"),
            Value::List(l) => {
                write!(f, "[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Range(r) => write!(f, "range({}, {}, {})", r.start, r.stop, r.step),
        }
    }
}

/// Python equality (`==`), which never fails.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        py_eq(self, other)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Value { Value::Int(v as i64) }
        }
    )*};
}
from_int!(i8, i16, i32, i64, u8, u16, u32);

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::str(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(Arc::from(v))
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::list(v.into_iter().map(Into::into).collect())
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
}

/// Comparison operators (chainable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    In,
    NotIn,
}

impl CmpOp {
    /// `x op y` for integers: None for the membership operators (`in`, `not in`), which take a
    /// sequence on their right.
    #[inline]
    pub fn ints(self, x: i64, y: i64) -> Option<bool> {
        Some(match self {
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::In | CmpOp::NotIn => return None,
        })
    }

    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Pos,
    Invert,
    Not,
}
