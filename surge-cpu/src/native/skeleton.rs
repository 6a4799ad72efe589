//! Rayon skeletons: how a schedule level's iterations are spread over threads.
//!
//! A parallel level runs `threads` workers on a cached pool of that size. The iteration range is
//! cut into chunks and handed out as OpenMP would: `static` deals chunk `t, t + T, ..` to worker
//! `t` up front; `dynamic` lets workers take the next chunk from a shared counter; `guided` does
//! the same with chunks that shrink with the remaining work (never below `chunk`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Loop schedule of a parallel level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopSchedule {
    Static,
    Dynamic,
    Guided,
}

/// How one schedule level runs on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelPlan {
    Sequential,
    Parallel {
        schedule: LoopSchedule,
        chunk: usize,
    },
}

/// A cached pool of exactly `threads` workers.
pub fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut m = POOLS
        .get_or_init(Default::default)
        .lock()
        .expect("pool cache");
    m.entry(threads)
        .or_insert_with(|| {
            Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(move |i| format!("surge-{threads}-{i}"))
                    .build()
                    .expect("a rayon thread pool"),
            )
        })
        .clone()
}

/// Runs `f(lo, hi)` over chunks covering `0..n` by `plan`, on `threads` workers: the calling
/// thread and `threads - 1` tasks spawned on `pool` (so a sequential or one-thread level costs no
/// hand-off at all). Stops handing out chunks after the first error and returns it.
pub fn for_chunks<E: Send>(
    pool: &rayon::ThreadPool,
    n: usize,
    plan: LevelPlan,
    threads: usize,
    f: &(dyn Fn(usize, usize) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let (schedule, chunk) = match plan {
        LevelPlan::Parallel { schedule, chunk } if threads > 1 && n > 1 => (schedule, chunk.max(1)),
        _ => return if n == 0 { Ok(()) } else { f(0, n) },
    };
    let stop = AtomicBool::new(false);
    let first: Mutex<Option<E>> = Mutex::new(None);
    let record = |r: Result<(), E>| {
        if let Err(e) = r {
            stop.store(true, Ordering::Relaxed);
            let mut g = first.lock().expect("error slot");
            if g.is_none() {
                *g = Some(e);
            }
        }
    };
    let chunks = n.div_ceil(chunk);
    let workers = threads.min(chunks);
    let next = AtomicUsize::new(0);
    let worker = |t: usize| match schedule {
        LoopSchedule::Static => {
            let mut c = t;
            while c < chunks && !stop.load(Ordering::Relaxed) {
                let lo = c * chunk;
                record(f(lo, (lo + chunk).min(n)));
                c += workers;
            }
        }
        LoopSchedule::Dynamic => loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks || stop.load(Ordering::Relaxed) {
                break;
            }
            let lo = c * chunk;
            record(f(lo, (lo + chunk).min(n)));
        },
        LoopSchedule::Guided => loop {
            let mut lo = next.load(Ordering::Relaxed);
            let hi = loop {
                if lo >= n {
                    break None;
                }
                let size = ((n - lo) / (2 * workers)).max(chunk);
                let hi = (lo + size).min(n);
                match next.compare_exchange_weak(lo, hi, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => break Some(hi),
                    Err(cur) => lo = cur,
                }
            };
            match hi {
                Some(hi) if !stop.load(Ordering::Relaxed) => record(f(lo, hi)),
                _ => break,
            }
        },
    };
    pool.in_place_scope(|s| {
        for t in 1..workers {
            let worker = &worker;
            s.spawn(move |_| worker(t));
        }
        worker(0);
    });
    match first.into_inner().expect("error slot") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schedule_covers_the_range_once() {
        for schedule in [
            LoopSchedule::Static,
            LoopSchedule::Dynamic,
            LoopSchedule::Guided,
        ] {
            for (n, chunk, threads) in [(0, 4, 2), (1, 4, 2), (1000, 7, 3), (17, 64, 2)] {
                let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                pool(threads)
                    .install(|| {
                        for_chunks::<()>(
                            &pool(threads),
                            n,
                            LevelPlan::Parallel { schedule, chunk },
                            threads,
                            &|lo, hi| {
                                for h in &hits[lo..hi] {
                                    h.fetch_add(1, Ordering::Relaxed);
                                }
                                Ok(())
                            },
                        )
                    })
                    .unwrap();
                assert!(
                    hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                    "{schedule:?} n={n} chunk={chunk}"
                );
            }
        }
    }

    #[test]
    fn the_first_error_is_returned() {
        let r = {
            for_chunks(
                &pool(2),
                100,
                LevelPlan::Parallel {
                    schedule: LoopSchedule::Dynamic,
                    chunk: 3,
                },
                2,
                &|lo, _| if lo >= 30 { Err(lo) } else { Ok(()) },
            )
        };
        assert!(r.unwrap_err() >= 30);
    }
}
