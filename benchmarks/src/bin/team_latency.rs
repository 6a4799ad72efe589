//! Team hand-off probe: the cost of one 2-worker `for_chunks` call with `w` microseconds of work
//! per worker, beside the same work on the calling thread alone, and how often the spawned worker
//! took its share. `cargo run --release -p benchmarks --bin team_latency -- [W_US..]`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use surge_cpu::native::skeleton::{LevelPlan, LoopSchedule, for_chunks, pool};

fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn main() {
    let ws: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ws = if ws.is_empty() {
        vec![0.0, 5.0, 20.0]
    } else {
        ws
    };
    let p = pool(2);
    let plan = LevelPlan::Parallel {
        schedule: LoopSchedule::Static,
        chunk: 1,
    };
    for w in ws {
        let d = Duration::from_secs_f64(w * 1e-6);
        let helped = AtomicUsize::new(0);
        let caller = std::thread::current().id();
        let calls = 20_000usize;
        let mut samples = Vec::with_capacity(calls);
        for _ in 0..calls {
            let t = Instant::now();
            for_chunks::<()>(&p, 2, plan, 2, &|_, _| {
                if std::thread::current().id() != caller {
                    helped.fetch_add(1, Ordering::Relaxed);
                }
                spin_for(d);
                Ok(())
            })
            .unwrap();
            samples.push(t.elapsed().as_secs_f64());
        }
        samples.sort_by(f64::total_cmp);
        let med = samples[calls / 2] * 1e6;
        println!(
            "work {w:5.1} us/worker: median call {med:7.2} us (ideal {w:5.1}, alone {:5.1}), p90 {:7.2} us, worker took its share in {:5.1}% of calls",
            2.0 * w,
            samples[calls * 9 / 10] * 1e6,
            100.0 * helped.load(Ordering::Relaxed) as f64 / calls as f64
        );
    }
}
