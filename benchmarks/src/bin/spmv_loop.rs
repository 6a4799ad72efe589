//! Runs one SpMV variant in a loop for profiling (`perf record`): the first variant whose id
//! contains every given text, on one Matrix Market file, for the given seconds; prints its
//! time per call. `cargo run --release -p benchmarks --bin spmv_loop -- FILE.mtx SECONDS [TEXT..]`

use surge::apps::spmv_app;
use surge::mtx::read_mtx;
use surge::{Computation, Kernels, Target, Workspace};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(secs)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<f64>().ok()),
    ) else {
        eprintln!("usage: spmv_loop FILE.mtx SECONDS [TEXT..]");
        std::process::exit(2);
    };
    let m = read_mtx(std::path::Path::new(path)).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
    let c = Computation::new(&spmv_app(&m, &x).expect("spmv")).expect("computation");
    let k = Kernels::build(&c, &Target::cpu()).expect("kernels");
    let Some(v) = k
        .variants()
        .iter()
        .find(|v| args[2..].iter().all(|t| v.id().contains(t.as_str())))
    else {
        eprintln!("no variant contains {:?}", &args[2..]);
        std::process::exit(2);
    };
    let mut ws = Workspace::default();
    let start = std::time::Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        k.run_in(&c, v, &mut ws).expect("run");
        calls += 1;
    }
    let per = start.elapsed().as_secs_f64() / calls as f64;
    println!(
        "{}: {calls} calls, {:.1} us per call, {:.2} GFLOP/s",
        v.id(),
        per * 1e6,
        2.0 * m.nnz() as f64 / per / 1e9
    );
}
