//! Finding Surge's best GEMM variant for a shape by measurement, on a proxy of the shape scaled
//! to about one 1024³ product: every tile shape (MR×NR×KU) and threading with the default
//! blocking first, then every blocking of the three fastest tile shapes, each timed as the best of
//! two runs; the five fastest and the default variant are then timed at the full size in three
//! interleaved rounds and the fastest (by its best round) wins.
//! The result is what the bench then times in its rounds.

use super::shapes::Shape;
use crate::Result;
use std::collections::BTreeMap;
use std::time::Instant;
use surge_codegen::gemm::{GemmVariant, Kernel, default_variant};
use surge_cpu::gemm::{GemmKernels, MatRef};

/// The search's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Search {
    pub best: GemmVariant,
    /// The proxy shape the candidates were timed on.
    pub proxy: (usize, usize, usize),
    /// How many candidates were timed.
    pub timed: usize,
}

/// Candidates timed again at the full size (and the default variant).
const FINALISTS: usize = 5;

/// Interleaved rounds of the finalists at the full size (each round a best of two).
const FINAL_ROUNDS: usize = 3;

/// Flops of the proxy problem.
const PROXY_FLOPS: f64 = 2.2e9;

fn data(len: usize, seed: usize) -> Vec<f64> {
    (0..len)
        .map(|i| ((i * 7 + seed) % 23) as f64 * 0.05 - 0.5)
        .collect()
}

/// The seconds of the best of two runs of `v` on `p`.
fn time(
    g: &GemmKernels,
    v: &GemmVariant,
    threads: usize,
    p: &Shape,
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
) -> Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..2 {
        let t = Instant::now();
        g.gemm(
            v,
            threads,
            MatRef::new(a, p.m, p.k),
            MatRef::new(b, p.k, p.n),
            c,
        )?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Searches `g`'s variants for `shape` on `threads` threads.
pub fn search(g: &GemmKernels, shape: &Shape, threads: usize) -> Result<Search> {
    let p = shape.proxy(PROXY_FLOPS);
    let (a, b) = (data(p.m * p.k, 1), data(p.k * p.n, 2));
    let mut c = vec![0.0; p.m * p.n];
    let vs = g.variants();
    // Stage 1: per tile shape and threading, the variant closest to the default blocking.
    let mut stage1: BTreeMap<(Kernel, bool), &GemmVariant> = BTreeMap::new();
    for v in vs {
        let key = (v.kernel(), v.parallel == surge_codegen::gemm::Parallel::Ic);
        let score = |x: &GemmVariant| (x.kc == 256, x.nc >= 4000, usize::MAX - x.mc.abs_diff(96));
        let e = stage1.entry(key).or_insert(v);
        if score(v) > score(e) {
            *e = v;
        }
    }
    let mut timed = Vec::new();
    for v in stage1.values() {
        timed.push((time(g, v, threads, &p, &a, &b, &mut c)?, (*v).clone()));
    }
    timed.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut top: Vec<Kernel> = Vec::new();
    for (_, v) in &timed {
        if !top.contains(&v.kernel()) {
            top.push(v.kernel());
        }
        if top.len() == 3 {
            break;
        }
    }
    // Stage 2: every blocking of the fastest tile shapes.
    for v in vs.iter().filter(|v| top.contains(&v.kernel())) {
        if !timed.iter().any(|(_, t)| t == v) {
            timed.push((time(g, v, threads, &p, &a, &b, &mut c)?, v.clone()));
        }
    }
    timed.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Stage 3: the five fastest on the proxy and the default variant, timed at the full size in
    // interleaved rounds (load that hits one round hits every finalist), each its best round.
    // One pass of single timings let a burst of load on a busy machine pick a variant 10%
    // slower than the default.
    let mut finals: Vec<GemmVariant> = timed.iter().take(FINALISTS).map(|t| t.1.clone()).collect();
    if let Some(d) = default_variant(vs)
        && !finals.contains(d)
    {
        finals.push(d.clone());
    }
    let (a, b) = (data(shape.m * shape.k, 1), data(shape.k * shape.n, 2));
    let mut c = vec![0.0; shape.m * shape.n];
    let mut best_time = vec![f64::INFINITY; finals.len()];
    for _ in 0..FINAL_ROUNDS {
        for (v, t) in finals.iter().zip(&mut best_time) {
            *t = t.min(time(g, v, threads, shape, &a, &b, &mut c)?);
        }
    }
    let winner = (0..finals.len())
        .min_by(|&x, &y| best_time[x].total_cmp(&best_time[y]))
        .expect("at least one finalist");
    Ok(Search {
        best: finals[winner].clone(),
        proxy: (p.m, p.n, p.k),
        timed: timed.len() + finals.len(),
    })
}
