//! `surge bench spmv` on the CPU: every variant screened, then the fastest few confirmed against
//! MKL in interleaved rounds ([`super::confirm`]).
//!
//! The screening times each variant as `--runs` samples of at least [`SCREEN_SAMPLE`] seconds
//! each. The reported best, reference and ratio are the confirmation's: for each thread count,
//! the [`CONFIRMED`] variants with the fastest screening samples, against MKL on one thread and
//! on all cores, alternately. Per thread count, since a screening of one sample set per variant
//! ranked 1-thread variants first on a matrix where 2-thread ones were 1.6× faster. Against rayon the reference is timed once after the
//! screening, as before.

use super::confirm::{Confirmation, Contender, confirm};
use super::{BenchOptions, InputResult, Reference, measure_batched, summarize, time_variants};
use crate::apps::spmv_app;
use crate::mtx::CsrMatrix;
use crate::tune::cpu::CpuBackend;
use crate::{Computation, Kernels, Result, SurgeError, Target, Workspace};
use surge_cpu::baseline::mkl::Mkl;
use surge_cpu::baseline::rayon_ref;

/// The least length of one screening sample, in seconds.
pub const SCREEN_SAMPLE: f64 = 1e-3;
/// Variants of each thread count that go on from the screening to the confirmation.
pub const CONFIRMED: usize = 2;

/// Benchmarks spmv on `inputs` (name, matrix).
pub fn bench_spmv(inputs: &[(String, CsrMatrix)], opts: &BenchOptions) -> Result<Vec<InputResult>> {
    if !matches!(opts.reference, Reference::Mkl | Reference::Rayon) {
        return Err(SurgeError::Usage(
            "the cpu spmv bench compares with mkl or rayon".into(),
        ));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let backend = CpuBackend::new();
    let mut out = Vec::new();
    for (name, m) in inputs {
        let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
        let c = Computation::new(&spmv_app(m, &x)?)?;
        let k = Kernels::build(&c, &Target::cpu())?;
        let flops = 2.0 * m.nnz() as f64;
        let variants = time_variants(&c, &k, opts, flops, None, SCREEN_SAMPLE)?;
        let default = k.default_variant().id();
        let r = match opts.reference {
            Reference::Mkl => {
                let ids = candidates(&variants);
                let (reference, conf) = vs_mkl(&c, &k, &ids, m, &x, threads, &backend)?;
                let mut r = summarize(
                    name.clone(),
                    m.rows,
                    m.nnz(),
                    "GFLOP/s",
                    variants,
                    default,
                    &reference,
                    flops / conf.reference_seconds / 1e9,
                );
                r.best_variant = conf.own.clone();
                r.best_rate = flops / conf.own_seconds / 1e9;
                r.ratio = conf.ratio;
                r.confirmation = Some(conf);
                r
            }
            _ => {
                let mut y = vec![0.0; m.rows];
                let pool = surge_cpu::native::skeleton::pool(threads);
                let t = pool.install(|| {
                    measure_batched(opts.warmup, opts.runs, SCREEN_SAMPLE, || {
                        rayon_ref::spmv(&m.row_offsets, &m.col_indices, &m.values, &x, &mut y)
                    })
                });
                let rate = flops / t.median / 1e9;
                summarize(
                    name.clone(),
                    m.rows,
                    m.nnz(),
                    "GFLOP/s",
                    variants,
                    default,
                    "rayon",
                    rate,
                )
            }
        };
        out.push(r);
    }
    Ok(out)
}

/// The variants the confirmation times: per `threads=` value, the [`CONFIRMED`] with the fastest
/// screening samples.
fn candidates(variants: &[super::VariantResult]) -> Vec<String> {
    let mut by_min: Vec<&super::VariantResult> = variants.iter().collect();
    by_min.sort_by(|a, b| a.min_seconds.total_cmp(&b.min_seconds));
    let threads = |id: &str| {
        id.rsplit('/')
            .next()
            .and_then(|ps| ps.split(',').find_map(|p| p.strip_prefix("threads=")))
            .unwrap_or("")
            .to_string()
    };
    let mut taken: std::collections::HashMap<String, usize> = Default::default();
    by_min
        .into_iter()
        .filter(|v| {
            let n = taken.entry(threads(&v.variant)).or_default();
            *n += 1;
            *n <= CONFIRMED
        })
        .map(|v| v.variant.clone())
        .collect()
}

/// The variants `ids` of `k` against MKL on one thread and on `threads`, in interleaved rounds;
/// returns the reference's name (thread count of its fastest setting, MKL's version) and the
/// confirmation.
fn vs_mkl(
    c: &Computation,
    k: &Kernels,
    ids: &[String],
    m: &CsrMatrix,
    x: &[f64],
    threads: usize,
    backend: &CpuBackend,
) -> Result<(String, Confirmation)> {
    let usage = |e: surge_cpu::baseline::mkl::MklError| SurgeError::Usage(e.to_string());
    let a = crate::vendor::mkl_csr(m, 1000).map_err(usage)?;
    let lib = Mkl::get().map_err(usage)?;
    let mut contenders = Vec::new();
    let mkl_contender = |n: usize| {
        let mut y = vec![0.0; m.rows];
        let a = &a;
        Contender {
            name: if n == 1 {
                "mkl, 1 thread".into()
            } else {
                format!("mkl, {n} threads")
            },
            reference: true,
            call: Box::new(move || {
                lib.set_threads(n).map_err(usage)?;
                a.mv(x, &mut y).map_err(usage)
            }),
            // The next batch must not share the cores with spinning MKL workers.
            after: (n > 1).then(|| Box::new(|| lib.settle()) as Box<dyn Fn()>),
        }
    };
    // MKL on one thread first, then the variants, then MKL on all cores and its pause.
    contenders.push(mkl_contender(1));
    for id in ids {
        let v = k.variant(id)?;
        let mut ws = Workspace::default();
        contenders.push(Contender {
            name: id.clone(),
            reference: false,
            call: Box::new(move || k.run_in(c, v, &mut ws)),
            after: None,
        });
    }
    if threads > 1 {
        contenders.push(mkl_contender(threads));
    }
    let conf = confirm(&mut contenders, backend)?;
    Ok((format!("{} ({})", conf.reference, version(lib)), conf))
}

/// Names the MKL that was timed: Debian's 2020.4 and oneMKL 2026 differ.
fn version(lib: &Mkl) -> String {
    lib.version().map_or_else(
        || lib.path.clone(),
        |v| {
            let short = v.split("Product").next().unwrap_or(&v);
            short.trim_end_matches(['-', ' ']).to_string()
        },
    )
}
