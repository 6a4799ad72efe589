//! Scalar expressions (`Op::Scalar` trees and literals) as Rust expressions: integer arithmetic
//! wraps, integer division and remainder check for zero (the interpreter's error), comparisons
//! yield `bool`.

use super::code::{Env, Gen, R, quote, rust_ty};
use crate::ir::{BinaryOp, Elem, Literal, NodeId, ScalarExpr, UnaryOp};

/// A literal as a Rust expression of its type (non-finite floats by their bits).
fn literal(l: Literal) -> String {
    match l {
        Literal::F32(b) => {
            let v = f32::from_bits(b);
            if v.is_finite() {
                format!("{v:?}f32")
            } else {
                format!("f32::from_bits({b:#x})")
            }
        }
        Literal::F64(b) => {
            let v = f64::from_bits(b);
            if v.is_finite() {
                format!("{v:?}f64")
            } else {
                format!("f64::from_bits({b:#x})")
            }
        }
        Literal::I32(v) => format!("({v}i32)"),
        Literal::I64(v) => format!("({v}i64)"),
        Literal::U32(v) => format!("{v}u32"),
        Literal::U64(v) => format!("{v}u64"),
        Literal::Bool(v) => v.to_string(),
    }
}

impl<'a> Gen<'a> {
    /// The scalar expression `e` of node `n` and its element type.
    pub(super) fn scalar_expr(
        &self,
        n: NodeId,
        e: &ScalarExpr,
        env: &Env<'a>,
    ) -> R<(String, Elem)> {
        Ok(match e {
            ScalarExpr::Const(l) => (literal(*l), l.elem()),
            ScalarExpr::Value(v) => self.scalar(*v, env)?,
            ScalarExpr::Unary(op, a) => {
                let (a, t) = self.scalar_expr(n, a, env)?;
                let s = match (op, t.is_float(), t.is_signed()) {
                    (UnaryOp::Neg, true, _) => format!("(-{a})"),
                    (UnaryOp::Neg, false, _) => format!("({a}).wrapping_neg()"),
                    (UnaryOp::Not, _, _) => format!("(!{a})"),
                    (UnaryOp::Abs, true, _) => format!("({a}).abs()"),
                    (UnaryOp::Abs, false, true) => format!("({a}).wrapping_abs()"),
                    (UnaryOp::Abs, false, false) => a,
                    (UnaryOp::Sqrt, ..) => format!("({a}).sqrt()"),
                    (UnaryOp::Exp, ..) => format!("({a}).exp()"),
                    (UnaryOp::Log, ..) => format!("({a}).ln()"),
                };
                (s, t)
            }
            ScalarExpr::Binary(op, a, b) => {
                let (a, t) = self.scalar_expr(n, a, env)?;
                let (b, _) = self.scalar_expr(n, b, env)?;
                if op.is_comparison() {
                    (format!("(({a}) {} ({b}))", op.symbol()), Elem::Bool)
                } else {
                    let s = match (op, t.is_float()) {
                        (BinaryOp::Add, false) => format!("({a}).wrapping_add({b})"),
                        (BinaryOp::Sub, false) => format!("({a}).wrapping_sub({b})"),
                        (BinaryOp::Mul, false) => format!("({a}).wrapping_mul({b})"),
                        (BinaryOp::Div, false) => format!(
                            "int_div(({a}).checked_div({b}), ({b}) == 0, {}, {})",
                            quote(self.op_name(n)),
                            n.0
                        ),
                        (BinaryOp::Rem, false) => format!(
                            "int_div(({a}).checked_rem({b}), ({b}) == 0, {}, {})",
                            quote(self.op_name(n)),
                            n.0
                        ),
                        (BinaryOp::Min, _) => format!("({a}).min({b})"),
                        (BinaryOp::Max, _) => format!("({a}).max({b})"),
                        (BinaryOp::And, _) => format!("(({a}) & ({b}))"),
                        (BinaryOp::Or, _) => format!("(({a}) | ({b}))"),
                        (op, true) => format!("(({a}) {} ({b}))", op.symbol()),
                        _ => unreachable!("comparisons handled above"),
                    };
                    (s, t)
                }
            }
            ScalarExpr::Fma(a, b, c) => {
                let (a, t) = self.scalar_expr(n, a, env)?;
                let (b, _) = self.scalar_expr(n, b, env)?;
                let (c, _) = self.scalar_expr(n, c, env)?;
                (format!("({a}).mul_add({b}, {c})"), t)
            }
            ScalarExpr::Select(c, a, b) => {
                let (c, _) = self.scalar_expr(n, c, env)?;
                let (a, t) = self.scalar_expr(n, a, env)?;
                let (b, _) = self.scalar_expr(n, b, env)?;
                (format!("(if {c} {{ {a} }} else {{ {b} }})"), t)
            }
            ScalarExpr::Cast(to, a) => {
                let (a, t) = self.scalar_expr(n, a, env)?;
                let s = if t == Elem::Bool {
                    format!("(({a}) as u8 as {})", rust_ty(*to))
                } else {
                    format!("(({a}) as {})", rust_ty(*to))
                };
                (s, *to)
            }
        })
    }
}
