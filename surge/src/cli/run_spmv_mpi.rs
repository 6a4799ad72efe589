//! `mpirun -np R surge run spmv [--input X.mtx]`: rank 0 reads the matrix and sends every rank
//! its rows; each runs its share of `y = A x` (x = 1, as one process does); rank 0 prints what
//! `surge run spmv` prints, equal to it bit for bit, and the partition.

use super::CliError;
use super::run::{RunArgs, print_report, spmv_summary};
use serde_json::json;
use std::time::Instant;
use surge::apps::{DEFAULT_GRID, MatrixShape, matgen};
use surge::mpi::PartSummary;
use surge::mpi::dist_spmv::DistSpmv;
use surge::mpi::tuned_spmv::Choice;
use surge::mpi::world::World;
use surge::{SurgeError, mtx};

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let refused = [
        (args.all, "--all"),
        (args.interpret, "--interpret"),
        (args.platform != "cpu", "--platform"),
        (args.app.size.is_some(), "--size"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        return Err(super::distributed::refusal(format!(
            "{flag} has no distributed form yet: surge run spmv under mpirun runs one variant \
             on the CPU (--variant or --tuned, --threads, --input, --json)"
        )));
    }
    if args.threads == Some(0) {
        return Err(super::distributed::refusal(
            "--threads must be at least 1".into(),
        ));
    }
    // Every rank finds a failed start alike (e.g. ranks running different builds).
    let world = World::init().map_err(|e| super::distributed::refusal(e.to_string()))?;
    distributed(args, &world)
}

/// An error every rank stops at (rank 0's, or a step rank 0 failed at): rank 0 says it before
/// any rank exits (Open MPI ends the whole job at the first non-zero exit), the others exit
/// silently with the same code.
pub(super) fn collective(world: &World, e: SurgeError) -> CliError {
    let e = CliError::from(e);
    if world.is_root() {
        eprintln!("error: {}", e.message);
    } else if !e.message.starts_with("stopped:") {
        eprintln!("error: rank {}: {}", world.rank(), e.message);
    }
    world.barrier();
    CliError {
        code: e.code,
        message: String::new(),
    }
}

fn distributed(args: &RunArgs, world: &World) -> Result<(), CliError> {
    let input_name = match &args.app.input {
        Some(p) => p.display().to_string(),
        None => format!("laplacian_2d {0}x{0} (built-in)", DEFAULT_GRID),
    };
    let matrix = world.is_root().then(|| match &args.app.input {
        Some(p) => Ok(mtx::read_mtx(p)?),
        None => Ok(matgen::laplacian_2d(DEFAULT_GRID)),
    });
    let shape = matrix
        .as_ref()
        .and_then(|m| m.as_ref().ok())
        .map(|m| MatrixShape {
            rows: m.rows,
            cols: m.cols,
            nnz: m.nnz(),
        });
    let start = Instant::now();
    let (part, summaries) = world.distribute(matrix).map_err(|e| collective(world, e))?;
    let distribute_seconds = world.max(start.elapsed().as_secs_f64());
    let threads = args.threads.unwrap_or_else(|| world.threads_per_rank());
    let start = Instant::now();
    // `--tuned`: every rank opens the store this machine's `surge tune spmv` wrote and lets its
    // model pick for its own rows (surge::mpi::tuned_spmv); no store is found alike by all.
    // The store of the campaign that ran with as many threads per rank (`tune_mpi.rs`).
    let backend = surge::tune::cpu::CpuBackend::with_cores(threads);
    let tuned = if args.tuned {
        let workload = surge::apps::App::Spmv.workload();
        let opened = world.agree(surge::tune::Tuned::open(&workload, &backend));
        Some(opened.map_err(|e| collective(world, e))?)
    } else {
        None
    };
    let choice = match &tuned {
        Some(t) => Choice::Tuned(t),
        None => args.variant.as_deref().into(),
    };
    // A bad --variant is found alike by every rank; a failed build, by rank 0 first.
    let mut spmv = DistSpmv::new(world, part, threads, choice).map_err(|e| collective(world, e))?;
    let picks = world.gather_json(spmv.local().pick());
    let build_seconds = world.max(start.elapsed().as_secs_f64());
    let x_own = vec![1.0; spmv.part().cols.len()];
    let mut y_own = vec![0.0; spmv.part().rows.len()];
    world.barrier();
    let start = Instant::now();
    let applied = spmv.apply(&x_own, &mut y_own);
    let ok = world.all_ok(applied.is_ok());
    applied?;
    if !ok {
        // The failing rank says why; its exit ends the job.
        return Err(CliError {
            code: 1,
            message: String::new(),
        });
    }
    let seconds = world.max(start.elapsed().as_secs_f64());
    let y = world.gather(spmv.part(), &y_own);
    let (Some(y), Some(shape), Some(summaries)) = (y, shape, summaries) else {
        return Ok(());
    };
    let mut o = serde_json::Map::new();
    spmv_summary(&mut o, shape, &y);
    o.insert("engine".into(), json!("cpu"));
    o.insert("variant".into(), json!(spmv.local().variant().id()));
    o.insert("build_seconds".into(), json!(build_seconds));
    o.insert("seconds".into(), json!(seconds));
    o.insert("ranks".into(), json!(world.size()));
    o.insert("threads_per_rank".into(), json!(threads));
    o.insert("distribute_seconds".into(), json!(distribute_seconds));
    let picks = picks.filter(|_| args.tuned);
    if let (Some(picks), true) = (&picks, args.app.json) {
        o.insert("tuned_picks".into(), picks.clone());
    }
    if args.app.json {
        o.insert("partition".into(), json!(summaries));
    }
    print_report(args.app.json, "spmv", &input_name, o);
    if !args.app.json {
        print_partition(&summaries);
        for p in picks
            .iter()
            .flat_map(|p| p.as_array().into_iter().flatten())
        {
            println!(
                "tuned          rank {:>2}: {} (the model's pick {}, features {:.1} us)",
                p["rank"],
                p["variant"].as_str().unwrap_or("?"),
                p["model_pick"].as_str().unwrap_or("?"),
                p["feature_seconds"].as_f64().unwrap_or(0.0) * 1e6
            );
        }
    }
    Ok(())
}

/// One line per rank: its rows, nonzeros (diagonal + off-diagonal block), interior and
/// boundary rows, ghost entries received, and neighbours.
fn print_partition(parts: &[PartSummary]) {
    println!(
        "partition      rank      rows       nnz  (diag + off-diag)   interior  boundary    ghosts  neighbours"
    );
    for p in parts {
        println!(
            "{:14} {:>4} {:>9} {:>9}  ({:>8} + {:>8})  {:>9} {:>9} {:>9}  {:?}",
            "",
            p.rank,
            p.rows,
            p.nnz,
            p.diagonal_nnz,
            p.off_diagonal_nnz,
            p.interior_rows,
            p.boundary_rows,
            p.ghosts,
            p.neighbours
        );
    }
}
