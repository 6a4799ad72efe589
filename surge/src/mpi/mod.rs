//! Running across ranks on MPI (`mpirun`, Slurm's `srun`): see `README.md` beside this file.
//!
//! Everything but the MPI calls themselves is plain Rust and builds without MPI (the partition,
//! the exchange pattern, the local Surge SpMVs, the wire form), so the default build tests it by
//! simulating the ranks in one process. With the `mpi` cargo feature, [`world`] and
//! [`dist_spmv`] run it on real ranks.

pub mod answering;
pub mod build_id;
pub mod kmeans_local;
pub mod kmeans_loop;
pub mod launch;
pub mod local_spmv;
pub mod machines;
pub mod partition;
pub mod plan;
pub mod rank_part;
pub mod tuned_spmv;
pub mod wire;

#[cfg(feature = "mpi")]
pub mod campaign;
#[cfg(feature = "mpi")]
pub mod dist_spmv;
#[cfg(feature = "mpi")]
pub mod fan_out;
#[cfg(feature = "mpi")]
pub mod world;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kmeans;

pub use local_spmv::LocalSpmv;
pub use partition::Blocks;
pub use rank_part::{Neighbour, PartSummary, RankPart};
