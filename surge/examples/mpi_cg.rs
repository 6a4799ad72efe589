//! Conjugate gradients on the distributed SpMV: solves `A x = b` for a symmetric positive
//! definite `A` (a Matrix Market file, or a generated 2-D Laplacian), `b = A·1`, from `x = 0`,
//! and checks the true residual `‖b − A x‖ / ‖b‖` and the distance to the known solution.
//!
//! ```text
//! cargo build -p surge --features mpi --example mpi_cg
//! mpirun -np 2 target/debug/examples/mpi_cg                 # laplacian_2d 64x64
//! mpirun -np 3 --oversubscribe target/debug/examples/mpi_cg --input ../shared/matrices/bcsstk13.mtx
//! ```
//!
//! Every product is `DistSpmv::apply` (ghosts exchanged, interior rows overlapped); the dot
//! products are local sums added with one `allreduce` each. Exit 1 when it does not converge.

use std::process::ExitCode;
use surge::mpi::dist_spmv::DistSpmv;
use surge::mpi::world::World;

struct Args {
    input: Option<String>,
    grid: usize,
    tol: f64,
    max_iterations: usize,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        input: None,
        grid: 64,
        tol: 1e-10,
        max_iterations: 10_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--input" => a.input = Some(value()?),
            "--grid" => a.grid = value()?.parse().map_err(|e| format!("--grid: {e}"))?,
            "--tol" => a.tol = value()?.parse().map_err(|e| format!("--tol: {e}"))?,
            "--max-iterations" => {
                a.max_iterations = value()?
                    .parse()
                    .map_err(|e| format!("--max-iterations: {e}"))?
            }
            _ => {
                return Err(format!(
                    "unknown argument {flag} (--input, --grid, --tol, --max-iterations)"
                ));
            }
        }
    }
    Ok(a)
}

fn dot(world: &World, a: &[f64], b: &[f64]) -> f64 {
    world.sum(a.iter().zip(b).map(|(x, y)| x * y).sum())
}

fn main() -> ExitCode {
    let world = World::init().expect("MPI starts");
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            if world.is_root() {
                eprintln!("error: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let matrix = world.is_root().then(|| match &args.input {
        Some(p) => surge::mtx::read_mtx(std::path::Path::new(p)).map_err(surge::SurgeError::from),
        None => Ok(surge::apps::matgen::laplacian_2d(args.grid)),
    });
    let part = match world.distribute(matrix) {
        Ok((part, _)) => part,
        Err(e) => {
            if world.is_root() {
                eprintln!("error: {e}");
            }
            return ExitCode::from(2);
        }
    };
    if part.global_rows != part.global_cols {
        if world.is_root() {
            eprintln!(
                "error: CG needs a square matrix; this one is {}x{}",
                part.global_rows, part.global_cols
            );
        }
        return ExitCode::from(2);
    }
    let n = part.rows.len();
    let mut spmv =
        DistSpmv::new(&world, part, world.threads_per_rank(), None).expect("kernels build");
    let ones = vec![1.0; n];
    let mut b = vec![0.0; n];
    spmv.apply(&ones, &mut b).expect("SpMV runs");
    let norm_b = dot(&world, &b, &b).sqrt();
    let (mut x, mut r, mut p, mut ap) = (vec![0.0; n], b.clone(), b.clone(), vec![0.0; n]);
    let mut rr = dot(&world, &r, &r);
    let start = std::time::Instant::now();
    let mut iterations = 0;
    while iterations < args.max_iterations && rr.sqrt() > args.tol * norm_b {
        spmv.apply(&p, &mut ap).expect("SpMV runs");
        let alpha = rr / dot(&world, &p, &ap);
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        let rr_next = dot(&world, &r, &r);
        let beta = rr_next / rr;
        rr = rr_next;
        for i in 0..n {
            p[i] = r[i] + beta * p[i];
        }
        iterations += 1;
    }
    let seconds = world.max(start.elapsed().as_secs_f64());
    // The true residual, with one more distributed product.
    spmv.apply(&x, &mut ap).expect("SpMV runs");
    let res: Vec<f64> = b.iter().zip(&ap).map(|(b, ax)| b - ax).collect();
    let relative = dot(&world, &res, &res).sqrt() / norm_b;
    let err = x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
    let err = world.max(err);
    let converged = relative <= 10.0 * args.tol;
    if world.is_root() {
        println!(
            "cg on {} ranks: {} unknowns, {iterations} iterations in {seconds:.3} s, \
             true residual ‖b − Ax‖/‖b‖ = {relative:.2e}, max |x − 1| = {err:.2e}: {}",
            world.size(),
            spmv.part().global_rows,
            if converged {
                "converged"
            } else {
                "NOT converged"
            }
        );
    }
    if converged {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
