//! Tuning on a GPU: every kernel of a set checked against cuBLAS `dgemm` on one problem and
//! timed with CUDA events; the fastest, in GFLOP/s and as a fraction of cuBLAS's.

use super::{GemmKernels, per_program};
use crate::runtime::Runtime;
use crate::{CudaError, Device, baselines};
use serde::Serialize;
use std::time::Instant;
use surge_codegen::gemm::cuda::OsfKernel;

/// A kernel whose first run takes more than this many times the fastest median so far is
/// reported from that run alone (the paper's space spans two orders of magnitude of speed).
pub const SLOW_FACTOR: f64 = 20.0;

/// One timed kernel.
#[derive(Debug, Clone, Serialize)]
pub struct KernelTime {
    /// `osf:96x64x12.16x8.a32x4.b4x32`.
    pub kernel: String,
    /// Median milliseconds per call (one run when `runs` is 1).
    pub ms: f64,
    pub gflops: f64,
    pub runs: usize,
}

/// The tuning of one problem size.
#[derive(Debug, Clone, Serialize)]
pub struct GemmTuning {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The kernels compiled (NVRTC and the driver's PTX load) in this many seconds.
    pub build_seconds: f64,
    pub cublas_ms: f64,
    pub cublas_gflops: f64,
    /// Timed kernels, fastest first.
    pub timed: Vec<KernelTime>,
    /// Kernels that failed to launch or gave a wrong C, with the error.
    pub failed: Vec<(String, String)>,
    pub best: Option<KernelTime>,
    /// The best kernel's GFLOP/s over cuBLAS's.
    pub ratio_vs_cublas: Option<f64>,
}

/// Deterministic operands in [-1, 1] for tuning and benchmarks.
pub fn operand(len: usize, seed: u64) -> Vec<f64> {
    surge_codegen::data::uniform_values(len, seed)
}

/// Checks C against cuBLAS's: operands in [-1, 1] bound each entry's rounding error by
/// `k · 2^-53` per term, so 1e-12 · k is far above rounding and far below any wrong element.
fn check(c: &[f64], reference: &[f64], k: usize) -> Result<(), String> {
    let tol = 1e-12 * k.max(1) as f64;
    match c
        .iter()
        .zip(reference)
        .enumerate()
        .find(|(_, (x, r))| (*x - *r).abs() > tol || x.is_nan())
    {
        Some((i, (x, r))) => Err(format!(
            "C[{i}] = {x}, cuBLAS gives {r} (tolerance {tol:.1e})"
        )),
        None if c.len() != reference.len() => Err(format!(
            "C has {} entries, cuBLAS's {}",
            c.len(),
            reference.len()
        )),
        None => Ok(()),
    }
}

/// Checks and times `kernels` on `dev` for `C = A·B` of `m×k` by `k×n` (`reps` timed launches
/// each after one untimed run), against cuBLAS `dgemm` on the same operands.
pub fn tune(
    dev: &Device,
    kernels: &[OsfKernel],
    (m, n, k): (usize, usize, usize),
    reps: usize,
) -> Result<GemmTuning, CudaError> {
    let a = operand(m * k, 1);
    let b = operand(k * n, 2);
    let (reference, cublas_ms) = baselines::cublas_dgemm(dev, m, n, k, &a, &b, reps.max(1))?;
    let flops = OsfKernel::flops(m, n, k);
    let gflops = |ms: f64| flops / (ms * 1e-3) / 1e9;
    let clock = Instant::now();
    let built = GemmKernels::build(dev, kernels, per_program(kernels.len()))?;
    let build_seconds = clock.elapsed().as_secs_f64();
    let ops = built.upload(m, n, k, &a, &b)?;
    let mut timed: Vec<KernelTime> = Vec::new();
    let mut failed = Vec::new();
    let mut fastest = f64::INFINITY;
    for kernel in built.kernels() {
        let first = built
            .runtime()
            .time_each(1, &mut || built.launch(&ops, kernel))
            .map_err(|e| e.to_string())
            .and_then(|t| {
                let c = built.result(&ops).map_err(|e| e.to_string())?;
                check(&c, &reference, k)?;
                Ok(t[0])
            });
        let entry = match first {
            Err(e) => {
                failed.push((kernel.id(), e));
                // A failed launch can leave the context unusable; a failed check cannot.
                if dev.stream.synchronize().is_err() {
                    break;
                }
                continue;
            }
            Ok(ms) if ms > SLOW_FACTOR * fastest => (ms, 1),
            Ok(_) => match built.time(&ops, kernel, reps) {
                Ok(ms) => (ms, reps.max(1)),
                Err(e) => {
                    failed.push((kernel.id(), e.to_string()));
                    continue;
                }
            },
        };
        fastest = fastest.min(entry.0);
        timed.push(KernelTime {
            kernel: kernel.id(),
            ms: entry.0,
            gflops: gflops(entry.0),
            runs: entry.1,
        });
    }
    timed.sort_by(|x, y| x.ms.total_cmp(&y.ms));
    let best = timed.first().cloned();
    let cublas_gflops = gflops(cublas_ms);
    Ok(GemmTuning {
        m,
        n,
        k,
        build_seconds,
        cublas_ms,
        cublas_gflops,
        ratio_vs_cublas: best.as_ref().map(|b| b.gflops / cublas_gflops),
        best,
        timed,
        failed,
    })
}
