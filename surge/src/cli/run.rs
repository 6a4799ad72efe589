//! `surge run APP`: run an application natively (the default variant, one `--variant`, or
//! `--all` of them), or with the reference interpreter, and summarize the result.

use super::{AppArgs, CliError, print_json};
use serde_json::json;
use std::time::Instant;
use surge::apps::App;
use surge::oracle::{self, Flat};
use surge::{Kernels, Output, SurgeError, Target, Value};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub app: AppArgs,
    /// Run this variant (an id as `surge variants APP --platform cpu` prints it).
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub variant: Option<String>,
    /// Run every variant, check each against the reference interpreter and time it.
    #[arg(long)]
    pub all: bool,
    /// Evaluate with the reference interpreter instead of native kernels.
    #[arg(long)]
    pub interpret: bool,
    /// Where to run: cpu (rustc-compiled kernels), cuda (GPU 0) or cuda-emu (the CUDA
    /// emulator: the emitted CUDA compiled for the host and run with CUDA's execution model, on
    /// any machine; its times are host time, not a GPU's).
    #[arg(long, default_value = "cpu", value_name = "PLATFORM")]
    pub platform: String,
    /// Let the model that `surge tune APP` stored on this CPU pick the variant from the
    /// input's features. No store, a corrupt one, one tuned on another machine or for another
    /// version of the computation: an error saying what to do (exit 2). An input outside the
    /// training range: a warning, then the model's pick.
    #[arg(long, conflicts_with_all = ["variant", "all", "interpret"])]
    pub tuned: bool,
    /// kmeans: the number of clusters (default 10, or the rows of --init).
    #[arg(long, value_name = "K")]
    pub k: Option<usize>,
    /// kmeans: at most this many Lloyd iterations (it stops earlier when no label changes).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub iterations: usize,
    /// kmeans: the initial centroids, a CSV or .npy file of k rows (default: k-means++).
    #[arg(long, value_name = "FILE")]
    pub init: Option<std::path::PathBuf>,
    /// kmeans: the seed of k-means++ (default 1).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// spmv and kmeans under mpirun (a build with the `mpi` feature): threads per rank
    /// (default: the CPUs the launcher bound the rank to, else the node's CPUs over its ranks).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub comd: super::comd_args::ComdArgs,
}

/// The variant the stored model picks for this input, with its warnings on stderr.
fn tuned_variant(args: &RunArgs, app: App) -> Result<(String, serde_json::Value), CliError> {
    use surge::tune::{TuneInput, Tuned, cpu::CpuBackend};
    let input = match (&args.app.input, args.app.size, app) {
        (Some(p), _, App::Spmv) => TuneInput::matrix_file(p)?,
        (None, _, App::Spmv) => TuneInput::spmv(
            "laplacian_2d 256x256 (built-in)",
            surge::apps::matgen::laplacian_2d(surge::apps::DEFAULT_GRID),
        )?,
        (_, n, _) => TuneInput::sized(app, n.unwrap_or(surge::apps::DEFAULT_SIZE))?,
    };
    let backend = CpuBackend::new();
    let workload = app.workload();
    let tuned = Tuned::open(&workload, &backend)?;
    if let Some(why) = tuned.mismatch(&input) {
        return Err(CliError {
            code: 2,
            message: why,
        });
    }
    // Tuned::select reports its warnings on stderr itself.
    let sel = tuned.select(&input)?;
    if !sel.from_model {
        return Err(CliError {
            code: 2,
            message: sel.warnings.join("; "),
        });
    }
    // What `select` adds to the feature pass, timed again now that the first call has checked
    // the variant set: the median of 21 repetitions (one query is a few microseconds).
    let beyond = sel.from_model.then(|| {
        let mut t: Vec<f64> = (0..21)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(tuned.select_from_features(&sel.features));
                t.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    });
    let info = json!({
        "from_model": sel.from_model,
        "classes": tuned.store().map(|s| s.model.classes.len()),
        "feature_seconds": sel.feature_seconds,
        "query_seconds": sel.query_seconds,
        "select_beyond_features_seconds": beyond,
        "warnings": sel.warnings,
    });
    Ok((sel.variant, info))
}

/// The result as one flat vector (the scan's tiles concatenated).
fn flatten(v: &Value) -> Vec<f64> {
    match v {
        Value::Scalar(s) => s.as_f64().into_iter().collect(),
        Value::Seq(items) => items.iter().flat_map(flatten).collect(),
        Value::Tuple(items) => items.iter().flat_map(flatten).collect(),
    }
}

/// What `surge run spmv` prints of `y = A x`, one rank or many.
pub(super) fn spmv_summary(
    o: &mut serde_json::Map<String, serde_json::Value>,
    m: surge::apps::MatrixShape,
    y: &[f64],
) {
    o.insert("rows".into(), json!(m.rows));
    o.insert("cols".into(), json!(m.cols));
    o.insert("nnz".into(), json!(m.nnz));
    o.insert("sum_y".into(), json!(y.iter().sum::<f64>()));
    o.insert(
        "norm2_y".into(),
        json!(y.iter().map(|v| v * v).sum::<f64>().sqrt()),
    );
}

fn summary(
    app: App,
    built: &surge::apps::BuiltApp,
    flat: &[f64],
) -> serde_json::Map<String, serde_json::Value> {
    let sum: f64 = flat.iter().sum();
    let mut o = serde_json::Map::new();
    match app {
        App::Spmv => spmv_summary(&mut o, built.matrix.expect("spmv has a matrix"), flat),
        App::Reduce => {
            o.insert("n".into(), json!(built.size));
            o.insert("sum".into(), json!(flat.first().copied().unwrap_or(0.0)));
        }
        App::Scan => {
            o.insert("n".into(), json!(built.size));
            o.insert("last".into(), json!(flat.last().copied()));
            o.insert("sum_y".into(), json!(sum));
        }
        App::Kmeans => {
            o.insert("points".into(), json!(built.size));
            o.insert("labels".into(), json!(flat.len()));
            o.insert("sum_labels".into(), json!(sum));
        }
    }
    o
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let comd = args.app.app == "comd";
    if comd {
        return super::run_comd::run(args);
    }
    if args.comd.given() {
        return Err(CliError {
            code: 2,
            message: "--potential, --format, --cells, --nx/--ny/--nz, --lattice, --temperature, \
                      --delta, --steps, --dt and --print-rate are for `surge run comd`"
                .into(),
        });
    }
    if args.threads.is_some() {
        return Err(CliError {
            code: 2,
            message: "--threads is for `surge run spmv` and `surge run kmeans` under mpirun with \
                      several ranks; one process (`mpirun -np 1` included) runs the variant's own \
                      thread count: choose a variant with --variant, or the cores with `taskset`"
                .into(),
        });
    }
    let kmeans = args.app.app == App::Kmeans.name();
    if !kmeans && (args.k.is_some() || args.init.is_some() || args.seed.is_some()) {
        return Err(CliError {
            code: 2,
            message: "--k, --init and --seed are for `surge run kmeans`".into(),
        });
    }
    if kmeans && !args.all && !args.interpret {
        return super::run_kmeans::run(args);
    }
    let built = args.app.build()?;
    let c = &built.computation;
    if args.interpret {
        let start = Instant::now();
        let value = c.interpret()?;
        let seconds = start.elapsed().as_secs_f64();
        let mut o = summary(built.app, &built, &flatten(&value));
        o.insert("engine".into(), json!("interpreter"));
        o.insert("seconds".into(), json!(seconds));
        return report(args, &built, o);
    }
    if args.platform != "cpu" {
        let target = super::run_cuda::target(&args.platform)?;
        return super::run_cuda::run(args, &built, &target);
    }
    let start = Instant::now();
    let kernels = Kernels::build(c, &Target::cpu())?;
    let build_seconds = start.elapsed().as_secs_f64();
    if args.all {
        return run_all(args, &built, &kernels, build_seconds);
    }
    let mut selection = None;
    let v = match &args.variant {
        Some(id) => kernels.variant(id)?.clone(),
        None if args.tuned => {
            let (id, info) = tuned_variant(args, built.app)?;
            selection = Some(info);
            kernels.variant(&id)?.clone()
        }
        None => kernels.default_variant().clone(),
    };
    let start = Instant::now();
    let out: Output = kernels.run(c, &v)?;
    let seconds = start.elapsed().as_secs_f64();
    let mut o = summary_of(&built, &out);
    o.insert("engine".into(), json!("cpu"));
    o.insert("variant".into(), json!(v.id()));
    if let Some(sel) = selection {
        o.insert("selection".into(), sel);
    }
    o.insert("build_seconds".into(), json!(build_seconds));
    o.insert("seconds".into(), json!(seconds));
    report(args, &built, o)
}

/// `--all`: every variant, timed once after a warm-up and checked against the interpreter under
/// the oracle's tolerance rule (`surge_codegen::oracle`).
fn run_all(
    args: &RunArgs,
    built: &surge::apps::BuiltApp,
    kernels: &Kernels,
    build_seconds: f64,
) -> Result<(), CliError> {
    let c = &built.computation;
    let expected = oracle::Expected::interpret(c.ir(), c.buffers()).map_err(SurgeError::from)?;
    let mut rows = Vec::new();
    let mut worst = 0.0f64;
    let mut first_mismatch: Option<(String, String)> = None;
    for v in kernels.variants() {
        // The warm-up builds what the variant keeps per input (its data layout), as repeated
        // calls on one computation would.
        let mut ws = surge::Workspace::default();
        kernels.run_in(c, v, &mut ws)?;
        let t = Instant::now();
        kernels.run_in(c, v, &mut ws)?;
        let secs = t.elapsed().as_secs_f64();
        let got = Flat::of_output(&ws.take_output().expect("a finished run has an output"));
        let d = expected.max_rel_diff(&got);
        worst = worst.max(d);
        let check = expected.check(&got);
        rows.push(json!({"variant": v.id(), "seconds": secs, "max_rel_diff": d, "matches": check.is_ok()}));
        if let Err(m) = check {
            first_mismatch.get_or_insert((v.id(), m.to_string()));
        }
        if !args.app.json {
            println!("{:>10.3} ms  diff {d:.1e}  {v}", secs * 1e3);
        }
    }
    let ok = first_mismatch.is_none();
    if args.app.json {
        print_json(&json!({
            "app": built.app.name(), "input": built.input_name, "build_seconds": build_seconds,
            "variants": rows, "max_rel_diff": worst, "all_match_interpreter": ok,
        }));
    } else {
        println!(
            "{} variants, kernels built in {build_seconds:.2} s, largest relative difference from the interpreter {worst:.1e}",
            rows.len()
        );
    }
    match first_mismatch {
        None => Ok(()),
        Some((id, m)) => Err(CliError {
            code: 1,
            message: format!("variant {id} differs from the interpreter: {m}"),
        }),
    }
}

/// The summary of a native result.
pub(super) fn summary_of(
    built: &surge::apps::BuiltApp,
    out: &Output,
) -> serde_json::Map<String, serde_json::Value> {
    summary(built.app, built, &flatten(&Value::from_output(out)))
}

pub(super) fn report(
    args: &RunArgs,
    built: &surge::apps::BuiltApp,
    o: serde_json::Map<String, serde_json::Value>,
) -> Result<(), CliError> {
    print_report(args.app.json, built.app.name(), &built.input_name, o);
    Ok(())
}

/// Prints a run's summary with the app and input named: JSON, or one `key value` line each.
pub(super) fn print_report(
    as_json: bool,
    app: &str,
    input: &str,
    mut o: serde_json::Map<String, serde_json::Value>,
) {
    o.insert("app".into(), json!(app));
    o.insert("input".into(), json!(input));
    if as_json {
        print_json(&serde_json::Value::Object(o));
    } else {
        for (k, v) in o.iter() {
            println!("{k:14} {v}");
        }
    }
}
