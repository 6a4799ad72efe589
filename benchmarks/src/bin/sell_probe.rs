//! SELL-C-σ probe: per Matrix Market file, each SELL shape's inspector cost, padding and rows left
//! to `elems`, beside the fastest row and SELL variants of one and all threads, same run.
//! `cargo run --release -p benchmarks --bin sell_probe -- FILE.mtx..`

use surge::apps::spmv_app;
use surge::bench::measure;
use surge::codegen::policy::sell::SellShape;
use surge::mtx::read_mtx;
use surge::{Computation, Kernels, Target, Workspace};

fn main() {
    for path in std::env::args().skip(1) {
        let m = match read_mtx(std::path::Path::new(&path)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
        let flops = 2.0 * m.nnz() as f64;
        let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
        let k = Kernels::build(&c, &Target::cpu()).unwrap();
        let mut ws = Workspace::default();
        println!("{path}: {} rows, {} nonzeros", m.rows, m.nnz());
        let mut best: Vec<(String, f64, f64)> = Vec::new();
        for v in k.variants() {
            let id = v.id();
            if !id.contains("independent.sequential") || !id.contains("sched1=static") {
                continue;
            }
            let layout = id.rsplit("layout1=").next().unwrap_or("rows").to_string();
            let t = measure(2, 10, || k.run_in(&c, v, &mut ws).unwrap()).median;
            match best.iter_mut().find(|b| b.0 == layout) {
                Some(b) if b.1 <= flops / t / 1e9 => *b = (layout, flops / t / 1e9, t),
                Some(_) => {}
                None => best.push((layout, flops / t / 1e9, t)),
            }
        }
        let row_t = best
            .iter()
            .find(|b| b.0 == "rows")
            .map_or(f64::NAN, |b| b.2);
        for (layout, gf, _) in &best {
            print!("  {layout:>12} {gf:6.2} GFLOP/s");
            if let Some(l) = SellShape::parse(layout).and_then(|s| ws.sell_layout(0, s)) {
                print!(
                    "  inspector {:7.2} ms = {:5.1} best-row SpMVs, fill {:.3}, {} rows outside",
                    l.inspect_seconds * 1e3,
                    l.inspect_seconds / row_t,
                    l.fill(),
                    l.rest_rows()
                );
            }
            println!();
        }
    }
}
