//! Single-matrix SpMV probe: Surge's default CPU variants vs plain Rust loops vs MKL, 1 and all
//! threads, same run. `cargo run --release -p benchmarks --bin spmv_probe -- [grid|banded]`
//! (a Laplacian of a grid × grid mesh, default 2048, or the bench's 2M-row banded matrix).

use surge::apps::{matgen, spmv_app};
use surge::bench::measure;
use surge::bench::mkl_csr;
use surge::{Computation, Kernels, Target, Workspace};
use surge_cpu::baseline::mkl::Mkl;
use surge_cpu::baseline::rayon_ref;

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    let m = if arg == "banded" {
        matgen::banded(2_000_000, 5, 7)
    } else {
        matgen::laplacian_2d(arg.parse().unwrap_or(2048))
    };
    let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
    let flops = 2.0 * m.nnz() as f64;
    let gf = |t: f64| flops / t / 1e9;
    let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut ws = Workspace::default();
    for v in k.variants() {
        let id = v.id();
        if id.contains("sequential.sequential")
            || (id.contains("independent.sequential")
                && id.contains("static")
                && (id.contains("unroll2=0") || id.contains("layout1=rows")))
        {
            let t = measure(2, 10, || k.run_in(&c, v, &mut ws).unwrap());
            println!("{:>6.2} GFLOP/s  {id}", gf(t.median));
            if id.contains("diagonals") {
                match ws.diagonal_layout(0) {
                    Some(l) => println!(
                        "          diagonal layout: band {:?}, {} of {} blocks diagonal, {} rows recomputed",
                        l.offsets,
                        l.diagonal_blocks(),
                        l.diagonal.len(),
                        l.fixups.len()
                    ),
                    None => println!("          no diagonal layout"),
                }
            }
        }
    }
    let mut y = vec![0.0; m.rows];
    for threads in [1, 2] {
        let pool = surge_cpu::native::skeleton::pool(threads);
        let t = pool.install(|| {
            measure(2, 10, || {
                rayon_ref::spmv(&m.row_offsets, &m.col_indices, &m.values, &x, &mut y)
            })
        });
        println!(
            "{:>6.2} GFLOP/s  rayon reference, {threads} threads",
            gf(t.median)
        );
        let t = measure(2, 10, || {
            for (yi, w) in y.iter_mut().zip(m.row_offsets.windows(2)) {
                let (a, b) = (w[0] as usize, w[1] as usize);
                let mut s = 0.0;
                for kk in a..b {
                    s += m.values[kk] * x[m.col_indices[kk] as usize];
                }
                *yi = s;
            }
        });
        if threads == 1 {
            println!("{:>6.2} GFLOP/s  plain loop, 1 thread", gf(t.median));
        }
        // The handle runs on the threads it was optimized under: set them first.
        Mkl::get().unwrap().set_threads(threads).unwrap();
        if let Ok(a) = mkl_csr(&m, 1000) {
            let t = measure(2, 10, || a.mv(&x, &mut y).unwrap());
            println!("{:>6.2} GFLOP/s  MKL, {threads} threads", gf(t.median));
            Mkl::get().unwrap().settle();
        }
    }
}
