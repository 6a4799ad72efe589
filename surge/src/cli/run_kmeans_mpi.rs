//! `mpirun -np R surge run kmeans [--input points.csv|--size N] [--k K] [--init FILE]`: rank 0
//! reads or generates the points and scatters them; every rank relabels and sums its own; one
//! allreduce per iteration. Rank 0 prints what `surge run kmeans` prints (the centroids equal
//! one process's to 1e-12, the counts and iterations exactly), plus the ranks.

use super::CliError;
use super::run::RunArgs;
use super::run_spmv_mpi::collective;
use serde_json::json;
use std::time::Instant;
use surge::SurgeError;
use surge::mpi::kmeans_local::LocalLloyd;
use surge::mpi::kmeans_loop;
use surge::mpi::world::World;

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let refused = [
        (args.all, "--all"),
        (args.interpret, "--interpret"),
        (args.tuned, "--tuned"),
        (args.variant.is_some(), "--variant"),
        (args.platform != "cpu", "--platform"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        return Err(super::distributed::refusal(format!(
            "{flag} has no distributed form yet: surge run kmeans under mpirun runs the default \
             variants on the CPU (--input or --size, --k, --init, --seed, --iterations, \
             --threads, --json)"
        )));
    }
    if args.threads == Some(0) {
        return Err(super::distributed::refusal(
            "--threads must be at least 1".into(),
        ));
    }
    // Every rank finds a failed start alike (e.g. ranks running different builds).
    let world = World::init().map_err(|e| super::distributed::refusal(e.to_string()))?;
    // Rank 0's points and initial centroids, with their names.
    let loaded = world.is_root().then(|| {
        let (p, input) = super::run_kmeans::points(args)?;
        let (init, init_name) = super::run_kmeans::initial(args, &p)?;
        Ok::<_, CliError>((p, input, init, init_name))
    });
    let (points, names, mut init) = match loaded {
        Some(Ok((p, input, init, init_name))) => (Some(Ok(p)), Some((input, init_name)), init),
        Some(Err(e)) => (Some(Err(SurgeError::Usage(e.message))), None, Vec::new()),
        None => (None, None, Vec::new()),
    };
    let mine = world
        .scatter_points(points)
        .map_err(|e| collective(&world, e))?;
    let d = mine.d;
    // Every rank learns k, then the initial centroids (summed: only rank 0's are not zero).
    let mut k = [(init.len() / d.max(1)) as f64];
    world.sum_in_place(&mut k);
    init.resize(k[0] as usize * d, 0.0);
    world.sum_in_place(&mut init);
    let threads = args.threads.unwrap_or_else(|| world.threads_per_rank());
    let t = Instant::now();
    let local = LocalLloyd::new(&mine, k[0] as usize, Some(threads));
    if !world.all_ok(local.is_ok()) {
        local?;
        return Err(CliError {
            code: 1,
            message: String::new(),
        });
    }
    let mut parts = [(local?, &mine.data[..])];
    let r = kmeans_loop::lloyd(&mut parts, &init, d, args.iterations, |v| {
        world.sum_in_place(v)
    })?;
    let seconds = world.max(t.elapsed().as_secs_f64());
    let mut n = [mine.len() as f64];
    world.sum_in_place(&mut n);
    let Some((input, init_name)) = names else {
        return Ok(());
    };
    let mut o = serde_json::Map::new();
    o.insert("app".into(), json!("kmeans"));
    o.insert("input".into(), json!(input));
    o.insert("points".into(), json!(n[0] as u64));
    o.insert("dimension".into(), json!(d));
    o.insert("k".into(), json!(r.counts.len()));
    o.insert("init".into(), json!(init_name));
    o.insert("iterations".into(), json!(r.iterations));
    o.insert("converged".into(), json!(r.converged));
    o.insert("inertia".into(), json!(r.inertia));
    o.insert("counts".into(), json!(r.counts));
    let rows: Vec<&[f64]> = r.centroids.chunks(d).collect();
    o.insert("centroids".into(), json!(rows));
    o.insert("ranks".into(), json!(world.size()));
    o.insert("threads_per_rank".into(), json!(threads));
    o.insert("seconds".into(), json!(seconds));
    o.insert(
        "mpoints_per_second".into(),
        json!(n[0] * (r.iterations + 1) as f64 / seconds / 1e6),
    );
    super::run_kmeans::print(args.app.json, &o, &rows);
    Ok(())
}
