//! CUDA source for a set of [`OsfKernel`]s: the prelude's seams (`SURGE_PTR`,
//! `SURGE_EMU_ENTRY`), Figure 6's kernel as one C++ template (`templates/cuda/dgemm.cu.tera`)
//! and one `extern "C"` kernel per point instantiating it, so NVRTC and the CUDA emulator
//! compile the same text. Many kernels per program: NVRTC costs about 100 ms per program and
//! little per kernel.

use super::OsfKernel;
use crate::CodegenError;
use crate::emit::cuda::CudaProgram;

const PRELUDE: &str = include_str!("../../../templates/cuda/prelude.cu");
const TEMPLATE: &str = include_str!("../../../templates/cuda/dgemm.cu.tera");

/// One CUDA program: its source and the kernels it defines (by [`OsfKernel::name`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsfProgram {
    pub source: String,
    pub kernels: Vec<OsfKernel>,
}

impl OsfProgram {
    /// The program as the CUDA runtimes take it (no phases: these kernels are not a
    /// computation's).
    pub fn to_cuda(&self) -> CudaProgram {
        CudaProgram {
            source: self.source.clone(),
            phases: Vec::new(),
            kernels: Vec::new(),
            result: None,
            sources: Vec::new(),
        }
    }
}

#[derive(serde::Serialize)]
struct Row {
    id: String,
    name: String,
    threads: u32,
    params: String,
}

/// One program defining every kernel of `kernels` (each checked with [`OsfKernel::check`];
/// duplicates are emitted once).
pub fn emit(kernels: &[OsfKernel]) -> Result<OsfProgram, CodegenError> {
    let mut unique: Vec<OsfKernel> = Vec::with_capacity(kernels.len());
    for k in kernels {
        k.check().map_err(|message| CodegenError::EmitVariant {
            what: format!("CUDA DGEMM kernel {}", k.id()),
            message,
        })?;
        if !unique.contains(k) {
            unique.push(*k);
        }
    }
    let rows: Vec<Row> = unique
        .iter()
        .map(|k| Row {
            id: k.id(),
            name: k.name(),
            threads: k.threads(),
            params: k.params().map(|p| p.to_string()).join(", "),
        })
        .collect();
    let mut ctx = tera::Context::new();
    ctx.insert("kernels", &rows);
    let body =
        tera::Tera::one_off(TEMPLATE, &ctx, false).map_err(|e| CodegenError::EmitVariant {
            what: "the CUDA DGEMM template".into(),
            message: format!("{e:?}"),
        })?;
    Ok(OsfProgram {
        source: format!("{PRELUDE}\n{body}"),
        kernels: unique,
    })
}

/// `kernels` split into programs of at most `per_program` kernels each, in order.
pub fn programs(
    kernels: &[OsfKernel],
    per_program: usize,
) -> Result<Vec<OsfProgram>, CodegenError> {
    kernels.chunks(per_program.max(1)).map(emit).collect()
}
