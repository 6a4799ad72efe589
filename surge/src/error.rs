//! The one public error type of the `surge` crate.

use surge_codegen::CodegenError;
use surge_codegen::ir::IrError;
use surge_cpu::CpuError;

/// Everything that can go wrong building, analyzing or running a computation.
/// Each variant names the operator, input or file at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SurgeError {
    /// An operator was applied to arguments it cannot take (names the operator and the values).
    #[error("{0}")]
    Build(#[from] IrError),
    /// Bad input data (NaN, malformed offsets, two inputs with one name, ...).
    #[error("input `{input}`: {message}")]
    Input { input: String, message: String },
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    #[error(transparent)]
    Cpu(#[from] CpuError),
    #[error(transparent)]
    Cuda(#[from] surge_cuda::CudaError),
    /// A malformed or unsupported Matrix Market file.
    #[error(transparent)]
    Mtx(#[from] crate::mtx::MtxError),
    /// An unknown application name or a bad application parameter.
    #[error("{0}")]
    Usage(String),
    /// The tuner could not train, store or load a model (names the input, variant or file).
    #[error("tuning: {0}")]
    Tune(String),
}

pub type Result<T, E = SurgeError> = std::result::Result<T, E>;
