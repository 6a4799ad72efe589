//! `surge bench spmv` on the CPU: every variant screened, then the fastest few confirmed against
//! MKL in interleaved rounds ([`super::confirm`]).
//!
//! The screening times each variant as `--runs` samples of at least [`SCREEN_SAMPLE`] seconds
//! each, then re-times the [`RESCREENED`] variants of each thread count with the fastest samples
//! in [`RESCREEN_ROUNDS`] interleaved rounds. The reported best, reference and ratio are the
//! confirmation's: for each thread count, the [`CONFIRMED`] variants with the least median in
//! those rounds, against MKL on one thread and on all cores, alternately. Per thread count, since
//! a screening of one sample set per variant ranked 1-thread variants first on a matrix where
//! 2-thread ones were 1.6× faster. The interleaved second round, since the first times each
//! variant back to back, so a slow phase of the VM (1.5× for tens of milliseconds) lands on
//! some variants only: in three runs on facebook the confirmation got the two fastest 2-thread
//! variants once and, once, two whose single chunk of 4096 rows left the second thread idle
//! (ratio 1.27, 1.18, 0.84). Against rayon the reference is timed once after the screening.

use super::confirm::{Confirmation, Contender, confirm_with_limit};
use super::{BenchOptions, InputResult, Reference, measure_batched, summarize, time_variants};
use crate::apps::spmv_app;
use crate::mtx::CsrMatrix;
use crate::tune::cpu::CpuBackend;
use crate::tune::{TuneInput, Tuned};
use crate::{Computation, Kernels, Result, SurgeError, Target, Workspace};
use surge_cpu::baseline::mkl::{Mkl, MklCsr};
use surge_cpu::baseline::rayon_ref;
use surge_cpu::baseline::traffic::{Pattern, TrafficProbe};

/// The least length of one screening sample, in seconds.
pub const SCREEN_SAMPLE: f64 = 1e-3;
/// Variants of each thread count that go on from the screening to the confirmation.
pub const CONFIRMED: usize = 2;
/// Variants of each thread count re-timed in the screening's interleaved second round.
pub const RESCREENED: usize = 8;
/// Interleaved rounds of the screening's second round (one sample per variant each).
pub const RESCREEN_ROUNDS: usize = 7;

/// The variant a tuning store's model picked for one input (`--tuned`), confirmed beside the
/// best variants against MKL.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TunedResult {
    pub variant: String,
    /// Whether the model picked it (false: the store could not be used for this input and the
    /// default variant ran, see `warnings`).
    pub from_model: bool,
    pub warnings: Vec<String>,
    /// Its time per call in the confirmation (the same statistic as the best's and MKL's).
    pub seconds: f64,
    pub gflops: f64,
    /// MKL's time over its time.
    pub ratio: f64,
    /// MKL's time over its time plus its selection's: one call that selects as it runs, as
    /// Nitro's tuned runs were timed (the feature pass is sampled, `tune::cusp`; on the smaller
    /// matrices it still costs more than a tenth of a call). Neither side counts its one-time
    /// layout inspection (MKL's `mkl_sparse_optimize`, this variant's first call), which are
    /// reported apart.
    pub ratio_with_selection: f64,
    /// The model's selection: the feature pass plus the query, in seconds and in calls of the
    /// picked variant.
    pub selection_seconds: f64,
    pub selection_calls: f64,
    /// The picked variant's first call on a fresh workspace (its layout's inspector, page
    /// faults), in seconds and in calls.
    pub first_call_seconds: f64,
    pub first_call_calls: f64,
}

/// The best variant's memory traffic: the bytes any storage of the matrix must move per SpMV
/// (its values, x read once, y written once) over its confirmed time, against the machine's
/// limit for moving those bytes. Against MKL, the limit is the traffic probe
/// (`surge_cpu::baseline::traffic`: the same reads, and y's bytes written with streaming
/// stores, in each of its read patterns, and the same bytes all read), timed as more contenders
/// in the confirmation's interleaved rounds: its fastest batch, the best the machine did while
/// the variants ran; the fraction is the median over the rounds of the variant's fraction of
/// that round's fastest probe (see `Confirmation::limit_fractions`). The
/// read-only probe (`bench::bandwidth`, best of 5 passes over 256 MiB arrays before each such
/// input, the best over the run kept) is reported beside it, and is the limit against rayon. Why: with the read probe as the limit, the
/// diagonal SpMV of a 5-point Laplacian ran at 1.14 of it and a banded matrix at 1.16
/// (2026-11-27, `surge bench spmv`): the probe was taken at another moment than the kernel on a
/// machine whose bandwidth moves by up to 2× within seconds, and it only reads, while on this
/// AMD EPYC VM a pass that also streams out a sixth as many bytes moves more bytes per second
/// in all. CSR's column indices and row offsets are not counted, since the diagonal layout
/// reads none: a CSR or SELL variant's fraction understates its use of the bandwidth by up to a
/// third. A matrix whose CSR bytes fit the last-level cache has no DRAM limit
/// (`fraction_of_bandwidth` is null).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Traffic {
    pub bytes: f64,
    pub best_gbps: f64,
    /// The limit: `bytes` over the traffic probe's time (in the same rounds), or the read
    /// probe's rate (see `limit`).
    pub bandwidth_gbps: f64,
    pub limit: LimitKind,
    /// The read-only probe's best rate over the run (NaN when none ran), for comparison.
    pub read_gbps: f64,
    pub fraction_of_bandwidth: Option<f64>,
}

/// Which probe a [`Traffic`]'s limit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// The traffic probe (`surge_cpu::baseline::traffic`), timed in the confirmation's rounds.
    Traffic,
    /// The read-only probe, taken before the input.
    Read,
}

/// The read bandwidth: a new probe, held to the best this process has measured (the CLI benches
/// one input per call; a probe before one DRAM matrix read 25.0 GB/s where those before the two
/// others read 28.3 and 31.7, and the matrix then ran at 1.14 of the low one).
fn best_bandwidth() -> f64 {
    static BEST: std::sync::Mutex<f64> = std::sync::Mutex::new(0.0);
    let now = super::bandwidth().read_gbps;
    let mut best = BEST.lock().expect("bandwidth cache");
    *best = best.max(now);
    *best
}

/// One SpMV's bytes in CSR: values, u32 column indices, u64 row offsets, x and y.
pub fn csr_bytes(m: &CsrMatrix) -> f64 {
    (12 * m.nnz() + 8 * (m.rows + 1) + 8 * m.cols + 8 * m.rows) as f64
}

/// The bytes any storage must move per SpMV (see [`Traffic`]).
pub fn min_bytes(m: &CsrMatrix) -> f64 {
    (8 * m.nnz() + 8 * m.cols + 8 * m.rows) as f64
}

/// Benchmarks spmv on `inputs` (name, matrix).
pub fn bench_spmv(inputs: &[(String, CsrMatrix)], opts: &BenchOptions) -> Result<Vec<InputResult>> {
    if !matches!(opts.reference, Reference::Mkl | Reference::Rayon) {
        return Err(SurgeError::Usage(
            "the cpu spmv bench compares with mkl or rayon".into(),
        ));
    }
    if opts.tuned.is_some() && opts.reference != Reference::Mkl {
        return Err(SurgeError::Usage(
            "--tuned confirms the model's pick against mkl; drop --vs rayon".into(),
        ));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let backend = CpuBackend::new();
    let workload = crate::apps::App::Spmv.workload();
    let tuned = match &opts.tuned {
        Some(path) => Some(Tuned::open_from(path, &workload, &backend)?),
        None => None,
    };
    let l3 = surge_codegen::gemm::Machine::query().l3_bytes as f64;
    let limit = inputs
        .iter()
        .any(|(_, m)| csr_bytes(m) > l3)
        .then(best_bandwidth);
    let mut out = Vec::new();
    for (name, m) in inputs {
        let in_dram = csr_bytes(m) > l3;
        let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
        let c = Computation::new(&spmv_app(m, &x)?)?;
        let k = Kernels::build(&c, &Target::cpu())?;
        let flops = 2.0 * m.nnz() as f64;
        let variants = time_variants(&c, &k, opts, flops, None, SCREEN_SAMPLE)?;
        let default = k.default_variant().id();
        let (reference, seconds, confirmed) = match opts.reference {
            Reference::Mkl => {
                let input = Input {
                    c: &c,
                    k: &k,
                    m,
                    x: &x,
                    name,
                    flops,
                    in_dram,
                };
                let (reference, conf, tuned) =
                    confirm_vs_mkl(&input, &variants, tuned.as_ref(), threads, &backend)?;
                (reference, conf.reference_seconds, Some((conf, tuned)))
            }
            _ => (
                "rayon".to_string(),
                rayon_seconds(m, &x, threads, opts),
                None,
            ),
        };
        let mut r = summarize(
            name.clone(),
            m.rows,
            m.nnz(),
            "GFLOP/s",
            variants,
            default,
            &reference,
            flops / seconds / 1e9,
        );
        if let Some((conf, tuned)) = confirmed {
            r.best_variant = conf.own.clone();
            r.best_rate = flops / conf.own_seconds / 1e9;
            r.ratio = conf.ratio;
            r.confirmation = Some(conf);
            r.tuned = tuned;
        }
        r.traffic = Some(traffic(
            m,
            r.best_rate / flops,
            limit,
            r.confirmation.as_ref(),
            in_dram,
        ));
        out.push(r);
    }
    Ok(out)
}

/// The best variant's traffic (`seconds_per_flop` its confirmed speed) against the limit: with
/// traffic probes timed in its confirmation's rounds (`conf`), the fastest probe batch as the
/// rate and the median over rounds of the variant's fraction of that round's fastest probe
/// (`Confirmation::limit_fractions`) as the fraction; else the read probe `read_gbps`. A
/// fraction only `in_dram`.
fn traffic(
    m: &CsrMatrix,
    seconds_per_flop: f64,
    read_gbps: Option<f64>,
    conf: Option<&super::confirm::Confirmation>,
    in_dram: bool,
) -> Traffic {
    let bytes = min_bytes(m);
    let best_gbps = bytes * seconds_per_flop;
    let probed = conf.and_then(|c| Some((c.limit.as_ref()?, &c.limit_fractions)));
    let (limit, kind, fraction) = match probed {
        Some((p, rounds)) => (
            Some(bytes / p.min_seconds / 1e9),
            LimitKind::Traffic,
            Some(crate::stats::median(rounds)),
        ),
        None => (read_gbps, LimitKind::Read, read_gbps.map(|l| best_gbps / l)),
    };
    Traffic {
        bytes,
        best_gbps,
        bandwidth_gbps: limit.unwrap_or(f64::NAN),
        limit: kind,
        read_gbps: read_gbps.unwrap_or(f64::NAN),
        fraction_of_bandwidth: fraction.filter(|_| in_dram),
    }
}

/// One benchmarked matrix and what was built for it.
struct Input<'a> {
    c: &'a Computation,
    k: &'a Kernels,
    m: &'a CsrMatrix,
    x: &'a [f64],
    name: &'a str,
    flops: f64,
    /// Its CSR bytes exceed the last-level cache: a traffic probe is timed beside it.
    in_dram: bool,
}

/// The screening's candidates (and the model's pick, with `tuned`) confirmed against MKL:
/// MKL's name, the confirmation, the pick's result.
fn confirm_vs_mkl(
    i: &Input<'_>,
    variants: &[super::VariantResult],
    tuned: Option<&Tuned<'_>>,
    threads: usize,
    backend: &CpuBackend,
) -> Result<(String, Confirmation, Option<TunedResult>)> {
    let mut ids = candidates(i, variants, backend)?;
    let pick = match tuned {
        Some(t) => Some(selection(t, i)?),
        None => None,
    };
    if let Some(p) = &pick
        && !ids.contains(&p.variant)
    {
        ids.push(p.variant.clone());
    }
    let (reference, conf) = vs_mkl(i, &ids, threads, backend)?;
    let result = match pick {
        Some(p) => Some(tuned_result(i.c, i.k, p, &conf, i.flops)?),
        None => None,
    };
    Ok((reference, conf, result))
}

/// How many fresh selections the selection cost is the median of.
const SELECTIONS: usize = 5;

/// The model's pick for `i`, its costs (`feature_seconds`, `query_seconds`) the medians of
/// [`SELECTIONS`] selections, each on a fresh input (its matrix just copied, as a tuned call on
/// a new matrix meets it): a single sample moved between 0.17 and 1.9 SpMV calls from one run
/// to the next on a loaded machine.
fn selection(t: &Tuned<'_>, i: &Input<'_>) -> Result<crate::tune::Selection> {
    let mut picks = Vec::with_capacity(SELECTIONS);
    for _ in 0..SELECTIONS {
        picks.push(t.select(&TuneInput::spmv(i.name, i.m.clone())?)?);
    }
    let median = |f: &dyn Fn(&crate::tune::Selection) -> f64| {
        let mut v: Vec<f64> = picks.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (features, query) = (median(&|p| p.feature_seconds), median(&|p| p.query_seconds));
    let mut pick = picks.swap_remove(0);
    (pick.feature_seconds, pick.query_seconds) = (features, query);
    Ok(pick)
}

/// Plain rayon CSR SpMV on `threads`: seconds per call (median of batched samples).
fn rayon_seconds(m: &CsrMatrix, x: &[f64], threads: usize, opts: &BenchOptions) -> f64 {
    let mut y = vec![0.0; m.rows];
    let pool = surge_cpu::native::skeleton::pool(threads);
    pool.install(|| {
        measure_batched(opts.warmup, opts.runs, SCREEN_SAMPLE, || {
            rayon_ref::spmv(&m.row_offsets, &m.col_indices, &m.values, x, &mut y)
        })
    })
    .median
}

/// The model's pick `p` with its confirmed time (from `conf`) and its costs.
fn tuned_result(
    c: &Computation,
    k: &Kernels,
    p: crate::tune::Selection,
    conf: &Confirmation,
    flops: f64,
) -> Result<TunedResult> {
    let seconds = conf
        .contenders
        .iter()
        .find(|t| t.name == p.variant)
        .map(|t| t.low_seconds)
        .expect("internal: the pick was confirmed");
    let mut ws = Workspace::default();
    let t = std::time::Instant::now();
    k.run_in(c, k.variant(&p.variant)?, &mut ws)?;
    let first = t.elapsed().as_secs_f64();
    let selection = p.feature_seconds + p.query_seconds;
    Ok(TunedResult {
        from_model: p.from_model,
        warnings: p.warnings,
        seconds,
        gflops: flops / seconds / 1e9,
        ratio: conf.reference_seconds / seconds,
        ratio_with_selection: conf.reference_seconds / (seconds + selection),
        selection_seconds: selection,
        selection_calls: selection / seconds,
        first_call_seconds: first,
        first_call_calls: first / seconds,
        variant: p.variant,
    })
}

/// The variants the confirmation times: per `threads=` value, the [`CONFIRMED`] with the least
/// median in [`RESCREEN_ROUNDS`] interleaved rounds over the [`shortlist`] of [`RESCREENED`].
/// A round during which others took the machine is measured again, as the confirmation's are.
fn candidates(
    i: &Input<'_>,
    variants: &[super::VariantResult],
    backend: &CpuBackend,
) -> Result<Vec<String>> {
    let screened = variants.iter().map(|v| (v.variant.as_str(), v.min_seconds));
    let ids = shortlist(screened, RESCREENED);
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); ids.len()];
    let mut spaces: Vec<Workspace> = ids.iter().map(|_| Workspace::default()).collect();
    let cfg = crate::tune::training::TrainingConfig::default();
    for _ in 0..RESCREEN_ROUNDS {
        let (round, _) = crate::tune::training::guarded(backend, &cfg, || {
            ids.iter()
                .zip(spaces.iter_mut())
                .map(|(id, ws)| {
                    let v = i.k.variant(id)?;
                    super::measure_variant(i.k, i.c, v, ws, (1, 1), SCREEN_SAMPLE).map(|t| t.median)
                })
                .collect::<Result<Vec<f64>>>()
        });
        for (s, t) in samples.iter_mut().zip(round?) {
            s.push(t);
        }
    }
    let medians: Vec<(&str, f64)> = ids
        .iter()
        .zip(samples)
        .map(|(id, mut t)| {
            t.sort_by(f64::total_cmp);
            (id.as_str(), crate::stats::median_of_sorted(&t))
        })
        .collect();
    Ok(shortlist(medians, CONFIRMED))
}

/// Per `threads=` value, the `n` variants of `timed` (id, seconds) with the least seconds,
/// fastest first.
fn shortlist<'a>(timed: impl IntoIterator<Item = (&'a str, f64)>, n: usize) -> Vec<String> {
    let mut by_time: Vec<(&str, f64)> = timed.into_iter().collect();
    by_time.sort_by(|a, b| a.1.total_cmp(&b.1));
    let threads = |id: &str| {
        id.parse::<surge_codegen::variant::Variant>()
            .ok()
            .and_then(|v| v.get("threads").map(|t| t.to_string()))
            .unwrap_or_default()
    };
    let mut taken: std::collections::HashMap<String, usize> = Default::default();
    by_time
        .into_iter()
        .filter(|(id, _)| {
            let k = taken.entry(threads(id)).or_default();
            *k += 1;
            *k <= n
        })
        .map(|(id, _)| id.to_string())
        .collect()
}

/// The variants `ids` of `i.k` against MKL on one thread and on `threads`, in interleaved rounds;
/// returns the reference's name (thread count of its fastest setting, MKL's version) and the
/// confirmation.
fn vs_mkl(
    i: &Input<'_>,
    ids: &[String],
    threads: usize,
    backend: &CpuBackend,
) -> Result<(String, Confirmation)> {
    let (c, k, m, x) = (i.c, i.k, i.m, i.x);
    let usage = |e: surge_cpu::baseline::mkl::MklError| SurgeError::Usage(e.to_string());
    let lib = Mkl::get().map_err(usage)?;
    // MKL's optimized handle keeps the thread count it was optimized under:
    // `MKL_Set_Num_Threads(1)` before `mv` on a handle optimized with two threads still ran on
    // two (cs4: 34 µs "on one thread", 63 µs with `MKL_NUM_THREADS=1`). One handle per count.
    let handle = |n: usize| {
        lib.set_threads(n)?;
        crate::vendor::mkl_csr(m, 1000)
    };
    let a1 = handle(1).map_err(usage)?;
    let an = if threads > 1 {
        Some(handle(threads).map_err(usage)?)
    } else {
        None
    };
    let mut contenders = Vec::new();
    let mkl_contender = |n: usize, a: MklCsr| {
        let mut y = vec![0.0; m.rows];
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
    contenders.push(mkl_contender(1, a1));
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
    if let Some(an) = an {
        contenders.push(mkl_contender(threads, an));
    }
    let limits = if i.in_dram {
        traffic_contenders(m, threads)
    } else {
        Vec::new()
    };
    let conf = confirm_with_limit(&mut contenders, limits, backend)?;
    Ok((format!("{} ({})", conf.reference, version(lib)), conf))
}

/// The limits of an SpMV in DRAM, timed in its confirmation's rounds: passes that read what any
/// storage of `m` must read (its values and `x`, two arrays read in step) and stream out `y`
/// (`surge_cpu::baseline::traffic`), on `threads`, one per read pattern (the fastest counts).
fn traffic_contenders<'a>(m: &CsrMatrix, threads: usize) -> Vec<Contender<'a>> {
    let reads = [8 * m.nnz(), 8 * m.cols];
    let pool = surge_cpu::native::skeleton::pool(threads);
    Pattern::ALL
        .iter()
        .map(|&p| {
            let pool = pool.clone();
            let mut probe = pool.install(|| TrafficProbe::with_arrays(&reads, 8 * m.rows, p));
            Contender {
                name: format!("{TRAFFIC_PROBE} ({p})"),
                reference: false,
                call: Box::new(move || {
                    pool.install(|| probe.pass());
                    Ok(())
                }),
                after: None,
            }
        })
        .collect()
}

/// The traffic probes' name in a confirmation.
const TRAFFIC_PROBE: &str = "bandwidth: the matrix's reads and y's streaming writes";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortlist_is_the_fastest_of_each_thread_count() {
        let m = crate::apps::matgen::laplacian_2d(4);
        let c = Computation::new(&spmv_app(&m, &vec![1.0; m.cols]).unwrap()).unwrap();
        let set = c.variants(&Target::cpu().platform().unwrap()).unwrap();
        // Faster the later in the list, so the last two of each thread count are picked.
        let variants: Vec<super::super::VariantResult> = set
            .variants()
            .iter()
            .enumerate()
            .map(|(i, v)| super::super::VariantResult {
                variant: v.id(),
                seconds: 1.0 / (i + 1) as f64,
                min_seconds: 1.0 / (i + 1) as f64,
                rate: 0.0,
                runs: 1,
            })
            .collect();
        let picked = shortlist(
            variants.iter().map(|v| (v.variant.as_str(), v.min_seconds)),
            CONFIRMED,
        );
        let counts: std::collections::BTreeSet<String> = set
            .variants()
            .iter()
            .filter_map(|v| v.get("threads").map(|t| t.to_string()))
            .collect();
        assert!(!counts.is_empty());
        assert_eq!(picked.len(), CONFIRMED * counts.len(), "{picked:?}");
        for t in &counts {
            let of_t: Vec<&String> = picked
                .iter()
                .filter(|id| id.contains(&format!("threads={t},")))
                .collect();
            assert_eq!(of_t.len(), CONFIRMED, "threads={t}: {picked:?}");
        }
        // The fastest variant of all comes first.
        assert_eq!(picked[0], variants.last().unwrap().variant);
    }
}
