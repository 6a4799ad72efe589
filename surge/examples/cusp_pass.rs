//! The CUSP feature pass of one matrix alone, timed warm (the same matrix 200,000 times: the
//! pass's own work) or fresh (a new copy of the matrix and an 8 MiB sweep before each of 400
//! timed passes, median: the cold regions a selection meets after other calls), for comparing
//! builds of `surge/src/tune/cusp.rs` side by side.
//!
//! `cargo run --release -p surge --example cusp_pass -- FILE.mtx [fresh]`

use std::time::Instant;
use surge::tune::features::{CuspFeatures, Plan};

fn main() -> surge::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: cusp_pass FILE.mtx [fresh]");
    let fresh = args.next().is_some_and(|a| a == "fresh");
    let m = surge::mtx::read_mtx(std::path::Path::new(&path))?;
    let plan = Plan::of(&m);
    if fresh {
        let sweep: Vec<f64> = vec![1.0; 1 << 20];
        let mut times = Vec::new();
        for _ in 0..400 {
            let copy = m.clone();
            std::hint::black_box(sweep.iter().sum::<f64>());
            let t = Instant::now();
            std::hint::black_box(CuspFeatures::sampled(std::hint::black_box(&copy), plan));
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{path}: {plan:?}, {:.3} us fresh",
            times[times.len() / 2] * 1e6
        );
        return Ok(());
    }
    let n = 200_000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(CuspFeatures::sampled(std::hint::black_box(&m), plan));
    }
    let us = t.elapsed().as_secs_f64() / n as f64 * 1e6;
    println!("{path}: {plan:?}, {us:.3} us warm");
    Ok(())
}
