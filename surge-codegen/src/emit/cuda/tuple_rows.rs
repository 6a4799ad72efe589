//! Rows of tuples that a later phase reads: a phase whose value is a nested sequence of tuples
//! of scalars is stored one phase per component (struct of arrays, as the translator reads
//! tuples: `Tr::tuple_rows`), each with the rows of its component. A component's rows are the
//! value's own with that component taken: a lazily read producer's component rows copied out,
//! a `scatter` of rows of tuples as a scatter of the component's rows (a scatter moves whole
//! elements), and a `reduce_by_key` of rows of tuples whose combiner combines each component
//! from the same component alone (`|a, b| map(|(u, v)| (u.0 + v.0, u.1 * v.1), (a, b))`) as
//! the reduce_by_key of the component's rows; one whose combiner mixes components is read
//! lazily (`lazy_keyed.rs`), each component phase folding every component.

use super::elements::{Bound, Env, Tr};
use super::phase::PhaseCode;
use super::{ArgSlot, PhasePlan};
use crate::CodegenError;
use crate::analysis::{Analysis, Phase};
use crate::ir::{Computation, Elem, LiteralTable, NodeId, Op, Type};
use crate::variant::Variant;
use std::collections::BTreeMap;

/// A component's stand-in for the others while a combiner's component is translated: an
/// expression holding it reads another component.
const OTHER: &str = "@OTHER@";

/// The component types of node `n` when it is a nested sequence of tuples of scalars.
pub(super) fn components(c: &Computation, n: NodeId) -> Option<Vec<Elem>> {
    match c.node(n).ty.item()?.item()? {
        Type::Tuple(items) => items.iter().map(Type::as_scalar).collect(),
        _ => None,
    }
}

/// `analysis` with every phase but the last whose value is rows of tuples emitted once per
/// component, its variant list and source phase repeated.
pub(super) fn expand(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Vec<Variant>],
    sources: &[usize],
) -> (Analysis, Vec<Vec<Variant>>, Vec<usize>) {
    let last = analysis.phases.len().saturating_sub(1);
    let times = |p, phase: &Phase| match components(c, phase.root) {
        Some(items) if p < last => items.len(),
        _ => 1,
    };
    super::repeat_phases(analysis, variants, sources, times)
}

/// The component phase `p` stores, if it is one of a value's component phases.
pub(super) fn part(c: &Computation, analysis: &Analysis, p: usize) -> Option<usize> {
    let root = analysis.phases[p].root;
    let items = components(c, root)?;
    let before = analysis.phases[..p]
        .iter()
        .rev()
        .take_while(|q| q.root == root)
        .count();
    (p + 1 < analysis.phases.len() || before > 0).then_some(before % items.len())
}

/// Component `j` of the rows of tuples of `phase`, as phase `p`, and its plan.
pub(super) fn phase(
    c: &Computation,
    roots: &BTreeMap<NodeId, usize>,
    lits: &LiteralTable,
    p: usize,
    phase: &Phase,
    j: usize,
) -> Result<(PhaseCode, PhasePlan), CodegenError> {
    let tr = Tr::new(c, roots, lits, p, phase);
    let root = phase.root;
    let code = match &c.node(root).op {
        Op::Scatter {
            source,
            indices,
            dest,
        } if !tr.earlier(root) => {
            super::scatter_rows::scatter_rows(tr, root, (*source, *indices, *dest), Some(j))?
        }
        Op::ReduceByKey {
            op,
            input,
            keys,
            prefix,
        } if !tr.earlier(root) && !mixes_components(c, roots, lits, (p, phase), op) => {
            super::keyed::row_runs(tr, root, (op, *input, *keys, *prefix), Some(j))?
        }
        _ => {
            let rows = tr.rows_of(root, &Env::new(), Some(j))?;
            super::roots::copy_rows(&tr, rows)
        }
    };
    let mut plan = code.plan(c, p, phase);
    let elem = components(c, root).expect("rows of tuples")[j];
    plan.ty = Type::seq(Type::scalar_seq(elem));
    Ok((code, plan))
}

/// Whether the combiner `op` of a `reduce_by_key` of rows of tuples computes a component from
/// another (then the rows are read lazily, `Tr::lazy_row_runs`, instead of run per component);
/// probed on a translator of its own, so that nothing it reads becomes a kernel argument.
fn mixes_components(
    c: &Computation,
    roots: &BTreeMap<NodeId, usize>,
    lits: &LiteralTable,
    (p, phase): (usize, &Phase),
    op: &crate::ir::Lambda,
) -> bool {
    let probe = Tr::new(c, roots, lits, p, phase);
    let Ok((f, (u, v), _)) = super::keyed::elementwise_map(&probe, op) else {
        return false;
    };
    let arity = components(c, phase.root).map_or(0, |items| items.len());
    (0..arity).any(|j| {
        probe
            .combiner_part(op.body, (u, v), f.body, j, &Env::new())
            .is_ok_and(|part| part.contains(OTHER))
    })
}

impl Tr<'_> {
    /// Whether `n` is an earlier phase's value.
    fn earlier(&self, n: NodeId) -> bool {
        self.roots.get(&n).is_some_and(|k| *k < self.phase)
    }

    /// Component `j` of rows of tuples `n` that earlier phases stored (one phase per component,
    /// the last of them `roots[n]`), as rows over that component's phase.
    pub(super) fn stored_component(&self, n: NodeId, j: usize) -> Option<super::rows::RowsV> {
        let last = *self.roots.get(&n)?;
        let items = components(self.c, n)?;
        if last >= self.phase || j >= items.len() {
            return None;
        }
        let a = self.arg(ArgSlot::Phase {
            phase: last + 1 + j - items.len(),
            elem: items[j].stored(),
            nested: true,
        });
        Some(super::rows::RowsV::stored(&a, items[j]))
    }

    /// Component `j` of an element-wise combiner of rows of tuples (`|a, b| map(g, (a, b))`,
    /// either order): `g`'s component `j` with the accumulator's component bound to `acc` and
    /// the row's to `x`; refused when it reads another component.
    pub(super) fn component_combiner(
        &self,
        map: NodeId,
        (u, v): (NodeId, NodeId),
        body: NodeId,
        j: usize,
        env: &Env,
    ) -> Result<String, CodegenError> {
        let part = self.combiner_part(map, (u, v), body, j, env)?;
        if part.contains(OTHER) {
            return Err(self.unsupported(
                body,
                "as a combiner of rows of tuples (a component computed from another component)",
            ));
        }
        Ok(part)
    }

    /// [`Tr::component_combiner`] before its check: component `j`, holding [`OTHER`] where it
    /// reads another component.
    fn combiner_part(
        &self,
        map: NodeId,
        (u, v): (NodeId, NodeId),
        body: NodeId,
        j: usize,
        env: &Env,
    ) -> Result<String, CodegenError> {
        let arity = match &self.c.node(u).ty {
            Type::Tuple(items) => items.len(),
            _ => return Err(self.unsupported(map, "as a combiner of rows of tuples")),
        };
        let only = |name: &str| {
            (0..arity)
                .map(|k| {
                    if k == j {
                        name.to_string()
                    } else {
                        OTHER.to_string()
                    }
                })
                .collect::<Vec<_>>()
        };
        let mut inner = env.clone();
        inner.insert(u, Bound::Tuple(only("acc")));
        inner.insert(v, Bound::Tuple(only("x")));
        self.parts(body, &inner)?
            .get(j)
            .cloned()
            .ok_or_else(|| self.unsupported(body, "(a combiner's component out of range)"))
    }
}
