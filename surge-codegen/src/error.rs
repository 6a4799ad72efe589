//! The one public error type of `surge-codegen`.

use crate::ir::{IrError, NodeId, SourceLoc, site};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodegenError {
    /// The IR is ill-formed: names the operator and node at fault.
    #[error("invalid computation: {0}")]
    Ir(#[from] IrError),
    /// The computation is valid but outside what the analysis supports.
    #[error("analysis of {}: {message}", site(.op, .loc.as_ref(), Some(*.node)))]
    Analysis {
        op: &'static str,
        node: NodeId,
        /// Where the user built the node ([`Computation::loc`](crate::ir::Computation::loc)).
        loc: Option<SourceLoc>,
        message: String,
    },
    /// The reference interpreter failed on these inputs (an index out of range, a ragged
    /// transpose, ...): names the operator and node whose check failed.
    #[error("{} failed: {message}", site(.op, .loc.as_ref(), Some(*.node)))]
    Eval {
        op: &'static str,
        node: NodeId,
        loc: Option<SourceLoc>,
        message: String,
    },
    /// Input data does not match the computation's input declarations.
    #[error("input `{input}`: {message}")]
    Input { input: String, message: String },
    /// A schedule that violates the lattice invariants, or an expression sequence without one.
    #[error("schedule `{schedule}`: {message}")]
    Schedule { schedule: String, message: String },
    /// An unknown platform, device or machine name.
    #[error("target `{part}`: {message}")]
    Target { part: String, message: String },
    /// A malformed or unknown variant id; the message names the bad part.
    #[error("variant id `{id}`: {message}")]
    Variant { id: String, message: String },
    /// The emitter for `backend` cannot generate this operator (in this position) yet.
    #[error("the {backend} emitter cannot generate {}: {message}", site(.op, .loc.as_ref(), Some(*.node)))]
    Emit {
        backend: &'static str,
        op: &'static str,
        node: NodeId,
        loc: Option<SourceLoc>,
        message: String,
    },
    /// The emitter cannot generate code for a phase or variant: names which and why.
    #[error("emitting {what}: {message}")]
    EmitVariant { what: String, message: String },
    /// The BEAST engine rejected a generated space (a bug in the space generator).
    #[error("search space: {0}")]
    Beast(String),
}
