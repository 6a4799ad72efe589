//! How this process was started: by an MPI launcher (`mpirun`, Slurm's `srun`, a PMI-based
//! one) with several ranks, or alone. Read from the launcher's environment, so a build without
//! MPI can still tell it is one of several copies and refuse instead of running the same work
//! on every rank.

/// The variables launchers set to the job's rank count (Open MPI, PMI/MPICH/Intel MPI, Slurm).
const SIZE_VARS: [&str; 4] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_SIZE",
    "SLURM_NTASKS",
];
/// The variables they set to this process's rank.
const RANK_VARS: [&str; 4] = [
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
];

fn first_number(vars: &[&str]) -> Option<usize> {
    vars.iter()
        .find_map(|v| std::env::var(v).ok().and_then(|s| s.trim().parse().ok()))
}

/// The number of ranks the launcher started, when it says (`None`: not started by one).
pub fn launched_ranks() -> Option<usize> {
    first_number(&SIZE_VARS)
}

/// This process's rank as the launcher numbered it (0 when not started by one).
pub fn launched_rank() -> usize {
    first_number(&RANK_VARS).unwrap_or(0)
}

/// Whether this process is one of several ranks of an MPI job.
pub fn is_multi_rank() -> bool {
    launched_ranks().is_some_and(|n| n > 1)
}

/// Why a build without the `mpi` feature refuses to run under a launcher with several ranks.
pub fn built_without_mpi(ranks: usize) -> String {
    format!(
        "started as one of {ranks} MPI ranks, but this surge was built without MPI: \
         cargo build --release -p surge --features mpi (needs an MPI library such as \
         libopenmpi-dev, and libclang-dev); run a build without it as a single process"
    )
}
