//! Handing indices out over the ranks, the loop a campaign's training and its testing share:
//! rank 0 gives the indices of a queue to whichever rank asks, most work first; each other rank
//! asks by sending what it made of its last index (nothing at first), and rank 0 answers with
//! the next index, or −1 when none is left. Rank 0 works too: whenever no rank is waiting, it
//! takes the index with the least work left itself, and while it works it answers the ranks
//! that ask between its samples (its backend is wrapped in [`Answering`]), so no rank waits for
//! rank 0's input to finish. Their messages are handed on once rank 0's own index is done. Only
//! indices and the ranks' results travel: every rank holds the same inputs.
//!
//! (Answering only between its own inputs, a rank that finished waited for rank 0's current
//! input, as long as its own when every input takes about as long: 2 ranks were 1.3× one.)

use super::world::World;
use crate::Result;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use std::collections::VecDeque;

/// One step of rank 0's side of [`hand_out`].
pub enum Job<'a> {
    /// Rank 0 does this index itself, calling `answer` often (between samples: see
    /// [`Answering`]) so that the ranks that ask meanwhile get their next index at once.
    Own {
        index: usize,
        answer: &'a mut dyn FnMut(),
    },
    /// Rank `from` sent what it made of an index (its message names which).
    Received { from: usize, message: Vec<u8> },
}

impl std::fmt::Debug for Job<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Own { index, .. } => write!(f, "Own({index})"),
            Job::Received { from, message } => {
                write!(f, "Received(from {from}, {} bytes)", message.len())
            }
        }
    }
}

/// Rank 0's desk: the indices left, the ranks still working, the messages not yet handed on.
struct Desk<'c> {
    comm: &'c SimpleCommunicator,
    queue: VecDeque<usize>,
    working: usize,
    received: Vec<(usize, Vec<u8>)>,
}

impl Desk<'_> {
    /// Takes rank `from`'s request (its message kept for later) and answers it with the next
    /// index, or −1 (then that rank is done).
    fn answer(&mut self, from: i32, message: Vec<u8>) {
        if !message.is_empty() {
            self.received.push((from as usize, message));
        }
        let next = self.queue.pop_front().map_or(-1, |k| k as i64);
        self.comm.process_at_rank(from).send(&next);
        if next < 0 {
            self.working -= 1;
        }
    }

    /// Answers every request already waiting, without blocking.
    fn answer_waiting(&mut self) {
        while let Some(status) = self.comm.any_process().immediate_probe() {
            let from = status.source_rank();
            let (message, _) = self.comm.process_at_rank(from).receive_vec::<u8>();
            self.answer(from, message);
        }
    }

    /// Waits for one request and answers it.
    fn answer_one(&mut self) {
        let (message, status) = self.comm.any_process().receive_vec::<u8>();
        self.answer(status.source_rank(), message);
    }
}

/// Rank 0's side: hands the indices of `queue` out, front first, until every other rank was
/// told there is no more; passes each [`Job`] to `job`. An error from `job` ends the hand-out
/// (the others still wait for an answer: the caller ends the job).
pub fn hand_out(
    world: &World,
    queue: VecDeque<usize>,
    job: &mut dyn FnMut(Job<'_>) -> Result<()>,
) -> Result<()> {
    let comm = world.comm();
    let mut desk = Desk {
        comm,
        queue,
        working: world.size() - 1,
        received: Vec::new(),
    };
    loop {
        for (from, message) in std::mem::take(&mut desk.received) {
            job(Job::Received { from, message })?;
        }
        if desk.working == 0 {
            return Ok(());
        }
        // A rank waiting is served first.
        if !desk.queue.is_empty() && comm.any_process().immediate_probe().is_none() {
            let index = desk.queue.pop_back().expect("not empty");
            job(Job::Own {
                index,
                answer: &mut || desk.answer_waiting(),
            })?;
        } else {
            desk.answer_one();
        }
    }
}

/// Another rank's side: asks rank 0 for an index, does `work` on it and sends the message
/// `work` returns with the next request, until rank 0 says there is no more; returns how
/// many indices it did.
pub fn serve(world: &World, work: &mut dyn FnMut(usize) -> Result<Vec<u8>>) -> Result<usize> {
    let root = world.comm().process_at_rank(0);
    let mut message: Vec<u8> = Vec::new();
    let mut done = 0;
    loop {
        root.send(&message[..]);
        let (k, _) = root.receive::<i64>();
        let Ok(k) = usize::try_from(k) else {
            return Ok(done);
        };
        message = work(k)?;
        done += 1;
    }
}

/// `bytes` from rank 0 on every rank (rank 0 passes them, the others `None`).
pub fn broadcast_bytes(world: &World, bytes: Option<Vec<u8>>) -> Vec<u8> {
    let root = world.comm().process_at_rank(0);
    let mut bytes = bytes.unwrap_or_default();
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    root.broadcast_into(&mut bytes[..]);
    bytes
}
