//! Phases whose root builds its result position by position, in input order: a
//! `reduce_by_key` (one result per run of equal consecutive keys) and a `scatter` (a copy of the
//! destination written at the indices, the last write to an index winning). Each has its own
//! kernel template (`runs.cu.tera`, `scatter.cu.tera`), since neither is a map over a known
//! number of elements; both are rendered by `render.rs` like every other phase.
//!
//! - `reduce_by_key`: one execution resource walks the runs in order (the variant's one level,
//!   as for a root `reduce`, is the level that folds each run: one thread, or a logical warp or
//!   block row whose lane 0 finds the run's end and whose lanes reduce its elements). The shape
//!   kernel counts the runs. Like `reduce`, the lanes assume an associative and commutative
//!   operator.
//! - `scatter`: one block copies the destination, then its thread 0 writes the source at the
//!   indices in order of position, so duplicate indices end with the last write and the first
//!   out-of-range index (in position order) is the error, exactly as in the interpreter. The
//!   CPU backend also writes a scatter in order on one thread; a parallel form (a winner per
//!   destination by an atomic maximum of positions) needs a workspace the phases do not have.

use super::checks::pair_lengths;
use super::elements::{Env, I, SeqV, Tr};
use super::phase::{Inner, PhaseCode, operator_of};
use crate::CodegenError;
use crate::analysis::Phase;
use crate::ir::Op;

/// The integer key at position `@I@` as an `i64` (equal keys are equal bit patterns).
fn key_at(keys: &SeqV) -> String {
    format!("(i64)({})", keys.at)
}

/// A `reduce_by_key` at the phase's root.
pub(super) fn runs(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let root = phase.root;
    let Op::ReduceByKey {
        op,
        input,
        keys,
        prefix,
    } = &tr.c.node(root).op
    else {
        return Err(tr.unsupported(root, "as a reduce_by_key phase"));
    };
    let env = Env::new();
    let seq = tr.seq(*input, &env)?;
    let ks = tr.seq(*keys, &env)?;
    let len = pair_lengths(&seq.len, &ks.len, 0, root);
    let (op_body, ident) = operator_of(&tr, &env, root, op, seq.elem)?;
    let prefix = tr.scalar(*prefix, &env)?;
    let key = key_at(&ks);
    let n_expr = format!(
        "surge_run_count({len}, [&](u64 surge_j) {{ return {}; }})",
        key.replace(I, "(surge_j)")
    );
    let inner = Inner::Runs {
        len,
        elem: seq.at.clone(),
        key,
        t: seq.elem,
        op_body,
        ident,
        prefix,
    };
    Ok(PhaseCode::of(&tr, n_expr, Vec::new(), inner))
}

/// A `scatter` at the phase's root.
pub(super) fn scatter(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let root = phase.root;
    let Op::Scatter {
        source,
        indices,
        dest,
    } = &tr.c.node(root).op
    else {
        return Err(tr.unsupported(root, "as a scatter phase"));
    };
    let env = Env::new();
    let (s, idx, d) = (
        tr.seq(*source, &env)?,
        tr.seq(*indices, &env)?,
        tr.seq(*dest, &env)?,
    );
    let len = pair_lengths(&s.len, &idx.len, 1, root);
    let inner = Inner::Scatter {
        node: root,
        len,
        source: s.at.clone(),
        index: key_at(&idx),
        dest: d.at.clone(),
        t: d.elem,
    };
    Ok(PhaseCode::of(&tr, d.len, Vec::new(), inner))
}
