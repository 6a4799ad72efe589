//! Phases whose root is a value the translator reads lazily, stored element by element or row
//! by row: an element-wise producer (`gather`, `range`, `reverse`, ..), a nested producer
//! (`nest`, `split`, `transpose`, rows mapped or repeated), scalar code over a map or over an
//! earlier phase's result (one element), one row of a nested level, and one part of a
//! tuple-valued producer.

use super::elements::{Env, RowsV, SeqV, Tr, rows_of_tuples, seq_of_tuples};
use super::phase::{Inner, PhaseCode, bind_row, store};
use crate::CodegenError;
use crate::analysis::Phase;
use crate::ir::{Computation, NodeId, Op, OpKind};
use std::collections::BTreeMap;

/// A phase whose root is an element-wise producer of a flat sequence of scalars (`gather`,
/// `range`, `replicate`, `reverse`, `striding`): its one level walks the elements.
pub(super) fn is_flat_producer(c: &Computation, phase: &Phase) -> bool {
    let node = c.node(phase.root);
    phase.levels.len() == 1
        && crate::emit::lower::flat(&node.op).is_some()
        && matches!(&node.ty, crate::ir::Type::Seq(t) if t.as_scalar().is_some())
}

/// A flat producer at the root, emitted as a map whose body is element `i` of the sequence.
pub(super) fn flat_root(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let seq = tr.seq(phase.root, &Env::new())?;
    let inner = Inner::None {
        result: store(seq.elem, seq.at("i")),
        elem: seq.elem.stored(),
    };
    Ok(PhaseCode::of(&tr, seq.len, Vec::new(), inner))
}

/// A phase whose root is an element-wise producer of a flat sequence of tuples of scalars
/// (`zip`, `join`, `reverse`/`striding`/`gather` of tuples) that a later phase reads (the final
/// phase's tuples are stored in parts, `mod.rs`).
pub(super) fn is_flat_tuple_producer(c: &Computation, phase: &Phase) -> bool {
    let node = c.node(phase.root);
    let flat = crate::emit::lower::flat(&node.op).is_some()
        || matches!(node.op, Op::Zip { .. } | Op::Join { .. });
    phase.levels.len() == 1
        && flat
        && matches!(&node.ty, crate::ir::Type::Seq(t) if super::fold::packed_tuple(t).is_some())
}

/// A flat producer of tuples at the root: element `i` stored packed, one u64 word per
/// component, as a tuple-valued map's elements are.
pub(super) fn flat_tuple_root(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let crate::ir::Type::Seq(item) = &tr.c.node(phase.root).ty else {
        unreachable!("a flat tuple producer is a sequence")
    };
    let elems = super::fold::packed_tuple(item).expect("a tuple of scalars");
    let t = tr.tuples(phase.root, &Env::new())?;
    let values: Vec<String> = t.parts.iter().map(|p| p.at("i")).collect();
    let write = super::fold::pack_stores("out_off[i]", &values, &elems);
    let inner = Inner::Packed {
        code: format!("if (lane == 0) {{ {write}}}"),
        width: elems.len(),
    };
    Ok(PhaseCode::of(&tr, t.len, Vec::new(), inner))
}

/// A phase whose root is scalar code over its outer `map` (`at(map(f, x), k)`; a program without
/// a data-parallel operator, anchored as `at(map(|_| r, range(0, 1)), 0)`). The map's body may
/// hold levels of its own (`at(map(|v| reduce(g, scan(g, z, v)), x), k)`, random seed 31): the
/// element read computes them in place, as any element expression does.
pub(super) fn is_scalar_over_map(c: &Computation, phase: &Phase) -> bool {
    phase.levels.first().is_some_and(|l| l.op == OpKind::Map)
        && c.node(phase.root).ty.as_scalar().is_some()
}

/// A flat or nested sequence of scalars read out of its phase's one `map` at the root
/// (`at(map(f, x), k)` where `f` gives rows, or rows of rows): one row, or the rows of one
/// element, copied out, computed where they are read.
pub(super) fn is_row_over_map(c: &Computation, phase: &Phase) -> bool {
    let ty = &c.node(phase.root).ty;
    let Some(level) = phase.levels.first() else {
        return false;
    };
    // The map's body may be a level of its own (`map.replicate`): the row is read lazily all
    // the same.
    let body_level = match (&c.node(level.node).op, phase.levels.get(1)) {
        (_, None) => true,
        (Op::Map { f, .. }, Some(l)) => phase.levels.len() == 2 && l.node == f.body,
        _ => false,
    };
    level.op == OpKind::Map
        && body_level
        && phase.root != level.node
        && (1..=2).contains(&ty.depth())
        && !seq_of_tuples(ty)
        && !rows_of_tuples(ty)
}

/// A phase whose levels are a `reduce`, `scan` or `reduce_by_key` of rows and its combiner's
/// `map` (`|a, b| map(g, a, b)`): the combiner's level belongs to the outer one.
pub(super) fn combined_rows(c: &Computation, phase: &Phase) -> bool {
    let [outer, inner] = phase.levels.as_slice() else {
        return false;
    };
    match &c.node(outer.node).op {
        Op::Reduce { op, .. } | Op::Scan { op, .. } | Op::ReduceByKey { op, .. } => {
            inner.op == OpKind::Map && op.body == inner.node
        }
        _ => false,
    }
}

/// Scalar code over an earlier phase's result at its root (`mod.rs`, `materialized`).
pub(super) fn is_scalar_over_result(
    c: &Computation,
    roots: &BTreeMap<NodeId, usize>,
    p: usize,
    phase: &Phase,
) -> bool {
    (phase.levels.len() == 1 || combined_rows(c, phase))
        && c.node(phase.root).ty.as_scalar().is_some()
        && phase.root != phase.levels[0].node
        && roots.get(&phase.levels[0].node).is_some_and(|k| *k < p)
}

/// Scalar code over a map at the root: one element, the root itself, in which the map is read
/// lazily (element `k` computed where the code reads it, as any element-wise producer is).
pub(super) fn scalar_root(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let elem = tr.c.node(phase.root).ty.as_scalar().expect("a scalar root");
    let value = tr.scalar(phase.root, &Env::new())?;
    let inner = Inner::None {
        result: store(elem, value),
        elem: elem.stored(),
    };
    Ok(PhaseCode::of(&tr, "1ULL".into(), Vec::new(), inner))
}

/// Scalar code at the root over the phase's one level, a producer the translator reads lazily
/// (`len(gather(x, idx))`, `at(zip(a, b), k).0`, `len(join(a, b))`, `len(nest(zip(a, b), o))`):
/// flat sequences of scalars or tuples, and nested ones.
pub(super) fn is_scalar_over_producer(c: &Computation, phase: &Phase) -> bool {
    let [level] = phase.levels.as_slice() else {
        return false;
    };
    let node = c.node(level.node);
    let producer = !matches!(
        node.op,
        Op::Map { .. }
            | Op::Reduce { .. }
            | Op::Scan { .. }
            | Op::ReduceByKey { .. }
            | Op::Scatter { .. }
            | Op::Input { .. }
    );
    phase.root != level.node
        && c.node(phase.root).ty.as_scalar().is_some()
        && producer
        && (1..=2).contains(&node.ty.depth())
}

/// Scalar code over a producer: one element, which first reads every element of the producer
/// (so each one's check runs, as the interpreter evaluates the whole sequence: a gathered index
/// out of range is an error even where the code reads only the length), then computes the
/// code, reading the producer lazily.
pub(super) fn scalar_over_producer(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let touch = touch_all(&tr, phase.levels[0].node)?;
    let elem = tr.c.node(phase.root).ty.as_scalar().expect("a scalar root");
    let value = tr.scalar(phase.root, &Env::new())?;
    let inner = Inner::None {
        result: store(elem, value),
        elem: elem.stored(),
    };
    Ok(PhaseCode::of(&tr, "1ULL".into(), vec![touch], inner))
}

/// A statement that reads every element of producer `n` (every component of tuples, every
/// element of every row).
fn touch_all(tr: &Tr<'_>, n: NodeId) -> Result<String, CodegenError> {
    let env = Env::new();
    let ty = &tr.c.node(n).ty;
    let seqs: Vec<SeqV> = match ty.depth() {
        1 if seq_of_tuples(ty) => {
            let t = tr.tuples(n, &env)?;
            t.parts
                .into_iter()
                .map(|p| SeqV {
                    len: t.len.clone(),
                    ..p
                })
                .collect()
        }
        1 => vec![tr.seq(n, &env)?],
        _ => {
            let rows = if rows_of_tuples(ty) {
                tr.tuple_rows(n, &env)?
            } else {
                vec![tr.rows(n, &env)?]
            };
            let loops = rows.iter().map(|r| {
                let row = r.row("surge_r", None);
                format!(
                    "for (u64 surge_r = 0; surge_r < {}; ++surge_r) {{ const u64 surge_n = {}; \
                     for (u64 surge_t = 0; surge_t < surge_n; ++surge_t) (void)({}); }}",
                    r.rows,
                    row.len,
                    row.at("surge_t")
                )
            });
            return Ok(loops.collect::<Vec<_>>().join(" "));
        }
    };
    let loops = seqs.iter().map(|s| {
        format!(
            "for (u64 surge_t = 0; surge_t < {}; ++surge_t) (void)({});",
            s.len,
            s.at("surge_t")
        )
    });
    Ok(loops.collect::<Vec<_>>().join(" "))
}

/// A flat sequence read lazily from a phase whose level is nested (`at(transpose(m), k)`): one
/// row copied out (the level's schedule has two levels, as a row copy's may).
pub(super) fn single_row_root(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let seq = tr.seq(phase.root, &Env::new())?;
    Ok(PhaseCode::of(
        &tr,
        "1ULL".into(),
        Vec::new(),
        Inner::Copy { seq },
    ))
}

/// A phase whose root is a `nest`, `split` or `transpose` of scalars: its two levels walk the
/// rows and their elements.
pub(super) fn is_nested_producer(c: &Computation, phase: &Phase) -> bool {
    let node = c.node(phase.root);
    phase.levels.len() == 1
        && matches!(
            node.op,
            Op::Nest { .. }
                | Op::Split { .. }
                | Op::Transpose { .. }
                | Op::Reverse { .. }
                | Op::Striding { .. }
                | Op::Gather { .. }
                | Op::Replicate { .. }
        )
        && node.ty.depth() == 2
}

/// A nested producer at the root: row `i` bound as a map input's row is, its elements copied
/// out (the host builds the offsets from the row lengths, as for a `map.scan`).
pub(super) fn nested_root(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let rows = tr.rows(phase.root, &Env::new())?;
    Ok(copy_rows(&tr, rows))
}

/// A phase that copies out `rows`, row `i` by the lanes of the outer level's resource.
pub(super) fn copy_rows(tr: &Tr<'_>, rows: RowsV) -> PhaseCode {
    let mut bind = Vec::new();
    let seq = bind_row(&rows, 0, &mut bind);
    PhaseCode::of(tr, rows.rows, bind, Inner::Copy { seq })
}

/// A phase of one level whose root is a sequence the translator reads lazily over the level
/// (one part of a tuple-valued `zip`, `join` or other producer: `map(|t| t.j, zip(a, b))`),
/// stored element by element, or row by row.
pub(super) fn is_lazy_root(c: &Computation, phase: &Phase) -> bool {
    let [level] = phase.levels.as_slice() else {
        return false;
    };
    let ty = &c.node(phase.root).ty;
    phase.root != level.node
        && !matches!(
            c.node(level.node).op,
            Op::Map { .. }
                | Op::Reduce { .. }
                | Op::Scan { .. }
                | Op::ReduceByKey { .. }
                | Op::Scatter { .. }
        )
        && (1..=2).contains(&ty.depth())
        && !seq_of_tuples(ty)
}

/// A phase whose outer level (and so every level) an earlier phase stored (a part of a result over a root
/// `reduce_by_key` or `scatter` of rows of tuples, `mod.rs`, `materialized_parts`): its root
/// reads them lazily.
pub(super) fn reads_stored_levels(
    roots: &BTreeMap<NodeId, usize>,
    p: usize,
    phase: &Phase,
) -> bool {
    // The outer level holds the others.
    phase
        .levels
        .first()
        .is_some_and(|l| l.node != phase.root && roots.get(&l.node).is_some_and(|k| *k < p))
}

/// A root over stored levels: one element, a flat sequence or rows, computed as read.
pub(super) fn over_stored(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    match tr.c.node(phase.root).ty.depth() {
        0 => scalar_root(tr, phase),
        1 => flat_root(tr, phase),
        _ => nested_root(tr, phase),
    }
}
