//! Repeated timing with warm-up and medians.

use std::time::Instant;

/// Timing statistics of repeated runs, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Timing {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: usize,
}

/// Runs `f` `warmup` times untimed, then `runs` times timed (at least once).
pub fn measure<T>(warmup: usize, runs: usize, mut f: impl FnMut() -> T) -> Timing {
    for _ in 0..warmup {
        std::hint::black_box(f());
    }
    let times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    timing_of(times)
}

/// The statistics of at least one sample.
fn timing_of(mut times: Vec<f64>) -> Timing {
    times.sort_by(f64::total_cmp);
    let n = times.len();
    Timing {
        median: crate::stats::median_of_sorted(&times),
        min: times[0],
        max: times[n - 1],
        runs: n,
    }
}

/// Like [`measure`], but each timed sample runs `f` as many times as make it last at least
/// `min_sample` seconds (from one warm call's time, at most 10,000 calls), and the timing is per
/// call. A call of 50 µs timed alone reads the clock's and the scheduler's noise; a batch of
/// them reads the kernel.
pub fn measure_batched<T>(
    warmup: usize,
    runs: usize,
    min_sample: f64,
    mut f: impl FnMut() -> T,
) -> Timing {
    for _ in 0..warmup.max(1) {
        std::hint::black_box(f());
    }
    let t = Instant::now();
    std::hint::black_box(f());
    let reps = calls_per_sample(t.elapsed().as_secs_f64(), min_sample);
    let times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                std::hint::black_box(f());
            }
            t.elapsed().as_secs_f64() / reps as f64
        })
        .collect();
    timing_of(times)
}

/// Calls of `one` seconds that make a sample of at least `min_sample` seconds (1 to 10,000).
pub fn calls_per_sample(one: f64, min_sample: f64) -> usize {
    if one <= 0.0 || !one.is_finite() {
        return 10_000;
    }
    ((min_sample / one).ceil() as usize).clamp(1, 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_counted_runs() {
        let mut calls = 0;
        let t = measure(2, 5, || calls += 1);
        assert_eq!(calls, 7);
        assert_eq!(t.runs, 5);
        assert!(t.min <= t.median && t.median <= t.max);
    }

    #[test]
    fn batched_samples_last_the_minimum() {
        let mut calls = 0usize;
        let t = measure_batched(1, 3, 2e-3, || {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_micros(200));
        });
        assert_eq!(t.runs, 3);
        // One warm-up, one calibrating call, then 3 samples of at least 2 ms of 0.2 ms calls
        // (fewer when a sleep overshoots, never fewer than one).
        assert!((5..=2 + 3 * 10).contains(&calls), "{calls} calls");
        assert!(t.median >= 2e-4, "{t:?}");
        assert_eq!(calls_per_sample(1e-4, 1e-3), 10);
        assert_eq!(calls_per_sample(1.0, 1e-3), 1);
        assert_eq!(calls_per_sample(0.0, 1e-3), 10_000);
    }
}
