//! Strict Matrix Market (`.mtx`) reader and writer producing CSR matrices with `f64` values.
//!
//! Strict on purpose: a malformed benchmark input must fail loudly with `file:line`, not
//! silently turn into a different matrix. Conventions (all per the Matrix Market spec
//! unless noted):
//!
//! * Header `%%MatrixMarket matrix <format> <field> <symmetry>` on line 1, words
//!   case-insensitive; `double` is accepted as a synonym of `real`.
//! * `%` comment lines and blank lines may appear anywhere after the header (tolerated
//!   because real-world files contain them, e.g. a second `%%GraphBLAS` line).
//! * `pattern` entries become `1.0`; `integer` values must be integers; NaN/inf are
//!   rejected: in a benchmark file they mean a corrupt file (data built in Rust may hold
//!   them; see the README's "Non-finite values").
//! * Coordinate format: duplicate entries are summed; explicit zeros are kept as
//!   structural entries (benchmarks rely on the file's sparsity pattern).
//! * Array format: only nonzero values are stored in the CSR result.
//! * Symmetric / skew-symmetric / hermitian files must store only the lower triangle;
//!   the reader expands them to full storage (skew mirrors with the negated value;
//!   hermitian on a real field behaves like symmetric). A skew-symmetric diagonal entry
//!   is an error.
//! * Complex matrices are rejected: Surge computes with real values only.

mod csr;
mod entries;
mod header;
mod read;
mod write;

pub use csr::CsrMatrix;
pub use read::{parse_mtx, read_header, read_mtx};
pub use write::write_mtx;

/// Storage layout declared in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Coordinate,
    Array,
}

/// Value type declared in the header (`double` parses as `Real`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Real,
    Integer,
    Pattern,
    Complex,
}

/// Symmetry declared in the header; anything but `General` stores the lower triangle only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
    Hermitian,
}

/// The parsed `%%MatrixMarket` banner line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    pub format: Format,
    pub field: Field,
    pub symmetry: Symmetry,
}

/// A reader/writer error; `line` is 1-based and absent for whole-file problems (I/O).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line_suffix(.line))]
pub struct MtxError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

fn line_suffix(line: &Option<usize>) -> String {
    match line {
        Some(l) => format!(":{l}"),
        None => String::new(),
    }
}

impl MtxError {
    fn at(file: &str, line: usize, message: impl Into<String>) -> Self {
        MtxError {
            file: file.to_string(),
            line: Some(line),
            message: message.into(),
        }
    }

    fn whole(file: &str, message: impl Into<String>) -> Self {
        MtxError {
            file: file.to_string(),
            line: None,
            message: message.into(),
        }
    }
}
