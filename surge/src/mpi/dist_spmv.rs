//! `y = A x` over the ranks, PETSc MatMult's shape: post the ghost receives and sends
//! (non-blocking point-to-point on a communicator of its own), run the interior rows while they
//! travel, then the boundary rows. The pattern is the part's, computed once per matrix; per
//! product only the ghost entries of `x` move.

use super::local_spmv::LocalSpmv;
use super::rank_part::RankPart;
use super::tuned_spmv::Choice;
use super::world::World;
use crate::Result;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

/// This rank's share of a distributed SpMV, ready to run repeatedly.
pub struct DistSpmv {
    comm: SimpleCommunicator,
    part: RankPart,
    local: LocalSpmv,
    /// One buffer per neighbour sent to, reused.
    send: Vec<Vec<f64>>,
    ghosts: Vec<f64>,
}

impl std::fmt::Debug for DistSpmv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistSpmv")
            .field("part", &self.part.summary())
            .finish()
    }
}

impl DistSpmv {
    /// Builds the local kernels (`threads` per rank, or the variant `id`). Rank 0 compiles
    /// first; the others then load the library from the disk cache instead of all compiling
    /// the same source at once. Collective: every rank calls it.
    pub fn new<'c>(
        world: &World,
        part: RankPart,
        threads: usize,
        choice: impl Into<Choice<'c>>,
    ) -> Result<Self> {
        let choice = choice.into();
        let local = if world.is_root() {
            let l = LocalSpmv::new(&part, threads, choice);
            world.all_ok(l.is_ok());
            l?
        } else if world.all_ok(true) {
            LocalSpmv::new(&part, threads, choice)?
        } else {
            return Err(crate::SurgeError::Usage(
                "stopped: rank 0 could not build the SpMV kernels".into(),
            ));
        };
        Ok(DistSpmv {
            comm: world.comm().duplicate(),
            send: vec![Vec::new(); part.send.len()],
            ghosts: vec![0.0; part.ghosts.len()],
            part,
            local,
        })
    }

    pub fn part(&self) -> &RankPart {
        &self.part
    }

    pub fn local(&self) -> &LocalSpmv {
        &self.local
    }

    /// This rank's rows of `A x`, given its block of `x`. Collective.
    pub fn apply(&mut self, x_own: &[f64], y_own: &mut [f64]) -> Result<()> {
        let DistSpmv {
            comm,
            part,
            local,
            send,
            ghosts,
        } = self;
        part.pack(x_own, send);
        let interior = ::mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(part.recv.len() + part.send.len());
            let mut rest: &mut [f64] = ghosts;
            for n in &part.recv {
                let (head, tail) = rest.split_at_mut(n.at.len());
                rest = tail;
                let from = comm.process_at_rank(n.rank as i32);
                requests.push(from.immediate_receive_into(scope, head));
            }
            for (n, buf) in part.send.iter().zip(send.iter()) {
                let to = comm.process_at_rank(n.rank as i32);
                requests.push(to.immediate_send(scope, &buf[..]));
            }
            let interior = local.interior(x_own, y_own);
            for r in requests {
                r.wait();
            }
            interior
        });
        interior?;
        local.boundary(x_own, ghosts, y_own)
    }
}
