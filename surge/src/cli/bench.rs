//! `surge bench APP`: time every variant against a reference in the same run.

use super::{CliError, print_json};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;
use surge::apps::App;
use surge::bench::report::{self, Medians};
use surge::bench::{self, BenchOptions, InputResult, Reference};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "References: cpu: spmv vs mkl (or rayon), reduce and scan vs rayon and \
the memory bandwidth.\ncuda: spmv vs cusparse (cusparseSpMV, CSR), reduce vs cublas (dasum, which \
reads the same bytes) and the device's copy bandwidth (fraction_of_bandwidth), scan vs the copy \
bandwidth."
)]
pub struct BenchArgs {
    /// The application: reduce, scan, spmv or gemm.
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
    /// gemm: sizes s of the shapes (comma-separated; default 1024,2048,4096).
    #[arg(long, value_name = "S,..", value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// gemm: shape kinds (comma-separated): square (s·s·s), rank-k (s·s·128), panel
    /// (s·128·128), tall-skinny (4s·32·256); default all.
    #[arg(long, value_name = "KIND,..", value_delimiter = ',')]
    pub shapes: Vec<String>,
    /// gemm: threads for every contender (default: every core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a bar chart (best, default, worst variant and the reference per input).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// spmv on cpu: a tuning store (`surge tune spmv --out FILE`); its model picks a variant per
    /// matrix, which is confirmed against MKL beside the best (`tuned_ratio`), with the cost of
    /// its selection and of its first call (layout inspector) in calls of the picked variant.
    #[arg(long, value_name = "FILE")]
    pub tuned: Option<PathBuf>,
}

pub(super) fn usage(m: String) -> CliError {
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

pub(super) fn progress_bar(hidden: bool) -> ProgressBar {
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

/// The reference of `surge bench APP --platform cuda`: the only one for its app.
fn cuda_reference(args: &BenchArgs, app: App) -> Result<Reference, CliError> {
    let expected = match app {
        App::Spmv => Reference::Cusparse,
        App::Reduce => Reference::Cublas,
        App::Scan => Reference::Copy,
        App::Kmeans => return Err(kmeans_bench()),
    };
    let reference = match &args.vs {
        Some(r) => r.parse()?,
        None => expected,
    };
    if reference != expected {
        return Err(usage(format!(
            "--vs {}: on cuda {app} compares with {}",
            report::reference_name(reference),
            report::reference_name(expected)
        )));
    }
    if app != App::Spmv && (args.inputs.is_some() || args.only.is_some()) {
        return Err(usage(format!(
            "--inputs and --only are for spmv; {app} takes --size"
        )));
    }
    Ok(reference)
}

/// reduce/scan: the number of values (`--size`, else 2^27 for reduce, 2^26 for scan).
fn sum_size(args: &BenchArgs, app: App) -> usize {
    args.size
        .unwrap_or(if app == App::Reduce { 1 << 27 } else { 1 << 26 })
}

/// `surge bench APP --platform cuda`.
fn run_cuda(args: &BenchArgs, app: App) -> Result<(), CliError> {
    let reference = cuda_reference(args, app)?;
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
        tuned: None,
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
            let n = sum_size(args, app);
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
            &format!(
                "surge bench {app} ({platform}) vs {}",
                report::reference_name(reference)
            ),
            &plain,
        )?;
    }
    let report = match (app, bandwidth) {
        (App::Spmv, _) => {
            let m = Medians {
                ratio: median(plain.iter().map(|r| r.ratio).collect()),
                variant_ratio: median(plain.iter().map(|r| r.median_variant_ratio).collect()),
            };
            report::cuda_spmv(&platform, reference, args.runs, &results, m)
        }
        (_, bw) => {
            report::cuda_reduce_or_scan(app, &platform, reference, args.runs, &results[0], bw)
        }
    };
    if args.json {
        print_json(&report);
        return Ok(());
    }
    print_cuda(&platform, args.runs, &results, &report);
    Ok(())
}

/// `surge bench APP --platform cuda-emu`: every CUDA variant run once in the emulator and
/// checked; host times are reported as emulated, with no reference and no bandwidth.
fn run_cuda_emu(args: &BenchArgs, app: App) -> Result<(), CliError> {
    if args.vs.is_some() {
        return Err(usage(
            "--vs: emulated runs are checked, not timed against a reference".into(),
        ));
    }
    use surge_cuda::Runtime as _;
    let emu = surge_cuda::Emulator::default();
    let inputs: Vec<(String, surge::Computation)> = if app == App::Spmv {
        selected_spmv_inputs(args)?
            .iter()
            .map(|(n, m)| Ok((n.clone(), bench::cuda::spmv_computation(m)?.1)))
            .collect::<Result<_, surge::SurgeError>>()?
    } else {
        let n = args.size.unwrap_or(1 << 16);
        vec![(format!("{n} values"), bench::sum_computation(app, n)?.1)]
    };
    let bar = progress_bar(args.json);
    let (b2, b3) = (bar.clone(), bar.clone());
    let opts = BenchOptions {
        runs: 1,
        warmup: 0,
        // Not used: emulated runs are checked against the interpreter, never timed against this.
        reference: Reference::Copy,
        progress: Some(Arc::new(move |_| b2.inc(1))),
        total: Some(Arc::new(move |n| b3.inc_length(n))),
        tuned: None,
    };
    let mut results = Vec::new();
    for (name, c) in &inputs {
        bar.set_message(name.clone());
        results.push(bench::cuda::check_emulated(&emu, name, c, &opts)?);
    }
    bar.finish_and_clear();
    let failed: usize = results.iter().map(|r| r.failed.len()).sum();
    let platform = format!("cuda-emu:{}", emu.info().name);
    if args.json {
        print_json(&serde_json::json!({
            "app": app.name(), "platform": platform,
            "times": "emulated: host milliseconds of the CUDA emulator, not a GPU's; not compared with any reference",
            "inputs": results, "all_match": failed == 0,
        }));
    } else {
        println!(
            "{platform}: every CUDA variant run once in the emulator and checked (times are emulated host time)"
        );
        for r in &results {
            println!(
                "{}: {} variants match the {}, {} failed",
                r.input,
                r.matched.len(),
                r.checked_against,
                r.failed.len()
            );
            for f in &r.failed {
                println!("    FAILED {}: {}", f.variant, f.error);
            }
        }
    }
    if failed > 0 {
        return Err(CliError {
            code: 1,
            message: format!("{failed} emulated CUDA variant(s) failed their check"),
        });
    }
    Ok(())
}

/// The text report of `surge bench APP --platform cuda`.
fn print_cuda(
    platform: &str,
    runs: usize,
    results: &[bench::cuda::CudaInputResult],
    report: &serde_json::Value,
) {
    println!("{platform}, {runs} timed runs per variant");
    for c in results {
        let r = &c.result;
        println!("{}", report::input_text(r));
        println!(
            "    {} variants timed, checked against the {}",
            r.variants.len(),
            c.checked_against
        );
        for f in &c.failed {
            println!("    FAILED {}: {}", f.variant, f.error);
        }
    }
    for line in report::summary_lines(report, &report::CUDA_SUMMARY) {
        println!("{line}");
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    surge::stats::median_in_place(&mut v)
}

pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    if args.app == "gemm" {
        return super::bench_gemm::run(args);
    }
    let app: App = args.app.parse()?;
    if app == App::Kmeans {
        return Err(kmeans_bench());
    }
    if args.runs < 10 {
        return Err(usage("--runs must be at least 10".into()));
    }
    match args.platform.as_str() {
        "cpu" => {}
        "cuda" => return run_cuda(args, app),
        "cuda-emu" => return run_cuda_emu(args, app),
        other => {
            return Err(usage(format!(
                "unknown platform `{other}`; surge bench runs on cpu, cuda or cuda-emu"
            )));
        }
    }
    let reference = cpu_reference(args, app)?;
    if args.tuned.is_some() && app != App::Spmv {
        return Err(usage(format!(
            "--tuned is for spmv on cpu; {app} has no tuned comparison"
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
        tuned: args.tuned.clone(),
    };
    let mut limit = None;
    let results: Vec<InputResult> = match app {
        App::Spmv => bench_cpu_spmv(args, &opts, &bar)?,
        _ => {
            let n = sum_size(args, app);
            bar.set_length(124);
            let (r, bw) = bench::bench_reduce_or_scan(app, n, &opts)?;
            limit = Some(bw);
            vec![r]
        }
    };
    bar.finish_and_clear();
    if let Some(path) = &args.svg {
        bench::write_svg(
            path,
            &format!(
                "surge bench {app} (cpu) vs {}",
                report::reference_name(reference)
            ),
            &results,
        )?;
    }
    let report = match app {
        App::Spmv => {
            let m = Medians {
                ratio: median(results.iter().map(|r| r.ratio).collect()),
                variant_ratio: median(results.iter().map(|r| r.median_variant_ratio).collect()),
            };
            report::cpu_spmv(reference, args.runs, &results, m)
        }
        _ => report::cpu_reduce_or_scan(
            app,
            args.runs,
            &results[0],
            &limit.expect("reduce and scan measure their limit"),
        ),
    };
    if args.json {
        print_json(&report);
    } else {
        for r in &results {
            println!("{}", report::input_text(r));
        }
        for line in report::summary_lines(&report, &report::CPU_SUMMARY) {
            println!("{line}");
        }
    }
    Ok(())
}

/// The reference of `surge bench APP` on cpu: mkl (spmv's default) or rayon.
fn cpu_reference(args: &BenchArgs, app: App) -> Result<Reference, CliError> {
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
            report::reference_name(reference)
        )));
    }
    Ok(reference)
}

/// spmv on cpu: the selected inputs one by one, the progress bar sized by the variant count.
fn bench_cpu_spmv(
    args: &BenchArgs,
    opts: &BenchOptions,
    bar: &ProgressBar,
) -> Result<Vec<InputResult>, CliError> {
    let inputs = selected_spmv_inputs(args)?;
    let mut out = Vec::new();
    for input in &inputs {
        bar.set_message(input.0.clone());
        // The variant count is the same for every input of one app.
        if bar.length() == Some(0) {
            bar.set_length((spmv_variant_count()? * inputs.len()) as u64);
        }
        out.extend(bench::bench_spmv(std::slice::from_ref(input), opts)?);
    }
    Ok(out)
}

/// The number of CPU variants of spmv on this machine.
fn spmv_variant_count() -> Result<usize, CliError> {
    let probe = surge::apps::matgen::laplacian_2d(2);
    let x = vec![1.0; probe.cols];
    let c = surge::Computation::new(&surge::apps::spmv_app(&probe, &x)?)?;
    Ok(c.variants(&surge::Target::cpu().platform()?)?
        .variants()
        .len())
}

/// k-means is benchmarked by its own program (Lloyd iterations against plain Rust).
fn kmeans_bench() -> CliError {
    CliError {
        code: 2,
        message: "k-means is benchmarked by `cargo run --release -p benchmarks --bin kmeans` \
                  (Lloyd against plain serial and rayon Rust, in million points per second)"
            .into(),
    }
}
