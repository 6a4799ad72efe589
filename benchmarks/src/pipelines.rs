//! Issue 19's benchmark pipelines: each as a Surge program and as the plain Rust a user would
//! otherwise write, serial and with rayon (`bin/pipelines.rs` times them side by side).

use rayon::prelude::*;
use std::hint::black_box;
use std::sync::Arc;
use surge::prelude::*;

#[allow(missing_debug_implementations)]
/// One pipeline: its Surge program, its serial and rayon references, and the bytes it must read.
pub struct Case {
    pub name: &'static str,
    pub build: Box<dyn Fn() -> Computation + Send + Sync>,
    pub serial: Box<dyn Fn() + Send + Sync>,
    pub rayon: Box<dyn Fn() + Send + Sync>,
    pub bytes: usize,
    /// Of `bytes`, those written (a scan's output): a case that writes is held to the copy
    /// bandwidth (one read and one write), one that only reads to the read bandwidth.
    pub written: usize,
}

pub(crate) const N: usize = 10_000_000;

pub(crate) fn data(n: usize, seed: u64) -> Vec<f64> {
    // Values in [-0.5, 0.5): the shared generator's [-1, 1) halved (exactly).
    let mut v = surge_codegen::data::uniform_values(n, seed);
    v.iter_mut().for_each(|x| *x *= 0.5);
    v
}

/// The argmin combiner over (distance, index) that k-means uses.
pub(crate) use surge::apps::kmeans::program::argmin as argmin_op;

/// Histogram of 10^7 sorted keys over 1000 bins.
fn histogram() -> Case {
    let keys: Arc<Vec<u32>> = Arc::new(
        (0..N)
            .map(|i| (i as u64 * 1000 / N as u64) as u32)
            .collect(),
    );
    let (k1, k2, k3) = (keys.clone(), keys.clone(), keys);
    Case {
        name: "histogram_by_key",
        build: Box::new(move || {
            let keys = Seq::input("keys", k1.to_vec()).expect("input");
            let ones = map(|k: Scalar<u32>| k.cast::<u64>().min(0u64) + 1u64, &keys).expect("map");
            Computation::new(&reduce_by_key(add, &ones, &keys, 0u64).expect("rbk")).expect("c")
        }),
        serial: Box::new(move || {
            let mut out: Vec<u64> = Vec::new();
            let mut prev = None;
            for &k in k2.iter() {
                if prev == Some(k) {
                    *out.last_mut().expect("a run") += 1;
                } else {
                    out.push(1);
                    prev = Some(k);
                }
            }
            black_box(out);
        }),
        rayon: Box::new(move || {
            // Runs per chunk, then the chunk boundaries merged.
            let parts: Vec<Vec<(u32, u64)>> = k3
                .par_chunks(N / 64)
                .map(|c| {
                    let mut out: Vec<(u32, u64)> = Vec::new();
                    for &k in c {
                        match out.last_mut() {
                            Some((pk, n)) if *pk == k => *n += 1,
                            _ => out.push((k, 1)),
                        }
                    }
                    out
                })
                .collect();
            let mut out: Vec<(u32, u64)> = Vec::new();
            for p in parts {
                for (k, n) in p {
                    match out.last_mut() {
                        Some((pk, m)) if *pk == k => *m += n,
                        _ => out.push((k, n)),
                    }
                }
            }
            black_box(out);
        }),
        bytes: N * 4,
        written: 0,
    }
}

/// Index of the smallest of 10^7 values, as a tuple reduction over `zip(d, range)`.
fn argmin() -> Case {
    let d = Arc::new(data(N, 1));
    let (d1, d2, d3) = (d.clone(), d.clone(), d);
    Case {
        name: "argmin",
        build: Box::new(move || {
            let d = Seq::input("d", d1.to_vec()).expect("input");
            let n = d1.len() as u32;
            let best = reduce(
                argmin_op,
                &zip(&d, &range(0u32, n).expect("range")).expect("zip"),
            )
            .expect("reduce");
            Computation::new(&best.1).expect("c")
        }),
        serial: Box::new(move || {
            let mut best = (f64::INFINITY, 0usize);
            for (i, &v) in d2.iter().enumerate() {
                if v < best.0 {
                    best = (v, i);
                }
            }
            black_box(best);
        }),
        rayon: Box::new(move || {
            let best = d3
                .par_iter()
                .enumerate()
                .map(|(i, &v)| (v, i))
                .reduce(|| (f64::INFINITY, 0), |a, b| if a.0 <= b.0 { a } else { b });
            black_box(best);
        }),
        bytes: N * 8,
        written: 0,
    }
}

/// `sqrt(Σ x²)` over 10^7 values.
fn l2_norm() -> Case {
    let x = Arc::new(data(N, 2));
    let (x1, x2, x3) = (x.clone(), x.clone(), x);
    Case {
        name: "l2_norm",
        build: Box::new(move || {
            let x = Seq::input("x", x1.to_vec()).expect("input");
            let sq = map(|v: Scalar<f64>| &v * &v, &x).expect("map");
            Computation::new(&reduce(add, &sq).expect("reduce").sqrt()).expect("c")
        }),
        serial: Box::new(move || {
            black_box(x2.iter().map(|v| v * v).sum::<f64>().sqrt());
        }),
        rayon: Box::new(move || {
            black_box(x3.par_iter().map(|v| v * v).sum::<f64>().sqrt());
        }),
        bytes: N * 8,
        written: 0,
    }
}

/// Inclusive scans of 10^7 values in rows of 1 to 2000.
fn segmented_scan() -> Case {
    let x = Arc::new(data(N, 3));
    let mut off = vec![0u32];
    let mut i = 0usize;
    while off.last().copied().unwrap_or(0) as usize + 1 < N {
        i += 1;
        let next = (*off.last().expect("an offset") as usize + 1 + (i * 7919) % 2000).min(N);
        off.push(next as u32);
    }
    if *off.last().expect("an offset") as usize != N {
        off.push(N as u32);
    }
    let off = Arc::new(off);
    let (x1, x2, x3) = (x.clone(), x.clone(), x);
    let (o1, o2, o3) = (off.clone(), off.clone(), off);
    // The references write into buffers allocated once, as Surge's workspace is reused.
    let (out2, out3) = (
        std::sync::Mutex::new(vec![0.0; N]),
        std::sync::Mutex::new(vec![0.0; N]),
    );
    Case {
        name: "segmented_scan",
        build: Box::new(move || {
            let x = Seq::input("x", x1.to_vec()).expect("input");
            let off = Seq::input("off", o1.to_vec()).expect("input");
            let rows = nest(&x, &off).expect("nest");
            Computation::new(&map(|r: Seq<f64>| scan(add, &r), &rows).expect("map")).expect("c")
        }),
        serial: Box::new(move || {
            let mut y = out2.lock().expect("output");
            for w in o2.windows(2) {
                let mut acc = 0.0;
                for k in w[0] as usize..w[1] as usize {
                    acc += x2[k];
                    y[k] = acc;
                }
            }
            black_box(&y[..]);
        }),
        rayon: Box::new(move || {
            let mut y = out3.lock().expect("output");
            let rows: Vec<(usize, usize)> = o3
                .windows(2)
                .map(|w| (w[0] as usize, w[1] as usize))
                .collect();
            let mut slices: Vec<&mut [f64]> = Vec::with_capacity(rows.len());
            let mut rest: &mut [f64] = &mut y[..];
            for &(a, b) in &rows {
                let (head, tail) = rest.split_at_mut(b - a);
                slices.push(head);
                rest = tail;
            }
            slices
                .into_par_iter()
                .zip(rows.par_iter())
                .for_each(|(out, &(a, _))| {
                    let mut acc = 0.0;
                    for (k, o) in out.iter_mut().enumerate() {
                        acc += x3[a + k];
                        *o = acc;
                    }
                });
            black_box(&y[..]);
        }),
        bytes: N * 16,
        written: N * 8,
    }
}

pub use crate::pipelines_more::{k_means_assignment, mat_mat};

/// Every pipeline, in the order.
pub fn cases() -> Vec<Case> {
    vec![
        histogram(),
        k_means_assignment(),
        argmin(),
        l2_norm(),
        segmented_scan(),
        mat_mat(),
    ]
}
