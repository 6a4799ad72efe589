//! Memory-bandwidth probe on all cores: a read-only sum and a STREAM-style triad over arrays far
//! larger than the last-level cache. Reports the best of several passes, as STREAM does.

use rayon::prelude::*;
use std::time::Instant;

/// Measured bandwidths, GB/s (10⁹ bytes per second).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Bandwidth {
    /// Bytes read per second by a parallel sum.
    pub read_gbps: f64,
    /// STREAM triad `a = b + s·c`, counting 3 arrays of traffic.
    pub triad_gbps: f64,
    pub bytes: usize,
    pub threads: usize,
}

/// Reads independent accumulators so the sum is limited by memory, not by the add latency.
fn sum4(c: &[f64]) -> f64 {
    let mut a = [0.0f64; 8];
    let mut it = c.chunks_exact(8);
    for ch in &mut it {
        for k in 0..8 {
            a[k] += ch[k];
        }
    }
    a.iter().sum::<f64>() + it.remainder().iter().sum::<f64>()
}

/// Probes with arrays of `elems` doubles (use ≥ 2^25 so they live in DRAM).
pub fn probe(elems: usize, passes: usize) -> Bandwidth {
    let b: Vec<f64> = (0..elems)
        .into_par_iter()
        .map(|i| (i % 13) as f64)
        .collect();
    let c: Vec<f64> = (0..elems).into_par_iter().map(|i| (i % 5) as f64).collect();
    let mut a = vec![0.0f64; elems];
    let chunk = 1 << 16;
    let mut best_read = f64::INFINITY;
    let mut best_triad = f64::INFINITY;
    let mut sink = 0.0;
    for _ in 0..passes.max(1) {
        let t = Instant::now();
        sink += b.par_chunks(chunk).map(sum4).sum::<f64>();
        best_read = best_read.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        a.par_chunks_mut(chunk)
            .zip(b.par_chunks(chunk))
            .zip(c.par_chunks(chunk))
            .for_each(|((a, b), c)| {
                for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
                    *x = y + 3.0 * z;
                }
            });
        best_triad = best_triad.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box((sink, &a));
    let bytes = elems * 8;
    Bandwidth {
        read_gbps: bytes as f64 / best_read / 1e9,
        triad_gbps: 3.0 * bytes as f64 / best_triad / 1e9,
        bytes,
        threads: rayon::current_num_threads(),
    }
}
