//! Hot teams: persistent workers that wait for the next parallel level by spinning for a short
//! while before they sleep, as an OpenMP runtime's team does (MKL's threads spin for 200 ms).
//!
//! Why: a parallel level of an SpMV on a matrix in the L2 caches lasts 5-20 µs, and handing a
//! worker its share through a rayon pool costs a boxed job in the pool's injector queue, an
//! `Arc` per member, and a worker that yields to the OS while it looks for work, so it often
//! starts late. Here the caller writes the body into each member's slot and bumps a counter the
//! member spins on. Measured on the Intel Xeon here (2026-11-29), SELL-16-256 on 2 threads, three
//! alternating runs of best-of-ten batches: msc04515 11.6-11.7 µs against 12.8-13.3 through the
//! pool, cti 13.1-13.2 against 13.6-14.3; on a 1,000-nonzero matrix (Erdos971) 2.8-3.1 against
//! 2.7-2.9, where a late pool worker's share is done by the caller (the tuner picks one thread
//! there).
//!
//! A team serves one level at a time: a caller that finds it busy (another thread's level, or a
//! level nested inside one of its members) gets `None` and uses the rayon pool instead. The
//! protocol with the caller is `skeleton::run_team`'s: a member that has not entered when the
//! caller finished its own share is closed, and the caller does that share itself, so a member
//! whose vCPU is descheduled never holds a call up; the caller waits only for members that
//! entered. After a level, a member spins for [`SPIN`] and then parks until the next post.

use super::skeleton::{Body, CLOSED, ENTERED, OPEN, wait_for};
use std::any::Any;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a member spins for the next level before it parks.
pub const SPIN: Duration = Duration::from_micros(200);

/// A panic payload, carried from a member to its caller.
pub type Panic = Box<dyn Any + Send>;

/// One member's mailbox.
struct Slot {
    /// The current post: its number times 4 plus its [`OPEN`], [`ENTERED`] or [`CLOSED`], in one
    /// word, so that entering or closing names the post it acts on.
    ticket: AtomicU64,
    /// The last post the member finished (the caller waits for its post's number here).
    done: AtomicU64,
    /// The current post's body and the caller to wake; written by the caller before it
    /// publishes the post (`ticket`, release), read by the member after it entered (acquire).
    job: UnsafeCell<Option<(Body, Thread)>>,
    panic: Mutex<Option<Panic>>,
    /// Whether the member is parked or about to park (it re-reads `ticket` after setting this).
    sleeping: AtomicBool,
    member: OnceLock<Thread>,
}

/// A post's ticket.
fn ticket(post: u64, state: u8) -> u64 {
    post << 2 | u64::from(state)
}

// SAFETY: `job` is written only by the caller holding the team's lock, while no post of the slot
// is open (the previous one was closed unentered, or entered and done), before it publishes the
// next post; the member reads it only after entering that post (an OPEN -> ENTERED exchange of
// the ticket, which the caller cannot undo), and the caller writes it again only after `done`.
unsafe impl Sync for Slot {}

/// `members` persistent threads and the lock that gives one caller the team at a time.
pub struct Team {
    slots: Vec<Arc<Slot>>,
    busy: Mutex<()>,
}

/// The team of `members` workers (created on first use, kept for the process).
fn team(members: usize) -> Arc<Team> {
    static TEAMS: OnceLock<Mutex<HashMap<usize, Arc<Team>>>> = OnceLock::new();
    let mut m = TEAMS
        .get_or_init(Default::default)
        .lock()
        .expect("team cache");
    m.entry(members)
        .or_insert_with(|| Arc::new(Team::start(members)))
        .clone()
}

impl Team {
    fn start(members: usize) -> Team {
        let slots: Vec<Arc<Slot>> = (0..members)
            .map(|_| {
                Arc::new(Slot {
                    ticket: AtomicU64::new(ticket(0, CLOSED)),
                    done: AtomicU64::new(0),
                    job: UnsafeCell::new(None),
                    panic: Mutex::new(None),
                    sleeping: AtomicBool::new(false),
                    member: OnceLock::new(),
                })
            })
            .collect();
        for (i, s) in slots.iter().enumerate() {
            let slot = s.clone();
            let h = std::thread::Builder::new()
                .name(format!("surge-team-{}-{}", members + 1, i + 1))
                .spawn(move || serve(&slot, i + 1))
                .expect("a team thread");
            s.member
                .set(h.thread().clone())
                .expect("a member's handle set once");
        }
        Team {
            slots,
            busy: Mutex::new(()),
        }
    }
}

/// A member's loop: wait for a post, enter it unless the caller closed it, run share `t`.
fn serve(slot: &Slot, t: usize) {
    let mut seen = 0u64;
    loop {
        seen = wait_for_post(slot, seen);
        if slot
            .ticket
            .compare_exchange(
                ticket(seen, OPEN),
                ticket(seen, ENTERED),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            continue;
        }
        // SAFETY: entered, so the caller wrote the job before posting and waits for `done`.
        let (body, caller) = unsafe { (*slot.job.get()).take() }.expect("a posted job");
        // SAFETY: see `Body`: the caller waits for `done` before the body goes away.
        let w = unsafe { &*body.0 };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| w(t))) {
            *slot.panic.lock().expect("panic slot") = Some(p);
        }
        slot.done.store(seen, Ordering::Release);
        caller.unpark();
    }
}

/// Spins for a post after `seen`, then parks; returns the newest post's number.
fn wait_for_post(slot: &Slot, seen: u64) -> u64 {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        let p = slot.ticket.load(Ordering::Acquire) >> 2;
        if p != seen {
            return p;
        }
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(64) || start.elapsed() < SPIN {
            std::hint::spin_loop();
            continue;
        }
        slot.sleeping.store(true, Ordering::SeqCst);
        if slot.ticket.load(Ordering::SeqCst) >> 2 == seen {
            std::thread::park();
        }
        slot.sleeping.store(false, Ordering::SeqCst);
    }
}

/// Runs `worker(0)` on the calling thread and `worker(t)`, `t` in `1..workers`, on the hot team
/// of `workers - 1` members; `None` (nothing run) when that team is serving another level.
/// Otherwise the first panic of any share, after every share ran.
pub fn run(workers: usize, worker: &(dyn Fn(usize) + Sync)) -> Option<Option<Panic>> {
    let team = team(workers - 1);
    let _held = team.busy.try_lock().ok()?;
    // SAFETY: lifetime erasure only; every entered member is waited for below.
    let body: *const (dyn Fn(usize) + Sync + 'static) =
        unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), _>(worker as *const _) };
    let me = std::thread::current();
    let mut posts = Vec::with_capacity(team.slots.len());
    for s in &team.slots {
        // SAFETY: no post of this slot is open (see `Slot`'s Sync).
        unsafe { *s.job.get() = Some((Body(body), me.clone())) };
        let post = (s.ticket.load(Ordering::Acquire) >> 2) + 1;
        s.ticket.store(ticket(post, OPEN), Ordering::SeqCst);
        posts.push(post);
        if s.sleeping.load(Ordering::SeqCst) {
            s.member.get().expect("a started member").unpark();
        }
    }
    let mut panic = catch_unwind(AssertUnwindSafe(|| worker(0))).err();
    let mut entered = Vec::with_capacity(posts.len());
    for (i, (s, &post)) in team.slots.iter().zip(&posts).enumerate() {
        let closed = s.ticket.compare_exchange(
            ticket(post, OPEN),
            ticket(post, CLOSED),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        entered.push(closed.is_err());
        if closed.is_ok() {
            // SAFETY: closed unentered: the member never reads this post's job.
            unsafe { *s.job.get() = None };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| worker(i + 1))) {
                panic.get_or_insert(p);
            }
        }
    }
    for ((s, &post), _) in team
        .slots
        .iter()
        .zip(&posts)
        .zip(&entered)
        .filter(|(_, e)| **e)
    {
        wait_for(1 << 14, || s.done.load(Ordering::Acquire) == post);
        if let Some(p) = s.panic.lock().expect("panic slot").take() {
            panic.get_or_insert(p);
        }
    }
    Some(panic)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Members that parked after [`SPIN`] are woken by the next level and run their own shares
    /// (the caller waits up to a second for them before it would close their posts and run the
    /// shares itself). Four members: no other test uses a team of that size, so it is free.
    #[test]
    fn parked_members_are_woken_for_the_next_level() {
        for round in 0..3 {
            std::thread::sleep(SPIN * 5);
            let started: Vec<Mutex<Option<String>>> = (0..5).map(|_| Mutex::new(None)).collect();
            let r = run(5, &|t| {
                if t > 0 {
                    let name = std::thread::current().name().map(str::to_string);
                    *started[t].lock().unwrap() = Some(name.unwrap_or_default());
                    return;
                }
                let until = Instant::now() + Duration::from_secs(1);
                while Instant::now() < until
                    && started[1..].iter().any(|s| s.lock().unwrap().is_none())
                {
                    std::thread::yield_now();
                }
            });
            assert!(
                matches!(r, Some(None)),
                "round {round}: the team was busy or panicked"
            );
            for (t, s) in started.iter().enumerate().skip(1) {
                let name = s.lock().unwrap().clone().unwrap_or_default();
                assert!(
                    name.starts_with("surge-team-5-"),
                    "round {round}, share {t} ran on {name:?}"
                );
            }
        }
    }
}
