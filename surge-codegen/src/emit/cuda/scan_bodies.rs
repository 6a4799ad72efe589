//! A map whose body is code over a scan (`map(|r| len(scan(min, r)) as f32, rows)`, seed 23):
//! the analysis makes the scan the phase's inner level, but a scan level stores its running
//! values as the element's row, and code around it (a length, an element) would need them all.
//! So the phase is emitted twice (`split`): first as a map whose body is the scan itself (a
//! plain `map.scan`, stored nested), then as the map with its scan read from row `i` of that
//! result (`bind_stored`), both with the phase's variant.

use super::elements::{Bound, Env, RowsV, Tr};
use crate::analysis::{Analysis, Phase};
use crate::ir::{Computation, Lambda, Node, NodeId, Op, OpKind};
use crate::variant::Variant;

/// A computation with the maps of the first phases added, its analysis, variant lists and
/// source phases.
type Split = (Computation, Analysis, Vec<Vec<Variant>>, Vec<usize>);

/// `analysis` with each map over scans whose body is not the scan split in two, and `c` with
/// the maps of the first phases (`map(|x| scan(..), inputs)`, the body's own parameters);
/// `None` when there is none. The variant lists and source phases follow the phases.
pub(super) fn split(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Vec<Variant>],
    sources: &[usize],
) -> Option<Split> {
    if !analysis.phases.iter().any(|p| scan_in_body(c, p).is_some()) {
        return None;
    }
    let mut c2 = c.clone();
    let (mut phases, mut lists, mut from) = (Vec::new(), Vec::new(), Vec::new());
    for (p, phase) in analysis.phases.iter().enumerate() {
        let mut push = |phase: Phase| {
            phases.push(phase);
            if let Some(l) = variants.get(p) {
                lists.push(l.clone());
            }
            from.push(sources[p]);
        };
        let Some((f, inputs, scan)) = scan_in_body(c, phase) else {
            push(phase.clone());
            continue;
        };
        let op = Op::Map {
            f: Lambda {
                params: f.params.clone(),
                body: scan,
            },
            inputs: inputs.to_vec(),
        };
        let ty = crate::ir::Type::seq(c.node(scan).ty.clone());
        c2.nodes.push(Node::new(op, ty));
        let stored = NodeId(c2.nodes.len() as u64 - 1);
        let mut first = Phase {
            root: stored,
            diagonal: None,
            contraction: None,
            ..phase.clone()
        };
        first.levels[0].node = stored;
        push(first);
        let mut second = phase.clone();
        second.levels.truncate(1);
        second.depends_on.push(stored);
        push(second);
    }
    Some((c2, Analysis { phases }, lists, from))
}

/// The root map of `phase`, its inputs and the scan of its body, when the phase is a map over
/// scans of scalars whose body is code over the scan rather than the scan itself.
fn scan_in_body<'c>(
    c: &'c Computation,
    phase: &Phase,
) -> Option<(&'c Lambda, &'c [NodeId], NodeId)> {
    let [outer, inner] = phase.levels.as_slice() else {
        return None;
    };
    let Op::Map { f, inputs } = &c.node(phase.root).op else {
        return None;
    };
    let flat = c.node(inner.node).ty.depth() == 1;
    let scalars =
        matches!(&c.node(inner.node).ty, crate::ir::Type::Seq(t) if t.as_scalar().is_some());
    (outer.node == phase.root
        && inner.op == OpKind::Scan
        && f.body != inner.node
        && flat
        && scalars)
        .then_some((f, inputs.as_slice(), inner.node))
}

/// Binds, in the second phase of a split map (`map` over `f` and `inputs`), each scan that an
/// earlier phase stored to row `i` of that phase's result; the row's bounds bound once in
/// `bind`, numbered after the map's parameters.
pub(super) fn bind_stored(
    tr: &Tr<'_>,
    f: &Lambda,
    inputs: &[NodeId],
    env: &mut Env,
    bind: &mut Vec<String>,
) -> Result<(), crate::CodegenError> {
    let stored: Vec<(NodeId, NodeId)> = tr
        .roots
        .iter()
        .filter(|&(_, &k)| k < tr.phase)
        .filter_map(|(&root, _)| match &tr.c.node(root).op {
            Op::Map { f: g, inputs: gi }
                if g.params == f.params
                    && gi.as_slice() == inputs
                    && g.body != f.body
                    && matches!(tr.c.node(g.body).op, Op::Scan { .. }) =>
            {
                Some((root, g.body))
            }
            _ => None,
        })
        .collect();
    for (j, (root, scan)) in stored.into_iter().enumerate() {
        let rows: RowsV = tr.rows(root, env)?;
        let row = super::phase::bind_row(&rows, f.params.len() + j, bind);
        env.insert(scan, Bound::Seq(row));
    }
    Ok(())
}
