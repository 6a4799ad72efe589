//! `surge bench --platform cuda`: every CUDA variant of an application, uploaded once and timed
//! launches only (CUDA events, median of `runs` after warm-up), against cuSPARSE (spmv), cuBLAS
//! (reduce) and the device's copy bandwidth (reduce, scan).
//!
//! A phase's variants are timed with the other phases at their default (first) variant, then the
//! combination of every phase's fastest is timed too. Each combination's result is checked against
//! the reference result once before it is timed; a wrong or failing variant is reported in
//! `failed`, not timed.

use super::{BenchOptions, InputResult, VariantResult, summarize};
use crate::apps::{App, spmv_app};
pub use crate::check::{Expected, INTERPRETER_LIMIT};
pub use crate::execute::cuda_variant_lists as variant_lists;
use crate::mtx::CsrMatrix;
use crate::vendor::csr_i32;
use crate::{Computation, Output, Result, SurgeError};
use serde::Serialize;
use surge_codegen::data::Buffer;
use surge_codegen::variant::Variant;
use surge_cuda::baselines::{self, Csr};
use surge_cuda::{Device, DeviceKernels, Emulator, Runtime};

/// Opens GPU 0 for benchmarking; no GPU is an error value that says why.
pub fn open_device() -> Result<Device> {
    Ok(Device::open(0)?)
}

/// A variant that failed its check (reported instead of timed).
#[derive(Debug, Clone, Serialize)]
pub struct FailedVariant {
    pub variant: String,
    pub error: String,
}

/// A variant whose first timed run takes over this many times the fastest median so far is
/// reported from that one run. On an H200 the slowest SpMV variants ran up to 2,800× below the
/// best, and timing each of a 2^22-value reduce's 639 combinations 12 times had not finished 68 s
/// after its 30 s build.
pub const SLOW_FACTOR: f64 = 50.0;

/// With `SURGE_TRACE` set, one stderr line per stage of [`time_variants`] with the seconds since
/// it began (where a slow run spends its time: the reference, NVRTC and module loads, the runs).
fn trace(since: &std::time::Instant, stage: &str) {
    if std::env::var_os("SURGE_TRACE").is_some() {
        eprintln!("[{:8.3} s] {stage}", since.elapsed().as_secs_f64());
    }
}

/// The combinations timed for `lists`: every variant of each phase with the other phases at
/// their first variant (the default combination once).
pub fn candidates(lists: &[Vec<Variant>]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![0; lists.len()]];
    for (p, vs) in lists.iter().enumerate() {
        for i in 1..vs.len() {
            let mut c = vec![0; lists.len()];
            c[p] = i;
            out.push(c);
        }
    }
    out
}

/// A combination's name: the variant id, or the phases' ids joined by ` | `.
fn label(lists: &[Vec<Variant>], combo: &[usize]) -> String {
    combo
        .iter()
        .zip(lists)
        .map(|(i, l)| l[*i].id())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// What timing all variants of one computation gives.
#[derive(Debug, Clone)]
pub struct Timed {
    pub variants: Vec<VariantResult>,
    pub failed: Vec<FailedVariant>,
    pub default_variant: String,
    /// The reference result every variant was checked against.
    pub expected: Expected,
}

/// Builds every variant of `c`, checks each combination once, then times the ones that pass.
/// `work` converts seconds into the reported rate.
pub fn time_variants<R: Runtime>(
    dev: &R,
    c: &Computation,
    opts: &BenchOptions,
    work: f64,
) -> Result<Timed> {
    let lists = variant_lists(dev.info(), c)?;
    let combos = candidates(&lists);
    if let Some(t) = &opts.total {
        t(combos.len() as u64 + 1);
    }
    let clock = std::time::Instant::now();
    let expected = Expected::of(c)?;
    trace(&clock, &format!("reference result ({})", expected.source()));
    let k = DeviceKernels::build(dev, c.ir(), &lists)?;
    trace(
        &clock,
        &format!("built {} combinations' kernels", combos.len()),
    );
    let firsts: Vec<&Variant> = lists.iter().map(|l| &l[0]).collect();
    let prepared = k.prepare(c.buffers(), &firsts)?;
    trace(&clock, "uploaded the input");
    let mut variants = Vec::new();
    let mut failed = Vec::new();
    let mut fastest_ms: Option<f64> = None;
    let mut run = |combo: &[usize]| -> Result<Option<f64>> {
        let name = label(&lists, combo);
        let chosen: Vec<&Variant> = combo.iter().zip(&lists).map(|(i, l)| &l[*i]).collect();
        let checked = prepared
            .run(&chosen)
            .map_err(|e| e.to_string())
            .and_then(|()| prepared.output().map_err(|e| e.to_string()))
            .and_then(|o| expected.check(&o));
        let r = match checked {
            Err(error) => {
                failed.push(FailedVariant {
                    variant: name.clone(),
                    error,
                });
                None
            }
            Ok(()) => {
                let first = prepared.time(&chosen, 0, 1)?;
                let t = if fastest_ms.is_some_and(|f| first.median_ms > SLOW_FACTOR * f) {
                    first
                } else {
                    prepared.time(&chosen, opts.warmup, opts.runs)?
                };
                fastest_ms = Some(fastest_ms.map_or(t.median_ms, |f: f64| f.min(t.median_ms)));
                let seconds = t.median_ms * 1e-3;
                variants.push(VariantResult {
                    variant: name.clone(),
                    seconds,
                    min_seconds: t.min_ms * 1e-3,
                    rate: work / seconds / 1e9,
                    runs: t.runs,
                });
                Some(seconds)
            }
        };
        if let Some(p) = &opts.progress {
            p(&name);
        }
        Ok(r)
    };
    let times = combos
        .iter()
        .map(|combo| run(combo))
        .collect::<Result<Vec<Option<f64>>>>()?;
    trace(&clock, "checked and timed every combination");
    // Each phase's fastest variant (the others at their default), then all of them together.
    let best: Vec<usize> = (0..lists.len())
        .map(|p| {
            combos
                .iter()
                .zip(&times)
                .filter(|(c, _)| c.iter().enumerate().all(|(q, i)| q == p || *i == 0))
                .filter_map(|(c, t)| t.map(|t| (c[p], t)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(0, |b| b.0)
        })
        .collect();
    if !combos.contains(&best) {
        run(&best)?;
    } else if let Some(p) = &opts.progress {
        p("");
    }
    if variants.is_empty() {
        return Err(SurgeError::Usage(format!(
            "every CUDA variant failed its check; the first: {} ({})",
            failed[0].variant, failed[0].error
        )));
    }
    Ok(Timed {
        variants,
        failed,
        default_variant: label(&lists, &vec![0; lists.len()]),
        expected,
    })
}

/// One benchmarked input and what its variants were checked against.
#[derive(Debug, Clone)]
pub struct CudaInputResult {
    pub result: InputResult,
    pub failed: Vec<FailedVariant>,
    pub checked_against: &'static str,
}

/// spmv on `inputs` (name, matrix): every variant against cuSPARSE `cusparseSpMV` (CSR).
pub fn bench_spmv(
    dev: &Device,
    inputs: &[(String, CsrMatrix)],
    opts: &BenchOptions,
) -> Result<Vec<CudaInputResult>> {
    let mut out = Vec::new();
    for (name, m) in inputs {
        let (x, c) = spmv_computation(m)?;
        let flops = 2.0 * m.nnz() as f64;
        let timed = time_variants(dev, &c, opts, flops)?;
        let (off, col) = csr_i32(m)?;
        let a = Csr {
            rows: m.rows,
            cols: m.cols,
            row_offsets: &off,
            col_indices: &col,
            values: &m.values,
        };
        let (y, ms) = baselines::cusparse_spmv(dev, &a, &x, opts.runs)?;
        // cuSPARSE's result is checked like a variant's.
        timed
            .expected
            .check(&Output::Seq(Buffer::F64(y)))
            .map_err(|e| SurgeError::Usage(format!("{name}: cuSPARSE disagrees: {e}")))?;
        out.push(CudaInputResult {
            result: summarize(
                name.clone(),
                m.rows,
                m.nnz(),
                "GFLOP/s",
                timed.variants,
                timed.default_variant,
                "cusparse",
                flops / (ms * 1e-3) / 1e9,
            ),
            failed: timed.failed,
            checked_against: timed.expected.source(),
        });
    }
    Ok(out)
}

/// One input checked in the CUDA emulator: every variant's result against the reference, and
/// the emulator's host time per variant (labelled: never a GPU's time, never compared with one).
#[derive(Debug, Clone, Serialize)]
pub struct EmulatedInput {
    pub input: String,
    pub checked_against: &'static str,
    /// Variants that matched the reference, with the emulator's host milliseconds for one run.
    pub matched: Vec<(String, f64)>,
    pub failed: Vec<FailedVariant>,
}

/// `surge bench --platform cuda-emu`: every variant of `c` run once in the emulator and checked
/// (`opts`' progress callbacks are used; its runs and reference are not: one run, no reference).
pub fn check_emulated(
    emu: &Emulator,
    input: &str,
    c: &Computation,
    opts: &BenchOptions,
) -> Result<EmulatedInput> {
    let once = BenchOptions {
        runs: 1,
        warmup: 0,
        reference: opts.reference,
        progress: opts.progress.clone(),
        total: opts.total.clone(),
        tuned: None,
    };
    let timed = time_variants(emu, c, &once, 1.0)?;
    Ok(EmulatedInput {
        input: input.to_string(),
        checked_against: timed.expected.source(),
        matched: timed
            .variants
            .into_iter()
            .map(|v| (v.variant, v.seconds * 1e3))
            .collect(),
        failed: timed.failed,
    })
}

/// The spmv computation `surge bench` runs on matrix `m` (x with values 1 + (j mod 7) / 8).
pub fn spmv_computation(m: &CsrMatrix) -> Result<(Vec<f64>, Computation)> {
    let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
    let c = Computation::new(&spmv_app(m, &x)?)?;
    Ok((x, c))
}

/// The device's references for bandwidth-bound apps.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DeviceBandwidth {
    /// Device-to-device copy, read + write bytes per second, in GB/s.
    pub copy_gbps: f64,
    /// cuBLAS `dasum` over the same values (reduce only), GB/s of the 8 bytes per value read.
    pub cublas_gbps: Option<f64>,
}

/// The tiled reduce (or scan) on `n` generated values: reduce against cuBLAS `dasum` (which
/// reads the same bytes), scan against the copy bandwidth; both report the copy bandwidth.
pub fn bench_reduce_or_scan(
    dev: &Device,
    app: App,
    n: usize,
    opts: &BenchOptions,
) -> Result<(CudaInputResult, DeviceBandwidth)> {
    let (data, c, bytes) = super::sum_computation(app, n)?;
    let timed = time_variants(dev, &c, opts, bytes)?;
    let copy_gbps = baselines::copy_bandwidth(dev, (8 * n).max(1 << 28), opts.runs)?;
    let (reference, reference_rate, cublas_gbps) = if app == App::Reduce {
        let r = baselines::cublas_sum(dev, &data, opts.runs)?;
        // The generated values are non-negative: dasum is their sum.
        let rate = 8.0 * n as f64 / (r.asum_ms * 1e-3) / 1e9;
        ("cublas", rate, Some(rate))
    } else {
        ("copy", copy_gbps, None)
    };
    Ok((
        CudaInputResult {
            result: summarize(
                format!("{n} values"),
                n,
                n,
                "GB/s",
                timed.variants,
                timed.default_variant,
                reference,
                reference_rate,
            ),
            failed: timed.failed,
            checked_against: timed.expected.source(),
        },
        DeviceBandwidth {
            copy_gbps,
            cublas_gbps,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(id: &str) -> Variant {
        id.parse().unwrap()
    }

    #[test]
    fn candidates_vary_one_phase_at_a_time() {
        let a = "cuda:h200/sequential.sequential/bx=64,by=1,lw=1,unroll1=0,unroll2=0";
        let b = "cuda:h200/sequential.sequential/bx=64,by=1,lw=1,unroll1=1,unroll2=0";
        let lists = vec![vec![v(a), v(b)], vec![v(a), v(b), v(b)]];
        assert_eq!(
            candidates(&lists),
            [vec![0, 0], vec![1, 0], vec![0, 1], vec![0, 2]]
        );
        assert_eq!(label(&lists, &[1, 0]), format!("{b} | {a}"));
        assert_eq!(label(&lists[..1], &[0]), a);
    }
}
