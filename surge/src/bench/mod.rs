//! `surge bench`: every variant of an application timed against a reference in the same run.
//!
//! Each figure is the median of at least 10 timed runs after warm-up. spmv is reported in
//! GFLOP/s (2·nnz flops per product), reduce and scan in GB/s of compulsory traffic (reduce reads
//! 8 bytes per element; scan reads and writes 16).

pub mod confirm;
pub mod cuda;
pub mod gemm;
pub mod gemm_cuda;
pub mod report;
pub mod spmv_cpu;
pub(crate) mod svg;
mod timing;

pub use crate::vendor::mkl_csr;
pub use spmv_cpu::bench_spmv;
pub use svg::write_svg;
pub use timing::{Timing, measure, measure_batched};

use crate::apps::{App, matgen, reduce_app, scan_app, sum_input};
use crate::mtx::CsrMatrix;
use crate::stats::median;
use crate::{Computation, Kernels, Result, SurgeError, Target};
use serde::Serialize;
use surge_cpu::baseline::{bandwidth, rayon_ref};

/// What the variants are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reference {
    Mkl,
    Rayon,
    /// cuSPARSE `cusparseSpMV` (spmv on cuda).
    Cusparse,
    /// cuBLAS `dasum` (reduce on cuda).
    Cublas,
    /// The device's copy bandwidth (scan on cuda).
    Copy,
}

impl std::str::FromStr for Reference {
    type Err = SurgeError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "mkl" => Ok(Reference::Mkl),
            "rayon" => Ok(Reference::Rayon),
            "cusparse" => Ok(Reference::Cusparse),
            "cublas" => Ok(Reference::Cublas),
            "copy" => Ok(Reference::Copy),
            _ => Err(SurgeError::Usage(format!(
                "unknown reference `{s}`; use mkl (spmv) or rayon on cpu, cusparse (spmv), \
                 cublas (reduce) or copy (scan) on cuda"
            ))),
        }
    }
}

/// Called after each timed variant with its id (progress bars).
pub type Progress = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// Options of a benchmark run.
#[derive(Clone)]
pub struct BenchOptions {
    pub runs: usize,
    pub warmup: usize,
    pub reference: Reference,
    pub progress: Option<Progress>,
    /// Called with the number of runs `progress` will report, once it is known (bar length).
    pub total: Option<std::sync::Arc<dyn Fn(u64) + Send + Sync>>,
    /// spmv on cpu: a tuning store (`surge tune spmv --out`) whose model picks a variant per
    /// input, confirmed beside the best with its selection cost ([`spmv_cpu::TunedResult`]).
    pub tuned: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for BenchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BenchOptions")
            .field("runs", &self.runs)
            .field("warmup", &self.warmup)
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            runs: 10,
            warmup: 2,
            reference: Reference::Mkl,
            progress: None,
            total: None,
            tuned: None,
        }
    }
}

/// One variant's measurement.
#[derive(Debug, Clone, Serialize)]
pub struct VariantResult {
    pub variant: String,
    /// The median sample's time per run.
    pub seconds: f64,
    /// The fastest sample's time per run: where other load only slows a run down, the steadier
    /// figure for ranking variants (`surge bench spmv` picks the ones it confirms by it).
    pub min_seconds: f64,
    /// GFLOP/s (spmv) or GB/s (reduce, scan).
    pub rate: f64,
    /// Timed runs behind `seconds`: `runs`, or 1 for a CUDA variant whose first run was over
    /// [`cuda::SLOW_FACTOR`] times the fastest so far (its median would add nothing but minutes).
    pub runs: usize,
}

/// One input's results.
#[derive(Debug, Clone, Serialize)]
pub struct InputResult {
    pub name: String,
    /// spmv: rows, nnz; reduce/scan: elements.
    pub rows: usize,
    pub nnz: usize,
    pub unit: &'static str,
    pub best_variant: String,
    pub best_rate: f64,
    pub worst_variant: String,
    pub worst_rate: f64,
    pub default_variant: String,
    pub default_rate: f64,
    pub median_variant_rate: f64,
    pub reference: String,
    pub reference_rate: f64,
    /// best / reference.
    pub ratio: f64,
    /// median variant / reference.
    pub median_variant_ratio: f64,
    pub variants: Vec<VariantResult>,
    /// The interleaved rounds behind `best_*`, `reference_rate` and `ratio`, where the input was
    /// confirmed (spmv against MKL); elsewhere those come from the screening.
    pub confirmation: Option<confirm::Confirmation>,
    /// The model's pick and its cost, with `--tuned`.
    pub tuned: Option<spmv_cpu::TunedResult>,
    /// spmv on cpu: the best variant's traffic against the memory's, where the matrix does not
    /// fit the last-level cache.
    pub traffic: Option<spmv_cpu::Traffic>,
}

/// Times every variant of `c`; `work` converts seconds into the reported rate. With a limit
/// probe, one sample of it is taken after each variant, so that load during the run lowers the
/// limit as it lowers the variants. Each sample lasts at least `min_sample` seconds
/// ([`measure_batched`]).
fn time_variants(
    c: &Computation,
    k: &Kernels,
    opts: &BenchOptions,
    work: f64,
    mut limit: Option<&mut bandwidth::Probe>,
    min_sample: f64,
) -> Result<Vec<VariantResult>> {
    let mut out = Vec::new();
    let mut ws = crate::Workspace::default();
    for v in k.variants() {
        let t = measure_variant(k, c, v, &mut ws, (opts.warmup, opts.runs), min_sample)?;
        if let Some(p) = limit.as_deref_mut() {
            p.sample();
        }
        out.push(VariantResult {
            runs: opts.runs,
            variant: v.id(),
            seconds: t.median,
            min_seconds: t.min,
            rate: work / t.median / 1e9,
        });
        if let Some(p) = &opts.progress {
            p(&v.id());
        }
    }
    Ok(out)
}

/// `v` of `k` on `c` timed by [`measure_batched`] (`(warmup, runs)`, samples of at least
/// `min_sample` seconds) in `ws`; an error of any run is returned instead.
fn measure_variant(
    k: &Kernels,
    c: &Computation,
    v: &surge_codegen::variant::Variant,
    ws: &mut crate::Workspace,
    (warmup, runs): (usize, usize),
    min_sample: f64,
) -> Result<Timing> {
    let mut err = None;
    let t = measure_batched(warmup, runs, min_sample, || {
        if let Err(e) = k.run_in(c, v, ws) {
            err = Some(e);
        }
    });
    err.map_or(Ok(t), Err)
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    name: String,
    rows: usize,
    nnz: usize,
    unit: &'static str,
    variants: Vec<VariantResult>,
    default_variant: String,
    reference: &str,
    reference_rate: f64,
) -> InputResult {
    let best = variants
        .iter()
        .max_by(|a, b| a.rate.total_cmp(&b.rate))
        .expect("variants");
    let worst = variants
        .iter()
        .min_by(|a, b| a.rate.total_cmp(&b.rate))
        .expect("variants");
    let default_rate = variants
        .iter()
        .find(|v| v.variant == default_variant)
        .map_or(f64::NAN, |v| v.rate);
    let median_rate = median(&variants.iter().map(|v| v.rate).collect::<Vec<_>>());
    InputResult {
        name,
        rows,
        nnz,
        unit,
        best_variant: best.variant.clone(),
        best_rate: best.rate,
        worst_variant: worst.variant.clone(),
        worst_rate: worst.rate,
        default_variant,
        default_rate,
        median_variant_rate: median_rate,
        reference: reference.to_string(),
        reference_rate,
        ratio: best.rate / reference_rate,
        median_variant_ratio: median_rate / reference_rate,
        variants,
        confirmation: None,
        tuned: None,
        traffic: None,
    }
}

/// The built-in DRAM-sized spmv inputs (≥ 20M nonzeros each): a 5-point Laplacian, a banded
/// matrix and one with random columns (the gather-bound case).
pub fn dram_matrices() -> Vec<(String, CsrMatrix)> {
    vec![
        ("laplacian_2d 2048x2048".into(), matgen::laplacian_2d(2048)),
        (
            "banded 2M rows, 11 diagonals".into(),
            matgen::banded(2_000_000, 5, 7),
        ),
        (
            "random 2M rows, 10/row".into(),
            matgen::random(2_000_000, 2_000_000, 10, 42),
        ),
    ]
}

/// The generated values, the tiled reduce (or scan) over them, and the bytes one run moves
/// (reduce reads `n` values; scan reads and writes them).
pub fn sum_computation(app: App, n: usize) -> Result<(Vec<f64>, Computation, f64)> {
    let data = sum_input(n);
    let s = crate::Seq::input("s", data.clone())?;
    let (c, bytes) = match app {
        App::Reduce => (
            Computation::new(&reduce_app(&s, crate::apps::DEFAULT_TILE)?)?,
            8.0 * n as f64,
        ),
        App::Scan => (
            Computation::new(&scan_app(&s, crate::apps::DEFAULT_TILE)?)?,
            16.0 * n as f64,
        ),
        App::Spmv | App::Kmeans => {
            return Err(SurgeError::Usage(format!("{app} is not a sum")));
        }
    };
    Ok((data, c, bytes))
}

/// Benchmarks the tiled reduce (or scan) on `n` generated values against rayon and the
/// machine's bandwidth, measured in the same run: a 1 GiB read, copy and triad probe sampled after
/// every variant and around the reference (the limit is the best of its samples).
pub fn bench_reduce_or_scan(
    app: App,
    n: usize,
    opts: &BenchOptions,
) -> Result<(InputResult, bandwidth::Bandwidth)> {
    let (data, c, bytes) = sum_computation(app, n)?;
    let k = Kernels::build(&c, &Target::cpu())?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = surge_cpu::native::skeleton::pool(threads);
    let mut probe = pool.install(|| bandwidth::Probe::new(LIMIT_ELEMS));
    let variants = pool.install(|| time_variants(&c, &k, opts, bytes, Some(&mut probe), 0.0))?;
    let t = match app {
        App::Reduce => pool.install(|| measure(opts.warmup, opts.runs, || rayon_ref::sum(&data))),
        _ => {
            let mut y = vec![0.0; n];
            pool.install(|| {
                measure(opts.warmup, opts.runs, || {
                    rayon_ref::exclusive_scan(&data, &mut y)
                })
            })
        }
    };
    pool.install(|| probe.sample());
    let limit = pool.install(|| probe.result());
    let result = summarize(
        format!("{n} values"),
        n,
        n,
        "GB/s",
        variants,
        k.default_variant().id(),
        "rayon",
        bytes / t.median / 1e9,
    );
    Ok((result, limit))
}

/// Doubles in each array of the bandwidth probe: 2^27, 1 GiB.
const LIMIT_ELEMS: usize = 1 << 27;

/// The machine's memory bandwidth on all cores (arrays of 2^25 doubles).
pub fn bandwidth() -> bandwidth::Bandwidth {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    surge_cpu::native::skeleton::pool(threads).install(|| bandwidth::probe(1 << 25, 5))
}
