//! Phases whose root builds its result position by position, in input order: a
//! `reduce_by_key` (one result per run of equal consecutive keys) and a `scatter` (a copy of the
//! destination written at the indices, the last write to an index winning). Each has its own
//! kernel template (`runs.cu.tera`, `scatter.cu.tera`), since neither is a map over a known
//! number of elements; both are rendered by `render.rs` like every other phase.
//!
//! - `reduce_by_key` of scalars: the positions are split into a range per block (at most 256)
//!   and a sub-range per execution resource; each resource counts the runs that start before
//!   its sub-range (its first output position) and walks the runs that start in it (the
//!   variant's one level, as for a root `reduce`, is the level that folds each run: one
//!   thread, or a logical warp or block row whose lane 0 finds the run's end and whose lanes
//!   reduce its elements). The shape kernel counts the runs. Like `reduce`, the lanes assume an
//!   associative and commutative operator.
//! - `reduce_by_key` of flat tuples of scalars (an argmin per key), or of scalars whose operator
//!   has no identity: the same split, lane 0 folding each run in order (`keyed_tuples.rs`).
//! - `reduce_by_key` of rows (Listing 5.5) and a `reduce` (or `scan`: every running row stored,
//!   the columns split over the variant's workers) of rows with an element-wise combiner
//!   (`runs_rows.cu.tera`): the positions are split into one contiguous range per block (at
//!   most 256 blocks); a block counts the runs that start before its range (its first output
//!   row), takes the runs that start in its range (reading the last one to its end), finds each
//!   run's end by a block-wide search, and folds it with the variant's resource (one thread, a
//!   logical warp or the whole block): columns over the threads and, where there are fewer
//!   columns than threads, each column's rows in contiguous slices combined in slice order, so
//!   an associative combiner needs no commutativity. On an H200 this took Lloyd's
//!   recalculation of 10^6 points (d = 32, k = 10) from 1.43 s (one block walking every run)
//!   to 0.13 s.
//! - `scatter`: one block copies the destination, then its thread 0 writes the source at the
//!   indices in order of position, so duplicate indices end with the last write and the first
//!   out-of-range index (in position order) is the error, exactly as in the interpreter. The
//!   CPU backend also writes a scatter in order on one thread; a parallel form (a winner per
//!   destination by an atomic maximum of positions) needs a workspace the phases do not have.

use super::checks::{equal_lengths, pair_lengths};
use super::elements::{Bound, Env, I, SeqV, Tr};
use super::inner::{RunFold, Runs, Whole};
use super::phase::{Inner, PhaseCode, operator_of};
use crate::CodegenError;
use crate::analysis::Phase;
use crate::ir::{Elem, Lambda, NodeId, Op, ScalarExpr};

/// The integer key at position `@I@` as an `i64` (equal keys are equal bit patterns).
pub(super) fn key_at(keys: &SeqV) -> String {
    format!("(i64)({})", keys.at)
}

/// A `reduce_by_key` at the phase's root.
pub(super) fn runs(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    if let Some((rbk, post)) = super::keyed_tuples::part(tr.c, phase.root) {
        return super::keyed_tuples::lane0_runs(tr, rbk, Some(post));
    }
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
    if tr.c.node(*input).ty.depth() == 2 {
        return row_runs(tr, root, (op, *input, *keys, *prefix), None);
    }
    if super::keyed_tuples::folds_in_order(&tr, op, *input) {
        return super::keyed_tuples::lane0_runs(tr, root, None);
    }
    let seq = tr.seq(*input, &env)?;
    let ks = tr.seq(*keys, &env)?;
    let len = pair_lengths(&seq.len, &ks.len, 0, root);
    let (op_body, ident) = operator_of(&tr, &env, root, op, seq.elem)?;
    let prefix = tr.scalar(*prefix, &env)?;
    let key = key_at(&ks);
    let fold = RunFold::Lanes {
        elem: seq.at.clone(),
        op_body,
        ident,
        prefix,
    };
    let runs = Runs {
        len,
        key,
        t: seq.elem,
        fold,
    };
    Ok(PhaseCode::of(
        &tr,
        runs.count(),
        Vec::new(),
        Inner::Runs(runs),
    ))
}

/// A `reduce_by_key` of rows whose combiner is element-wise (`|a, b| map(|(u, v)| f(u, v),
/// (&a, &b))`, either order, as Listing 5.5's): column `j` of run `r` folds the rows' elements
/// `j` in position order from the prefix's. A row whose length is not the prefix's records the
/// combiner map's length error (its elements past the end read as 0, never loaded).
///
/// With `component`, component `j` of a `reduce_by_key` of rows of tuples (`tuple_rows.rs`).
pub(super) fn row_runs(
    tr: Tr<'_>,
    root: NodeId,
    (op, input, keys, prefix): (&Lambda, NodeId, NodeId, NodeId),
    component: Option<usize>,
) -> Result<PhaseCode, CodegenError> {
    let env = Env::new();
    let rows = tr.rows_of(input, &env, component)?;
    let ks = tr.seq(keys, &env)?;
    let pfx = match component {
        None => tr.seq(prefix, &env)?,
        Some(j) => {
            let t = tr.tuples(prefix, &env)?;
            let mut p = t.parts.get(j).cloned().ok_or_else(|| {
                tr.unsupported(prefix, "(a component of a sequence of tuples out of range)")
            })?;
            p.len = t.len;
            p
        }
    };
    let comb = elementwise(&tr, op, &env, component)?;
    let len = pair_lengths(&rows.rows, &ks.len, 0, root);
    let row = rows.row("p", None);
    let n_expr = format!(
        "surge_run_count({len}, [&](u64 surge_j) {{ return {}; }})",
        key_at(&ks).replace(I, "(surge_j)")
    );
    let inner = Inner::RowRuns {
        node: root,
        whole: Whole::Keyed,
        len,
        key: key_at(&ks),
        width: pfx.len.clone(),
        row_len: row.len.clone(),
        row_at: row.at("j"),
        row_check: comb.check(&pfx.len, &row.len),
        prefix_at: Some(pfx.at("j")),
        combine: comb.combine,
        t: pfx.elem,
    };
    Ok(PhaseCode::of(&tr, n_expr, Vec::new(), inner))
}

/// A root `reduce` of rows whose combiner is element-wise: one row, column `j` folding the
/// rows' elements `j` in order from the prefix's (or the first row's: then its length is the
/// width, and no rows is the empty reduction's error). A root `scan` of rows likewise stores
/// every running row: exclusive from the prefix (the last row is never combined, as in the
/// interpreter), or inclusive from the first row.
pub(super) fn row_reduce(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let root = phase.root;
    let (op, input, prefix, scan) = match &tr.c.node(root).op {
        Op::Reduce { op, input, prefix } => (op, *input, *prefix, false),
        Op::Scan { op, input, prefix } => (op, *input, *prefix, true),
        _ => return Err(tr.unsupported(root, "as a reduce or scan of rows")),
    };
    let env = Env::new();
    let rows = tr.rows(input, &env)?;
    let pfx = prefix.map(|p| tr.seq(p, &env)).transpose()?;
    let comb = elementwise(&tr, op, &env, None)?;
    let row = rows.row("p", None);
    let width = match &pfx {
        Some(p) => p.len.clone(),
        None => rows.row("0", Some(format!("{} > 0", rows.rows))).len,
    };
    let t = match &pfx {
        Some(p) => p.elem,
        None => row.elem,
    };
    let inner = Inner::RowRuns {
        node: root,
        whole: if scan { Whole::Scan } else { Whole::Reduce },
        len: rows.rows.clone(),
        key: String::new(),
        row_check: comb.check(&width, &row.len),
        width,
        row_len: row.len.clone(),
        row_at: row.at("j"),
        prefix_at: pfx.map(|p| p.at("j")),
        combine: comb.combine,
        t,
    };
    let n = if scan { rows.rows } else { "1ULL".into() };
    Ok(PhaseCode::of(&tr, n, Vec::new(), inner))
}

/// An element-wise combiner of rows: its map's node, `g`'s body with the accumulator's element
/// bound to `acc` and the row's to `x`, and whether the map reads the row first.
pub(super) struct Combiner {
    map: NodeId,
    pub(super) combine: String,
    row_first: bool,
}

impl Combiner {
    /// The combiner map's length check of the accumulator (`width`) against row `p`, its
    /// inputs in the map's order (so the message is the interpreter's).
    pub(super) fn check(&self, width: &str, row_len: &str) -> String {
        let (w, r) = (width.to_string(), row_len.to_string());
        let lens = if self.row_first { [r, w] } else { [w, r] };
        equal_lengths(&lens, self.map)
    }
}

/// The map `g` of an element-wise combiner `|a, b| map(g, a, b)` (or `map(g, b, a)`), its
/// parameters for the accumulator's element and the row's, and whether it reads the row first.
pub(super) fn elementwise_map<'c>(
    tr: &Tr<'c>,
    op: &Lambda,
) -> Result<(&'c Lambda, (NodeId, NodeId), bool), CodegenError> {
    let not = || {
        tr.unsupported(
            op.body,
            "as a combiner of rows (only an element-wise map over its two rows is)",
        )
    };
    let [a, b] = op.params.as_slice() else {
        return Err(not());
    };
    let Op::Map { f, inputs } = &tr.c.node(op.body).op else {
        return Err(not());
    };
    match (inputs.as_slice(), f.params.as_slice()) {
        ([ia, ib], [u, v]) if ia == a && ib == b => Ok((f, (*u, *v), false)),
        ([ib, ia], [v, u]) if ia == a && ib == b => Ok((f, (*u, *v), true)),
        _ => Err(not()),
    }
}

/// An element-wise combiner `|a, b| map(g, a, b)` (or `map(g, b, a)`).
///
/// With `component`, `g`'s component `j` (`tuple_rows.rs`).
pub(super) fn elementwise(
    tr: &Tr<'_>,
    op: &Lambda,
    env: &Env,
    component: Option<usize>,
) -> Result<Combiner, CodegenError> {
    let (f, (u, v), row_first) = elementwise_map(tr, op)?;
    let combine = match component {
        Some(j) => tr.component_combiner(op.body, (u, v), f.body, j, env)?,
        None => {
            let mut inner = env.clone();
            inner.insert(u, Bound::Scalar("acc".into()));
            inner.insert(v, Bound::Scalar("x".into()));
            tr.scalar(f.body, &inner)?
        }
    };
    Ok(Combiner {
        map: op.body,
        combine,
        row_first,
    })
}

/// A `scatter` at the phase's root.
///
/// A part of a root scatter of tuples (`map(|t| t.j, scatter(..))`, the parts of `split_parts`)
/// is the scatter of component `j`: a scatter moves whole elements.
pub(super) fn scatter(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let (root, component) = match projected(tr.c, phase.root) {
        Some((s, j)) => (s, Some(j)),
        None => (phase.root, None),
    };
    let Op::Scatter {
        source,
        indices,
        dest,
    } = &tr.c.node(root).op
    else {
        return Err(tr.unsupported(root, "as a scatter phase"));
    };
    if tr.c.node(*dest).ty.depth() == 2 && component.is_none() {
        return super::scatter_rows::scatter_rows(tr, root, (*source, *indices, *dest), None);
    }
    if component.is_none() && super::tuples::seq_of_tuples(tr.ty(root)) {
        return super::scatter_rows::scatter_packed(tr, root, (*source, *indices, *dest));
    }
    let env = Env::new();
    let part = |n: NodeId| match component {
        None => tr.seq(n, &env),
        Some(j) => {
            let t = tr.tuples(n, &env)?;
            let p = t.parts.get(j).cloned();
            let p = p.ok_or_else(|| tr.unsupported(n, "(a component out of range)"))?;
            Ok(SeqV { len: t.len, ..p })
        }
    };
    let (s, idx, d) = (part(*source)?, tr.seq(*indices, &env)?, part(*dest)?);
    let len = pair_lengths(&s.len, &idx.len, 1, root);
    let inner = Inner::Scatter {
        node: root,
        len,
        source: s.at.clone(),
        index: key_at(&idx),
        dest: d.at.clone(),
        t: d.elem,
        packed: None,
    };
    Ok(PhaseCode::of(&tr, d.len, Vec::new(), inner))
}

/// `(s, j)` when `n` is `map(|t| t.j, s)` over a `scatter` of tuples `s` (a boolean component
/// as the parts store it, `t.j as u32`).
fn projected(c: &crate::ir::Computation, n: NodeId) -> Option<(NodeId, usize)> {
    let Op::Map { f, inputs } = &c.node(n).op else {
        return None;
    };
    let ([s], [t]) = (inputs.as_slice(), f.params.as_slice()) else {
        return None;
    };
    let mut body = f.body;
    if let Op::Scalar {
        expr: ScalarExpr::Cast(Elem::U32, x),
    } = &c.node(body).op
        && let ScalarExpr::Value(v) = &**x
        && c.node(*v).ty.as_scalar() == Some(Elem::Bool)
    {
        body = *v;
    }
    match (&c.node(body).op, &c.node(*s).op) {
        (Op::Project { tuple, index }, Op::Scatter { .. }) if tuple == t => Some((*s, *index)),
        _ => None,
    }
}

impl Tr<'_> {
    /// A `scatter` of scalars read lazily inside an element (a map's body builds it): its
    /// length checks every index in position order; element `@I@` is the source's at its last
    /// writer, else the destination's. Each element walks the positions back from the last.
    pub(super) fn lazy_scatter(
        &self,
        n: NodeId,
        (source, indices, dest): (NodeId, NodeId, NodeId),
        env: &Env,
    ) -> Result<SeqV, CodegenError> {
        let (s, idx, d) = (
            self.seq(source, env)?,
            self.seq(indices, env)?,
            self.seq(dest, env)?,
        );
        let key = |p: &str| format!("[&](u64 {p}) {{ return {}; }}", key_at(&idx).replace(I, p));
        let len = format!(
            "surge_scatter_len({}, {}, {}, {}, {}, surge_err)",
            d.len,
            s.len,
            idx.len,
            key("surge_p"),
            n.0
        );
        let count = format!("surge_min({}, {})", s.len, idx.len);
        let t = super::cuda_type(d.elem);
        let at = format!(
            "([&]() -> {t} {{ const u64 surge_w = surge_last_writer({I}, {count}, {}); \
             return surge_w < {count} ? ({t})({}) : ({t})({}); }}())",
            key("surge_q"),
            s.at("surge_w"),
            d.at(I)
        );
        Ok(SeqV {
            len,
            at,
            elem: d.elem,
        })
    }
}
