//! Every SpMV variant's time on one Matrix Market file, one after another: the best of ten
//! batches of 100 calls in one `Workspace` (the layout built once, as a tuned handle keeps it),
//! for reading one kernel change against another on the same machine in a few seconds. Not a
//! benchmark: nothing is interleaved and MKL is not timed (`surge bench spmv` does both). A
//! variant whose diagonal layout was built also prints the layout's shape.
//!
//! `cargo run --release -p surge --example layout_times -- FILE.mtx [TEXT] [--rounds N]`
//! (only variant ids containing TEXT, e.g. `threads=2,nesting=0` or `layout1=diagonals`).

use std::time::Instant;
use surge::{Computation, Kernels, Target, Workspace};

fn main() -> surge::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: layout_times FILE.mtx [TEXT] [--rounds N]");
    let mut filter = String::new();
    let mut rounds = 10;
    while let Some(a) = args.next() {
        if a == "--rounds" {
            let n = args.next().and_then(|n| n.parse().ok());
            rounds = n.expect("--rounds takes a number");
        } else {
            filter = a;
        }
    }
    let m = surge::mtx::read_mtx(std::path::Path::new(&path))?;
    let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
    let c = Computation::new(&surge::apps::spmv_app(&m, &x)?)?;
    let k = Kernels::build(&c, &Target::cpu())?;
    for v in k.variants().iter().filter(|v| v.id().contains(&filter)) {
        let mut ws = Workspace::default();
        let mut best = f64::INFINITY;
        for _ in 0..rounds {
            let t = Instant::now();
            for _ in 0..100 {
                k.run_in(&c, v, &mut ws)?;
            }
            best = best.min(t.elapsed().as_secs_f64() / 100.0);
        }
        println!("{:8.2} us  {}", best * 1e6, v.id());
        if let Some(l) = ws.diagonal_layout(0) {
            println!(
                "          diagonal layout: {} diagonals, {} of {} blocks, {} rows recomputed, zero-filled {}",
                l.offsets.len(),
                l.diagonal_blocks(),
                l.diagonal.len(),
                l.fixups.len(),
                l.filled
            );
        }
    }
    Ok(())
}
