//! The traffic probe's patterns (`surge_cpu::baseline::traffic`) beside a plain windowed read of
//! the same bytes, on 2 threads, in rounds: how far each pattern is from what the machine reads.
//! `cargo run --release -p surge-cpu --example probe_cmp -- [values_mib x_mib y_mib]` (default:
//! the bench's banded matrix, 168 + 15 MiB read, 15 MiB written).

use rayon::prelude::*;
use std::time::Instant;
use surge_cpu::baseline::traffic::{Pattern, TrafficProbe};

fn main() {
    let mib: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes in MiB"))
        .collect();
    let (values, x, y) = match mib[..] {
        [v, x, y] => (v << 20, x << 20, y << 20),
        _ => (8 * 22_000_000, 8 * 2_000_000, 8 * 2_000_000),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool of 2 threads");
    let mut probes: Vec<TrafficProbe> = Pattern::ALL
        .iter()
        .map(|&p| pool.install(|| TrafficProbe::with_arrays(&[values, x], y, p)))
        .collect();
    let plain: Vec<f64> = pool.install(|| {
        (0..(values + x + y) / 8)
            .into_par_iter()
            .map(|i| (i % 7) as f64)
            .collect()
    });
    for round in 0..4 {
        let mut line = format!("round {round}, GB/s:");
        for p in &mut probes {
            let t = best_of(5, || pool.install(|| p.pass()));
            line += &format!(" [{}] {:.1}", p.pattern(), p.bytes() / t / 1e9);
        }
        let t = best_of(5, || {
            let s: f64 = pool.install(|| plain.par_chunks(1 << 16).map(window_sum).sum());
            std::hint::black_box(s);
        });
        line += &format!(
            " [plain windowed read] {:.1}",
            8.0 * plain.len() as f64 / t / 1e9
        );
        println!("{line}");
    }
}

/// The fastest of `n` calls, in seconds.
fn best_of(n: usize, mut f: impl FnMut()) -> f64 {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The sum of `c`, 64 elements at a time as one fixed-size array (no prefetching).
fn window_sum(c: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut windows = c.chunks_exact(64);
    for w in &mut windows {
        let w: &[f64; 64] = w.try_into().expect("a window of 64");
        for l in 0..8 {
            for k in 0..8 {
                acc[k] += w[8 * l + k];
            }
        }
    }
    acc.iter().sum::<f64>() + windows.remainder().iter().sum::<f64>()
}
