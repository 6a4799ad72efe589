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

/// Threads for each of `local_ranks` ranks on a node with `online` CPUs, of which this rank may
/// run on `affinity` (its CPU mask): a rank the launcher bound to its own CPUs (`mpirun` binds
/// to a core at two ranks or fewer, Slurm to `--cpus-per-task`) uses those; an unbound one
/// shares the node's CPUs with the other ranks on it. At least one.
pub fn threads_per_rank(affinity: usize, online: usize, local_ranks: usize) -> usize {
    if affinity < online {
        affinity.max(1)
    } else {
        (online / local_ranks.max(1)).max(1)
    }
}

/// The CPUs this process may run on, and the CPUs the node has online.
pub fn cpus() -> (usize, usize) {
    let affinity = std::thread::available_parallelism().map_or(1, |n| n.get());
    // `/sys/devices/system/cpu/online` is a list of ranges: "0-63", "0,2-5".
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| {
            s.trim()
                .split(',')
                .map(|r| match r.split_once('-') {
                    Some((a, b)) => Some(b.parse::<usize>().ok()? + 1 - a.parse::<usize>().ok()?),
                    None => r.parse::<usize>().ok().map(|_| 1),
                })
                .sum::<Option<usize>>()
        })
        .unwrap_or(affinity);
    (affinity, online.max(affinity))
}

#[cfg(test)]
mod tests {
    use super::threads_per_rank;

    #[test]
    fn bound_ranks_use_their_cpus_unbound_ones_share_the_node() {
        assert_eq!(threads_per_rank(1, 2, 2), 1); // mpirun -np 2 on 2 cores, bound to a core
        assert_eq!(threads_per_rank(2, 2, 2), 1); // --bind-to none
        assert_eq!(threads_per_rank(2, 2, 1), 2);
        assert_eq!(threads_per_rank(16, 64, 4), 16); // srun --cpus-per-task=16
        assert_eq!(threads_per_rank(2, 2, 3), 1); // oversubscribed
    }
}
