//! Scalar lambda bodies: an expression tree over constants and scalar-typed IR values.

use super::{Elem, NodeId, Type};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar constant. Floats are kept as their bit patterns so the IR hashes and compares exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "lowercase")]
pub enum Literal {
    F32(u32),
    F64(u64),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    Bool(bool),
}

impl Literal {
    pub fn f32(v: f32) -> Self {
        Literal::F32(v.to_bits())
    }
    pub fn f64(v: f64) -> Self {
        Literal::F64(v.to_bits())
    }
    pub fn elem(self) -> Elem {
        match self {
            Literal::F32(_) => Elem::F32,
            Literal::F64(_) => Elem::F64,
            Literal::I32(_) => Elem::I32,
            Literal::I64(_) => Elem::I64,
            Literal::U32(_) => Elem::U32,
            Literal::U64(_) => Elem::U64,
            Literal::Bool(_) => Elem::Bool,
        }
    }
    /// The value as an `i128` when it is an integer (used for static lengths and strides).
    pub fn as_integer(self) -> Option<i128> {
        match self {
            Literal::I32(v) => Some(v.into()),
            Literal::I64(v) => Some(v.into()),
            Literal::U32(v) => Some(v.into()),
            Literal::U64(v) => Some(v.into()),
            _ => None,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Literal::F32(b) => write!(f, "{:?}f32", f32::from_bits(b)),
            Literal::F64(b) => write!(f, "{:?}", f64::from_bits(b)),
            Literal::I32(v) => write!(f, "{v}i32"),
            Literal::I64(v) => write!(f, "{v}i64"),
            Literal::U32(v) => write!(f, "{v}u32"),
            Literal::U64(v) => write!(f, "{v}u64"),
            Literal::Bool(v) => write!(f, "{v}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnaryOp {
    Neg,
    Not,
    Abs,
    Sqrt,
    Exp,
    Log,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        )
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

impl UnaryOp {
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
        }
    }
}

/// A scalar expression tree. Leaves are constants or scalar-typed IR nodes
/// (a lambda parameter, a reduction result, an element read by `Index`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarExpr {
    Const(Literal),
    Value(NodeId),
    Unary(UnaryOp, Box<ScalarExpr>),
    Binary(BinaryOp, Box<ScalarExpr>, Box<ScalarExpr>),
    /// `a * b + c`, fused where the target has it.
    Fma(Box<ScalarExpr>, Box<ScalarExpr>, Box<ScalarExpr>),
    /// `if cond { a } else { b }`.
    Select(Box<ScalarExpr>, Box<ScalarExpr>, Box<ScalarExpr>),
    Cast(Elem, Box<ScalarExpr>),
}

impl ScalarExpr {
    /// Visits every node leaf of the tree.
    pub fn for_each_value(&self, f: &mut impl FnMut(NodeId)) {
        self.clone().values_mut(&mut |n| f(*n));
    }

    /// Visits every node leaf of the tree in place.
    pub fn values_mut(&mut self, f: &mut impl FnMut(&mut NodeId)) {
        match self {
            ScalarExpr::Const(_) => {}
            ScalarExpr::Value(n) => f(n),
            ScalarExpr::Unary(_, a) | ScalarExpr::Cast(_, a) => a.values_mut(f),
            ScalarExpr::Binary(_, a, b) => {
                a.values_mut(f);
                b.values_mut(f);
            }
            ScalarExpr::Fma(a, b, c) | ScalarExpr::Select(a, b, c) => {
                a.values_mut(f);
                b.values_mut(f);
                c.values_mut(f);
            }
        }
    }
}

impl fmt::Display for ScalarExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarExpr::Const(l) => write!(f, "{l}"),
            ScalarExpr::Value(n) => write!(f, "{n}"),
            ScalarExpr::Unary(op @ (UnaryOp::Neg | UnaryOp::Not), a) => {
                write!(f, "{}{a}", op.name())
            }
            ScalarExpr::Unary(op, a) => write!(f, "{}({a})", op.name()),
            ScalarExpr::Binary(op @ (BinaryOp::Min | BinaryOp::Max), a, b) => {
                write!(f, "{}({a}, {b})", op.symbol())
            }
            ScalarExpr::Binary(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            ScalarExpr::Fma(a, b, c) => write!(f, "fma({a}, {b}, {c})"),
            ScalarExpr::Select(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            ScalarExpr::Cast(e, a) => write!(f, "({a} as {e})"),
        }
    }
}

/// The element type of a scalar expression, or a message saying which part is ill-typed.
pub fn infer_scalar(e: &ScalarExpr, ty: &dyn Fn(NodeId) -> Type) -> Result<Elem, String> {
    Ok(match e {
        ScalarExpr::Const(l) => l.elem(),
        ScalarExpr::Value(n) => match ty(*n) {
            Type::Scalar(e) => e,
            other => return Err(format!("{n} is used as a scalar but has type {other}")),
        },
        ScalarExpr::Unary(op, a) => {
            let t = infer_scalar(a, ty)?;
            let ok = match op {
                UnaryOp::Neg => t.is_signed(),
                UnaryOp::Not => t == Elem::Bool,
                UnaryOp::Abs => t != Elem::Bool,
                UnaryOp::Sqrt | UnaryOp::Exp | UnaryOp::Log => t.is_float(),
            };
            if !ok {
                return Err(format!("`{}` is not defined on {t}", op.name()));
            }
            t
        }
        ScalarExpr::Binary(op, a, b) => {
            let (ta, tb) = (infer_scalar(a, ty)?, infer_scalar(b, ty)?);
            if ta != tb {
                return Err(format!(
                    "`{}` on {ta} and {tb}; convert one side with a cast",
                    op.symbol()
                ));
            }
            if op.is_comparison() {
                Elem::Bool
            } else if op.is_logical() {
                if ta != Elem::Bool {
                    return Err(format!("`{}` needs bool operands, got {ta}", op.symbol()));
                }
                Elem::Bool
            } else {
                if ta == Elem::Bool {
                    return Err(format!("`{}` is not defined on bool", op.symbol()));
                }
                ta
            }
        }
        ScalarExpr::Fma(a, b, c) => {
            let ts = [
                infer_scalar(a, ty)?,
                infer_scalar(b, ty)?,
                infer_scalar(c, ty)?,
            ];
            if !(ts[0] == ts[1] && ts[1] == ts[2] && ts[0].is_float()) {
                return Err(format!(
                    "fma needs three operands of one float type, got {}, {}, {}",
                    ts[0], ts[1], ts[2]
                ));
            }
            ts[0]
        }
        ScalarExpr::Select(c, a, b) => {
            let tc = infer_scalar(c, ty)?;
            if tc != Elem::Bool {
                return Err(format!("select condition must be bool, got {tc}"));
            }
            let (ta, tb) = (infer_scalar(a, ty)?, infer_scalar(b, ty)?);
            if ta != tb {
                return Err(format!("select branches differ: {ta} and {tb}"));
            }
            ta
        }
        ScalarExpr::Cast(to, a) => {
            infer_scalar(a, ty)?;
            if *to == Elem::Bool {
                return Err("cast to bool; compare with zero instead".into());
            }
            *to
        }
    })
}
