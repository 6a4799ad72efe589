//! `surge bench APP`: time every variant against a reference in the same run.

use super::{CliError, print_json};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use surge::apps::App;
use surge::bench::{self, BenchOptions, InputResult, Reference};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The application: reduce, scan or spmv.
    pub app: String,
    /// Where the variants run: cpu (the CUDA benchmarks come with the CUDA backend).
    #[arg(long, default_value = "cpu")]
    pub platform: String,
    /// spmv: a directory of Matrix Market files (default: built-in matrices of ≥ 20M nonzeros,
    /// which live in DRAM, the memory-bound case that matters).
    #[arg(long, value_name = "DIR")]
    pub inputs: Option<PathBuf>,
    /// reduce/scan: number of values (default 2^27 for reduce, 2^26 for scan).
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,
    /// The reference: mkl (spmv's default) or rayon (reduce's and scan's).
    #[arg(long, value_name = "REF")]
    pub vs: Option<String>,
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    let app: App = args.app.parse()?;
    if args.platform != "cpu" {
        return Err(usage(format!(
            "platform `{}`: surge bench runs on cpu here",
            args.platform
        )));
    }
    if args.runs < 10 {
        return Err(usage("--runs must be at least 10".into()));
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
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} variants, ETA {eta} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    if args.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let b2 = bar.clone();
    let opts = BenchOptions {
        runs: args.runs,
        warmup: 2,
        reference,
        progress: Some(Arc::new(move |_| b2.inc(1))),
    };
    let results: Vec<InputResult> = match app {
        App::Spmv => {
            let inputs = spmv_inputs(&args.inputs)?;
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
            let inputs: Vec<_> = results
                .iter()
                .map(|r| {
                    json!({
                        "name": r.name, "rows": r.rows, "nnz": r.nnz,
                        "best_variant": r.best_variant, "best_gflops": r.best_rate,
                        "default_variant": r.default_variant, "default_gflops": r.default_rate,
                        "worst_variant": r.worst_variant, "worst_gflops": r.worst_rate,
                        "median_variant_gflops": r.median_variant_rate,
                        "reference": r.reference, "reference_gflops": r.reference_rate,
                        "ratio": r.ratio, "median_variant_ratio": r.median_variant_ratio,
                    })
                })
                .collect();
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
