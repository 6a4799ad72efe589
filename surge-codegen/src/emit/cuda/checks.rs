//! The run-time checks of the emitted kernels: the device error record's layout and codes (the
//! `SURGE_*` constants and `surge_*` check helpers of `templates/cuda/prelude.cu`), their decoding
//! into the interpreter's messages, and the C++ of the map-input length check.

use crate::ir::NodeId;

/// The device error record every kernel takes as its last parameter, `u64 *surge_err`:
/// [`ERROR_WORDS`] words, `[node << 8 | code, a, b, c]`, all zero while no check has failed. The
/// first failing thread claims word 0 with `atomicCAS` and writes the values; the codes are the
/// `SURGE_*` constants of `templates/cuda/prelude.cu`.
pub const ERROR_WORDS: usize = 4;

/// The run-time check codes of the emitted kernels (`SURGE_*` in `prelude.cu`).
pub mod check {
    /// A gather index out of range: a = index, b = position, c = source length.
    pub const GATHER: u64 = 1;
    /// An `index`/`at` out of range: a = index, c = length.
    pub const INDEX: u64 = 2;
    /// A nest offset outside the flat sequence: a = offset, b = its position, c = flat length.
    pub const OFFSET_RANGE: u64 = 3;
    /// Decreasing nest offsets: a = offsets\[b\], c = offsets\[b + 1\].
    pub const OFFSET_ORDER: u64 = 4;
    /// A nest without offsets.
    pub const OFFSETS_EMPTY: u64 = 5;
    /// A reduction without a prefix over an empty row.
    pub const EMPTY_REDUCE: u64 = 6;
    /// A tile size (b = 0) or stride (b = 1) that is not positive: a = the value.
    pub const NOT_POSITIVE: u64 = 7;
    /// A range with stride 0.
    pub const STRIDE_ZERO: u64 = 8;
    /// A negative replicate length: a = the length.
    pub const NEGATIVE_LEN: u64 = 9;
    /// A map's inputs differ in length: a = input 0's length, b = the input, c = its length.
    pub const EQUAL_LEN: u64 = 10;
    /// A transposed sequence's rows differ in length: a = row 0's length, b = row k, c = its
    /// length.
    pub const RAGGED: u64 = 11;
    /// The two sequences of a `reduce_by_key` (b = 0: input and keys) or a `scatter` (b = 1:
    /// source and indices) differ in length: a = the first's length, c = the second's.
    pub const PAIR_LEN: u64 = 12;
    /// A scatter index out of range: a = index, b = position, c = destination length.
    pub const SCATTER: u64 = 13;
    /// An integer division or remainder by zero.
    pub const DIV_ZERO: u64 = 14;
    /// An integer division or remainder of the type's minimum by -1.
    pub const DIV_OVERFLOW: u64 = 15;
}

/// Decodes a device error record: the failing node and the message the interpreter (and the CPU
/// backend) gives for the same failure. `None` when no check failed (word 0 is zero); an unknown
/// code still names its node.
pub fn decode_error(rec: &[u64; ERROR_WORDS]) -> Option<(NodeId, String)> {
    if rec[0] == 0 {
        return None;
    }
    let (node, code) = (NodeId(rec[0] >> 8), rec[0] & 0xff);
    let (a, b, c) = (rec[1] as i64, rec[2] as i64, rec[3] as i64);
    let message = match code {
        check::GATHER => {
            format!("index {a} at position {b} is out of range for a source of length {c}")
        }
        check::INDEX => format!("index {a} is out of range for a sequence of length {c}"),
        check::OFFSET_RANGE => {
            format!("offsets[{b}] = {a} is out of range for a sequence of length {c}")
        }
        check::OFFSET_ORDER => format!(
            "offsets are not monotone: offsets[{b}] = {a} > offsets[{}] = {c}",
            b + 1
        ),
        check::OFFSETS_EMPTY => {
            "offsets are empty; a nested sequence of n rows needs n + 1 offsets".into()
        }
        check::EMPTY_REDUCE => "reduction of an empty sequence without a prefix".into(),
        check::NOT_POSITIVE => format!(
            "{} must be positive, got {a}",
            if b == 0 { "tile size" } else { "stride" }
        ),
        check::STRIDE_ZERO => "stride is 0".into(),
        check::NEGATIVE_LEN => format!("length {a} is negative"),
        check::EQUAL_LEN => {
            format!("input lengths differ: input 0 has length {a}, input {b} has length {c}")
        }
        check::RAGGED => format!(
            "rows differ in length (row 0 has {a}, row {b} has {c}); only uniform nesting transposes"
        ),
        check::PAIR_LEN => {
            let (x, y) = if b == 0 {
                ("input", "keys")
            } else {
                ("source", "indices")
            };
            crate::ir::lengths_differ(x, a, y, c)
        }
        check::SCATTER => crate::ir::out_of_range(a as i128, b as usize, "destination", c as usize),
        check::DIV_ZERO => "integer division by zero".into(),
        check::DIV_OVERFLOW => "integer division overflow (MIN / -1)".into(),
        other => format!("run-time check {other} failed (values {a}, {b}, {c})"),
    };
    Some((node, message))
}

/// [`decode_error`] for a record of computation `c`'s kernels: an `index` whose index is a
/// `u64` prints it unsigned, as the interpreter does (the record holds it as an `i64`).
pub fn decode_error_in(
    c: &crate::ir::Computation,
    rec: &[u64; ERROR_WORDS],
) -> Option<(NodeId, String)> {
    let (node, message) = decode_error(rec)?;
    let index = match c.nodes.get(node.0 as usize).map(|n| &n.op) {
        Some(crate::ir::Op::Index { index, .. }) => Some(*index),
        _ => None,
    };
    let unsigned = index.is_some_and(|i| c.node(i).ty.as_scalar() == Some(crate::ir::Elem::U64));
    if rec[0] & 0xff == check::INDEX && unsigned {
        let c = rec[3] as i64;
        return Some((
            node,
            format!(
                "index {} is out of range for a sequence of length {c}",
                rec[1]
            ),
        ));
    }
    Some((node, message))
}

/// The common length of a map's inputs: input 0's, checked against every other input's (a
/// difference is recorded and the shorter length used, so nothing reads past an input).
pub(super) fn equal_lengths(lens: &[String], node: NodeId) -> String {
    let checks: Vec<String> = lens
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, l)| {
            format!(
                "surge_equal_len({}, {l}, {k}, {}, surge_err)",
                lens[0], node.0
            )
        })
        .collect();
    match checks.as_slice() {
        [] => lens[0].clone(),
        [one] => one.clone(),
        _ => checks
            .iter()
            .skip(1)
            .fold(checks[0].clone(), |a, b| format!("surge_min({a}, {b})")),
    }
}

/// The common length of the two sequences of a `reduce_by_key` (`which` = 0) or a `scatter`
/// (`which` = 1): the first's, checked against the second's (a difference is recorded and the
/// shorter length used).
pub(super) fn pair_lengths(a: &str, b: &str, which: u64, node: NodeId) -> String {
    format!("surge_pair_len({a}, {b}, {which}, {}, surge_err)", node.0)
}
