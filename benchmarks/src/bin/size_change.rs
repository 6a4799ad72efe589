//! What a new input size costs once kernels are built: `Kernels::run` of the tiled reduction on a
//! computation of new sizes (another length, hence other split tiles and tile counts in its
//! literal table) against a run of the same computation again. Sizes are kernel arguments, so a
//! new size compiles nothing; the issue wants it within 1 ms of a same-size run.
//!
//! `alternating` switches between two sizes every run (both inputs stay in the caches: the cost of
//! a size change itself); `distinct` runs 64 computations of 64 sizes in turn (their inputs do not
//! all fit in the caches, so it also pays for reading the new input from memory).
//!
//! `cargo run --release -p benchmarks --bin size_change -- [N]` (default 1,000,000 elements);
//! prints one JSON object. The kernel cache is a fresh temporary directory, so `first_build_s` is
//! the `rustc` call every size used to cost.

use serde_json::json;
use surge::apps::{reduce_app, sum_input};
use surge::bench::measure;
use surge::prelude::*;
use surge::{Kernels, Target};
use surge_cpu::native::compile::rustc_calls;

/// The tiled reduction of `n` elements with tile `tile`.
fn program(n: usize, tile: u64) -> Computation {
    let s = Seq::input("s", sum_input(n)).unwrap();
    Computation::new(&reduce_app(&s, tile).unwrap()).unwrap()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let cache = std::env::temp_dir().join(format!("surge-size-change-{}", std::process::id()));
    // SAFETY: set before any thread starts; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("SURGE_CACHE", &cache) };
    let base = program(n, 4096);
    let t = std::time::Instant::now();
    let k = Kernels::build(&base, &Target::cpu()).unwrap();
    let first_build_s = t.elapsed().as_secs_f64();
    let v = k.default_variant().clone();
    // 64 computations of new sizes: lengths n + 97 j, tiles 4096 ± 32 j (other literals too).
    let others: Vec<Computation> = (1..=64)
        .map(|j| program(n + 97 * j, 4096 + 32 * (j as u64 % 5) - 64))
        .collect();
    let calls = rustc_calls();
    let same = measure(5, 64, || k.run(&base, &v).unwrap());
    let pair = [&base, &others[0]];
    let mut turn = 0;
    let alternating = measure(5, 64, || {
        turn += 1;
        k.run(pair[turn % 2], &v).unwrap()
    });
    let mut next = others.iter().cycle();
    let distinct = measure(5, 64, || k.run(next.next().unwrap(), &v).unwrap());
    let build_new = measure(1, 16, || {
        Kernels::build(&others[7], &Target::cpu()).unwrap()
    });
    assert_eq!(rustc_calls(), calls, "a new size compiled nothing");
    let ms = |s: f64| (s * 1e6).round() / 1e3;
    let out = json!({
        "benchmark": "size_change",
        "app": "reduce",
        "elements": n,
        "variant": v.id(),
        "first_build_s": (first_build_s * 1e3).round() / 1e3,
        "same_size_run_ms": {"median": ms(same.median), "min": ms(same.min)},
        "alternating_sizes_run_ms": {"median": ms(alternating.median), "min": ms(alternating.min)},
        "distinct_sizes_run_ms": {"median": ms(distinct.median), "min": ms(distinct.min)},
        "alternating_minus_same_ms": ms(alternating.median - same.median),
        "distinct_minus_same_ms": ms(distinct.median - same.median),
        "build_for_new_size_ms": {"median": ms(build_new.median), "min": ms(build_new.min)},
        "rustc_calls_after_first_build": rustc_calls() - calls,
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
    let _ = std::fs::remove_dir_all(&cache);
}
