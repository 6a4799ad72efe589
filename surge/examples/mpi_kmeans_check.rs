//! Distributed k-means against one rank's, on generated points and on the files given:
//!
//! ```text
//! cargo build -p surge --features mpi --example mpi_kmeans_check
//! mpirun -np 3 --oversubscribe target/debug/examples/mpi_kmeans_check tests/data/kmeans/iris.csv
//! ```
//!
//! Rank 0 makes or reads the points and scatters them in contiguous blocks; every rank
//! relabels its points and sums them per cluster with Surge's programs; one allreduce per
//! iteration adds the sums, counts and changed-label flags. Rank 0 also runs
//! `apps::kmeans::lloyd` alone from the same k-means++ centroids: the iterations, convergence and
//! counts must be equal, the centroids within 1e-12 (relative to the largest coordinate).
//! Exit 1 on any difference.

use std::process::ExitCode;
use surge::apps::kmeans::{self, Points, data};
use surge::mpi::kmeans_local::LocalLloyd;
use surge::mpi::kmeans_loop;
use surge::mpi::world::World;

/// Runs one case; rank 0 returns whether it matched.
fn case(world: &World, name: &str, points: Option<surge::Result<Points>>, k: usize) -> bool {
    let whole = points.as_ref().and_then(|p| p.as_ref().ok()).cloned();
    let mine = match world.scatter_points(points) {
        Ok(p) => p,
        Err(e) => {
            if world.is_root() {
                println!("FAIL  {name}: {e}");
            }
            return false;
        }
    };
    // Every rank needs the initial centroids: rank 0's k-means++, broadcast as a sum.
    let d = mine.d;
    let mut init = match &whole {
        Some(p) => data::kmeans_plus_plus(p, k, 1).expect("k-means++"),
        None => vec![0.0; k * d],
    };
    world.sum_in_place(&mut init);
    let local =
        LocalLloyd::new(&mine, k, Some(world.threads_per_rank())).expect("the programs build");
    let mut parts = [(local, &mine.data[..])];
    let got = kmeans_loop::lloyd(&mut parts, &init, d, 100, |v| world.sum_in_place(v))
        .expect("distributed Lloyd runs");
    let Some(whole) = whole else {
        return true;
    };
    let one = kmeans::lloyd(
        &whole,
        &init,
        100,
        &surge::Target::cpu(),
        &Default::default(),
    )
    .expect("one-rank Lloyd runs");
    let scale = one.centroids.iter().fold(1.0f64, |m, c| m.max(c.abs()));
    let worst = one
        .centroids
        .iter()
        .zip(&got.centroids)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let ok = worst <= 1e-12 * scale
        && got.iterations == one.iterations
        && got.converged == one.converged
        && got.counts == one.counts;
    println!(
        "{}  {name}: {} points, k = {k}, {} iterations on {} ranks, centroids within {:.1e} of one rank's (relative {:.1e})",
        if ok { "ok  " } else { "FAIL" },
        whole.len(),
        got.iterations,
        world.size(),
        worst,
        worst / scale
    );
    ok
}

fn main() -> ExitCode {
    let world = World::init().expect("MPI starts");
    let mut ok = true;
    for (n, d, k) in [(20_000, 8, 6), (2, 3, 2)] {
        let p = world.is_root().then(|| Ok(data::blobs(n, d, k, 5)));
        ok &= case(&world, &format!("blobs({n}, d = {d})"), p, k);
    }
    for f in std::env::args().skip(1) {
        let p = world
            .is_root()
            .then(|| Points::read(std::path::Path::new(&f)));
        ok &= case(&world, &f, p, 3);
    }
    if world.all_ok(ok || !world.is_root()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
