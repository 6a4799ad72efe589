//! A root `reduce_by_key` whose runs one lane folds in order (`RunFold::Lane0`): flat tuples of
//! scalars (an argmin per key, `reduce_by_key(|a, b| if a.0 <= b.0 {a} else {b}, zip(d, idx),
//! keys, p)`), or scalars whose operator has no identity this emitter knows
//! (`|a, b| a * 0.5 + b`). The runs are split over the blocks and resources as for scalars
//! (`runs.cu.tera`); lane 0 of each resource folds every run that starts in its sub-range from
//! the prefix, element by element in position order, with one local per component (`fold.rs`),
//! so the combiner needs neither an identity nor associativity nor commutativity and the bits
//! are the interpreter's. The other lanes only count runs.
//!
//! The result, a flat sequence of tuples, is stored as every other one is: at the root one
//! phase per component (`map(|t| t.j, reduce_by_key(..))`, the parts of `split_parts`, which
//! the host puts together), each folding the whole tuple and storing its component; for a later
//! phase packed, each run a row of one u64 word per component (`fold::packed_write`'s layout,
//! which `Tr::tuples` reads back).

use super::checks::pair_lengths;
use super::elements::{Env, Tr};
use super::fold::{Fold, pack_stores, packed_tuple};
use super::inner::{RunFold, Runs};
use super::keyed::key_at;
use super::phase::{Inner, PhaseCode, identity, store};
use super::tuples::seq_of_tuples;
use crate::CodegenError;
use crate::ir::{Computation, Lambda, NodeId, Op, Type};

/// Whether a flat `reduce_by_key` of `input` by `op` is folded by one lane in order: its
/// elements are tuples, or its operator has no identity.
pub(super) fn folds_in_order(tr: &Tr<'_>, op: &Lambda, input: NodeId) -> bool {
    match &tr.c.node(input).ty {
        t if seq_of_tuples(t) => true,
        Type::Seq(e) => e
            .as_scalar()
            .is_some_and(|e| identity(tr.c, &op.params, op.body, e).is_none()),
        _ => false,
    }
}

/// `(r, f)` when `n` is `map(f, r)` over a `reduce_by_key` `r` of flat tuples (one part of a
/// result stored in parts: `f` projects a component).
pub(super) fn part(c: &Computation, n: NodeId) -> Option<(NodeId, &Lambda)> {
    let Op::Map { f, inputs } = &c.node(n).op else {
        return None;
    };
    let ([r], [_]) = (inputs.as_slice(), f.params.as_slice()) else {
        return None;
    };
    match &c.node(*r).op {
        Op::ReduceByKey { input, .. } if seq_of_tuples(&c.node(*input).ty) => Some((*r, f)),
        _ => None,
    }
}

/// The `reduce_by_key` `root` folded run by run by lane 0 of each resource. Each run's value
/// is stored as it is (scalars), projected by `post` (one part of a root result of tuples), or
/// packed (tuples that a later phase reads).
pub(super) fn lane0_runs(
    tr: Tr<'_>,
    root: NodeId,
    post: Option<&Lambda>,
) -> Result<PhaseCode, CodegenError> {
    let Op::ReduceByKey {
        op,
        input,
        keys,
        prefix,
    } = &tr.c.node(root).op
    else {
        panic!("internal: a lane-0 reduce_by_key phase over node {root:?}, not a reduce_by_key");
    };
    let env = Env::new();
    let f = Fold::over(&tr, &env, root, (op, *input, Some(*prefix)))?;
    let ks = tr.seq(*keys, &env)?;
    let len = pair_lengths(&f.len, &ks.len, 0, root);
    let (t, write, packed) = match post {
        Some(p) => {
            let mut env = env.clone();
            env.insert(p.params[0], f.bound(&f.acc));
            let t = tr.c.node(p.body).ty.as_scalar().ok_or_else(|| {
                tr.unsupported(
                    p.body,
                    "as a part of a reduce_by_key's result (not a scalar)",
                )
            })?;
            let value = store(t, tr.scalar(p.body, &env)?);
            (t, format!("out[r] = {value};"), None)
        }
        None if seq_of_tuples(&tr.c.node(*input).ty) => {
            let Type::Seq(item) = &tr.c.node(*input).ty else {
                unreachable!("internal: a sequence of tuples")
            };
            let elems = packed_tuple(item).ok_or_else(|| {
                tr.unsupported(root, "as a stored tuple (not a tuple of scalars)")
            })?;
            let write = pack_stores("out_off[r]", &f.acc, &elems);
            (crate::ir::Elem::U64, write, Some(elems.len()))
        }
        None => {
            let t = f.parts[0].elem;
            (t, format!("out[r] = {};", store(t, f.acc[0].clone())), None)
        }
    };
    let (declare, step) = f.declare_and_step();
    let code = format!(
        "{{\n        {declare}\n        for (; end < len && key(end) == k0; ++end) {{ \
         const u64 surge_fold_j = end; {step}}}\n        {write}\n      }}"
    );
    let runs = Runs {
        len,
        key: key_at(&ks),
        t,
        fold: RunFold::Lane0 { code, packed },
    };
    Ok(PhaseCode::of(
        &tr,
        runs.count(),
        Vec::new(),
        Inner::Runs(runs),
    ))
}
