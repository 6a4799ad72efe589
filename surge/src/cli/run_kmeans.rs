//! `surge run kmeans`: Lloyd's k-means on the user's points (`--input points.csv|.npy`) or on
//! generated ones (`--size N`, d = 32), from `--init centroids.csv` or k-means++ (`--seed`).

use super::run::RunArgs;
use super::{CliError, print_json};
use serde_json::json;
use std::time::Instant;
use surge::Target;
use surge::apps::kmeans::{self, LloydVariants, Points, data};
use surge::apps::{App, KMEANS_DIM, KMEANS_K, KMEANS_POINTS};

fn usage(m: impl Into<String>) -> CliError {
    CliError {
        code: 2,
        message: m.into(),
    }
}

/// The points and their description.
pub(super) fn points(args: &RunArgs) -> Result<(Points, String), CliError> {
    match (&args.app.input, args.app.size) {
        (Some(_), Some(_)) => Err(usage("give either --input or --size, not both")),
        (Some(p), None) => Ok((Points::read(p)?, p.display().to_string())),
        (None, n) => {
            let n = n.unwrap_or(KMEANS_POINTS);
            Ok((
                data::blobs(n, KMEANS_DIM, KMEANS_K, 7),
                format!("{n} generated points (d = {KMEANS_DIM}, seed 7)"),
            ))
        }
    }
}

/// The initial centroids: `--init FILE` (k rows of the points' dimension) or k-means++.
pub(super) fn initial(args: &RunArgs, p: &Points) -> Result<(Vec<f64>, String), CliError> {
    match &args.init {
        Some(f) => {
            let c = Points::read(f)?;
            if c.d != p.d {
                return Err(usage(format!(
                    "{}: centroids of dimension {}, the points have {}",
                    f.display(),
                    c.d,
                    p.d
                )));
            }
            if args.k.is_some_and(|k| k != c.len()) {
                return Err(usage(format!(
                    "--k {} but {} holds {} centroids",
                    args.k.unwrap_or(0),
                    f.display(),
                    c.len()
                )));
            }
            data::check_k(p, c.len())?;
            Ok((c.data, f.display().to_string()))
        }
        None => {
            let k = args.k.unwrap_or(KMEANS_K);
            let seed = args.seed.unwrap_or(1);
            Ok((
                data::kmeans_plus_plus(p, k, seed)?,
                format!("k-means++ (seed {seed})"),
            ))
        }
    }
}

/// The relabeling variant the stored model picks for these points (`--tuned`).
fn tuned(p: &Points, init: &[f64], name: &str) -> Result<(String, serde_json::Value), CliError> {
    use surge::tune::{Tuned, cpu::CpuBackend};
    let c = kmeans::program::relabel(p.data.clone(), init.to_vec(), p.d)?;
    let workload = App::Kmeans.workload();
    let input = workload.input(name, c)?;
    let backend = CpuBackend::new();
    let t = Tuned::open(&workload, &backend)?;
    if let Some(why) = t.mismatch(&input) {
        return Err(usage(why));
    }
    let sel = t.select(&input)?;
    if !sel.from_model {
        return Err(usage(sel.warnings.join("; ")));
    }
    let info = json!({"from_model": true, "feature_seconds": sel.feature_seconds,
        "query_seconds": sel.query_seconds, "warnings": sel.warnings});
    Ok((sel.variant, info))
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let target = match args.platform.as_str() {
        "cpu" => Target::cpu(),
        other => super::run_cuda::target(other)?,
    };
    if args.tuned && args.platform != "cpu" {
        return Err(usage(
            "--tuned selects among CPU variants; on CUDA give --variant or none (the defaults)",
        ));
    }
    let (p, input) = points(args)?;
    let (init, init_name) = initial(args, &p)?;
    let mut variants = LloydVariants {
        relabel: args.variant.clone(),
        recalculate: None,
    };
    let mut selection = None;
    if args.tuned {
        let (v, info) = tuned(&p, &init, &input)?;
        variants.relabel = Some(v);
        selection = Some(info);
    }
    let t = Instant::now();
    let r = kmeans::lloyd(&p, &init, args.iterations, &target, &variants)?;
    let seconds = t.elapsed().as_secs_f64();
    let k = r.counts.len();
    let mut o = serde_json::Map::new();
    o.insert("app".into(), json!("kmeans"));
    o.insert("input".into(), json!(input));
    o.insert("platform".into(), json!(target.kind()));
    o.insert("points".into(), json!(p.len()));
    o.insert("dimension".into(), json!(p.d));
    o.insert("k".into(), json!(k));
    o.insert("init".into(), json!(init_name));
    o.insert("iterations".into(), json!(r.iterations));
    o.insert("converged".into(), json!(r.converged));
    o.insert("inertia".into(), json!(r.inertia));
    o.insert("counts".into(), json!(r.counts));
    let rows: Vec<&[f64]> = r.centroids.chunks(p.d).collect();
    o.insert("centroids".into(), json!(rows));
    o.insert("variants".into(), json!(r.variants));
    if let Some(s) = selection {
        o.insert("selection".into(), s);
    }
    o.insert("seconds".into(), json!(seconds));
    o.insert(
        "mpoints_per_second".into(),
        json!(p.len() as f64 * (r.iterations + 1) as f64 / seconds / 1e6),
    );
    print(args.app.json, &o, &rows);
    Ok(())
}

/// Prints a k-means summary: JSON, or a `key value` line each and the centroids' first values.
pub(super) fn print(
    as_json: bool,
    o: &serde_json::Map<String, serde_json::Value>,
    rows: &[&[f64]],
) {
    if as_json {
        print_json(&serde_json::Value::Object(o.clone()));
    } else {
        for (key, v) in o.iter().filter(|(key, _)| *key != "centroids") {
            println!("{key:18} {v}");
        }
        for (j, c) in rows.iter().enumerate() {
            let shown: Vec<String> = c.iter().take(6).map(|v| format!("{v:.6}")).collect();
            let more = if c.len() > 6 { ", ..." } else { "" };
            println!("centroid {j:<9} [{}{more}]", shown.join(", "));
        }
    }
}
