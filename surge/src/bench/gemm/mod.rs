//! `surge bench gemm`: Surge's generated GEMM (the best variant found by measurement for each
//! shape, and the default) against every vendor BLAS on the machine and the GEMM crates, in
//! GFLOP/s and as a fraction of the machine's peak FLOP/s measured in the same run. The
//! contenders and a peak probe are timed in rounds (per round and contender, one untimed call
//! that wakes its threads, then one timed call), so load that hits
//! one round hits every contender and the limit alike; each figure is the median over rounds,
//! the peak the best of its samples (three short probes per round). Every contender's result is checked against Surge's.

mod contenders;
mod search;
mod shapes;
mod svg;

pub use contenders::{Peer, peers};
pub use search::{Search, search};
pub use shapes::{KINDS, Shape, shapes};
pub use svg::write_svg;

use super::Progress;
use crate::{Result, SurgeError};
use serde::Serialize;
use std::time::Instant;
use surge_codegen::gemm::{self as cg, GemmVariant, Machine};
use surge_cpu::baseline::peak;
use surge_cpu::gemm::{GemmKernels, MatRef};

/// Options of a GEMM benchmark.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct GemmBenchOptions {
    pub shapes: Vec<Shape>,
    /// Peers (`all`, or vendor names and `gemm-crate`/`matrixmultiply`).
    pub vs: Vec<String>,
    /// Timed rounds (the median is reported).
    pub runs: usize,
    pub threads: usize,
    pub progress: Option<Progress>,
}

/// One contender on one shape.
#[derive(Debug, Clone, Serialize)]
pub struct Contender {
    pub name: String,
    /// Surge's variant id, or the library's path.
    pub detail: Option<String>,
    pub gflops: f64,
    pub fraction_of_peak: f64,
    pub median_seconds: f64,
    pub min_seconds: f64,
    /// Largest |difference| from Surge's default variant's C, relative to max |C|.
    pub max_rel_difference: f64,
}

/// One shape's results.
#[derive(Debug, Clone, Serialize)]
pub struct ShapeResult {
    pub shape: Shape,
    pub peak_gflops: f64,
    pub search: Search,
    pub contenders: Vec<Contender>,
    /// The fastest vendor BLAS and Surge's best variant's speed relative to it.
    pub best_vendor: Option<String>,
    pub surge_vs_best_vendor: Option<f64>,
    /// Surge's best variant relative to the fastest library of all (vendors and crates).
    pub surge_vs_best_library: Option<f64>,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct GemmReport {
    pub machine: Machine,
    pub threads: usize,
    pub runs: usize,
    /// Variants in the machine's GEMM space (all compiled: one kernel per tile shape).
    pub variants: usize,
    pub kernels: usize,
    pub peak_isa: String,
    /// Vendors that were not found (`--vs all`), each with how to install it.
    pub absent: Vec<String>,
    pub shapes: Vec<ShapeResult>,
}

/// Runs the benchmark.
pub fn bench_gemm(opts: &GemmBenchOptions) -> Result<GemmReport> {
    if opts.runs == 0 || opts.shapes.is_empty() {
        return Err(SurgeError::Usage(
            "surge bench gemm needs at least one shape and one run".into(),
        ));
    }
    let (peers, absent) = peers(&opts.vs).map_err(SurgeError::Usage)?;
    let machine = Machine::query();
    let variants = cg::variants(&machine)?;
    let g = GemmKernels::build(&variants)?;
    for p in &peers {
        p.set_threads(opts.threads);
    }
    let mut results = Vec::new();
    for shape in &opts.shapes {
        results.push(bench_shape(&g, &peers, shape, opts)?);
        if let Some(p) = &opts.progress {
            p(&shape.label());
        }
    }
    let kernels: std::collections::BTreeSet<_> = variants.iter().map(GemmVariant::kernel).collect();
    Ok(GemmReport {
        peak_isa: peak::isa_name().into(),
        machine,
        threads: opts.threads,
        runs: opts.runs,
        variants: variants.len(),
        kernels: kernels.len(),
        absent,
        shapes: results,
    })
}

/// Data of a benchmark operand: deterministic values in [-0.5, 0.6].
fn operand(len: usize, seed: usize) -> Vec<f64> {
    (0..len)
        .map(|i| ((i.wrapping_mul(2654435761) + seed) % 23) as f64 * 0.05 - 0.5)
        .collect()
}

/// A contender as one callable.
/// A contender as one callable; the flag asks it to leave its result in the output buffer
/// (the checked warm-up call), else it may leave it where it computes it.
type Call<'a> = Box<dyn Fn(&[f64], &[f64], &mut [f64], bool) -> Result<()> + 'a>;

fn bench_shape(
    g: &GemmKernels,
    peers: &[Peer],
    shape: &Shape,
    opts: &GemmBenchOptions,
) -> Result<ShapeResult> {
    let (m, n, k, t) = (shape.m, shape.n, shape.k, opts.threads);
    let found = search(g, shape, t)?;
    let default = cg::default_variant(g.variants())
        .expect("a non-empty space")
        .clone();
    let surge = |v: GemmVariant| -> Call<'_> {
        Box::new(move |a: &[f64], b: &[f64], c: &mut [f64], _: bool| {
            Ok(g.gemm(&v, t, MatRef::new(a, m, k), MatRef::new(b, k, n), c)?)
        })
    };
    let mut calls: Vec<(String, Option<String>, Call<'_>, Option<&Peer>)> = vec![
        (
            "surge".into(),
            Some(found.best.id()),
            surge(found.best.clone()),
            None,
        ),
        (
            "surge-default".into(),
            Some(default.id()),
            surge(default.clone()),
            None,
        ),
    ];
    calls.push((
        "surge-dsel".into(),
        Some(found.best.id()),
        dsel_call(shape, &found.best, false)?,
        None,
    ));
    calls.push((
        "surge-dsel-bt".into(),
        Some(found.best.id()),
        dsel_call(shape, &found.best, true)?,
        None,
    ));
    for p in peers {
        let call: Call<'_> = Box::new(move |a: &[f64], b: &[f64], c: &mut [f64], _: bool| {
            p.run(t, (m, n, k), a, b, c).map_err(SurgeError::Usage)
        });
        calls.push((p.name(), p.path(), call, Some(p)));
    }
    let (a, b) = (operand(m * k, 1), operand(k * n, 2));
    let mut reference = vec![0.0; m * n];
    calls[1].2(&a, &b, &mut reference, true)?;
    let scale = reference
        .iter()
        .fold(0.0f64, |s, x| s.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    let mut c = vec![0.0; m * n];
    let mut times = vec![Vec::new(); calls.len()];
    let mut diffs = vec![0.0f64; calls.len()];
    let mut peak_best = 0.0f64;
    // One warm-up call each (first-touch, thread start-up), then the timed rounds.
    for round in 0..=opts.runs {
        peak_best = peak_best.max(peak::probe(t, 1_500_000, 3).gflops);
        for (i, (_, _, call, peer)) in calls.iter().enumerate() {
            // One untimed call first: a library's threads are awake for the timed one, as they
            // are in a program that calls it back to back.
            call(&a, &b, &mut c, false)?;
            c.fill(f64::NAN);
            let t0 = Instant::now();
            call(&a, &b, &mut c, round == 0)?;
            let s = t0.elapsed().as_secs_f64();
            if round > 0 {
                times[i].push(s);
            } else {
                diffs[i] = max_rel_difference(&c, &reference, scale);
            }
            if let Some(p) = peer {
                p.settle();
            }
        }
    }
    let contenders: Vec<Contender> = calls
        .iter()
        .zip(times)
        .zip(diffs)
        .map(|(((name, detail, _, _), mut ts), diff)| {
            ts.sort_by(f64::total_cmp);
            let median = crate::stats::median_of_sorted(&ts);
            let gflops = shape.flops() / median / 1e9;
            Contender {
                name: name.clone(),
                detail: detail.clone(),
                gflops,
                fraction_of_peak: gflops / peak_best,
                median_seconds: median,
                min_seconds: ts[0],
                max_rel_difference: diff,
            }
        })
        .collect();
    Ok(summarize(shape.clone(), peak_best, found, contenders))
}

/// The user's DSEL mat-mat (`apps::mat_mat`) run with the searched GEMM variant through
/// `Kernels::run_in`: what a user's obvious program pays on top of the dedicated entry
/// (recognition, buffer checks, the result in a workspace). Its operands are its own copies of
/// the same data, made once. With `by_columns`, the same product written as `A·Btᵀ`
/// (`apps::mat_mat_bt`, B given as its transpose: B's panels are packed from the rows of Bt).
fn dsel_call<'a>(shape: &Shape, best: &GemmVariant, by_columns: bool) -> Result<Call<'a>> {
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let (a, b) = (operand(m * k, 1), operand(k * n, 2));
    let c = if by_columns {
        let bt = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
        crate::apps::mat_mat_bt(a, bt, k as u64)?
    } else {
        crate::apps::mat_mat(a, b, k as u64, n as u64)?
    };
    let simd = Machine::query().simd_bits;
    let set = c.variants(&crate::Target::cpu().platform()?)?;
    let v = set
        .variants()
        .iter()
        .find(|v| cg::from_variant(v, simd).as_ref() == Some(best))
        .expect("the searched variant is in the DSEL's GEMM family")
        .clone();
    let kernels = crate::Kernels::build_variants(&c, std::slice::from_ref(&v))?;
    let ws = std::cell::RefCell::new(crate::Workspace::default());
    Ok(Box::new(
        move |_: &[f64], _: &[f64], out: &mut [f64], check: bool| {
            let mut ws = ws.borrow_mut();
            kernels.run_in(&c, &v, &mut ws)?;
            if !check {
                return Ok(());
            }
            if let Some(surge_codegen::data::Output::Nested {
                data: surge_codegen::data::Buffer::F64(d),
                ..
            }) = ws.output()
            {
                out.copy_from_slice(&d);
            }
            Ok(())
        },
    ))
}

/// max |c - r| / scale (NaN where c has a NaN that r has not).
fn max_rel_difference(c: &[f64], r: &[f64], scale: f64) -> f64 {
    c.iter().zip(r).fold(0.0f64, |d, (x, y)| {
        if x.is_nan() != y.is_nan() {
            f64::NAN
        } else if x.is_nan() {
            d
        } else {
            d.max((x - y).abs() / scale)
        }
    })
}

fn summarize(
    shape: Shape,
    peak_gflops: f64,
    search: Search,
    contenders: Vec<Contender>,
) -> ShapeResult {
    let surge = contenders[0].gflops;
    let best_of = |f: &dyn Fn(&Contender) -> bool| {
        contenders
            .iter()
            .filter(|c| !c.name.starts_with("surge") && f(c))
            .max_by(|x, y| x.gflops.total_cmp(&y.gflops))
            .map(|c| (c.name.clone(), surge / c.gflops))
    };
    let vendor = best_of(&|c| !matches!(c.name.as_str(), "gemm-crate" | "matrixmultiply"));
    let library = best_of(&|_| true);
    ShapeResult {
        shape,
        peak_gflops,
        search,
        best_vendor: vendor.as_ref().map(|v| v.0.clone()),
        surge_vs_best_vendor: vendor.map(|v| v.1),
        surge_vs_best_library: library.map(|v| v.1),
        contenders,
    }
}
