//! Times the GEMM space's variants at one size against OpenBLAS in the same run (exploration
//! aid): `cargo run --release -p surge-cpu --example gemm_probe -- 1024 [id filter] [threads]`.
use std::time::Instant;
use surge_codegen::gemm::{Machine, variants};
use surge_cpu::baseline::blas::{Blas, Vendor};
use surge_cpu::gemm::{GemmKernels, MatRef};

fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let n: usize = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let filter = arg(2).unwrap_or_default();
    let threads: usize = arg(3).and_then(|s| s.parse().ok()).unwrap_or(2);
    let vs: Vec<_> = variants(&Machine::query())
        .unwrap()
        .into_iter()
        .filter(|v| v.id().contains(&filter))
        .collect();
    let p = surge_cpu::baseline::peak::probe(threads, 20_000_000, 3);
    println!(
        "peak {:.1} GFLOP/s ({}, {} threads)",
        p.gflops, p.isa, p.threads
    );
    let g = GemmKernels::build(&vs).unwrap();
    let blas = Blas::open(Vendor::Openblas).unwrap();
    blas.set_threads(threads);
    let a: Vec<f64> = (0..n * n).map(|i| (i % 7) as f64 * 0.1).collect();
    let b = a.clone();
    let mut c = vec![0.0; n * n];
    let flops = 2.0 * (n as f64).powi(3);
    let mut res = Vec::new();
    for v in &vs {
        let t = best_of(3, || {
            g.gemm(
                v,
                threads,
                MatRef::new(&a, n, n),
                MatRef::new(&b, n, n),
                &mut c,
            )
            .unwrap()
        });
        let r = best_of(3, || blas.dgemm((n, n, n), &a, &b, &mut c).unwrap());
        res.push((flops / t / 1e9, flops / r / 1e9, v.id()));
    }
    res.sort_by(|x, y| (y.0 / y.1).total_cmp(&(x.0 / x.1)));
    for (g, o, id) in res.iter().take(20) {
        println!(
            "{g:6.1} GFLOP/s  openblas {o:6.1}  ratio {:.2}  {id}",
            g / o
        );
    }
    println!("{} variants", res.len());
}
