//! Scalar arithmetic: the reference semantics of scalar expressions (`scalar` nodes and lambda
//! bodies), which the interpreter applies.
//!
//! Integers wrap on overflow (as the emitted Rust and CUDA kernels do in release builds);
//! integer division or remainder by zero is an error. Float `min`/`max` ignore a NaN operand.
//! Casts follow Rust's `as` (float to integer saturates).

use crate::data::ScalarValue as V;
use crate::ir::{BinaryOp, Elem, UnaryOp};

pub fn unary(op: UnaryOp, a: V) -> Result<V, String> {
    Ok(match (op, a) {
        (UnaryOp::Neg, V::F32(x)) => V::F32(-x),
        (UnaryOp::Neg, V::F64(x)) => V::F64(-x),
        (UnaryOp::Neg, V::I32(x)) => V::I32(x.wrapping_neg()),
        (UnaryOp::Neg, V::I64(x)) => V::I64(x.wrapping_neg()),
        (UnaryOp::Not, V::Bool(x)) => V::Bool(!x),
        (UnaryOp::Abs, V::F32(x)) => V::F32(x.abs()),
        (UnaryOp::Abs, V::F64(x)) => V::F64(x.abs()),
        (UnaryOp::Abs, V::I32(x)) => V::I32(x.wrapping_abs()),
        (UnaryOp::Abs, V::I64(x)) => V::I64(x.wrapping_abs()),
        (UnaryOp::Abs, V::U32(x)) => V::U32(x),
        (UnaryOp::Abs, V::U64(x)) => V::U64(x),
        (UnaryOp::Sqrt, V::F32(x)) => V::F32(x.sqrt()),
        (UnaryOp::Sqrt, V::F64(x)) => V::F64(x.sqrt()),
        (UnaryOp::Exp, V::F32(x)) => V::F32(x.exp()),
        (UnaryOp::Exp, V::F64(x)) => V::F64(x.exp()),
        (UnaryOp::Log, V::F32(x)) => V::F32(x.ln()),
        (UnaryOp::Log, V::F64(x)) => V::F64(x.ln()),
        (op, a) => return Err(format!("`{}` is not defined on {}", op.name(), a.elem())),
    })
}

macro_rules! int_ops {
    ($op:expr, $a:expr, $b:expr, $V:ident) => {{
        let (a, b) = ($a, $b);
        match $op {
            BinaryOp::Add => V::$V(a.wrapping_add(b)),
            BinaryOp::Sub => V::$V(a.wrapping_sub(b)),
            BinaryOp::Mul => V::$V(a.wrapping_mul(b)),
            BinaryOp::Div => V::$V(a.checked_div(b).ok_or_else(|| div_error(b == 0))?),
            BinaryOp::Rem => V::$V(a.checked_rem(b).ok_or_else(|| div_error(b == 0))?),
            BinaryOp::Min => V::$V(a.min(b)),
            BinaryOp::Max => V::$V(a.max(b)),
            op => cmp(op, a.partial_cmp(&b))?,
        }
    }};
}

macro_rules! float_ops {
    ($op:expr, $a:expr, $b:expr, $V:ident) => {{
        let (a, b) = ($a, $b);
        match $op {
            BinaryOp::Add => V::$V(a + b),
            BinaryOp::Sub => V::$V(a - b),
            BinaryOp::Mul => V::$V(a * b),
            BinaryOp::Div => V::$V(a / b),
            BinaryOp::Rem => V::$V(a % b),
            BinaryOp::Min => V::$V(a.min(b)),
            BinaryOp::Max => V::$V(a.max(b)),
            op => cmp(op, a.partial_cmp(&b))?,
        }
    }};
}

fn div_error(by_zero: bool) -> String {
    if by_zero {
        "integer division by zero".into()
    } else {
        "integer division overflow (MIN / -1)".into()
    }
}

fn cmp(op: BinaryOp, o: Option<std::cmp::Ordering>) -> Result<V, String> {
    use std::cmp::Ordering::*;
    Ok(V::Bool(match op {
        BinaryOp::Lt => o == Some(Less),
        BinaryOp::Le => matches!(o, Some(Less | Equal)),
        BinaryOp::Gt => o == Some(Greater),
        BinaryOp::Ge => matches!(o, Some(Greater | Equal)),
        BinaryOp::Eq => o == Some(Equal),
        BinaryOp::Ne => o != Some(Equal),
        op => return Err(format!("`{}` is not a comparison", op.symbol())),
    }))
}

pub fn binary(op: BinaryOp, a: V, b: V) -> Result<V, String> {
    Ok(match (a, b) {
        (V::F32(x), V::F32(y)) => float_ops!(op, x, y, F32),
        (V::F64(x), V::F64(y)) => float_ops!(op, x, y, F64),
        (V::I32(x), V::I32(y)) => int_ops!(op, x, y, I32),
        (V::I64(x), V::I64(y)) => int_ops!(op, x, y, I64),
        (V::U32(x), V::U32(y)) => int_ops!(op, x, y, U32),
        (V::U64(x), V::U64(y)) => int_ops!(op, x, y, U64),
        (V::Bool(x), V::Bool(y)) => match op {
            BinaryOp::And => V::Bool(x && y),
            BinaryOp::Or => V::Bool(x || y),
            op => cmp(op, x.partial_cmp(&y))?,
        },
        (a, b) => {
            return Err(format!(
                "`{}` on {} and {}",
                op.symbol(),
                a.elem(),
                b.elem()
            ));
        }
    })
}

pub fn fma(a: V, b: V, c: V) -> Result<V, String> {
    Ok(match (a, b, c) {
        (V::F32(x), V::F32(y), V::F32(z)) => V::F32(x.mul_add(y, z)),
        (V::F64(x), V::F64(y), V::F64(z)) => V::F64(x.mul_add(y, z)),
        _ => return Err(format!("fma on {}, {}, {}", a.elem(), b.elem(), c.elem())),
    })
}

pub fn cast(to: Elem, a: V) -> Result<V, String> {
    macro_rules! conv {
        ($x:expr) => {
            match to {
                Elem::F32 => V::F32($x as f32),
                Elem::F64 => V::F64($x as f64),
                Elem::I32 => V::I32($x as i32),
                Elem::I64 => V::I64($x as i64),
                Elem::U32 => V::U32($x as u32),
                Elem::U64 => V::U64($x as u64),
                Elem::Bool => return Err("cast to bool".into()),
            }
        };
    }
    Ok(match a {
        V::F32(x) => conv!(x),
        V::F64(x) => conv!(x),
        V::I32(x) => conv!(x),
        V::I64(x) => conv!(x),
        V::U32(x) => conv!(x),
        V::U64(x) => conv!(x),
        V::Bool(x) => conv!(x as u8),
    })
}
