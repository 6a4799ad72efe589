//! `surge bench APP`: time every variant against a reference in the same run.

use super::{CliError, print_json};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use surge::apps::App;
use surge::bench::{self, BenchOptions, InputResult, Reference};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "References: cpu: spmv vs mkl (or rayon), reduce and scan vs rayon and \
the memory bandwidth.\ncuda: spmv vs cusparse (cusparseSpMV, CSR), reduce vs cublas (dasum, which \
reads the same bytes) and the device's copy bandwidth (fraction_of_bandwidth), scan vs the copy \
bandwidth."
)]
pub struct BenchArgs {
    /// The application: reduce, scan or spmv.
    pub app: String,
    /// Where the variants run: cpu, or cuda (GPU 0; needs an NVIDIA driver and NVRTC).
    #[arg(long, default_value = "cpu")]
    pub platform: String,
    /// spmv: a directory of Matrix Market files (default: built-in matrices of ≥ 20M nonzeros,
    /// which live in DRAM, the memory-bound case that matters).
    #[arg(long, value_name = "DIR")]
    pub inputs: Option<PathBuf>,
    /// reduce/scan: number of values (default 2^27 for reduce, 2^26 for scan).
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,
    /// The reference. cpu: mkl (spmv's default) or rayon (reduce's and scan's); cuda: cusparse
    /// (spmv), cublas (reduce) or copy (scan), each the only one for its app.
    #[arg(long, value_name = "REF")]
    pub vs: Option<String>,
    /// Only inputs whose name contains this text (e.g. `--only laplacian`).
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
    /// Timed runs per variant (the median is reported; at least 10).
    #[arg(long, default_value_t = 10)]
    pub runs: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a bar chart (best, default, worst variant and the reference per input).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

fn usage(m: String) -> CliError {
    CliError {
        code: 2,
        message: m,
    }
}

fn spmv_inputs(dir: &Option<PathBuf>) -> Result<Vec<(String, surge::mtx::CsrMatrix)>, CliError> {
    let Some(dir) = dir else {
        return Ok(bench::dram_matrices());
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| usage(format!("cannot read {}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        match surge::mtx::read_mtx(&f) {
            Ok(m) => out.push((
                f.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                m,
            )),
            Err(e) => eprintln!("warning: skipping {}: {e}", f.display()),
        }
    }
    if out.is_empty() {
        return Err(usage(format!(
            "no readable .mtx files in {}",
            dir.display()
        )));
    }
    Ok(out)
}

fn selected_spmv_inputs(
    args: &BenchArgs,
) -> Result<Vec<(String, surge::mtx::CsrMatrix)>, CliError> {
    let mut inputs = spmv_inputs(&args.inputs)?;
    if let Some(only) = &args.only {
        inputs.retain(|(n, _)| n.contains(only.as_str()));
        if inputs.is_empty() {
            return Err(usage(format!("no input's name contains `{only}`")));
        }
    }
    Ok(inputs)
}

fn progress_bar(hidden: bool) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} variants, ETA {eta} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    if hidden {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

/// `surge bench APP --platform cuda`.
fn run_cuda(args: &BenchArgs, app: App) -> Result<(), CliError> {
    let expected = match app {
        App::Spmv => Reference::Cusparse,
        App::Reduce => Reference::Cublas,
        App::Scan => Reference::Copy,
    };
    let name = |r: Reference| json!(r).as_str().unwrap_or("").to_string();
    let reference = match &args.vs {
        Some(r) => r.parse()?,
        None => expected,
    };
    if reference != expected {
        return Err(usage(format!(
            "--vs {}: on cuda {app} compares with {}",
            name(reference),
            name(expected)
        )));
    }
    if app != App::Spmv && (args.inputs.is_some() || args.only.is_some()) {
        return Err(usage(format!(
            "--inputs and --only are for spmv; {app} takes --size"
        )));
    }
    let dev = bench::cuda::open_device().map_err(|e| usage(format!("no CUDA device: {e}")))?;
    let inputs = if app == App::Spmv {
        selected_spmv_inputs(args)?
    } else {
        Vec::new()
    };
    let bar = progress_bar(args.json);
    let (b2, b3) = (bar.clone(), bar.clone());
    let opts = BenchOptions {
        runs: args.runs,
        warmup: 2,
        reference,
        progress: Some(Arc::new(move |_| b2.inc(1))),
        total: Some(Arc::new(move |n| b3.inc_length(n))),
    };
    let platform = format!("cuda:{}", dev.info.name);
    let (results, bandwidth) = match app {
        App::Spmv => {
            let mut out = Vec::new();
            for input in &inputs {
                bar.set_message(input.0.clone());
                out.extend(bench::cuda::bench_spmv(
                    &dev,
                    std::slice::from_ref(input),
                    &opts,
                )?);
            }
            (out, None)
        }
        _ => {
            let n = args
                .size
                .unwrap_or(if app == App::Reduce { 1 << 27 } else { 1 << 26 });
            bar.set_message(format!("{n} values"));
            let (r, bw) = bench::cuda::bench_reduce_or_scan(&dev, app, n, &opts)?;
            (vec![r], Some(bw))
        }
    };
    bar.finish_and_clear();
    let plain: Vec<InputResult> = results.iter().map(|r| r.result.clone()).collect();
    if let Some(path) = &args.svg {
        bench::write_svg(
            path,
            &format!("surge bench {app} ({platform}) vs {}", name(reference)),
            &plain,
        )?;
    }
    let report = match (app, bandwidth) {
        (App::Spmv, _) => {
            let inputs: Vec<_> = results
                .iter()
                .map(|c| {
                    let mut j = spmv_input_json(&c.result);
                    j["cusparse_gflops"] = json!(c.result.reference_rate);
                    j["timed_variants"] = json!(c.result.variants.len());
                    j["checked_against"] = json!(c.checked_against);
                    j["failed"] = json!(c.failed);
                    j
                })
                .collect();
            json!({
                "app": "spmv", "platform": platform, "reference": reference, "runs": args.runs,
                "inputs": inputs,
                "median_ratio": median(plain.iter().map(|r| r.ratio).collect()),
                "median_variant_ratio": median(plain.iter().map(|r| r.median_variant_ratio).collect()),
            })
        }
        (_, bw) => {
            let c = &results[0];
            let r = &c.result;
            let copy = bw.map_or(f64::NAN, |b| b.copy_gbps);
            let mut o = json!({
                "app": app.name(), "platform": platform, "reference": reference,
                "n": r.rows, "runs": args.runs,
                "best_variant": r.best_variant, "best_gbps": r.best_rate,
                "default_variant": r.default_variant, "default_gbps": r.default_rate,
                "worst_variant": r.worst_variant, "worst_gbps": r.worst_rate,
                "median_variant_gbps": r.median_variant_rate,
                "timed_variants": r.variants.len(),
                "bandwidth_gbps": copy,
                "fraction_of_bandwidth": r.best_rate / copy,
                "checked_against": c.checked_against, "failed": c.failed,
            });
            if app == App::Reduce {
                o["cublas_gbps"] = json!(r.reference_rate);
                o["ratio_vs_cublas"] = json!(r.ratio);
                o["median_variant_ratio"] = json!(r.median_variant_ratio);
            }
            o
        }
    };
    if args.json {
        print_json(&report);
        return Ok(());
    }
    println!("{platform}, {} timed runs per variant", args.runs);
    for c in &results {
        let r = &c.result;
        print_input(r);
        println!(
            "    {} variants timed, checked against the {}",
            r.variants.len(),
            c.checked_against
        );
        for f in &c.failed {
            println!("    FAILED {}: {}", f.variant, f.error);
        }
    }
    for k in [
        "median_ratio",
        "median_variant_ratio",
        "bandwidth_gbps",
        "fraction_of_bandwidth",
        "cublas_gbps",
        "ratio_vs_cublas",
    ] {
        if let Some(v) = report.get(k) {
            println!("{k}: {v}");
        }
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    surge::stats::median_in_place(&mut v)
}

pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    let app: App = args.app.parse()?;
    if args.runs < 10 {
        return Err(usage("--runs must be at least 10".into()));
    }
    match args.platform.as_str() {
        "cpu" => {}
        "cuda" => return run_cuda(args, app),
        other => {
            return Err(usage(format!(
                "unknown platform `{other}`; surge bench runs on cpu or cuda"
            )));
        }
    }
    let reference: Reference = match (&args.vs, app) {
        (Some(r), _) => r.parse()?,
        (None, App::Spmv) => Reference::Mkl,
        (None, _) => Reference::Rayon,
    };
    if reference == Reference::Mkl && app != App::Spmv {
        return Err(usage(format!(
            "--vs mkl is for spmv; {app} compares with rayon"
        )));
    }
    if !matches!(reference, Reference::Mkl | Reference::Rayon) {
        return Err(usage(format!(
            "--vs {} is a cuda reference; add --platform cuda",
            json!(reference).as_str().unwrap_or("")
        )));
    }
    let bar = progress_bar(args.json);
    let b2 = bar.clone();
    let opts = BenchOptions {
        runs: args.runs,
        warmup: 2,
        reference,
        progress: Some(Arc::new(move |_| b2.inc(1))),
        total: None,
    };
    let results: Vec<InputResult> = match app {
        App::Spmv => {
            let inputs = selected_spmv_inputs(args)?;
            let mut out = Vec::new();
            for input in &inputs {
                bar.set_message(input.0.clone());
                // The variant count is the same for every input of one app.
                if bar.length() == Some(0) {
                    let probe = surge::apps::matgen::laplacian_2d(2);
                    let x = vec![1.0; probe.cols];
                    let c = surge::Computation::new(&surge::apps::spmv_app(&probe, &x)?)?;
                    let n = surge_cpu::native::variants(
                        c.ir(),
                        &surge_codegen::target::CpuMachine::detect(),
                    )
                    .map_err(surge::SurgeError::from)?
                    .len();
                    bar.set_length((n * inputs.len()) as u64);
                }
                out.extend(bench::bench_spmv(std::slice::from_ref(input), &opts)?);
            }
            out
        }
        _ => {
            let n = args
                .size
                .unwrap_or(if app == App::Reduce { 1 << 27 } else { 1 << 26 });
            bar.set_length(124);
            vec![bench::bench_reduce_or_scan(app, n, &opts)?]
        }
    };
    bar.finish_and_clear();
    if let Some(path) = &args.svg {
        bench::write_svg(
            path,
            &format!(
                "surge bench {app} (cpu) vs {}",
                json!(reference).as_str().unwrap_or("")
            ),
            &results,
        )?;
    }
    let report = match app {
        App::Spmv => {
            let inputs: Vec<_> = results.iter().map(spmv_input_json).collect();
            json!({
                "app": "spmv", "platform": "cpu", "reference": reference, "runs": args.runs,
                "inputs": inputs,
                "median_ratio": median(results.iter().map(|r| r.ratio).collect()),
                "median_variant_ratio": median(results.iter().map(|r| r.median_variant_ratio).collect()),
            })
        }
        _ => {
            let r = &results[0];
            let bw = bench::bandwidth();
            let mut o = json!({
                "app": app.name(), "platform": "cpu", "n": r.rows, "runs": args.runs,
                "best_variant": r.best_variant, "best_gbps": r.best_rate,
                "default_variant": r.default_variant, "default_gbps": r.default_rate,
                "worst_variant": r.worst_variant, "worst_gbps": r.worst_rate,
                "median_variant_gbps": r.median_variant_rate,
                "rayon_gbps": r.reference_rate, "ratio_vs_rayon": r.ratio,
                "bandwidth_gbps": bw.read_gbps, "triad_gbps": bw.triad_gbps,
            });
            if app == App::Reduce {
                o["fraction_of_bandwidth"] = json!(r.best_rate / bw.read_gbps);
            } else {
                o["fraction_of_triad"] = json!(r.best_rate / bw.triad_gbps);
            }
            o
        }
    };
    if args.json {
        print_json(&report);
    } else {
        for r in &results {
            print_input(r);
        }
        for k in [
            "median_ratio",
            "median_variant_ratio",
            "bandwidth_gbps",
            "fraction_of_bandwidth",
            "triad_gbps",
            "fraction_of_triad",
        ] {
            if let Some(v) = report.get(k) {
                println!("{k}: {v}");
            }
        }
    }
    Ok(())
}

/// One input's line of the text report: best, default and worst variant against the reference.
fn print_input(r: &InputResult) {
    println!(
        "{:<34} best {:>8.3} {} ({:.2}x {})  default {:>8.3}  worst {:>8.3}  median variant {:.2}x",
        r.name,
        r.best_rate,
        r.unit,
        r.ratio,
        r.reference,
        r.default_rate,
        r.worst_rate,
        r.median_variant_ratio
    );
    println!("    best: {}", r.best_variant);
}

/// One spmv input of the JSON report: best, default, worst and median variant against the
/// reference, in GFLOP/s.
fn spmv_input_json(r: &InputResult) -> serde_json::Value {
    json!({
        "name": r.name, "rows": r.rows, "nnz": r.nnz,
        "best_variant": r.best_variant, "best_gflops": r.best_rate,
        "default_variant": r.default_variant, "default_gflops": r.default_rate,
        "worst_variant": r.worst_variant, "worst_gflops": r.worst_rate,
        "median_variant_gflops": r.median_variant_rate,
        "reference": r.reference, "reference_gflops": r.reference_rate,
        "ratio": r.ratio, "median_variant_ratio": r.median_variant_ratio,
    })
}
