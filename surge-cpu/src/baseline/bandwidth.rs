//! Memory-bandwidth probe on all cores: a read-only sum, a STREAM-style copy and triad over arrays
//! far larger than the last-level cache. Reports the best of several passes, as STREAM does.
//!
//! Each kernel is held to the probe of its own traffic: a reduction (reads) to the read pass, a
//! scan (one read and one write per element) to the copy. Counted as STREAM counts (the bytes
//! the kernel names, not the write-allocate reads), a copy moves 3 lines per 2 counted and a
//! triad 4 per 3, so a scan measured against the triad reached 1.04 of it here (29.9 GB/s
//! against 28.8), a fraction above 1 that meant the limit was the wrong one.

use rayon::prelude::*;
use std::time::Instant;

/// Measured bandwidths, GB/s (10⁹ bytes per second).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Bandwidth {
    /// Bytes read per second by a parallel sum.
    pub read_gbps: f64,
    /// STREAM copy `a = b`, counting 2 arrays of traffic (the limit of a scan).
    pub copy_gbps: f64,
    /// STREAM triad `a = b + s·c`, counting 3 arrays of traffic.
    pub triad_gbps: f64,
    pub bytes: usize,
    pub threads: usize,
    /// How many passes the best is of.
    pub samples: usize,
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

/// A bandwidth probe whose arrays are allocated once, so that it can be sampled between the
/// runs it is the limit of (each [`Probe::sample`] is one read, one copy and one triad pass; the
/// result is the best of the samples).
#[derive(Debug)]
pub struct Probe {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    best_read: f64,
    best_copy: f64,
    best_triad: f64,
    samples: usize,
}

impl Probe {
    /// A probe over arrays of `elems` doubles (use ≥ 2^25 so they live in DRAM), filled in
    /// parallel so their pages are spread as the kernels' are.
    pub fn new(elems: usize) -> Probe {
        Probe {
            b: (0..elems)
                .into_par_iter()
                .map(|i| (i % 13) as f64)
                .collect(),
            c: (0..elems).into_par_iter().map(|i| (i % 5) as f64).collect(),
            a: (0..elems).into_par_iter().map(|_| 0.0).collect(),
            best_read: f64::INFINITY,
            best_copy: f64::INFINITY,
            best_triad: f64::INFINITY,
            samples: 0,
        }
    }

    /// One read pass, one copy pass and one triad pass on the current rayon pool.
    pub fn sample(&mut self) {
        let chunk = 1 << 16;
        let t = Instant::now();
        let sink = self.b.par_chunks(chunk).map(sum4).sum::<f64>();
        self.best_read = self.best_read.min(t.elapsed().as_secs_f64());
        std::hint::black_box(sink);
        let t = Instant::now();
        self.a
            .par_chunks_mut(chunk)
            .zip(self.b.par_chunks(chunk))
            .for_each(|(a, b)| a.copy_from_slice(b));
        self.best_copy = self.best_copy.min(t.elapsed().as_secs_f64());
        std::hint::black_box(&self.a);
        let t = Instant::now();
        self.a
            .par_chunks_mut(chunk)
            .zip(self.b.par_chunks(chunk))
            .zip(self.c.par_chunks(chunk))
            .for_each(|((a, b), c)| {
                for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
                    *x = y + 3.0 * z;
                }
            });
        self.best_triad = self.best_triad.min(t.elapsed().as_secs_f64());
        std::hint::black_box(&self.a);
        self.samples += 1;
    }

    /// The best of the samples so far (at least one is taken).
    pub fn result(&mut self) -> Bandwidth {
        if self.samples == 0 {
            self.sample();
        }
        let bytes = self.b.len() * 8;
        Bandwidth {
            read_gbps: bytes as f64 / self.best_read / 1e9,
            copy_gbps: 2.0 * bytes as f64 / self.best_copy / 1e9,
            triad_gbps: 3.0 * bytes as f64 / self.best_triad / 1e9,
            bytes,
            threads: rayon::current_num_threads(),
            samples: self.samples,
        }
    }
}

/// Probes with arrays of `elems` doubles, best of `passes`.
pub fn probe(elems: usize, passes: usize) -> Bandwidth {
    let mut p = Probe::new(elems);
    for _ in 0..passes.max(1) {
        p.sample();
    }
    p.result()
}
