//! The distributed SpMV against the one-rank product, bit for bit, on every matrix given (files
//! or directories of `.mtx`; a complex matrix is refused by the reader and skipped):
//!
//! ```text
//! cargo build -p surge --features mpi --example mpi_spmv_check
//! mpirun -np 3 --oversubscribe target/debug/examples/mpi_spmv_check ../shared/matrices
//! ```
//!
//! Rank 0 reads each matrix, computes `y = A x` alone (the program and default variant of
//! `surge run spmv`, x with distinct inexact entries), then every rank runs its share twice (the
//! second reuses the exchange pattern and buffers); both gathered results must equal the
//! one-rank one bit for bit. Exit 1 on any difference.

use std::path::PathBuf;
use std::process::ExitCode;
use surge::mpi::dist_spmv::DistSpmv;
use surge::mpi::world::World;
use surge::mtx::{CsrMatrix, read_mtx};
use surge::{Buffer, Computation, Kernels, Output, Target};

fn x_of(cols: std::ops::Range<usize>) -> Vec<f64> {
    cols.map(|j| 1.0 + ((j * 7919) % 1009) as f64 / 1013.0)
        .collect()
}

fn one_rank(a: &CsrMatrix) -> surge::Result<Vec<f64>> {
    let c = Computation::new(&surge::apps::spmv_app(a, &x_of(0..a.cols))?)?;
    let k = Kernels::shared(&c, &Target::cpu())?;
    match k.run(&c, k.default_variant())? {
        Output::Seq(Buffer::F64(y)) => Ok(y),
        other => panic!("internal: SpMV returned {other:?}"),
    }
}

fn files(args: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in args {
        let p = PathBuf::from(a);
        if p.is_dir() {
            let mut in_dir: Vec<PathBuf> = std::fs::read_dir(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
                .collect();
            in_dir.sort();
            out.extend(in_dir);
        } else {
            out.push(p);
        }
    }
    out
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let world = World::init().expect("MPI starts");
    let list = files(&args);
    if list.is_empty() {
        if world.is_root() {
            eprintln!("usage: mpi_spmv_check MATRIX.mtx|DIR ...");
        }
        return ExitCode::from(2);
    }
    let threads = world.threads_per_rank();
    let (mut checked, mut skipped, mut failed) = (0, 0, 0);
    for f in &list {
        let name = f
            .file_name()
            .map_or(f.display().to_string(), |n| n.to_string_lossy().into());
        let read = world
            .is_root()
            .then(|| read_mtx(f).map_err(surge::SurgeError::from));
        let expected = match &read {
            Some(Ok(a)) => Some(one_rank(a).expect("the one-rank SpMV runs")),
            _ => None,
        };
        let (part, summaries) = match world.distribute(read) {
            Ok(p) => p,
            Err(e) => {
                if world.is_root() {
                    if e.to_string().contains("complex") {
                        println!("skip  {name}: {e}");
                        skipped += 1;
                    } else {
                        println!("FAIL  {name}: {e}");
                        failed += 1;
                    }
                }
                continue;
            }
        };
        let x_own = x_of(part.cols.clone());
        let mut spmv = DistSpmv::new(&world, part, threads, None).expect("kernels build");
        let mut results = Vec::new();
        for _ in 0..2 {
            let mut y_own = vec![f64::NAN; spmv.part().rows.len()];
            spmv.apply(&x_own, &mut y_own)
                .expect("the distributed SpMV runs");
            results.push(world.gather(spmv.part(), &y_own));
        }
        let (Some(expected), Some(summaries)) = (expected, summaries) else {
            continue;
        };
        let same = |y: &Option<Vec<f64>>| {
            let y = y.as_ref().expect("rank 0 gathers y");
            y.len() == expected.len()
                && y.iter()
                    .zip(&expected)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        };
        let ghosts: usize = summaries.iter().map(|s| s.ghosts).sum();
        let empty = summaries.iter().filter(|s| s.rows == 0).count();
        if results.iter().all(same) {
            checked += 1;
            println!(
                "ok    {name}: {} rows, {} ghost entries over {} ranks ({} empty), bit for bit",
                expected.len(),
                ghosts,
                world.size(),
                empty
            );
        } else {
            failed += 1;
            println!("FAIL  {name}: the distributed result differs from one rank's");
        }
    }
    if world.is_root() {
        println!(
            "{checked} matrices equal bit for bit on {} ranks, {skipped} skipped, {failed} failed",
            world.size()
        );
    }
    let ok = world.all_ok(failed == 0 && (checked > 0 || !world.is_root()));
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
