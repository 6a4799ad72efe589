//! A root `scatter` whose elements are rows (`scatter(rows, indices, dest_rows)`): the result
//! has the destination's row count, and row `d` is the source row last written at `d` (in order
//! of position), else the destination's row `d`, so each row's length is its last writer's.
//!
//! The phase's rows kernel (`shape.cu.tera`) finds those lengths on one thread in order of
//! position, so the first out-of-range index is the error, as in the interpreter. The kernel
//! (`scatter_rows.cu.tera`) runs on one block: it copies every destination row, then writes the
//! source rows in order of position, one row at a time over all the block's threads, each
//! clipped to its destination row's allotted length. The last writer of a row fills it whole,
//! so the result is the interpreter's whatever the earlier writers' lengths.
//!
//! A scatter of tuples of scalars that a later phase reads (`scatter_packed`) is stored packed,
//! a row of one u64 word per component per destination element (`fold::packed_write`'s
//! layout), by the scalar scatter's kernel (`scatter.cu.tera`): each write stores every word.

use super::checks::pair_lengths;
use super::elements::{Env, SeqV, Tr};
use super::fold::{pack_stores, packed_tuple};
use super::keyed::key_at;
use super::phase::{Inner, PhaseCode};
use super::rows::RowsV;
use super::tuples::TupleSeqV;
use crate::CodegenError;
use crate::ir::NodeId;

/// The scatter `root` of rows `source` at `indices` into rows `dest` (or of their component
/// `component`, for rows of tuples: `tuple_rows.rs`).
pub(super) fn scatter_rows(
    tr: Tr<'_>,
    root: NodeId,
    (source, indices, dest): (NodeId, NodeId, NodeId),
    component: Option<usize>,
) -> Result<PhaseCode, CodegenError> {
    let env = Env::new();
    let (s, idx, d) = (
        tr.rows_of(source, &env, component)?,
        tr.seq(indices, &env)?,
        tr.rows_of(dest, &env, component)?,
    );
    scatter_rows_of(tr, root, s, &idx, d)
}

/// The scatter `root` of rows `s` at `idx` into rows `d`, translated.
pub(super) fn scatter_rows_of(
    tr: Tr<'_>,
    root: NodeId,
    s: RowsV,
    idx: &SeqV,
    d: RowsV,
) -> Result<PhaseCode, CodegenError> {
    let (src_row, dest_row) = (s.row("pos", None), d.row("d", None));
    let t = dest_row.elem;
    let inner = Inner::ScatterRows {
        node: root,
        len: pair_lengths(&s.rows, &idx.len, 1, root),
        index: key_at(idx).replace(super::elements::I, "(pos)"),
        source_len: src_row.len.clone(),
        source_at: src_row.at("j"),
        dest_len: dest_row.len.clone(),
        dest_at: dest_row.at("j"),
        t,
    };
    Ok(PhaseCode::of(&tr, d.rows, Vec::new(), inner))
}

/// The scatter `root` of tuples of scalars, stored packed for a later phase.
pub(super) fn scatter_packed(
    tr: Tr<'_>,
    root: NodeId,
    (source, indices, dest): (NodeId, NodeId, NodeId),
) -> Result<PhaseCode, CodegenError> {
    let env = Env::new();
    let crate::ir::Type::Seq(item) = tr.ty(root) else {
        unreachable!("a scatter is a sequence")
    };
    let elems = packed_tuple(item)
        .ok_or_else(|| tr.unsupported(root, "as a stored tuple (not a tuple of scalars)"))?;
    let (s, idx, d) = (
        tr.tuples(source, &env)?,
        tr.seq(indices, &env)?,
        tr.tuples(dest, &env)?,
    );
    let width = elems.len();
    let at = |t: &TupleSeqV, i: &str| t.parts.iter().map(|p| p.at(i)).collect::<Vec<_>>();
    let inner = Inner::Scatter {
        node: root,
        len: pair_lengths(&s.len, &idx.len, 1, root),
        source: pack_stores(&format!("(u64)ix * {width}"), &at(&s, "(pos)"), &elems),
        index: key_at(&idx),
        dest: pack_stores(&format!("d * {width}"), &at(&d, "(d)"), &elems),
        t: crate::ir::Elem::U64,
        packed: Some(width),
    };
    Ok(PhaseCode::of(&tr, d.len, Vec::new(), inner))
}
