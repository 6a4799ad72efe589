//! Which values of a scalar expression to compute once: the backend-neutral half of binding
//! shared values, which each emitter prints in its own syntax (`cpu/shared.rs`: Rust `let`s in a
//! block; `cuda/elements.rs`: `const` locals in an immediately invoked lambda).
//!
//! A lambda's scalar code is a DAG: `ScalarExpr::Value` edges to other nodes, and the DSEL keeps
//! a scalar used twice as a node of its own. Printed as a tree, a node reached along k paths is
//! printed k times, so code grows exponentially with the depth of reuse (`y ← y·y − y` forty
//! times; CoMD's EAM interpolation, where a few values are each used 2–4 times, printed a
//! 21.9 MB kernel). The expansion follows scalar edges: a scalar's expression, an `index`'s
//! position, a projection's tuple, a tuple's items. Other operators (sequences, reductions,
//! lambdas) are leaves here: what they read is printed in their own scope.
//!
//! Only values that the expression evaluates unconditionally are shared: a node reached only
//! inside a `select` branch stays inline, so a check it carries (an index out of range, an
//! integer division by zero) still fires only when its branch is taken, as in the interpreter.

use crate::ir::{BinaryOp, Computation, NodeId, Op, ScalarExpr, Type};
use std::collections::HashMap;

/// How a node is reached from the root expression.
#[derive(Default)]
struct Reach {
    edges: usize,
    unconditional: bool,
}

/// The scalar-typed nodes of `e`'s expansion that are reached along two or more edges and
/// evaluated unconditionally, dependencies first. Nodes for which `bound` holds are already
/// named by the printer and not expanded.
pub fn shared_values(
    c: &Computation,
    e: &ScalarExpr,
    bound: &dyn Fn(NodeId) -> bool,
) -> Vec<NodeId> {
    shared_values_of(c, e, bound, &|t| matches!(t, Type::Scalar(_)))
}

/// [`shared_values`] for the nodes whose type `keep` accepts (an emitter that can bind a tuple
/// to a local also shares tuples: a reduction over tuples read through several projections).
pub fn shared_values_of(
    c: &Computation,
    e: &ScalarExpr,
    bound: &dyn Fn(NodeId) -> bool,
    keep: &dyn Fn(&Type) -> bool,
) -> Vec<NodeId> {
    let mut w = Walk {
        c,
        bound,
        reach: HashMap::new(),
        order: Vec::new(),
    };
    w.visit(e, false);
    let Walk { reach, order, .. } = w;
    order
        .into_iter()
        .filter(|m| {
            reach
                .get(m)
                .is_some_and(|r| r.edges >= 2 && r.unconditional)
                && keep(&c.node(*m).ty)
        })
        .collect()
}

/// One expression reading every node of `items` (for the analysis only, never printed).
fn all_of(items: &[NodeId]) -> Option<ScalarExpr> {
    items
        .iter()
        .map(|i| ScalarExpr::Value(*i))
        .reduce(|a, b| ScalarExpr::Binary(BinaryOp::Add, Box::new(a), Box::new(b)))
}

struct Walk<'c, 'b> {
    c: &'c Computation,
    bound: &'b dyn Fn(NodeId) -> bool,
    reach: HashMap<NodeId, Reach>,
    order: Vec<NodeId>,
}

impl Walk<'_, '_> {
    /// The scalar edges out of node `m` that the expansion follows.
    fn expansion(&self, m: NodeId) -> Option<ScalarExpr> {
        let v = |x: &NodeId| ScalarExpr::Value(*x);
        match &self.c.node(m).op {
            Op::Scalar { expr } => Some(expr.clone()),
            Op::Index { index, .. } => Some(v(index)),
            Op::Project { tuple, .. } => Some(v(tuple)),
            Op::Tuple { items } => all_of(items),
            _ => None,
        }
    }

    /// Counts the edges into each node of `e`'s expansion (each node expanded once) and records
    /// whether any edge is outside a `select` branch; `order` gets the nodes dependencies first.
    fn visit(&mut self, e: &ScalarExpr, cond: bool) {
        match e {
            ScalarExpr::Const(_) => {}
            ScalarExpr::Value(m) => {
                if (self.bound)(*m) {
                    return;
                }
                let first = !self.reach.contains_key(m);
                let r = self.reach.entry(*m).or_default();
                r.edges += 1;
                r.unconditional |= !cond;
                if first {
                    if let Some(x) = self.expansion(*m) {
                        self.visit(&x, cond);
                    }
                    self.order.push(*m);
                } else if !cond && let Some(x) = self.expansion(*m) {
                    // Reached unconditionally now: so is what it reads outside its branches.
                    self.mark_unconditional(x);
                }
            }
            ScalarExpr::Unary(_, a) | ScalarExpr::Cast(_, a) => self.visit(a, cond),
            ScalarExpr::Binary(_, a, b) => {
                self.visit(a, cond);
                self.visit(b, cond);
            }
            ScalarExpr::Fma(a, b, c) => {
                for x in [a, b, c] {
                    self.visit(x, cond);
                }
            }
            ScalarExpr::Select(c, a, b) => {
                self.visit(c, cond);
                self.visit(a, true);
                self.visit(b, true);
            }
        }
    }

    /// Marks what `e` reads outside `select` branches as reached unconditionally.
    fn mark_unconditional(&mut self, e: ScalarExpr) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match e {
                ScalarExpr::Const(_) => {}
                ScalarExpr::Value(m) => {
                    if (self.bound)(m) {
                        continue;
                    }
                    let r = self.reach.entry(m).or_default();
                    if r.unconditional {
                        continue;
                    }
                    r.unconditional = true;
                    stack.extend(self.expansion(m));
                }
                ScalarExpr::Unary(_, a) | ScalarExpr::Cast(_, a) => stack.push(*a),
                ScalarExpr::Binary(_, a, b) => stack.extend([*a, *b]),
                ScalarExpr::Fma(a, b, c) => stack.extend([*a, *b, *c]),
                ScalarExpr::Select(c, _, _) => stack.push(*c),
            }
        }
    }
}
