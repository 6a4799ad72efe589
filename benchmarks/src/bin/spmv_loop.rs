//! Runs one SpMV variant in a loop for profiling (`perf record`): the first variant whose id
//! contains every given text, on one Matrix Market file, for the given seconds; prints its
//! time per call. `cargo run --release -p benchmarks --bin spmv_loop -- FILE.mtx SECONDS [TEXT..]`
//! With the texts `mkl THREADS` it loops MKL's optimized `mkl_sparse_d_mv` instead (the bench's
//! reference), so both hot loops can be profiled on one matrix.

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
    if args.get(2).map(String::as_str) == Some("mkl") {
        let threads = args.get(3).and_then(|t| t.parse().ok()).unwrap_or(1);
        return mkl_loop(&m, &x, secs, threads);
    }
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
    call_loop(&v.id(), m.nnz(), secs, || {
        k.run_in(&c, v, &mut ws).expect("run")
    });
}

/// Calls `f` for `secs` seconds and prints the calls, the time per call and the rate of an
/// SpMV of `nnz` nonzeros.
fn call_loop(name: &str, nnz: usize, secs: f64, mut f: impl FnMut()) {
    let start = std::time::Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        f();
        calls += 1;
    }
    let per = start.elapsed().as_secs_f64() / calls as f64;
    println!(
        "{name}: {calls} calls, {:.1} us per call, {:.2} GFLOP/s",
        per * 1e6,
        2.0 * nnz as f64 / per / 1e9
    );
}

/// MKL's optimized SpMV of `m` on `threads` threads in a loop for `secs` seconds.
fn mkl_loop(m: &surge::mtx::CsrMatrix, x: &[f64], secs: f64, threads: usize) {
    surge_cpu::baseline::mkl::Mkl::get()
        .and_then(|l| l.set_threads(threads))
        .expect("MKL threads");
    let a = surge::bench::mkl_csr(m, 1_000_000).unwrap_or_else(|e| {
        eprintln!("MKL: {e}");
        std::process::exit(1)
    });
    let mut y = vec![0.0; m.rows];
    let name = format!("mkl, {threads} thread(s)");
    call_loop(&name, m.nnz(), secs, || {
        a.mv(x, &mut y).expect("mkl_sparse_d_mv")
    });
}
