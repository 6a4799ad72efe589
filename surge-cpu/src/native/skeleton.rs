//! Rayon skeletons: how a schedule level's iterations are spread over threads.
//!
//! A parallel level runs `threads` workers on a cached pool of that size. The iteration range is
//! cut into chunks and handed out as OpenMP would: `static` deals chunk `t, t + T, ..` to worker
//! `t` up front; `dynamic` lets workers take the next chunk from a shared counter; `guided` does
//! the same with chunks that shrink with the remaining work (never below `chunk`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use surge_codegen::params::LoopSchedule;

/// How one schedule level runs on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelPlan {
    Sequential,
    Parallel {
        schedule: LoopSchedule,
        chunk: usize,
    },
}

impl LevelPlan {
    /// This plan with its chunks cut to at most `n / threads` items (rounded up), so that `n`
    /// heavy items — the runs of a `reduce_by_key` of rows, ten clusters of k-means — keep every
    /// thread busy whatever chunk the variant names.
    pub fn spread(self, n: usize, threads: usize) -> LevelPlan {
        match self {
            LevelPlan::Parallel { schedule, chunk } => LevelPlan::Parallel {
                schedule,
                chunk: chunk.min(n.div_ceil(threads.max(1))).max(1),
            },
            LevelPlan::Sequential => LevelPlan::Sequential,
        }
    }
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
/// hand-off at all; see [`run_team`] for how a late worker is handled). Stops handing out
/// chunks after the first error and returns it.
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
    run_team(pool, workers, &worker);
    match first.into_inner().expect("error slot") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The state of one spawned team member, shared with its job (which may outlive the call).
struct Member {
    /// [`OPEN`] until the job enters ([`ENTERED`]) or the caller closes it first ([`CLOSED`]).
    state: AtomicU8,
    done: AtomicBool,
    caller: std::thread::Thread,
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

pub(super) const OPEN: u8 = 0;
pub(super) const ENTERED: u8 = 1;
pub(super) const CLOSED: u8 = 2;

/// The team's body, lifetime erased so a `'static` pool job can hold it.
pub(super) struct Body(pub(super) *const (dyn Fn(usize) + Sync + 'static));
// SAFETY: the pointee is `Sync`, and a job dereferences it only between entering (a successful
// OPEN -> ENTERED exchange) and setting `done`, while `run_team` is still running (it waits for
// every entered member before returning or unwinding).
unsafe impl Send for Body {}

/// Runs `worker(0)` on the calling thread and `worker(t)`, `t` in `1..workers`, on other
/// threads, and returns when all have run.
///
/// Why not a rayon scope: a scope waits for its jobs to *run*, so when a pool worker is asleep
/// (between calls of a loop, or its vCPU descheduled by the hypervisor), a call of a few
/// microseconds waited for the wake-up: 2-thread variants measured 3-4× slower than 1-thread
/// ones on matrices of a few hundred rows. Here the caller, once its own share is done, closes
/// every job that has not started yet and does that member's share itself (with `dynamic` and
/// `guided` schedules there is usually nothing left); it waits only for members already
/// running. A closed job runs later and does nothing.
///
/// The members run on the hot team of that size (`hot_team`) when it is free, else as jobs on
/// `pool` ([`pool_team`]).
fn run_team(pool: &rayon::ThreadPool, workers: usize, worker: &(dyn Fn(usize) + Sync)) {
    if workers > 1
        && !force_pool()
        && let Some(panic) = super::hot_team::run(workers, worker)
    {
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
        return;
    }
    pool_team(pool, workers, worker);
}

/// Spins `spins` times for `done`, then parks until it holds (whoever makes it hold unparks the
/// waiting thread; a spurious wake-up only checks again).
pub(super) fn wait_for(spins: u32, done: impl Fn() -> bool) {
    let mut n = 0u32;
    while !done() {
        if n < spins {
            n += 1;
            std::hint::spin_loop();
        } else {
            std::thread::park();
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Tests of the pool path set it on their thread.
    static FORCE_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn force_pool() -> bool {
    FORCE_POOL.with(|f| f.get())
}

#[cfg(not(test))]
fn force_pool() -> bool {
    false
}

/// [`run_team`] with the members as jobs on `pool`.
fn pool_team(pool: &rayon::ThreadPool, workers: usize, worker: &(dyn Fn(usize) + Sync)) {
    use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
    // SAFETY: lifetime erasure only; see `Body`.
    let body: *const (dyn Fn(usize) + Sync + 'static) =
        unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), _>(worker as *const _) };
    let members: Vec<Arc<Member>> = (1..workers)
        .map(|t| {
            let m = Arc::new(Member {
                state: AtomicU8::new(OPEN),
                done: AtomicBool::new(false),
                caller: std::thread::current(),
                panic: Mutex::new(None),
            });
            let (job, body) = (m.clone(), Body(body));
            pool.spawn(move || {
                let body = body;
                if job
                    .state
                    .compare_exchange(OPEN, ENTERED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    // SAFETY: entered, so `run_team` waits for `done` (see `Body`).
                    let w = unsafe { &*body.0 };
                    if let Err(p) = catch_unwind(AssertUnwindSafe(|| w(t))) {
                        *job.panic.lock().expect("panic slot") = Some(p);
                    }
                    job.done.store(true, Ordering::Release);
                    job.caller.unpark();
                }
            });
            m
        })
        .collect();
    let mut panic = catch_unwind(AssertUnwindSafe(|| worker(0))).err();
    for (t, m) in members.iter().enumerate().map(|(i, m)| (i + 1, m)) {
        if m.state
            .compare_exchange(OPEN, CLOSED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            // Never started: its share is ours (static chunks; nothing left for the others).
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| worker(t))) {
                panic.get_or_insert(p);
            }
        }
    }
    for m in &members {
        if m.state.load(Ordering::Acquire) == ENTERED {
            wait_for(1 << 12, || m.done.load(Ordering::Acquire));
            if let Some(p) = m.panic.lock().expect("panic slot").take() {
                panic.get_or_insert(p);
            }
        }
    }
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `for_chunks` visits every index of `0..n` exactly once.
    fn covers_once(p: &rayon::ThreadPool, n: usize, plan: LevelPlan, threads: usize) -> bool {
        let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        for_chunks::<()>(p, n, plan, threads, &|lo, hi| {
            for h in &hits[lo..hi] {
                h.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
        hits.iter().all(|h| h.load(Ordering::Relaxed) == 1)
    }

    #[test]
    fn every_schedule_covers_the_range_once() {
        for schedule in [
            LoopSchedule::Static,
            LoopSchedule::Dynamic,
            LoopSchedule::Guided,
        ] {
            for (n, chunk, threads) in [(0, 4, 2), (1, 4, 2), (1000, 7, 3), (17, 64, 2)] {
                let plan = LevelPlan::Parallel { schedule, chunk };
                assert!(
                    pool(threads).install(|| covers_once(&pool(threads), n, plan, threads)),
                    "{schedule:?} n={n} chunk={chunk}"
                );
            }
        }
    }

    #[test]
    fn a_busy_pool_does_not_hold_up_the_caller() {
        // The pool's only worker is busy for as long as the test wants: the caller closes the
        // member that never started and does its static share itself, for every schedule.
        FORCE_POOL.with(|f| f.set(true));
        let p = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        p.spawn(move || {
            while !r.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        });
        for schedule in [
            LoopSchedule::Static,
            LoopSchedule::Dynamic,
            LoopSchedule::Guided,
        ] {
            let plan = LevelPlan::Parallel { schedule, chunk: 7 };
            assert!(covers_once(&p, 1000, plan, 2), "{schedule:?}");
        }
        release.store(true, Ordering::Release);
    }

    #[test]
    fn levels_nested_in_a_member_and_concurrent_callers_cover_once() {
        // A level inside a member finds its team busy and runs on the pool; callers on several
        // threads at once share one team, the others running on the pool.
        let plan = LevelPlan::Parallel {
            schedule: LoopSchedule::Dynamic,
            chunk: 3,
        };
        let outer: Vec<AtomicUsize> = (0..40).map(|_| AtomicUsize::new(0)).collect();
        for_chunks::<()>(&pool(2), 40, plan, 2, &|lo, hi| {
            for h in &outer[lo..hi] {
                assert!(covers_once(&pool(2), 100, plan, 2));
                h.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
        assert!(outer.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 0..300 {
                        assert!(covers_once(&pool(2), 50 + round, plan, 2), "round {round}");
                    }
                });
            }
        });
    }

    #[test]
    fn a_panic_in_any_member_reaches_the_caller() {
        for at in [0, 999] {
            let r = std::panic::catch_unwind(|| {
                for_chunks::<()>(
                    &pool(2),
                    1000,
                    LevelPlan::Parallel {
                        schedule: LoopSchedule::Static,
                        chunk: 10,
                    },
                    2,
                    &|lo, hi| {
                        assert!(!(lo..hi).contains(&at), "planted at {at}");
                        Ok(())
                    },
                )
            });
            let e = r.expect_err("the planted panic");
            let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(msg.contains(&format!("planted at {at}")), "{msg}");
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
