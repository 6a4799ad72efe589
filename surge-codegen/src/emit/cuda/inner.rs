//! The inner level of a phase (`PhaseCode::inner`): what one element of the outer level
//! computes and stores (a map body, a reduction or scan with its operator, copied rows, runs of
//! a `reduce_by_key`, a scatter), and the result shape each stores.

use super::OutputShape;
use super::elements::I;
use super::elements::SeqV;
use crate::ir::{Elem, NodeId};

/// The inner level of a phase.
#[derive(Debug, Clone)]
pub(super) enum Inner {
    /// `map` with a scalar body: the output element.
    None { result: String, elem: Elem },
    Reduce {
        /// The reduce node (named by the empty-row check when there is no prefix).
        node: NodeId,
        seq: SeqV,
        op_body: String,
        ident: String,
        prefix: Option<String>,
        /// The stored value over the reduced `acc`, or with `packed` the statements storing
        /// a tuple of scalars over it, `packed` u64 words at `out[out_off[i] + c]` (for a later
        /// phase, as `Packed` stores a fold's).
        result: String,
        out_elem: Elem,
        packed: Option<usize>,
    },
    Scan {
        seq: SeqV,
        op_body: String,
        ident: String,
        prefix: Option<String>,
    },
    /// Rows copied out (a `nest`, `split` or `transpose` at the phase's root): row `i` is `seq`.
    Copy { seq: SeqV },
    /// A reduction whose operator has no identity this emitter knows, or whose elements are
    /// tuples (argmin): lane 0 of the element's resource folds the row sequentially in the
    /// interpreter's order (`fold.rs`) and writes `out[i]`, whatever the inner schedule.
    Fold { code: String, out_elem: Elem },
    /// A fold or a map body whose result is a tuple of scalars that a later phase reads
    /// (`fold.rs`): lane 0 stores it packed, `width` u64 words at `out[out_off[i] + c]`
    /// (`surge_pack`).
    Packed { code: String, width: usize },
    /// A scan folded the same way (`fold.rs`): lane 0 writes row `i`'s running values, `len`
    /// of them (the input's length), at `out[out_off[i] + j]`.
    FoldScan {
        len: String,
        code: String,
        out_elem: Elem,
    },
    /// A root `reduce_by_key` of scalars or of tuples (`keyed.rs`, `keyed_tuples.rs`).
    Runs(Runs),
    /// A root `reduce_by_key` of rows with an element-wise combiner (Listing 5.5, `keyed.rs`):
    /// the checked length and key template over `@I@`, the rows' width (the prefix's length),
    /// row `p`'s length and element `j`, the check of row `p`'s length, the prefix's element `j`
    /// and the combiner over `acc` and `x`.
    RowRuns {
        /// The reduce (or reduce_by_key) node.
        node: NodeId,
        /// Runs of equal keys, or one run of every row (reduced, or scanned row by row).
        whole: Whole,
        len: String,
        key: String,
        width: String,
        row_len: String,
        row_at: String,
        row_check: String,
        prefix_at: Option<String>,
        combine: String,
        t: Elem,
    },
    /// A root `scatter` (`keyed.rs`): the checked source length, the source, index and
    /// destination templates over `@I@`, the element type. With `packed`, a scatter of tuples
    /// that a later phase reads: `source` and `dest` are the statements that store element
    /// `pos` at word `ix · packed` and element `d` at word `d · packed` (`fold::pack_stores`).
    Scatter {
        node: NodeId,
        len: String,
        source: String,
        index: String,
        dest: String,
        t: Elem,
        packed: Option<usize>,
    },
    /// A root `scatter` of rows (`scatter_rows.rs`): the checked source length and the index
    /// template over `pos`; the source row `pos`'s and the destination row `d`'s length and
    /// element `j`; the element type.
    ScatterRows {
        node: NodeId,
        len: String,
        index: String,
        source_len: String,
        source_at: String,
        dest_len: String,
        dest_at: String,
        t: Elem,
    },
}

impl Inner {
    /// The result one phase with this inner level stores.
    pub(super) fn shape(&self) -> OutputShape {
        match self {
            Inner::None { elem, .. } => OutputShape {
                elem: *elem,
                nested: false,
            },
            Inner::Reduce {
                packed: Some(_), ..
            } => OutputShape {
                elem: Elem::U64,
                nested: true,
            },
            Inner::Reduce { out_elem, .. } | Inner::Fold { out_elem, .. } => OutputShape {
                elem: *out_elem,
                nested: false,
            },
            Inner::Scan { seq, .. } => OutputShape {
                elem: seq.elem.stored(),
                nested: true,
            },
            Inner::Copy { seq } => OutputShape {
                elem: seq.elem.stored(),
                nested: true,
            },
            Inner::Packed { .. } => OutputShape {
                elem: Elem::U64,
                nested: true,
            },
            Inner::FoldScan { out_elem, .. } => OutputShape {
                elem: *out_elem,
                nested: true,
            },
            Inner::RowRuns { t, .. } | Inner::ScatterRows { t, .. } => OutputShape {
                elem: t.stored(),
                nested: true,
            },
            Inner::Runs(r) => r.shape(),
            Inner::Scatter { t, packed, .. } => OutputShape {
                elem: t.stored(),
                nested: packed.is_some(),
            },
        }
    }
}

/// What a row-runs kernel folds (`runs_rows.cu.tera`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Whole {
    /// A `reduce_by_key` of rows: one output row per run of equal keys.
    Keyed,
    /// A root `reduce` of rows: one run of every row, the prefix optional.
    Reduce,
    /// A root `scan` of rows: every running row stored.
    Scan,
}

/// A root `reduce_by_key`: the checked length and key template over `@I@`, and how each run
/// is folded (`runs.cu.tera`).
#[derive(Debug, Clone)]
pub(super) struct Runs {
    pub(super) len: String,
    pub(super) key: String,
    /// The element type the runs fold (the stored element's, for a fold).
    pub(super) t: Elem,
    pub(super) fold: RunFold,
}

/// How a `reduce_by_key`'s runs are folded.
#[derive(Debug, Clone)]
pub(super) enum RunFold {
    /// Scalars with an operator that has an identity: each run reduced by the resource's lanes
    /// (the element template over `@I@`, the operator over `a` and `b`, identity, prefix).
    Lanes {
        elem: String,
        op_body: String,
        ident: String,
        prefix: String,
    },
    /// Tuples, or an operator without an identity (`keyed_tuples.rs`): lane 0 folds each run in
    /// order; `code` declares the accumulator from the prefix, advances `end` over the run that
    /// starts at `start` (key `k0`) and stores its result as run `r`. With `packed`, each run is
    /// a tuple stored packed as that many u64 words (a row of the nested output).
    Lane0 { code: String, packed: Option<usize> },
}

impl Runs {
    /// The number of runs of equal consecutive keys: the phase's element count.
    pub(super) fn count(&self) -> String {
        format!(
            "surge_run_count({}, [&](u64 surge_j) {{ return {}; }})",
            self.len,
            self.key.replace(I, "(surge_j)")
        )
    }

    /// The result the phase stores: one element per run, or a packed tuple's words per run.
    fn shape(&self) -> OutputShape {
        match self.fold {
            RunFold::Lane0 {
                packed: Some(_), ..
            } => OutputShape {
                elem: Elem::U64,
                nested: true,
            },
            _ => OutputShape {
                elem: self.t.stored(),
                nested: false,
            },
        }
    }

    /// The row length of a packed result (each run's words), for the shape kernel.
    pub(super) fn row_len(&self) -> Option<String> {
        match self.fold {
            RunFold::Lane0 {
                packed: Some(w), ..
            } => Some(format!("{w}ULL")),
            _ => None,
        }
    }

    /// Inserts the template variables of `runs.cu.tera` (with `max_blocks`, the most blocks
    /// that take part).
    pub(super) fn insert(&self, ctx: &mut tera::Context, max_blocks: u32) {
        ctx.insert("len_expr", &self.len);
        ctx.insert("key_expr", &self.key.replace(I, "(j)"));
        ctx.insert("max_blocks", &max_blocks);
        match &self.fold {
            RunFold::Lanes {
                elem,
                op_body,
                ident,
                prefix,
            } => {
                ctx.insert("fold", "");
                ctx.insert("elem_expr", &elem.replace(I, "(j)"));
                ctx.insert("op_body", op_body);
                ctx.insert("ident", ident);
                ctx.insert("prefix", prefix);
            }
            RunFold::Lane0 { code, .. } => ctx.insert("fold", code),
        }
    }
}
