//! BCSR probe: per Matrix Market file, each BCSR shape's sampled fill and share (and the sample's
//! cost), the built layout's fill, rows left to `elems` and inspector cost, the per-run check
//! that `x` is finite, all in best-row SpMVs, beside the best rates of the row, SELL and BCSR
//! layouts (every `independent.sequential` variant, one and all threads, same run).
//! `cargo run --release -p benchmarks --bin bcsr_probe -- FILE.mtx..`

use surge::apps::spmv_app;
use surge::bench::measure_batched;
use surge::codegen::policy::bcsr::BcsrShape;
use surge::mtx::read_mtx;
use surge::{Buffer, Computation, Kernels, Target, Workspace};
use surge_cpu::native::bcsr;

/// Seconds per timed sample.
const SAMPLE: f64 = 0.005;

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
        // The best time per layout family (rows, diagonals, sell, bcsr_<r>_<c>).
        let mut best: Vec<(String, f64, String)> = Vec::new();
        for v in k.variants() {
            let id = v.id();
            if !id.contains("independent.sequential") {
                continue;
            }
            let layout = id.rsplit("layout1=").next().unwrap_or("rows");
            let family = if layout.starts_with("sell_") {
                "sell".to_string()
            } else {
                layout.to_string()
            };
            let t = measure_batched(1, 5, SAMPLE, || k.run_in(&c, v, &mut ws).unwrap()).median;
            match best.iter_mut().find(|b| b.0 == family) {
                Some(b) if b.1 <= t => {}
                Some(b) => *b = (family, t, id),
                None => best.push((family, t, id)),
            }
        }
        let time = |f: &str| best.iter().find(|b| b.0 == f).map_or(f64::NAN, |b| b.1);
        let row_t = time("rows");
        let gf = |t: f64| flops / t / 1e9;
        println!(
            "  rows {:5.2} GFLOP/s, sell {:5.2}, diagonals {:5.2} (best variants)",
            gf(row_t),
            gf(time("sell")),
            gf(time("diagonals"))
        );
        let xb = Buffer::F64(x.clone());
        let finite = measure_batched(1, 5, SAMPLE, || bcsr::all_finite(&xb)).median;
        println!(
            "  x finite check {:.2} µs = {:.3} best-row SpMVs",
            finite * 1e6,
            finite / row_t
        );
        let pat = k.program().phases[0]
            .diagonal
            .clone()
            .expect("spmv has the SpMV pattern");
        for s in BcsrShape::all() {
            let name = s.to_string();
            let sampled = bcsr::sample(&pat, c.buffers(), s);
            let sample_t =
                measure_batched(1, 5, SAMPLE, || bcsr::sample(&pat, c.buffers(), s)).median;
            print!("  {name:>8} {:5.2} GFLOP/s", gf(time(&name)));
            if let Some(sm) = sampled {
                print!(
                    "  sample: fill {:.2} share {:.2} of {} block rows, {:.3} SpMVs",
                    sm.fill,
                    sm.share,
                    sm.block_rows,
                    sample_t / row_t
                );
            }
            match ws.bcsr_layout(0, s) {
                Some(l) => println!(
                    "; layout fill {:.3}, {} rows outside, inspector {:.2} ms = {:.1} SpMVs",
                    l.fill(),
                    l.rest_rows(),
                    l.inspect_seconds * 1e3,
                    l.inspect_seconds / row_t
                ),
                None => println!("; no layout"),
            }
        }
        for (f, t, id) in &best {
            println!("    best {f:>10}: {:5.2} GFLOP/s  {id}", gf(*t));
        }
    }
}
