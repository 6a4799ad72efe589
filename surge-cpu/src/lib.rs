//! Surge's CPU backend. Today: the reference interpreter, the correctness oracle every backend is
//! checked against. The rustc-compiled kernels and rayon skeletons build on it.

pub mod interpret;

pub use interpret::{Value, interpret};

use surge_codegen::CodegenError;
use surge_codegen::ir::NodeId;

/// The one public error type of `surge-cpu`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CpuError {
    /// The computation or its inputs are invalid.
    #[error(transparent)]
    Invalid(#[from] CodegenError),
    /// Evaluation failed on these inputs (an index out of range, a ragged transpose, ...).
    #[error("`{op}` (node {node}) failed: {message}")]
    Runtime {
        op: &'static str,
        node: NodeId,
        message: String,
    },
}
