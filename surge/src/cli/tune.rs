//! `surge tune APP`: time every variant on training inputs, learn the input-adaptive model,
//! save it to the tuning store, and evaluate it on held-out test inputs.

use super::{CliError, print_json};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use surge::SurgeError;
use surge::apps::App;
use surge::tune::campaign::{Campaign, CampaignResult, Step};
use surge::tune::incremental::IncrementalStop;
use surge::tune::inputs::{Scale, Set};
use surge::tune::simulated::SimulatedBackend;
use surge::tune::{TrainingConfig, TuneInput, TuneOptions, TuningBackend};

#[derive(Debug, clap::Args)]
pub struct TuneArgs {
    /// The application: reduce, scan, spmv, kmeans, gemm (the generated GEMM family, per shape)
    /// or comd (CoMD's force: two algorithms, each with its variants, selected in one query;
    /// needs --potential).
    pub app: String,
    /// comd: the EAM potential file (funcfl, or setfl for *.alloy / *.setfl), e.g. CoMD's
    /// pots/Cu_u6.eam.
    #[arg(long, value_name = "FILE")]
    pub potential: Option<PathBuf>,
    /// comd: the potential's format, funcfl or setfl (default: by the file's name).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Where variants run and are timed: `cpu` (this machine's cores), `cuda` (GPU 0), or
    /// `sim` (simulated timings with a planted rule, no hardware: for testing the tuner).
    /// Default: `cuda` when a GPU is present, else `cpu`.
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Option<String>,
    /// Training inputs: a directory of .mtx files (spmv) or a file of sizes (reduce, scan).
    /// Default: the built-in generator.
    #[arg(long, value_name = "PATH")]
    pub inputs: Option<PathBuf>,
    /// Held-out test inputs, same forms as --inputs. Default: a generated set disjoint from
    /// the training set.
    #[arg(long, value_name = "PATH")]
    pub test: Option<PathBuf>,
    /// Generated input size: small (seconds) or full.
    #[arg(long, default_value = "full", value_parser = ["small", "full"])]
    pub scale: String,
    /// Label only some inputs, chosen by active learning (best vs second best).
    #[arg(long)]
    pub incremental: bool,
    /// Incremental: inputs to add after the seed set.
    #[arg(long, value_name = "N", requires = "incremental")]
    pub iterations: Option<usize>,
    /// Incremental: stop at this cross-validated accuracy (0..1].
    #[arg(long, value_name = "A", requires = "incremental")]
    pub accuracy: Option<f64>,
    /// Classifier: svm (RBF, cross-validated; Nitro's), knn (least measured slowdown over the
    /// k nearest training inputs, k cross-validated), tree, nearest (1-NN by label).
    #[arg(long, default_value = "svm")]
    pub model: String,
    /// Class pruning: the model's classes are a small set of variants such that every
    /// training input has one within this fraction of its best time (greedy set cover); each
    /// input is labelled with the fastest of them.
    #[arg(long, default_value_t = 0.03)]
    pub tolerance: f64,
    /// Class pruning: a variant becomes a class only if it is near-best on at least this many
    /// training inputs not yet covered (1: cover every input within --tolerance).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min_class_inputs: usize,
    /// Class pruning: keep at most this many classes, those the cover took first (near-best
    /// on the most inputs); 0: no cap. Bounds the SVM's query cost (quadratic in classes).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_classes: usize,
    /// Timed samples per variant and input (the median is kept).
    #[arg(long, default_value_t = 5)]
    pub repetitions: usize,
    /// Minimum duration of one sample, in milliseconds: short kernels are run back to back
    /// until a sample lasts this long (0: single runs).
    #[arg(long, value_name = "MS", default_value_t = 1.0)]
    pub min_sample_ms: f64,
    /// Second round: re-time the variants within this fraction of an input's best,
    /// interleaved, and keep those times (negative: no second round).
    #[arg(
        long,
        value_name = "FRACTION",
        default_value_t = 0.10,
        allow_negative_numbers = true
    )]
    pub retime_within: f64,
    /// Second round: interleaved samples per re-timed variant.
    #[arg(long, value_name = "N", default_value_t = 7)]
    pub retime_rounds: usize,
    /// Second round: at most this many contenders (the fastest first) are re-timed.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub retime_max: usize,
    /// First round: take each variant's samples back to back instead of in interleaved passes
    /// over all variants (the default, robust to bursts of load from other processes).
    #[arg(long)]
    pub back_to_back: bool,
    /// Test inputs: after the exhaustive rounds, time the exhaustive search's pick, the tuned
    /// pick and the default afresh, interleaved, this many samples each, and score with those
    /// times (0: score with the exhaustive rounds' times, where the best is the least of many
    /// noisy times and so biased low; both figures are reported).
    #[arg(long, value_name = "N", default_value_t = 9)]
    pub confirm_rounds: usize,
    /// Repeat an input's measurement when more than this fraction of the machine's CPU time
    /// was taken by others during it: stolen by other guests of the hypervisor (Linux
    /// `/proc/stat` steal; on a shared VM it comes in episodes that make 2-thread variants
    /// look several times slower) or used by other processes (a build, another benchmark);
    /// negative: never.
    #[arg(
        long,
        value_name = "FRACTION",
        default_value_t = 0.10,
        allow_negative_numbers = true
    )]
    pub max_steal: f64,
    /// Attempts per input under --max-steal (the last is kept, with its steal recorded).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub steal_attempts: usize,
    /// Untimed warm-up runs per variant and input.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Per-variant time limit of one run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Rows (spmv) or elements (reduce, scan) of the generated input the selection cost is
    /// measured on (0: skip).
    #[arg(long, default_value_t = 1_000_000)]
    pub selection_rows: usize,
    /// Where to write the tuning store (default: under $SURGE_DATA or the user data dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write report.json and SVG plots into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Simulated platform only: add a variant that always fails.
    #[arg(long, hide = true)]
    pub sim_failing_variant: bool,
    /// Continue an unfinished campaign: keep the training records its journal (beside the
    /// store, `<store>.journal`) holds and measure only the inputs it lacks. Without it, a
    /// journal left by an unfinished campaign is an error, never overwritten.
    #[arg(long)]
    pub resume: bool,
    /// Testing `--resume` under mpirun: rank 0 fails after this many records (as if the job
    /// died), leaving the journal.
    #[arg(long, value_name = "N", hide = true)]
    pub stop_after: Option<usize>,
    /// Under mpirun: measure even when the ranks' machines differ (CPU model, threads, GPU);
    /// the model is keyed by rank 0's.
    #[arg(long)]
    pub allow_mixed_machines: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One (input, variant) pair measured. An input measured again (see `--max-steal`) reports
/// its variants again, so the bar grows by an input's worth when it would overflow.
fn advance(bar: &ProgressBar, nv: u64, input: &str, variant: &str) {
    if bar.length().is_some_and(|l| bar.position() >= l) {
        bar.inc_length(nv);
    }
    bar.inc(1);
    bar.set_message(format!("{input} {variant}"));
}

pub(super) fn usage(m: impl Into<String>) -> CliError {
    CliError {
        code: 2,
        message: m.into(),
    }
}

/// Input and usage errors exit 2; a tuning run that fails exits 1.
pub(super) fn failure(e: SurgeError) -> CliError {
    match e {
        SurgeError::Usage(_) | SurgeError::Input { .. } | SurgeError::Mtx(_) => e.into(),
        other => CliError {
            code: 1,
            message: other.to_string(),
        },
    }
}

/// The backend of a platform: adding one is one arm here. Without `--platform`: the GPU when
/// one can be opened, else the CPU (said on stderr either way).
pub(super) fn backend(args: &TuneArgs, app: App) -> Result<Box<dyn TuningBackend>, CliError> {
    backend_with_cores(args, app, None)
}

/// [`backend`], the CPU's limited to `cores` where given (an MPI rank's share of its node).
pub(super) fn backend_with_cores(
    args: &TuneArgs,
    app: App,
    cores: Option<usize>,
) -> Result<Box<dyn TuningBackend>, CliError> {
    let cpu = || match cores {
        Some(n) => surge::tune::cpu::CpuBackend::with_cores(n),
        None => surge::tune::cpu::CpuBackend::new(),
    };
    let Some(platform) = args.platform.as_deref() else {
        return Ok(match surge::tune::cuda::CudaBackend::open(0) {
            Ok(b) => {
                eprintln!("tuning on the GPU (`--platform cpu` for the CPU)");
                Box::new(b)
            }
            Err(e) => {
                eprintln!("tuning on the CPU (no GPU: {e})");
                Box::new(cpu())
            }
        });
    };
    match platform {
        "sim" => {
            let b = if app == App::Spmv {
                SimulatedBackend::sparse(app.name())
            } else {
                SimulatedBackend::sized(app.name())
            };
            Ok(Box::new(if args.sim_failing_variant {
                b.with_failing_variant()
            } else {
                b
            }))
        }
        "cpu" => Ok(Box::new(cpu())),
        // No GPU (or no driver, no NVRTC) is a usage error that says why, as for `bench`.
        "cuda" => Ok(Box::new(
            surge::tune::cuda::CudaBackend::open(0)
                .map_err(|e| usage(format!("no CUDA device: {e}")))?,
        )),
        p => Err(usage(format!(
            "unknown platform `{p}`; choose sim, cpu or cuda"
        ))),
    }
}

pub(super) fn load_inputs(
    app: App,
    path: Option<&PathBuf>,
    scale: Scale,
    set: Set,
) -> Result<Vec<TuneInput>, CliError> {
    match path {
        Some(p) => {
            let (inputs, skipped) = app.inputs_from_path(p).map_err(failure)?;
            for s in skipped {
                eprintln!("note: {s}");
            }
            Ok(inputs)
        }
        None => app.generated_inputs(scale, set).map_err(failure),
    }
}

/// The numeric arguments' ranges; usage errors name the offending flag.
fn check(args: &TuneArgs) -> Result<(), CliError> {
    if args.incremental && args.resume {
        return Err(usage(
            "--resume continues an exhaustive campaign from its journal; incremental tuning \
             keeps none",
        ));
    }
    if args.incremental && args.iterations.is_none() && args.accuracy.is_none() {
        return Err(usage("--incremental needs --iterations N or --accuracy A"));
    }
    if let Some(a) = args.accuracy
        && !(a > 0.0 && a <= 1.0)
    {
        return Err(usage(format!("--accuracy {a} is not in (0, 1]")));
    }
    if !(0.0..=1.0).contains(&args.tolerance) {
        return Err(usage(format!(
            "--tolerance {} is not in [0, 1]",
            args.tolerance
        )));
    }
    if !(args.min_sample_ms >= 0.0 && args.min_sample_ms <= 10_000.0) {
        return Err(usage(format!(
            "--min-sample-ms {} is not in [0, 10000]",
            args.min_sample_ms
        )));
    }
    if !args.retime_within.is_finite() {
        return Err(usage("--retime-within must be a number"));
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(usage(format!(
            "--timeout {} is not a positive number of seconds",
            args.timeout
        )));
    }
    Ok(())
}

/// The tuning options the arguments ask for.
pub(super) fn options(args: &TuneArgs) -> Result<TuneOptions, CliError> {
    let kind = args.model.parse().map_err(failure)?;
    check(args)?;
    Ok(TuneOptions {
        model: kind,
        training: TrainingConfig {
            warmup: args.warmup,
            repetitions: args.repetitions.max(1),
            timeout: Duration::from_secs_f64(args.timeout),
            min_sample_time: Duration::from_secs_f64(args.min_sample_ms / 1e3),
            retime_within: args.retime_within,
            retime_rounds: args.retime_rounds,
            retime_max: args.retime_max,
            interleaved: !args.back_to_back,
            confirm_rounds: args.confirm_rounds,
            max_steal: args.max_steal,
            steal_attempts: args.steal_attempts,
        },
        incremental: args.incremental.then_some(IncrementalStop {
            iterations: args.iterations,
            accuracy: args.accuracy,
        }),
        label_tolerance: args.tolerance,
        min_class_inputs: args.min_class_inputs.max(1),
        max_classes: args.max_classes,
        resume: args.resume,
        ..TuneOptions::default()
    })
}

/// The progress bar of `runs` measurements (hidden for --json or off a terminal).
fn progress_bar(json: bool, runs: u64) -> ProgressBar {
    let bar = if json || !std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
    } else {
        ProgressBar::new(runs)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>8} [{bar:40}] {pos}/{len} runs, {eta} left  {wide_msg}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar.set_length(runs);
    bar.set_prefix("training");
    bar
}

pub fn run(args: &TuneArgs) -> Result<(), CliError> {
    if args.app == "comd" {
        return super::tune_comd::run(args);
    }
    if args.app == "gemm" {
        return super::tune_gemm::run(args);
    }
    if args.potential.is_some() || args.format.is_some() {
        return Err(usage(format!(
            "--potential and --format are comd's; `surge tune {}` does not take them",
            args.app
        )));
    }
    let app: App = args.app.parse()?;
    let opts = options(args)?;
    let backend = backend(args, app)?;
    let backend: &dyn TuningBackend = backend.as_ref();
    let scale = scale(args);
    let started = Instant::now();
    let train = load_inputs(app, args.inputs.as_ref(), scale, Set::Training)?;
    let test = load_inputs(app, args.test.as_ref(), scale, Set::Test)?;
    let t = surge::tune::trace::stage("campaign", "loading the inputs", started);
    let variants = backend.variants(&train[0]).map_err(failure)?;
    let t = surge::tune::trace::stage("campaign", "the variants (compiling the kernels)", t);
    let nv = variants.len() as u64;
    let selection = match args.selection_rows {
        0 => None,
        rows => Some(app.selection_input(rows).map_err(failure)?),
    };
    surge::tune::trace::stage("campaign", "making the selection input", t);
    let workload = app.workload();
    let sets = (&train[..], &test[..], selection.as_ref());
    let campaign = campaign(args, &opts, &workload, backend, sets, started);
    let done = run_campaign(&campaign, &mut surge::tune::Local, args.json, nv).map_err(failure)?;
    let hint = format!("surge run {app} --tuned [--input ...]");
    print_done(
        args,
        &campaign,
        &done,
        (done.store.key.platform == "cpu").then_some(&hint),
    );
    Ok(())
}

/// The generated inputs' scale `--scale` names.
pub(super) fn scale(args: &TuneArgs) -> Scale {
    if args.scale == "small" {
        Scale::Small
    } else {
        Scale::Full
    }
}

/// The campaign of `workload` on `backend` over the training and test inputs and the selection
/// input of `sets`, with the options of `args` (store and report paths) and `opts`.
pub(super) fn campaign<'a>(
    args: &'a TuneArgs,
    opts: &'a TuneOptions,
    workload: &'a surge::tune::Workload,
    backend: &'a dyn TuningBackend,
    sets: (&'a [TuneInput], &'a [TuneInput], Option<&'a TuneInput>),
    started: Instant,
) -> Campaign<'a> {
    let (train, test, selection) = sets;
    Campaign {
        workload,
        backend,
        train,
        test,
        options: opts,
        out: args.out.as_deref(),
        report: args.report.as_deref(),
        selection,
        started,
    }
}

/// The finished campaign's summary: JSON for `--json`, else the training and the evaluation
/// and how to use the store (`use`).
pub(super) fn print_done(
    args: &TuneArgs,
    campaign: &Campaign<'_>,
    done: &CampaignResult,
    use_it: Option<&String>,
) {
    if args.json {
        print_json(&done.summary);
        return;
    }
    print_training(campaign, done);
    print_evaluation(campaign, done);
    if let Some(u) = use_it {
        println!("  use it: {u}");
    }
}

/// Runs `campaign` (its training inputs measured by `labeller`, `nv` variants each) under a
/// progress bar, hidden for `json` or off a terminal.
pub(super) fn run_campaign(
    campaign: &Campaign<'_>,
    labeller: &mut dyn surge::tune::Labeller,
    json: bool,
    nv: u64,
) -> surge::Result<CampaignResult> {
    let (train, test) = (campaign.train.len() as u64, campaign.test.len() as u64);
    let bar = progress_bar(json, (train + test) * nv);
    campaign.run_with(labeller, &mut |step| match step {
        Step::Measured { input, variant } => advance(&bar, nv, input, variant),
        Step::Testing => {
            bar.set_prefix("testing");
            bar.set_length(bar.position() + test * nv);
        }
        Step::Finished => bar.finish_and_clear(),
    })
}

/// The text report's training half: inputs, features, labelling, model.
pub(super) fn print_training(c: &Campaign<'_>, done: &CampaignResult) {
    let store = &done.store;
    println!(
        "tuned {} on {} ({} variants)",
        c.workload.name(),
        c.backend.platform(),
        store.variants.len()
    );
    println!(
        "  training: {} inputs, {} labelled, {} failed runs, {:.1} s",
        c.train.len(),
        store.inputs.len(),
        done.failures,
        done.train_seconds
    );
    println!(
        "  features: {} per input, {:.1} ms in all",
        store.model.feature_names.len(),
        store.inputs.iter().map(|r| r.feature_seconds).sum::<f64>() * 1e3
    );
    if let Some(c) = &store.labelling {
        println!(
            "  labelling: set cover at {:.1}% tolerance, {} classes ({} inputs left uncovered), bound {:.1}% (worst input {:.1}%)",
            c.tolerance * 100.0,
            c.variants.len(),
            c.uncovered,
            c.bound * 100.0,
            c.worst * 100.0
        );
    }
    println!(
        "  model: {:?}, {} classes, cross-validated accuracy {}, performance {}",
        store.model.kind,
        store.model.classes.len(),
        store
            .model
            .cv_accuracy
            .map_or("n/a".into(), |a| format!("{:.1}%", a * 100.0)),
        store
            .model
            .cv_performance
            .map_or("n/a".into(), |a| format!("{:.1}%", a * 100.0))
    );
    for c in &store.model.classes {
        println!("    class {c}");
    }
}

/// The text report's testing half: scores, steal, selection cost, where the files went.
pub(super) fn print_evaluation(c: &Campaign<'_>, done: &CampaignResult) {
    let (eval, summary) = (&done.eval, &done.summary);
    println!(
        "  test: {} inputs, tuned/exhaustive {:.1}% ({:.1}% before the confirmation round), default/exhaustive {:.1}%, exact picks {:.1}%",
        c.test.len(),
        eval.tuned_vs_exhaustive * 100.0,
        eval.tuned_vs_exhaustive_unconfirmed * 100.0,
        eval.default_vs_exhaustive * 100.0,
        eval.exact_accuracy * 100.0
    );
    for (set, d) in [
        ("training", &summary["disturbance"]["training"]),
        ("test", &summary["disturbance"]["test"]),
    ] {
        if let Some(m) = d["max_steal_kept"].as_f64() {
            println!(
                "  steal ({set}): {} inputs re-measured, largest steal kept {:.1}%",
                d["inputs_remeasured"],
                m * 100.0
            );
        }
    }
    if let Some(s) = &done.selection {
        println!(
            "  selection on {} rows: feature pass {:.1} µs, model query {:.2} µs, select beyond the features {:.2} µs (median; least {:.2} µs)",
            s["rows"],
            s["feature_pass_us"].as_f64().unwrap_or(0.0),
            s["model_query_us"].as_f64().unwrap_or(0.0),
            s["select_beyond_features_us"].as_f64().unwrap_or(0.0),
            s["select_beyond_features_min_us"].as_f64().unwrap_or(0.0)
        );
    }
    println!("  store: {}", done.out.display());
    if let Some(r) = summary.get("report") {
        println!("  report: {r}");
    }
}
