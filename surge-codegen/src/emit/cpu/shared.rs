//! Values used more than once in one scalar expression are computed once.
//!
//! A lambda's scalar code is a DAG (`ScalarExpr::Value` edges to other nodes), but element code
//! is printed as a tree: a node reached along k paths was printed k times, so code grew
//! exponentially with the depth of reuse (CoMD's EAM interpolation, where a few values are each
//! used 2–4 times, printed a 21.9 MB kernel). Here, before an `Op::Scalar` node is printed, the
//! nodes its expansion reaches along two or more edges are bound by `let`, innermost first, in
//! a block around it, and every use prints the name.
//!
//! Only nodes that the expression evaluates unconditionally are bound: a node reached only
//! inside a `select` branch stays inline, so a check it carries (an index out of range, an
//! integer division by zero) still fires only when its branch is taken, as in the interpreter.

use super::code::{Code, Env, Gen, R, bind, rust_ty};
use crate::ir::{NodeId, Op, ScalarExpr};
use std::collections::HashMap;

/// How a node is reached from the root expression.
#[derive(Default)]
struct Reach {
    edges: usize,
    unconditional: bool,
}

impl<'a> Gen<'a> {
    /// `Op::Scalar` node `n` (expression `e`) with its shared values bound once.
    pub(super) fn shared_scalar(&self, n: NodeId, e: &ScalarExpr, env: &Env<'a>) -> R<Code<'a>> {
        let mut reach: HashMap<NodeId, Reach> = HashMap::new();
        let mut order = Vec::new();
        self.visit(e, false, env, &mut reach, &mut order);
        let shared: Vec<NodeId> = order
            .into_iter()
            .filter(|m| {
                reach
                    .get(m)
                    .is_some_and(|r| r.edges >= 2 && r.unconditional)
            })
            .collect();
        if shared.is_empty() {
            let (s, t) = self.scalar_expr(n, e, env)?;
            return Ok(Code::Scalar(s, t));
        }
        let mut env = env.clone();
        let mut lets = String::new();
        for m in shared {
            let Code::Scalar(s, t) = self.eval(m, &env)? else {
                continue;
            };
            lets.push_str(&format!("let v{}: {} = {s}; ", m.0, rust_ty(t)));
            env = bind(&env, [(m, Code::Scalar(format!("v{}", m.0), t))]);
        }
        let (s, t) = self.scalar_expr(n, e, &env)?;
        Ok(Code::Scalar(format!("{{ {lets}{s} }}"), t))
    }

    /// Counts the edges into each node of `e`'s expansion (through `Op::Scalar` nodes, each
    /// expanded once) and records whether any edge is outside a `select` branch; `order` gets
    /// the nodes dependencies first.
    fn visit(
        &self,
        e: &ScalarExpr,
        cond: bool,
        env: &Env<'a>,
        reach: &mut HashMap<NodeId, Reach>,
        order: &mut Vec<NodeId>,
    ) {
        match e {
            ScalarExpr::Const(_) => {}
            ScalarExpr::Value(m) => {
                if env.contains_key(m) {
                    return;
                }
                let first = !reach.contains_key(m);
                let r = reach.entry(*m).or_default();
                r.edges += 1;
                r.unconditional |= !cond;
                if first {
                    if let Op::Scalar { expr } = &self.c.node(*m).op {
                        self.visit(expr, cond, env, reach, order);
                    }
                    order.push(*m);
                } else if !cond && let Op::Scalar { expr } = &self.c.node(*m).op {
                    // Reached unconditionally now: so is what it reads outside its branches.
                    self.mark_unconditional(expr, env, reach);
                }
            }
            ScalarExpr::Unary(_, a) | ScalarExpr::Cast(_, a) => {
                self.visit(a, cond, env, reach, order)
            }
            ScalarExpr::Binary(_, a, b) => {
                self.visit(a, cond, env, reach, order);
                self.visit(b, cond, env, reach, order);
            }
            ScalarExpr::Fma(a, b, c) => {
                for x in [a, b, c] {
                    self.visit(x, cond, env, reach, order);
                }
            }
            ScalarExpr::Select(c, a, b) => {
                self.visit(c, cond, env, reach, order);
                self.visit(a, true, env, reach, order);
                self.visit(b, true, env, reach, order);
            }
        }
    }

    /// Marks what `e` reads outside `select` branches as reached unconditionally.
    fn mark_unconditional(
        &self,
        e: &ScalarExpr,
        env: &Env<'a>,
        reach: &mut HashMap<NodeId, Reach>,
    ) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match e {
                ScalarExpr::Const(_) => {}
                ScalarExpr::Value(m) => {
                    if env.contains_key(m) {
                        continue;
                    }
                    let r = reach.entry(*m).or_default();
                    if r.unconditional {
                        continue;
                    }
                    r.unconditional = true;
                    if let Op::Scalar { expr } = &self.c.node(*m).op {
                        stack.push(expr);
                    }
                }
                ScalarExpr::Unary(_, a) | ScalarExpr::Cast(_, a) => stack.push(a),
                ScalarExpr::Binary(_, a, b) => stack.extend([a.as_ref(), b.as_ref()]),
                ScalarExpr::Fma(a, b, c) => stack.extend([a.as_ref(), b.as_ref(), c.as_ref()]),
                ScalarExpr::Select(c, _, _) => stack.push(c),
            }
        }
    }
}
