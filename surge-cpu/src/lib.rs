//! Surge's CPU backend: native execution of emitted Rust kernels, compiled by rustc and driven by
//! rayon skeletons ([`native`]), and the MKL/rayon baselines. The reference interpreter (the
//! correctness oracle every backend is checked against) is `surge_codegen::ir::interpret`.

pub mod baseline;
pub mod gemm;
pub mod native;

use surge_codegen::CodegenError;
use surge_codegen::ir::NodeId;

/// The one public error type of `surge-cpu`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CpuError {
    /// The computation or its inputs are invalid.
    #[error(transparent)]
    Invalid(#[from] CodegenError),
    /// Evaluation failed on these inputs (an index out of range, a ragged transpose, ...).
    #[error("{} failed: {message}", surge_codegen::ir::site(.op, .loc.as_ref(), Some(*.node)))]
    Runtime {
        op: &'static str,
        node: NodeId,
        /// Where the user built the node.
        loc: Option<surge_codegen::ir::SourceLoc>,
        message: String,
    },
    /// The generated kernels did not compile or load; names the variants whose code failed and
    /// keeps the generated file for inspection.
    #[error("compiling CPU kernels{}: {message}", fmt_variants(.variants))]
    Compile {
        variants: Vec<String>,
        message: String,
        source_path: Option<std::path::PathBuf>,
    },
    /// A variant id that is not among the compiled variants, or whose parameters are malformed.
    #[error("unknown CPU variant `{id}` ({known} variants were compiled)")]
    UnknownVariant { id: String, known: usize },
    /// A kernel failed outside any operator's checks (a bug in the emitter).
    #[error("kernel failure: {0}")]
    Kernel(String),
    /// A GEMM call whose operands do not conform (shapes, buffer lengths, leading dimensions).
    #[error("gemm: {0}")]
    Gemm(String),
}

fn fmt_variants(v: &[String]) -> String {
    match v.len() {
        0 => String::new(),
        1 => format!(" (variant {})", v[0]),
        n => format!(" (variants {} and {} more)", v[0], n - 1),
    }
}
