//! The MPI job this process is a rank of: start-up, and moving a matrix's parts and a result
//! vector between rank 0 and the others.

use super::partition::Blocks;
use super::rank_part::{PartSummary, RankPart};
use super::wire;
use crate::apps::kmeans::Points;
use crate::mtx::CsrMatrix;
use crate::{Result, SurgeError};
use ::mpi::datatype::{Partition, PartitionMut};
use ::mpi::environment::Universe;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

/// This process's place in the job (MPI is finalized when it is dropped).
pub struct World {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    local_ranks: usize,
    // Last: finalizes MPI after the communicators above are freed.
    _universe: Universe,
}

/// The error of a rank that stops because another rank failed and said so.
fn stopped(why: &str) -> SurgeError {
    SurgeError::Usage(format!("stopped: {why}"))
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "World(rank {} of {})", self.rank, self.size)
    }
}

impl World {
    /// Initializes MPI (once per process) and checks that every rank runs the same Surge build
    /// (`build_id`): a job whose ranks differ is refused on every rank.
    pub fn init() -> Result<World> {
        let universe = ::mpi::initialize().ok_or_else(|| {
            SurgeError::Usage("MPI was already initialized in this process".into())
        })?;
        let comm = universe.world();
        let local_ranks = comm.split_shared(comm.rank()).size() as usize;
        // Every rank must run the same build (version and program structure).
        let mine = super::build_id::fingerprint()?;
        let mut all = vec![0u64; comm.size() as usize];
        comm.all_gather_into(&mine, &mut all[..]);
        if let Some(r) = super::build_id::first_mismatch(&all) {
            return Err(SurgeError::Usage(format!(
                "rank {r} runs another Surge build than rank 0 (version or program structure \
                 differ: build {:016x} against {:016x}); start the same surge on every rank",
                all[r], all[0]
            )));
        }
        Ok(World {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            local_ranks,
            comm,
            _universe: universe,
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Threads per rank that keep this node's cores busy without oversubscribing them: the
    /// CPUs the launcher bound this rank to, else the node's CPUs over the ranks sharing it
    /// ([`super::launch::threads_per_rank`]).
    pub fn threads_per_rank(&self) -> usize {
        let (affinity, online) = super::launch::cpus();
        super::launch::threads_per_rank(affinity, online, self.local_ranks)
    }

    pub fn barrier(&self) {
        self.comm.barrier();
    }

    /// A step every rank took alike (opening a file every rank reads, say): Ok where all
    /// succeeded. Otherwise rank 0's error where it failed (the others' become `stopped`, so
    /// the reason is said once), else each failed rank's own error and `stopped` on rank 0.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        if self.all_ok(r.is_ok()) {
            return r;
        }
        let root_ok = self.all_ok(!self.is_root() || r.is_ok());
        match r {
            Err(e) if self.is_root() || root_ok => Err(e),
            Err(_) => Err(stopped("rank 0 failed at the same step")),
            Ok(_) => Err(stopped("another rank failed (its message says why)")),
        }
    }

    /// Whether every rank succeeded at a step (each says; all learn the answer).
    pub fn all_ok(&self, ok: bool) -> bool {
        let mut all = 0u8;
        self.comm.all_reduce_into(
            &u8::from(ok),
            &mut all,
            ::mpi::collective::SystemOperation::min(),
        );
        all == 1
    }

    /// The largest of every rank's `v`, on every rank.
    pub fn max(&self, v: f64) -> f64 {
        let mut m = 0.0;
        self.comm
            .all_reduce_into(&v, &mut m, ::mpi::collective::SystemOperation::max());
        m
    }

    /// The sum of every rank's `v`, on every rank.
    pub fn sum(&self, v: f64) -> f64 {
        let mut s = 0.0;
        self.comm
            .all_reduce_into(&v, &mut s, ::mpi::collective::SystemOperation::sum());
        s
    }

    /// Rank 0 splits its matrix (`matrix` is read only there: the others pass `None`) into
    /// blocks balanced by nonzeros and sends every rank its part. Rank 0 also gets every part's
    /// summary. A matrix rank 0 could not read is its error there and a `stopped` error on
    /// the others.
    pub fn distribute(
        &self,
        matrix: Option<Result<CsrMatrix>>,
    ) -> Result<(RankPart, Option<Vec<PartSummary>>)> {
        let root = self.comm.process_at_rank(0);
        if !self.is_root() {
            let mut ok = 0u8;
            root.broadcast_into(&mut ok);
            if ok == 0 {
                return Err(stopped("rank 0 could not read the matrix"));
            }
            let (ints, _) = root.receive_vec::<u64>();
            let (values, _) = root.receive_vec::<f64>();
            let part = wire::decode(&ints, &values).map_err(|m| {
                SurgeError::Usage(format!("internal: rank {}'s part: {m}", self.rank))
            })?;
            return Ok((part, None));
        }
        let a = matrix.unwrap_or_else(|| Err(SurgeError::Usage("internal: no matrix".into())));
        let mut ok = u8::from(a.is_ok());
        root.broadcast_into(&mut ok);
        let a = a?;
        let blocks = Blocks::balanced(&a.row_offsets, a.cols, self.size);
        let mut parts = RankPart::split(&a, &blocks);
        drop(a);
        let summaries = parts.iter().map(RankPart::summary).collect();
        for p in parts.drain(1..) {
            let (ints, values) = wire::encode(&p);
            let to = self.comm.process_at_rank(p.rank as i32);
            to.send(&ints[..]);
            to.send(&values[..]);
        }
        Ok((parts.pop().expect("rank 0's part"), Some(summaries)))
    }

    /// Rank 0's points (read or generated there only; the others pass `None`) in contiguous
    /// blocks of nearly equal size, one per rank (a rank may get none). A failure on rank 0 is
    /// its error there and a `stopped` error on the others.
    pub fn scatter_points(&self, points: Option<Result<Points>>) -> Result<Points> {
        let root = self.comm.process_at_rank(0);
        let mut header = [0u64; 3];
        let points = match points {
            Some(Ok(p)) => {
                header = [1, p.len() as u64, p.d as u64];
                Some(Ok(p))
            }
            other => other,
        };
        root.broadcast_into(&mut header[..]);
        if header[0] == 0 {
            return Err(match points {
                Some(Err(e)) => e,
                _ => stopped("rank 0 could not read the points"),
            });
        }
        let (n, d, size) = (header[1] as usize, header[2] as usize, self.size);
        let block = |r: usize| n * r / size;
        let counts: Vec<i32> = (0..size)
            .map(|r| ((block(r + 1) - block(r)) * d) as i32)
            .collect();
        let displs: Vec<i32> = (0..size).map(|r| (block(r) * d) as i32).collect();
        let mut mine = vec![0.0; counts[self.rank] as usize];
        match points {
            Some(Ok(p)) => {
                let all = Partition::new(&p.data[..], counts, &displs[..]);
                root.scatter_varcount_into_root(&all, &mut mine[..]);
            }
            _ => root.scatter_varcount_into(&mut mine[..]),
        }
        Ok(Points { d, data: mine })
    }

    /// Adds `v` over every rank, in place (MPI_Allreduce with MPI_SUM).
    pub fn sum_in_place(&self, v: &mut [f64]) {
        let send = v.to_vec();
        self.comm
            .all_reduce_into(&send[..], v, ::mpi::collective::SystemOperation::sum());
    }

    /// Every rank's rows of `y`, put together on rank 0 (`None` on the others).
    pub fn gather(&self, part: &RankPart, y_own: &[f64]) -> Option<Vec<f64>> {
        let root = self.comm.process_at_rank(0);
        let mine = [part.rows.start as i32, part.rows.len() as i32];
        if !self.is_root() {
            root.gather_into(&mine[..]);
            root.gather_varcount_into(y_own);
            return None;
        }
        let mut spans = vec![0i32; 2 * self.size];
        root.gather_into_root(&mine[..], &mut spans[..]);
        let displs: Vec<i32> = spans.iter().step_by(2).copied().collect();
        let counts: Vec<i32> = spans.iter().skip(1).step_by(2).copied().collect();
        let mut y = vec![0.0; part.global_rows];
        {
            let mut p = PartitionMut::new(&mut y[..], counts, &displs[..]);
            root.gather_varcount_into_root(y_own, &mut p);
        }
        Some(y)
    }

    /// Every rank's `value` as JSON, in rank order, on rank 0 (`None` on the others).
    pub fn gather_json<T: serde::Serialize>(&self, value: T) -> Option<serde_json::Value> {
        let root = self.comm.process_at_rank(0);
        let mine = serde_json::to_vec(&value).expect("internal: a serializable value");
        let len = [mine.len() as i32];
        if !self.is_root() {
            root.gather_into(&len[..]);
            root.gather_varcount_into(&mine[..]);
            return None;
        }
        let mut counts = vec![0i32; self.size];
        root.gather_into_root(&len[..], &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut p = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(&mine[..], &mut p);
        }
        let values = displs
            .iter()
            .zip(&counts)
            .map(|(&d, &c)| {
                serde_json::from_slice(&all[d as usize..(d + c) as usize])
                    .expect("internal: a rank's JSON")
            })
            .collect();
        Some(serde_json::Value::Array(values))
    }
}
