//! A `surge` started as one of several MPI ranks (`mpirun -np R`, `srun -n R`): the commands
//! that have a distributed form run it; the others, and every command of a build without the
//! `mpi` feature, are refused (exit 2) instead of running the same work on every rank.

use super::{CliError, Command};

/// Runs `command` as one of `ranks` ranks.
pub fn run(command: &Command, ranks: usize) -> Result<(), CliError> {
    #[cfg(not(feature = "mpi"))]
    {
        let _ = command;
        Err(refusal(surge::mpi::launch::built_without_mpi(ranks)))
    }
    #[cfg(feature = "mpi")]
    match command {
        Command::Run(a) if a.app.app == "spmv" => super::run_spmv_mpi::run(a),
        Command::Run(a) if a.app.app == "kmeans" => super::run_kmeans_mpi::run(a),
        Command::Tune(a) if a.app != "comd" => super::tune_mpi::run(a),
        _ => Err(refusal(format!(
            "started as one of {ranks} MPI ranks, but this command has no distributed form \
             (under mpirun: surge run spmv, surge run kmeans, surge tune reduce|scan|spmv|kmeans); run it as a single process"
        ))),
    }
}

/// An error every rank finds alike before MPI starts: rank 0 says it, the others exit with its
/// code silently, a moment later (a launcher ends the whole job at the first non-zero exit,
/// which could otherwise cut rank 0 off before it said why).
pub fn refusal(message: String) -> CliError {
    if surge::mpi::launch::launched_rank() == 0 {
        return CliError { code: 2, message };
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    CliError {
        code: 2,
        message: String::new(),
    }
}
