//! A `surge` started as one of several MPI ranks: a build without the `mpi` feature refuses
//! (exit 2, naming the build command) instead of running the same work on every rank; rank 0
//! says it once. Under a real `mpirun` the MPI build is checked by `tests/mpi/run.sh`.

use std::process::{Command, Output};

/// `surge ARGS` with the launcher's variables set as Open MPI (or Slurm) sets them.
fn surge_as_rank(vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_surge"));
    for v in [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "SLURM_NTASKS",
    ] {
        c.env_remove(v);
    }
    c.envs(vars.iter().copied())
        .args(args)
        .output()
        .expect("surge runs")
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_as_one_of_several_ranks() {
    for size_var in ["OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"] {
        let out = surge_as_rank(
            &[(size_var, "2"), ("OMPI_COMM_WORLD_RANK", "0")],
            &["run", "spmv"],
        );
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("one of 2 MPI ranks")
                && err.contains("built without MPI: cargo build --release -p surge --features mpi"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    // The other ranks exit alike without repeating it.
    let out = surge_as_rank(
        &[("OMPI_COMM_WORLD_SIZE", "3"), ("OMPI_COMM_WORLD_RANK", "2")],
        &["run", "spmv"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn one_rank_runs_as_a_single_process_and_threads_is_for_mpirun() {
    let out = surge_as_rank(
        &[("OMPI_COMM_WORLD_SIZE", "1")],
        &["run", "reduce", "--size", "1000", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = surge_as_rank(&[], &["run", "spmv", "--threads", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--threads is for `surge run spmv` and `surge run kmeans` under mpirun with several ranks; one process (`mpirun -np 1` included) runs the variant's own thread count")
    );
}
