//! `surge bench gemm`: Surge's generated DGEMM against the vendor BLAS libraries and the GEMM
//! crates, per shape, with the machine's peak measured in the same rounds.

use super::bench::{BenchArgs, progress_bar, usage};
use super::{CliError, print_json};
use std::sync::Arc;
use surge::bench::gemm::{GemmBenchOptions, GemmReport, KINDS, bench_gemm, shapes};

pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    let sizes = if args.sizes.is_empty() {
        vec![1024, 2048, 4096]
    } else {
        args.sizes.clone()
    };
    let kinds: Vec<String> = if args.shapes.is_empty() {
        KINDS.iter().map(|k| k.0.to_string()).collect()
    } else {
        args.shapes.clone()
    };
    let shapes = shapes(&kinds, &sizes)?;
    match args.platform.as_str() {
        "cpu" => {}
        "cuda" => return run_cuda(args, shapes),
        other => {
            return Err(usage(format!(
                "surge bench gemm runs on cpu or cuda, not `{other}`"
            )));
        }
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err(usage("--threads must be at least 1".into()));
    }
    let vs: Vec<String> = match &args.vs {
        Some(v) => v.split(',').map(|s| s.trim().to_string()).collect(),
        None => vec!["all".into()],
    };
    let bar = progress_bar(args.json);
    bar.set_length(shapes.len() as u64);
    let b2 = bar.clone();
    let opts = GemmBenchOptions {
        shapes,
        vs,
        runs: args.runs,
        threads,
        progress: Some(Arc::new(move |s| {
            b2.set_message(s.to_string());
            b2.inc(1)
        })),
    };
    let report = bench_gemm(&opts)?;
    bar.finish_and_clear();
    if let Some(path) = &args.svg {
        surge::bench::gemm::write_svg(path, &report)?;
    }
    if args.json {
        print_json(&serde_json::to_value(&report).expect("a serializable report"));
    } else {
        print_text(&report);
    }
    Ok(())
}

/// `surge bench gemm --platform cuda`: a sample of the seed paper's DGEMM kernels for GPU 0
/// against cuBLAS `dgemm` (without a GPU: exit 2, `no CUDA device: ...`).
fn run_cuda(args: &BenchArgs, shapes: Vec<surge::bench::gemm::Shape>) -> Result<(), CliError> {
    use surge::bench::gemm_cuda::{GemmCudaOptions, SAMPLE, bench_gemm_cuda};
    if let Some(v) = args.vs.as_deref().filter(|v| *v != "cublas") {
        return Err(usage(format!(
            "--vs {v}: on cuda gemm compares with cublas (dgemm), the only reference"
        )));
    }
    let dev =
        surge::bench::cuda::open_device().map_err(|e| usage(format!("no CUDA device: {e}")))?;
    let bar = progress_bar(args.json);
    bar.set_length(shapes.len() as u64);
    let b2 = bar.clone();
    let opts = GemmCudaOptions {
        shapes,
        runs: args.runs,
        sample: SAMPLE,
        progress: Some(Arc::new(move |s| {
            b2.set_message(s.to_string());
            b2.inc(1)
        })),
    };
    let report = bench_gemm_cuda(&dev, &opts)?;
    bar.finish_and_clear();
    if args.json {
        print_json(&serde_json::to_value(&report).expect("a serializable report"));
        return Ok(());
    }
    println!(
        "{}: {} of the {} kernels the seed paper's nine checks keep, checked against cuBLAS \
         dgemm and timed ({} runs, CUDA events)",
        report.platform, report.sampled, report.survivors, report.runs
    );
    for s in &report.shapes {
        let t = &s.tuning;
        let best = t.best.as_ref().map_or("none ran".to_string(), |b| {
            format!("{} {:.1} GFLOP/s", b.kernel, b.gflops)
        });
        println!(
            "  {:<28} best {best}  cuBLAS {:.1} GFLOP/s  ratio {}  ({} failed, compiled in {:.1} s)",
            s.shape.label(),
            t.cublas_gflops,
            t.ratio_vs_cublas.map_or("-".into(), |r| format!("{r:.2}")),
            t.failed.len(),
            t.build_seconds
        );
    }
    Ok(())
}

fn print_text(r: &GemmReport) {
    println!(
        "{} variants of the GEMM space ({} kernels) on {} ({} f64 lanes, {} threads); {} rounds",
        r.variants,
        r.kernels,
        r.machine.name,
        r.machine.simd_bits / 64,
        r.threads,
        r.runs
    );
    for a in &r.absent {
        println!("not found: {a}");
    }
    for s in &r.shapes {
        println!(
            "\n{}  (peak {:.1} GFLOP/s measured in the same rounds; searched {} variants on {}x{}x{})",
            s.shape.label(),
            s.peak_gflops,
            s.search.timed,
            s.search.proxy.0,
            s.search.proxy.1,
            s.search.proxy.2
        );
        for c in &s.contenders {
            println!(
                "  {:<15} {:7.1} GFLOP/s  {:5.1}% of peak  diff {:.1e}  {}",
                c.name,
                c.gflops,
                100.0 * c.fraction_of_peak,
                c.max_rel_difference,
                c.detail.as_deref().unwrap_or("")
            );
        }
        if let (Some(v), Some(x)) = (&s.best_vendor, s.surge_vs_best_vendor) {
            println!("  surge / fastest vendor ({v}): {x:.2}");
        }
        if let Some(x) = s.surge_vs_best_library {
            println!("  surge / fastest library: {x:.2}");
        }
    }
}
