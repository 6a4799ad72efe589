//! Phases that can also run over a *diagonal layout* of their nested input (the `layout1`
//! parameter on the CPU; see `surge-cpu/src/native/diagonal.rs` for the host side).
//!
//! The pattern is SpMV's: a `map` over rows of sequences nested by one shared offsets input,
//! whose function is a `reduce` over elements that gather a flat input by one of the rows (the
//! *index* row). When a block of consecutive rows has the same length `d` and the index row of
//! row `i` is exactly `i + o_0 < i + o_1 < .. < i + o_{d-1}` for one set of offsets `o` (a band of
//! diagonals), the index input carries no information in that block: its elements are
//! reconstructed from `i` and `o`, and the other rows' elements are stored diagonal by diagonal
//! so that a block is computed row-parallel, reading `x` contiguously, with no index loads.
//! Every row still reduces its elements in their original order, so the result is bit for bit
//! the result of the row layout.

use crate::ir::{Computation, Elem, NodeId, Op, Type};
use serde::{Deserialize, Serialize};

/// One nested input row of the map: the lambda parameter it binds and its data buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagonalRow {
    pub param: NodeId,
    /// Input buffer of the nested data.
    pub buffer: usize,
    pub elem: Elem,
}

/// Where the pattern sits in a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagonalPattern {
    /// The outer `map`.
    pub map: NodeId,
    /// The `reduce` that is the map's function body.
    pub reduce: NodeId,
    /// Input buffer of the shared row offsets.
    pub offsets: usize,
    /// Position in `rows` of the index row (gathered by).
    pub index: usize,
    /// The `gather` and its flat input buffer.
    pub gather: NodeId,
    pub gathered: usize,
    /// The map's nested inputs, in parameter order.
    pub rows: Vec<DiagonalRow>,
}

/// The pattern rooted at `root`, if the phase has it.
pub fn diagonal_pattern(c: &Computation, root: NodeId) -> Option<DiagonalPattern> {
    let Op::Map { f, inputs } = &c.node(root).op else {
        return None;
    };
    let body = f.body;
    let Op::Reduce { input, .. } = &c.node(body).op else {
        return None;
    };
    if !matches!(c.node(body).ty, Type::Scalar(_)) || f.params.len() != inputs.len() {
        return None;
    }
    let mut offsets = None;
    let mut rows = Vec::new();
    for (p, i) in f.params.iter().zip(inputs) {
        let Op::Nest {
            input: data,
            offsets: off,
        } = &c.node(*i).op
        else {
            return None;
        };
        let (Op::Input { buffer: d }, Op::Input { buffer: o }) =
            (&c.node(*data).op, &c.node(*off).op)
        else {
            return None;
        };
        if *offsets.get_or_insert(*o) != *o {
            return None;
        }
        rows.push(DiagonalRow {
            param: *p,
            buffer: *d,
            elem: c.inputs[*d].elem,
        });
    }
    // Exactly one gather, from a flat input, indexed directly by one of the rows.
    let mut gathers = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    find_gathers(c, *input, &mut gathers, &mut seen);
    let [(gather, source, indices)] = gathers.as_slice() else {
        return None;
    };
    let Op::Input { buffer: gathered } = &c.node(*source).op else {
        return None;
    };
    let index = f.params.iter().position(|p| p == indices)?;
    if !rows[index].elem.is_integer() {
        return None;
    }
    Some(DiagonalPattern {
        map: root,
        reduce: body,
        offsets: offsets?,
        index,
        gather: *gather,
        gathered: *gathered,
        rows,
    })
}

fn find_gathers(
    c: &Computation,
    n: NodeId,
    out: &mut Vec<(NodeId, NodeId, NodeId)>,
    seen: &mut std::collections::BTreeSet<NodeId>,
) {
    if !seen.insert(n) {
        return;
    }
    let op = &c.node(n).op;
    if let Op::Gather { source, indices } = op {
        out.push((n, *source, *indices));
    }
    for o in op.operands() {
        find_gathers(c, o, out, seen);
    }
    for l in op.lambdas() {
        find_gathers(c, l.body, out, seen);
    }
}
