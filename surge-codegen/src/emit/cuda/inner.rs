//! The inner level of a phase (`PhaseCode::inner`): what one element of the outer level
//! computes and stores (a map body, a reduction or scan with its operator, copied rows, runs of
//! a `reduce_by_key`, a scatter), and the result shape each stores.

use super::OutputShape;
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
        result: String,
        out_elem: Elem,
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
    /// A root `reduce_by_key` (`keyed.rs`): the checked length, element and key templates over
    /// `@I@`, the element type, operator, identity and prefix.
    Runs {
        len: String,
        elem: String,
        key: String,
        t: Elem,
        op_body: String,
        ident: String,
        prefix: String,
    },
    /// A root `reduce_by_key` of rows with an element-wise combiner (Listing 5.5, `keyed.rs`):
    /// the checked length and key template over `@I@`, the rows' width (the prefix's length),
    /// row `p`'s length and element `j`, the check of row `p`'s length, the prefix's element `j`
    /// and the combiner over `acc` and `x`.
    RowRuns {
        /// The reduce (or reduce_by_key) node.
        node: NodeId,
        /// A root `reduce` of rows: one run of every row, the prefix optional.
        whole: bool,
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
    /// destination templates over `@I@`, the element type.
    Scatter {
        node: NodeId,
        len: String,
        source: String,
        index: String,
        dest: String,
        t: Elem,
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
            Inner::Runs { t, .. } | Inner::Scatter { t, .. } => OutputShape {
                elem: t.stored(),
                nested: false,
            },
        }
    }
}
