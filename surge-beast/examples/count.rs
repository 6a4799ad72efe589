//! `cargo run --release -p surge-beast --example count -- SPACE.toml [THREADS] [--plan] [--stats] [--scan]`:
//! load, plan and count a space, printing the survivors and the wall time (a quick way to time
//! the engine without building the `surge` CLI).

use std::time::Instant;

use surge_beast::{PlanOptions, RunOptions, Space};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .expect("usage: count SPACE.toml [THREADS] [--plan] [--stats] [--scan]");
    let threads = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let t0 = Instant::now();
    let space = Space::from_toml_file(path).unwrap_or_else(|e| panic!("{e}"));
    let mut opts = PlanOptions::default().fast_count(!args.iter().any(|a| a == "--scan"));
    for w in args.windows(2).filter(|w| w[0] == "--disable") {
        opts = opts.disable(w[1].clone());
    }
    let plan = space.plan(&opts).unwrap_or_else(|e| panic!("{e}"));
    if args.iter().any(|a| a == "--plan") {
        print!("{}", plan.describe());
    }
    let stats = plan
        .count(&RunOptions::threads(threads))
        .unwrap_or_else(|e| panic!("{e}"));
    if args.iter().any(|a| a == "--stats") {
        print!("{}", stats.to_text());
    }
    println!(
        "{} survivors in {:.3} s",
        stats.survivors,
        t0.elapsed().as_secs_f64()
    );
}
