//! `surge bench gemm --platform cuda`: the seed paper's DGEMM kernels (Figure 6, one per
//! survivor of its nine-parameter space for the GPU: `surge_codegen::gemm::cuda`) against cuBLAS
//! `dgemm`, per shape. A deterministic sample of the survivors is compiled once (NVRTC, one
//! program per core), checked against cuBLAS on each shape and timed with CUDA events; the
//! report gives the fastest kernel's GFLOP/s and its ratio to cuBLAS.

use super::Progress;
use super::gemm::Shape;
use crate::Result;
use serde::Serialize;
use surge_codegen::gemm::cuda::{self as osf, OsfKernel};
use surge_cuda::Device;
use surge_cuda::gemm::{GemmTuning, tune};

/// About this many kernels are sampled from the space (every `survivors / SAMPLE`-th, and the
/// paper's best when it survives).
pub const SAMPLE: usize = 200;

/// Options of a CUDA GEMM benchmark.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct GemmCudaOptions {
    pub shapes: Vec<Shape>,
    /// Timed launches per kernel (the median is reported).
    pub runs: usize,
    /// Kernels to sample from the space (about).
    pub sample: usize,
    pub progress: Option<Progress>,
}

/// One shape: the tuning of the sample on it (the ten fastest kernels kept).
#[derive(Debug, Clone, Serialize)]
pub struct GemmCudaShape {
    pub shape: Shape,
    pub tuning: GemmTuning,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct GemmCudaReport {
    /// `cuda:h200`.
    pub platform: String,
    pub runs: usize,
    /// Survivors of the paper's nine checks for this GPU, and how many were sampled.
    pub survivors: usize,
    pub sampled: usize,
    pub shapes: Vec<GemmCudaShape>,
}

/// The sample of `survivors` of about `target` kernels.
pub fn sample_of(survivors: &[OsfKernel], target: usize) -> Vec<OsfKernel> {
    osf::sample(survivors, survivors.len().div_ceil(target.max(1)))
}

/// Tunes a sample of the space of `dev` on every shape against cuBLAS.
pub fn bench_gemm_cuda(dev: &Device, opts: &GemmCudaOptions) -> Result<GemmCudaReport> {
    let survivors = osf::survivors(&dev.info)?;
    let sample = sample_of(&survivors, opts.sample);
    let mut shapes = Vec::new();
    for shape in &opts.shapes {
        if let Some(p) = &opts.progress {
            p(&shape.label());
        }
        let mut tuning = tune(dev, &sample, (shape.m, shape.n, shape.k), opts.runs)?;
        tuning.timed.truncate(10);
        shapes.push(GemmCudaShape {
            shape: shape.clone(),
            tuning,
        });
    }
    Ok(GemmCudaReport {
        platform: format!("cuda:{}", dev.info.name),
        runs: opts.runs,
        survivors: survivors.len(),
        sampled: sample.len(),
        shapes,
    })
}
