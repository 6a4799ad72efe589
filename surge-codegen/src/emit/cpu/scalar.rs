//! Scalar expressions (`Op::Scalar` trees and literals) as Rust expressions: integer arithmetic
//! wraps, integer division and remainder check for zero (the interpreter's error), comparisons
//! yield `bool`. Integer literals are run-time values: `lit<k>`, locals bound once per kernel
//! call from the literal table's slot ([`Gen::bind_literals`]); floats and bools are printed.

use super::code::{Env, Gen, R, quote, rust_ty};
use crate::analysis::Analysis;
use crate::ir::{BinaryOp, Elem, Literal, LiteralCursor, NodeId, ScalarExpr, UnaryOp, is_runtime};
use std::collections::BTreeSet;

/// A float or bool literal as a Rust expression of its type (non-finite floats by their bits).
/// Integer literals are read from the literal table instead (`lit<k>`).
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
        Literal::Bool(v) => v.to_string(),
        Literal::I32(_) | Literal::I64(_) | Literal::U32(_) | Literal::U64(_) => {
            unreachable!("internal: integer literal {l} is read from the literal table")
        }
    }
}

/// The slot of the literal table in a program of `inputs` inputs and `phases` phases: after the
/// inputs and every phase's (data, offsets).
pub fn literal_slot(inputs: usize, phases: usize) -> usize {
    inputs + 2 * phases
}

impl<'a> Gen<'a> {
    /// The statements that bind the literals phase `pi`'s code can read (those of the scalar nodes
    /// reachable from its root without passing an earlier phase's result): one read of the
    /// literal table's slot, then `let lit<k>: T = lits[k] as T;` each. An unused binding costs
    /// nothing: the table is a fixed-size array, so the compiler drops the read.
    pub(super) fn bind_literals(&self, analysis: &Analysis, pi: usize) -> String {
        let earlier: BTreeSet<NodeId> = analysis.phases[..pi].iter().map(|p| p.root).collect();
        let mut seen = BTreeSet::new();
        let mut stack = vec![analysis.phases[pi].root];
        let mut used = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if earlier.contains(&n) || !seen.insert(n) {
                continue;
            }
            used.extend(self.lits.range(n));
            stack.extend(self.c.node(n).op.references());
        }
        if used.is_empty() {
            return String::new();
        }
        let slot = literal_slot(self.c.inputs.len(), analysis.phases.len());
        let mut out = format!(
            "        let lits: &[u64; {}] = unsafe {{ literal_table(bufs, {slot}) }};\n",
            self.lits.len()
        );
        for k in used {
            let t = rust_ty(self.lits.elem(k));
            out.push_str(&format!("        let lit{k}: {t} = lits[{k}] as {t};\n"));
        }
        out
    }

    /// The scalar expression `e` of node `n` and its element type.
    pub(super) fn scalar_expr(
        &self,
        n: NodeId,
        e: &ScalarExpr,
        env: &Env<'a>,
    ) -> R<(String, Elem)> {
        self.expr_tree(n, e, env, &self.lits.cursor(n))
    }

    /// [`Gen::scalar_expr`] of a subtree; `lits` numbers its run-time literals.
    fn expr_tree(
        &self,
        n: NodeId,
        e: &ScalarExpr,
        env: &Env<'a>,
        lits: &LiteralCursor,
    ) -> R<(String, Elem)> {
        let tree = |e: &ScalarExpr| self.expr_tree(n, e, env, lits);
        Ok(match e {
            ScalarExpr::Const(l) if is_runtime(*l) => (format!("lit{}", lits.take(*l)), l.elem()),
            ScalarExpr::Const(l) => (literal(*l), l.elem()),
            ScalarExpr::Value(v) => self.scalar(*v, env)?,
            ScalarExpr::Unary(op, a) => {
                let (a, t) = tree(a)?;
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
                let (a, t) = tree(a)?;
                let (b, _) = tree(b)?;
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
                let (a, t) = tree(a)?;
                let (b, _) = tree(b)?;
                let (c, _) = tree(c)?;
                (format!("({a}).mul_add({b}, {c})"), t)
            }
            ScalarExpr::Select(c, a, b) => {
                let (c, _) = tree(c)?;
                let (a, t) = tree(a)?;
                let (b, _) = tree(b)?;
                (format!("(if {c} {{ {a} }} else {{ {b} }})"), t)
            }
            ScalarExpr::Cast(to, a) => {
                let (a, t) = tree(a)?;
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
