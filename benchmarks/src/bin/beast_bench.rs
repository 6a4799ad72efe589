//! Benchmark: `surge beast <K40c GEMM space> --count` against the straightforward
//! single-threaded nested-loop enumerator in `benchmarks/src/beast_baseline.rs`, in the same run.
//!
//! `cargo run --release -p benchmarks --bin beast_bench [-- THREADS [REPEAT]]` runs each measurement
//! REPEAT times (default 3), interleaved, and keeps the fastest and the median of each (the
//! machine may be shared), then prints one JSON object:
//! `{"engine_seconds", "engine_seconds_1thread", "scan_seconds", "baseline_seconds", "ratio",
//!   "survivors", "threads", "h200_survivors", "h200_seconds", "median": {...}}` where
//! `scan_seconds` counts without the counting shortcuts (`PlanOptions::fast_count(false)`),
//! `ratio = baseline / engine` (fastest runs; `median` holds the same figures for medians).
//! Exits with 1 if the survivor counts differ.

use benchmarks::beast_baseline as baseline;

use std::time::Instant;

use surge_beast::{PlanOptions, RunOptions, Space};

const K40C: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../surge-codegen/spaces/beast_gemm_k40c.toml"
);
const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../surge-codegen/spaces/beast_gemm_h200.toml"
);

fn engine(path: &str, threads: usize) -> (u64, f64) {
    engine_with(path, threads, true)
}

/// `fast`: count with cuts, remembered sub-nests and closed forms (off: scan like listing).
fn engine_with(path: &str, threads: usize, fast: bool) -> (u64, f64) {
    // Timed like `surge beast SPACE --count`: load, plan, enumerate.
    let t0 = Instant::now();
    let space = Space::from_toml_file(path).unwrap_or_else(|e| panic!("{e}"));
    let plan = space
        .plan(&PlanOptions::default().fast_count(fast))
        .unwrap_or_else(|e| panic!("{e}"));
    let stats = plan
        .count(&RunOptions::threads(threads))
        .unwrap_or_else(|e| panic!("{e}"));
    (stats.survivors, t0.elapsed().as_secs_f64())
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::MAX, f64::min)
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let repeat: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let (mut engine_all, mut engine_all_1, mut baseline_all) = (vec![], vec![], vec![]);
    let mut scan_all = vec![];
    let (mut survivors, mut survivors_1, mut base) = (0, 0, 0);
    for _ in 0..repeat {
        let (n, t) = engine(K40C, threads);
        survivors = n;
        engine_all.push(t);
        let t0 = Instant::now();
        base = baseline::baseline_count();
        baseline_all.push(t0.elapsed().as_secs_f64());
        let (n1, t1) = engine(K40C, 1);
        survivors_1 = n1;
        engine_all_1.push(t1);
        let (ns, ts) = engine_with(K40C, threads, false);
        assert_eq!(ns, n1, "scanning and fast counts differ");
        scan_all.push(ts);
    }
    let scan_seconds = min(&scan_all);
    let scan_median = median(&mut scan_all);
    let (engine_seconds, engine_seconds_1, baseline_seconds) =
        (min(&engine_all), min(&engine_all_1), min(&baseline_all));
    let (engine_median, engine_median_1, baseline_median) = (
        median(&mut engine_all),
        median(&mut engine_all_1),
        median(&mut baseline_all),
    );
    let (h200_survivors, h200_seconds) = engine(H200, threads);
    let report = serde_json::json!({
        "engine_seconds": engine_seconds,
        "engine_seconds_1thread": engine_seconds_1,
        "baseline_seconds": baseline_seconds,
        "scan_seconds": scan_seconds,
        "ratio": baseline_seconds / engine_seconds,
        "ratio_1thread": baseline_seconds / engine_seconds_1,
        "survivors": survivors,
        "baseline_survivors": base,
        "threads": threads,
        "repeat": repeat,
        "h200_survivors": h200_survivors,
        "h200_seconds": h200_seconds,
        "median": {
            "engine_seconds": engine_median,
            "engine_seconds_1thread": engine_median_1,
            "baseline_seconds": baseline_median,
            "scan_seconds": scan_median,
            "ratio": baseline_median / engine_median,
            "ratio_1thread": baseline_median / engine_median_1,
        },
    });
    println!("{report}");
    if survivors != base || survivors_1 != base {
        eprintln!("survivor counts differ: engine {survivors} / {survivors_1}, baseline {base}");
        std::process::exit(1);
    }
}
