//! Constant folding and exact algebraic simplification of resolved expressions.

use super::{Expr, ExprKind};
use crate::value::{BinOp, Value};

impl Expr {
    /// Fold constant sub-expressions. A sub-expression whose evaluation fails is left alone so
    /// the error surfaces only if that branch is actually evaluated during enumeration.
    pub fn fold(&mut self) {
        for c in self.children_mut() {
            c.fold();
        }
        let pos = self.pos;
        let is_and = matches!(self.kind, ExprKind::And(_));
        let replacement: Option<Expr> = match &mut self.kind {
            ExprKind::Const(_)
            | ExprKind::Name(_)
            | ExprKind::Slot(_)
            | ExprKind::Native(..)
            | ExprKind::Cached(..) => None,
            ExprKind::IfElse(b) => match b[1].as_const().map(Value::truthy) {
                Some(t) => {
                    let none = || Expr::constant(Value::None);
                    let [a, _, z] = std::mem::replace(b.as_mut(), [none(), none(), none()]);
                    Some(if t { a } else { z })
                }
                None => None,
            },
            ExprKind::And(xs) | ExprKind::Or(xs) => {
                // Leading constants decide the result or drop out.
                let mut decided = None;
                while xs.len() > 1 {
                    let Some(c) = xs[0].as_const() else { break };
                    if c.truthy() != is_and {
                        decided = Some(c.clone());
                        break;
                    }
                    xs.remove(0);
                }
                if let Some(v) = decided {
                    Some(Expr::new(ExprKind::Const(v), pos))
                } else if xs.len() == 1 {
                    xs.pop()
                } else {
                    None
                }
            }
            _ => {
                if self.children().iter().all(|c| c.as_const().is_some()) {
                    self.eval(&[])
                        .ok()
                        .map(|v| Expr::new(ExprKind::Const(v), pos))
                } else {
                    None
                }
            }
        };
        if let Some(e) = replacement {
            *self = e;
        }
        self.simplify();
    }

    /// Exact algebraic simplifications of products with constants:
    /// `x * 1 -> x` when `x` is an arithmetic result (never a bool, so the type is unchanged),
    /// and `(x * c1) * c2 -> x * (c1 * c2)` for powers of two (exact for ints, floats, strings
    /// and lists, and overflowing exactly when the original does).
    fn simplify(&mut self) {
        let is_arith = |e: &Expr| {
            matches!(
                e.kind,
                ExprKind::Binary(
                    BinOp::Add
                        | BinOp::Sub
                        | BinOp::Mul
                        | BinOp::Div
                        | BinOp::FloorDiv
                        | BinOp::Mod
                        | BinOp::Pow,
                    _,
                    _
                )
            )
        };
        let one = |e: &Expr| matches!(e.kind, ExprKind::Const(Value::Int(1)));
        let pow2 = |e: &Expr| match e.kind {
            ExprKind::Const(Value::Int(c)) if c > 0 && (c & (c - 1)) == 0 => Some(c),
            _ => None,
        };
        loop {
            let ExprKind::Binary(BinOp::Mul, a, b) = &mut self.kind else {
                return;
            };
            if one(b) && is_arith(a) {
                let a = std::mem::replace(a.as_mut(), Expr::constant(Value::None));
                *self = a;
                continue;
            }
            if one(a) && is_arith(b) {
                let b = std::mem::replace(b.as_mut(), Expr::constant(Value::None));
                *self = b;
                continue;
            }
            let Some(c2) = pow2(b) else { return };
            let ExprKind::Binary(BinOp::Mul, _, inner_c) = &a.kind else {
                return;
            };
            let Some(c1) = pow2(inner_c) else { return };
            let Some(c) = c1.checked_mul(c2) else { return };
            let ExprKind::Binary(_, x, _) =
                std::mem::replace(&mut a.kind, ExprKind::Const(Value::None))
            else {
                return;
            };
            **a = *x;
            **b = Expr::new(ExprKind::Const(Value::Int(c)), b.pos);
        }
    }
}
