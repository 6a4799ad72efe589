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
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let n = times.len();
    let median = crate::stats::median_of_sorted(&times);
    Timing {
        median,
        min: times[0],
        max: times[n - 1],
        runs: n,
    }
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
}
