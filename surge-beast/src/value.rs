//! Runtime values and their Python 3 operator semantics.
//!
//! Ints are `i64` (Python's are unbounded: overflow is an error here, never a silent wrap),
//! floats are `f64`, `bool` is an int for arithmetic (`True + 1 == 2`), strings and lists are
//! reference counted so cloning a value is cheap.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

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

enum Num {
    I(i64),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Bool(b) => Some(Num::I(*b as i64)),
        Value::Float(f) => Some(Num::F(*f)),
        _ => None,
    }
}

const OVERFLOW: &str = "OverflowError: integer result does not fit in 64 bits";

fn unsupported(op: &str, a: &Value, b: &Value) -> String {
    format!(
        "TypeError: unsupported operand type(s) for {op}: '{}' and '{}'",
        a.type_name(),
        b.type_name()
    )
}

/// Python `a // b` on ints.
#[inline]
pub fn int_floordiv(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("ZeroDivisionError: integer division or modulo by zero".into());
    }
    let q = a.checked_div(b).ok_or_else(|| OVERFLOW.to_string())?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        Ok(q - 1)
    } else {
        Ok(q)
    }
}

/// Python `a % b` on ints (result has the sign of `b`).
#[inline]
pub fn int_mod(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("ZeroDivisionError: integer division or modulo by zero".into());
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        Ok(r + b)
    } else {
        Ok(r)
    }
}

/// Python's `float.__divmod__` (CPython `float_divmod`).
fn float_divmod(vx: f64, wx: f64) -> Result<(f64, f64), String> {
    if wx == 0.0 {
        return Err("ZeroDivisionError: float divmod()".into());
    }
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let mut fd = div.floor();
        if div - fd > 0.5 {
            fd += 1.0;
        }
        fd
    } else {
        0.0f64.copysign(vx / wx)
    };
    Ok((floordiv, m))
}

fn float_pow(a: f64, b: f64) -> Result<Value, String> {
    if a == 0.0 && b < 0.0 {
        return Err("ZeroDivisionError: 0.0 cannot be raised to a negative power".into());
    }
    if a < 0.0 && b.is_finite() && b.fract() != 0.0 {
        return Err(
            "ValueError: negative number raised to a fractional power (complex result)".into(),
        );
    }
    Ok(Value::Float(a.powf(b)))
}

/// Evaluate `a op b` with Python 3 semantics.
pub fn binop(op: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    use BinOp::*;
    // Sequences first.
    match (op, a, b) {
        (Add, Value::Str(x), Value::Str(y)) => return Ok(Value::str(&format!("{x}{y}"))),
        (Add, Value::List(x), Value::List(y)) => {
            return Ok(Value::list(x.iter().chain(y.iter()).cloned().collect()));
        }
        (Mul, Value::Str(s), n) | (Mul, n, Value::Str(s)) if n.as_i64().is_some() => {
            let k = n.as_i64().unwrap_or(0).max(0) as usize;
            if s.len().saturating_mul(k) > 1 << 24 {
                return Err("MemoryError: string repetition too large".into());
            }
            return Ok(Value::str(&s.repeat(k)));
        }
        (Mul, Value::List(l), n) | (Mul, n, Value::List(l)) if n.as_i64().is_some() => {
            let k = n.as_i64().unwrap_or(0).max(0) as usize;
            if l.len().saturating_mul(k) > 1 << 24 {
                return Err("MemoryError: list repetition too large".into());
            }
            let mut out = Vec::with_capacity(l.len() * k);
            for _ in 0..k {
                out.extend(l.iter().cloned());
            }
            return Ok(Value::list(out));
        }
        _ => {}
    }
    let (x, y) = match (num(a), num(b)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(unsupported(op.symbol(), a, b)),
    };
    let both_bool = matches!((a, b), (Value::Bool(_), Value::Bool(_)));
    match (x, y) {
        (Num::I(i), Num::I(j)) => match op {
            Add => i
                .checked_add(j)
                .map(Value::Int)
                .ok_or_else(|| OVERFLOW.into()),
            Sub => i
                .checked_sub(j)
                .map(Value::Int)
                .ok_or_else(|| OVERFLOW.into()),
            Mul => i
                .checked_mul(j)
                .map(Value::Int)
                .ok_or_else(|| OVERFLOW.into()),
            Div => {
                if j == 0 {
                    Err("ZeroDivisionError: division by zero".into())
                } else {
                    Ok(Value::Float(i as f64 / j as f64))
                }
            }
            FloorDiv => int_floordiv(i, j).map(Value::Int),
            Mod => int_mod(i, j).map(Value::Int),
            Pow => {
                if j >= 0 {
                    let e = u32::try_from(j).map_err(|_| OVERFLOW.to_string())?;
                    i.checked_pow(e)
                        .map(Value::Int)
                        .ok_or_else(|| OVERFLOW.into())
                } else {
                    float_pow(i as f64, j as f64)
                }
            }
            BitAnd if both_bool => Ok(Value::Bool((i & j) != 0)),
            BitOr if both_bool => Ok(Value::Bool((i | j) != 0)),
            BitXor if both_bool => Ok(Value::Bool((i ^ j) != 0)),
            BitAnd => Ok(Value::Int(i & j)),
            BitOr => Ok(Value::Int(i | j)),
            BitXor => Ok(Value::Int(i ^ j)),
            Shl => {
                if j < 0 {
                    return Err("ValueError: negative shift count".into());
                }
                if i == 0 {
                    return Ok(Value::Int(0));
                }
                if j >= 64 {
                    return Err(OVERFLOW.into());
                }
                let r = i << j;
                if (r >> j) != i {
                    Err(OVERFLOW.into())
                } else {
                    Ok(Value::Int(r))
                }
            }
            Shr => {
                if j < 0 {
                    return Err("ValueError: negative shift count".into());
                }
                Ok(Value::Int(i >> j.min(63)))
            }
        },
        (x, y) => {
            let f = |n: Num| match n {
                Num::I(i) => i as f64,
                Num::F(f) => f,
            };
            let (p, q) = (f(x), f(y));
            match op {
                Add => Ok(Value::Float(p + q)),
                Sub => Ok(Value::Float(p - q)),
                Mul => Ok(Value::Float(p * q)),
                Div => {
                    if q == 0.0 {
                        Err("ZeroDivisionError: float division by zero".into())
                    } else {
                        Ok(Value::Float(p / q))
                    }
                }
                FloorDiv => float_divmod(p, q).map(|(d, _)| Value::Float(d)),
                Mod => float_divmod(p, q).map(|(_, m)| Value::Float(m)),
                Pow => float_pow(p, q),
                _ => Err(unsupported(op.symbol(), a, b)),
            }
        }
    }
}

/// Python unary operators.
pub fn unop(op: UnOp, a: &Value) -> Result<Value, String> {
    match (op, a) {
        (UnOp::Not, v) => Ok(Value::Bool(!v.truthy())),
        (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnOp::Pos, Value::Float(f)) => Ok(Value::Float(*f)),
        (UnOp::Neg, v) if v.as_i64().is_some() => v
            .as_i64()
            .unwrap_or(0)
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| OVERFLOW.into()),
        (UnOp::Pos, v) if v.as_i64().is_some() => Ok(Value::Int(v.as_i64().unwrap_or(0))),
        (UnOp::Invert, v) if v.as_i64().is_some() => Ok(Value::Int(!v.as_i64().unwrap_or(0))),
        (op, v) => {
            let s = match op {
                UnOp::Neg => "-",
                UnOp::Pos => "+",
                UnOp::Invert => "~",
                UnOp::Not => "not",
            };
            Err(format!(
                "TypeError: bad operand type for unary {s}: '{}'",
                v.type_name()
            ))
        }
    }
}

/// Python `==`.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q))
        }
        (Value::Range(x), Value::Range(y)) => {
            let (n, m) = (x.len(), y.len());
            n == m && (n == 0 || (x.start == y.start && (n == 1 || x.step == y.step)))
        }
        _ => match (num(a), num(b)) {
            (Some(Num::I(x)), Some(Num::I(y))) => x == y,
            (Some(Num::F(x)), Some(Num::F(y))) => x == y,
            (Some(Num::I(x)), Some(Num::F(y))) | (Some(Num::F(y)), Some(Num::I(x))) => {
                int_float_cmp(x, y) == Some(Ordering::Equal)
            }
            _ => false,
        },
    }
}

/// Exact comparison of an int with a float (None if the float is NaN).
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= 9.3e18 {
        return Some(Ordering::Less);
    }
    if f <= -9.3e18 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    let ti = t as i64;
    match i.cmp(&ti) {
        Ordering::Equal => {
            let frac = f - t;
            if frac > 0.0 {
                Some(Ordering::Less)
            } else if frac < 0.0 {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

/// Python ordering of two values (`None` when unordered, e.g. NaN); errors on unorderable types.
fn py_order(op: CmpOp, a: &Value, b: &Value) -> Result<Option<Ordering>, String> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(Some(x.as_ref().cmp(y.as_ref()))),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                if !py_eq(p, q) {
                    return py_order(op, p, q);
                }
            }
            Ok(Some(x.len().cmp(&y.len())))
        }
        _ => match (num(a), num(b)) {
            (Some(Num::I(x)), Some(Num::I(y))) => Ok(Some(x.cmp(&y))),
            (Some(Num::F(x)), Some(Num::F(y))) => Ok(x.partial_cmp(&y)),
            (Some(Num::I(x)), Some(Num::F(y))) => Ok(int_float_cmp(x, y)),
            (Some(Num::F(x)), Some(Num::I(y))) => Ok(int_float_cmp(y, x).map(Ordering::reverse)),
            _ => Err(format!(
                "TypeError: '{}' not supported between instances of '{}' and '{}'",
                op.symbol(),
                a.type_name(),
                b.type_name()
            )),
        },
    }
}

/// Python `a op b` for comparison operators.
#[inline]
pub fn compare(op: CmpOp, a: &Value, b: &Value) -> Result<bool, String> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Ok(match op {
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::In | CmpOp::NotIn => return contains(b, a).map(|c| c == (op == CmpOp::In)),
        });
    }
    match op {
        CmpOp::Eq => Ok(py_eq(a, b)),
        CmpOp::Ne => Ok(!py_eq(a, b)),
        CmpOp::In => contains(b, a),
        CmpOp::NotIn => contains(b, a).map(|c| !c),
        _ => {
            let o = py_order(op, a, b)?;
            Ok(match (op, o) {
                (_, None) => false,
                (CmpOp::Lt, Some(o)) => o == Ordering::Less,
                (CmpOp::Le, Some(o)) => o != Ordering::Greater,
                (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
                (_, Some(o)) => o != Ordering::Less,
            })
        }
    }
}

/// Python `item in container`.
pub fn contains(container: &Value, item: &Value) -> Result<bool, String> {
    match container {
        Value::List(l) => Ok(l.iter().any(|v| py_eq(v, item))),
        Value::Range(r) => match item {
            Value::Int(i) => Ok(r.contains(*i)),
            Value::Bool(b) => Ok(r.contains(*b as i64)),
            Value::Float(f) => Ok(f.fract() == 0.0 && f.abs() < 9e18 && r.contains(*f as i64)),
            _ => Ok(false),
        },
        Value::Str(s) => match item {
            Value::Str(sub) => Ok(s.contains(sub.as_ref())),
            other => Err(format!(
                "TypeError: 'in <string>' requires string as left operand, not {}",
                other.type_name()
            )),
        },
        other => Err(format!(
            "TypeError: argument of type '{}' is not iterable",
            other.type_name()
        )),
    }
}

/// Python `min`/`max` ordering helper: `a < b` (errors on unorderable types).
pub fn less_than(a: &Value, b: &Value) -> Result<bool, String> {
    compare(CmpOp::Lt, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_semantics() {
        assert_eq!(int_floordiv(-7, 2).unwrap(), -4);
        assert_eq!(int_mod(-7, 2).unwrap(), 1);
        assert_eq!(int_mod(7, -2).unwrap(), -1);
        assert_eq!(float_divmod(7.5, 2.0).unwrap(), (3.0, 1.5));
        assert_eq!(float_divmod(-7.5, 2.0).unwrap(), (-4.0, 0.5));
    }

    #[test]
    fn range_len() {
        assert_eq!(
            PyRange {
                start: 10,
                stop: 0,
                step: -3
            }
            .len(),
            4
        );
        assert!(
            PyRange {
                start: 10,
                stop: 0,
                step: -3
            }
            .contains(1)
        );
        assert!(
            !PyRange {
                start: 10,
                stop: 0,
                step: -3
            }
            .contains(0)
        );
    }
}
