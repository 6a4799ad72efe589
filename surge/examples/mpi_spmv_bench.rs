//! Times the distributed SpMV: per matrix, the median over 7 rounds of the time per product
//! (each round a batch of back-to-back products between two barriers, about 0.1 s; the slowest
//! rank's time), with the variant `surge run spmv` would pick at that thread count.
//!
//! ```text
//! cargo build --release -p surge --features mpi --example mpi_spmv_bench
//! mpirun -np 2 target/release/examples/mpi_spmv_bench --threads 1 ../shared/matrices-large/cage11.mtx
//! mpirun -np 1 target/release/examples/mpi_spmv_bench --threads 2 ../shared/matrices-large/cage11.mtx
//! ```
//!
//! With one rank there is no exchange: the product is the plain Surge SpMV of the whole matrix.
//! `--variant ID` runs that variant on every rank instead (an id as `surge variants spmv` lists);
//! `--tuned` lets the model that `mpirun -np R surge tune spmv` stored on this machine pick each
//! rank's variant from its own rows (as `mpirun surge run spmv --tuned` does; the selection's
//! cost is not in the timed products).

use std::process::ExitCode;
use std::time::Instant;
use surge::mpi::dist_spmv::DistSpmv;
use surge::mpi::tuned_spmv::Choice;
use surge::mpi::world::World;

fn main() -> ExitCode {
    let world = World::init().expect("MPI starts");
    let mut threads = world.threads_per_rank();
    let mut files = Vec::new();
    let mut variant: Option<String> = None;
    let mut tuned = false;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        if a == "--variant" {
            match it.next() {
                Some(id) => variant = Some(id),
                None => {
                    eprintln!("error: --variant needs a variant id");
                    return ExitCode::from(2);
                }
            }
        } else if a == "--tuned" {
            tuned = true;
        } else if a == "--threads" {
            match it.next().and_then(|t| t.parse().ok()) {
                Some(t) if t > 0 => threads = t,
                _ => {
                    eprintln!("error: --threads needs a positive number");
                    return ExitCode::from(2);
                }
            }
        } else {
            files.push(a);
        }
    }
    let backend = surge::tune::cpu::CpuBackend::with_cores(threads);
    let workload = surge::apps::App::Spmv.workload();
    let store = if tuned {
        match world.agree(surge::tune::Tuned::open(&workload, &backend)) {
            Ok(t) => Some(t),
            Err(e) => {
                if world.is_root() {
                    eprintln!("error: --tuned: {e}");
                }
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let choice = match &store {
        Some(t) => Choice::Tuned(t),
        None => variant.as_deref().into(),
    };
    for f in &files {
        let read = world.is_root().then(|| {
            surge::mtx::read_mtx(std::path::Path::new(f)).map_err(surge::SurgeError::from)
        });
        let nnz = read.as_ref().and_then(|m| m.as_ref().ok()).map(|m| m.nnz());
        let (part, summaries) = match world.distribute(read) {
            Ok(p) => p,
            Err(e) => {
                if world.is_root() {
                    eprintln!("error: {f}: {e}");
                }
                return ExitCode::from(2);
            }
        };
        let x = vec![1.0; part.cols.len()];
        let mut y = vec![0.0; part.rows.len()];
        let mut spmv = DistSpmv::new(&world, part, threads, choice).expect("kernels build");
        spmv.apply(&x, &mut y).expect("SpMV runs");
        world.barrier();
        let t = Instant::now();
        spmv.apply(&x, &mut y).expect("SpMV runs");
        let once = world.max(t.elapsed().as_secs_f64());
        let batch = ((0.1 / once.max(1e-7)) as usize).clamp(1, 10_000);
        let mut rounds: Vec<f64> = (0..7)
            .map(|_| {
                world.barrier();
                let t = Instant::now();
                for _ in 0..batch {
                    spmv.apply(&x, &mut y).expect("SpMV runs");
                }
                world.max(t.elapsed().as_secs_f64()) / batch as f64
            })
            .collect();
        rounds.sort_by(f64::total_cmp);
        let median = rounds[rounds.len() / 2];
        if let (Some(nnz), Some(s)) = (nnz, summaries) {
            let ghosts: usize = s.iter().map(|p| p.ghosts).sum();
            let rows: Vec<String> = s.iter().map(|p| p.rows.to_string()).collect();
            println!(
                "{f}: {} ranks x {threads} threads: {:.1} us per SpMV, {:.2} GFLOP/s ({nnz} nonzeros; rows per rank {}; {ghosts} ghost entries, {})",
                world.size(),
                median * 1e6,
                2.0 * nnz as f64 / median * 1e-9,
                rows.join(" "),
                spmv.local().variant().id()
            );
        }
    }
    ExitCode::SUCCESS
}
