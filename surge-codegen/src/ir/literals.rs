//! Integer literals are run-time values of the emitted kernels, not part of their source.
//!
//! A `split` tile computed from an input's length, `range` bounds, `replicate` lengths and
//! `striding` strides arrive as integer literals ([`Literal::I32`], `I64`, `U32`, `U64`). Printed
//! into the kernels, every input size would be a new source, a new compile and a new cache
//! entry. Instead the emitters print a read of the *literal table*, numbered by [`literals`], and
//! the host passes the values of the computation it runs. A computation's **structure** is its IR
//! with those values and the input lengths erased ([`structure`]); compiled kernels serve every
//! computation of their structure, and refuse another with [`structure_difference`]'s message.
//!
//! Float and bool literals stay in the source: they are not sizes (a program's `0.5` does not
//! change with its input), and printed as constants they let the compilers fold them.

use super::{Computation, Elem, Literal, NodeId, Op, ScalarExpr};
use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Range;

/// Whether `l` is a run-time value of the kernels (an integer) rather than printed in the source.
pub fn is_runtime(l: Literal) -> bool {
    l.as_integer().is_some()
}

/// Visits every literal of `e` in place: preorder, operands in field order (`Binary(op, a, b)`:
/// `a` then `b`; `Select(c, a, b)`: `c`, `a`, `b`).
fn literals_mut(e: &mut ScalarExpr, f: &mut impl FnMut(&mut Literal)) {
    match e {
        ScalarExpr::Const(l) => f(l),
        ScalarExpr::Value(_) => {}
        ScalarExpr::Unary(_, a) | ScalarExpr::Cast(_, a) => literals_mut(a, f),
        ScalarExpr::Binary(_, a, b) => {
            literals_mut(a, f);
            literals_mut(b, f);
        }
        ScalarExpr::Fma(a, b, c) | ScalarExpr::Select(a, b, c) => {
            literals_mut(a, f);
            literals_mut(b, f);
            literals_mut(c, f);
        }
    }
}

/// Visits the run-time literals of `e` in the order the table numbers them: preorder, operands in
/// field order. The emitters translate expressions in this order too.
pub fn for_each_runtime_literal(e: &ScalarExpr, f: &mut impl FnMut(Literal)) {
    // Visiting a copy keeps one walk for reading and erasing alike (expressions are small).
    literals_mut(&mut e.clone(), &mut |l| {
        if is_runtime(*l) {
            f(*l)
        }
    });
}

/// One entry of the literal table: the scalar node the literal appears in, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeLiteral {
    pub node: NodeId,
    pub value: Literal,
}

/// The literal table of `c`: entry `k` is the kernels' literal `k`. Nodes in order, each scalar
/// node's expression in [`for_each_runtime_literal`] order, so one node's literals are adjacent.
pub fn literals(c: &Computation) -> Vec<RuntimeLiteral> {
    let mut out = Vec::new();
    for (i, node) in c.nodes.iter().enumerate() {
        if let Op::Scalar { expr } = &node.op {
            for_each_runtime_literal(expr, &mut |value| {
                out.push(RuntimeLiteral {
                    node: NodeId(i as u64),
                    value,
                })
            });
        }
    }
    out
}

/// An integer literal's bits as the host passes them: two's complement, sign-extended to 64 bits
/// (a kernel reads them back with an `as` cast to the literal's type). Floats and bools are not
/// run-time literals and have no bits here.
pub fn literal_bits(l: Literal) -> Option<u64> {
    match l {
        Literal::I32(v) => Some(v as i64 as u64),
        Literal::I64(v) => Some(v as u64),
        Literal::U32(v) => Some(v.into()),
        Literal::U64(v) => Some(v),
        Literal::F32(_) | Literal::F64(_) | Literal::Bool(_) => None,
    }
}

/// The values of `c`'s literal table as [`literal_bits`].
pub fn literal_values(c: &Computation) -> Vec<u64> {
    literals(c)
        .iter()
        .map(|l| literal_bits(l.value).expect("internal: a run-time literal is an integer"))
        .collect()
}

/// What an emitter needs of the literal table: where each scalar node's literals begin, and
/// their types.
#[derive(Debug, Clone, Default)]
pub struct LiteralTable {
    /// Per scalar node with run-time literals: the table range of its literals.
    ranges: HashMap<NodeId, Range<usize>>,
    elems: Vec<Elem>,
}

impl LiteralTable {
    pub fn of(c: &Computation) -> LiteralTable {
        let mut t = LiteralTable::default();
        for (k, l) in literals(c).iter().enumerate() {
            t.ranges.entry(l.node).or_insert(k..k).end = k + 1;
            t.elems.push(l.value.elem());
        }
        t
    }

    /// The table entries of node `n`'s literals (empty for a node without any).
    pub fn range(&self, n: NodeId) -> Range<usize> {
        self.ranges.get(&n).cloned().unwrap_or(0..0)
    }

    /// How many literals the table holds.
    pub fn len(&self) -> usize {
        self.elems.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }

    /// The type of literal `k`.
    pub fn elem(&self, k: usize) -> Elem {
        self.elems[k]
    }

    /// A cursor over node `n`'s literals, for translating its expression in
    /// [`for_each_runtime_literal`] order.
    pub fn cursor(&self, n: NodeId) -> LiteralCursor {
        let r = self.range(n);
        LiteralCursor {
            node: n,
            next: Cell::new(r.start),
            elems: self.elems[r].to_vec(),
            first: self.range(n).start,
        }
    }
}

/// The next literal of one scalar node's expression while an emitter translates it.
#[derive(Debug)]
pub struct LiteralCursor {
    node: NodeId,
    next: Cell<usize>,
    /// The types of the node's literals; the first is entry `first` of the table.
    elems: Vec<Elem>,
    first: usize,
}

impl LiteralCursor {
    /// The node whose expression this cursor walks.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The table index of the next run-time literal `l` of the expression.
    pub fn take(&self, l: Literal) -> usize {
        let k = self.next.get();
        assert!(
            self.elems.get(k - self.first) == Some(&l.elem()),
            "internal: literal {l} of node {} is not entry {k} of the literal table",
            self.node
        );
        self.next.set(k + 1);
        k
    }
}

/// `e` with its run-time literals' values erased (zero).
fn erase(e: &mut ScalarExpr) {
    literals_mut(e, &mut |l| {
        *l = match *l {
            Literal::I32(_) => Literal::I32(0),
            Literal::I64(_) => Literal::I64(0),
            Literal::U32(_) => Literal::U32(0),
            Literal::U64(_) => Literal::U64(0),
            other => other,
        }
    });
}

/// The structure of `c`: its IR with the values of run-time literals and the input lengths
/// erased (set to zero). Compiled kernels serve every computation of their structure.
pub fn structure(c: &Computation) -> Computation {
    let mut s = c.clone();
    s.inputs.iter_mut().for_each(|i| i.len = 0);
    for n in &mut s.nodes {
        if let Op::Scalar { expr } = &mut n.op {
            erase(expr);
        }
    }
    s
}

/// A short description of a node for [`structure_difference`]: its operator and operands (a
/// scalar node's expression), and its type.
fn describe(node: &super::Node) -> String {
    let what = match &node.op {
        Op::Scalar { expr } => format!("scalar `{expr}`"),
        op => {
            let refs: Vec<String> = op.references().iter().map(|r| r.to_string()).collect();
            format!("`{}({})`", op.kind(), refs.join(", "))
        }
    };
    format!("{what} of type {}", node.ty)
}

/// Why `other` does not have `built`'s structure (the first difference, named), or `None` when it
/// does: then kernels compiled for `built` run `other` with `other`'s literal values.
pub fn structure_difference(built: &Computation, other: &Computation) -> Option<String> {
    if built.inputs.len() != other.inputs.len() {
        return Some(format!(
            "it has {} inputs, the compiled one {}",
            other.inputs.len(),
            built.inputs.len()
        ));
    }
    for (k, (a, b)) in built.inputs.iter().zip(&other.inputs).enumerate() {
        if a.name != b.name || a.elem != b.elem {
            return Some(format!(
                "its input {k} is `{}` of {}, the compiled one's `{}` of {}",
                b.name, b.elem, a.name, a.elem
            ));
        }
    }
    if built.nodes.len() != other.nodes.len() {
        return Some(format!(
            "it has {} nodes, the compiled one {}",
            other.nodes.len(),
            built.nodes.len()
        ));
    }
    for (i, (a, b)) in built.nodes.iter().zip(&other.nodes).enumerate() {
        if a == b || same_erased(a, b) {
            continue;
        }
        return Some(format!(
            "its node %{i} is {}, the compiled one's {}",
            describe(b),
            describe(a)
        ));
    }
    if built.root != other.root {
        return Some(format!(
            "its root is {}, the compiled one's {}",
            other.root, built.root
        ));
    }
    None
}

/// Whether two nodes are equal once their run-time literal values are erased.
fn same_erased(a: &super::Node, b: &super::Node) -> bool {
    match (&a.op, &b.op) {
        (Op::Scalar { expr: x }, Op::Scalar { expr: y }) if a.ty == b.ty => {
            let (mut x, mut y) = (x.clone(), y.clone());
            erase(&mut x);
            erase(&mut y);
            x == y
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
