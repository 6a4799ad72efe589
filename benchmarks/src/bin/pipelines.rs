//! Issue 19's pipelines against plain Rust written the obvious way, serial and rayon, in the
//! same run: histogram by `reduce_by_key` over sorted keys, k-means assignment, tuple argmin,
//! L2 norm with `sqrt`, segmented scan and transpose-based mat-mat. Every Surge variant is
//! compiled once and timed; the report gives the best and the default variant, the references,
//! and the fraction of the machine's bandwidth the best one reaches: the read bandwidth for a
//! pipeline that only reads, the copy bandwidth for one that also writes (a scan), both from a
//! 1 GiB probe sampled after every pipeline's variants and references (the limit is the best of
//! its samples), so load during the run lowers the limit as it lowers the kernels.
//!
//! `cargo run --release -p benchmarks --bin pipelines -- [--runs N] [--only NAME] [--json]`

use benchmarks::pipelines::{Case, cases};
use serde_json::json;
use surge::bench::measure;
use surge::{Kernels, Target, Workspace};
use surge_cpu::baseline::bandwidth::Probe;

const USAGE: &str = "usage: pipelines [--runs N] [--only NAME] [--json]\n\
  Times issue 19's pipelines (histogram_by_key, k_means_assignment, argmin, l2_norm,\n\
  segmented_scan, mat_mat_transpose): every Surge variant, serial and rayon, against the\n\
  machine's read and copy bandwidth. --runs: timed runs per variant (default 7).";

fn usage_error(why: &str) -> ! {
    eprintln!("error: {why}\n{USAGE}");
    std::process::exit(2)
}

struct Args {
    runs: usize,
    only: Option<String>,
    json: bool,
}

fn args() -> Args {
    let mut a = Args {
        runs: 7,
        only: None,
        json: false,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < v.len() {
        match v[i].as_str() {
            "--runs" => {
                i += 1;
                a.runs = match v.get(i).and_then(|r| r.parse().ok()) {
                    Some(r) if r > 0 => r,
                    _ => usage_error("--runs needs a positive number"),
                };
            }
            "--only" => {
                i += 1;
                a.only = Some(
                    v.get(i)
                        .cloned()
                        .unwrap_or_else(|| usage_error("--only needs a name")),
                );
            }
            "--json" => a.json = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => usage_error(&format!("unknown argument {other}")),
        }
        i += 1;
    }
    a
}

fn run_case(case: &Case, runs: usize, probe: &mut Probe) -> serde_json::Value {
    let c = (case.build)();
    let k = Kernels::build(&c, &Target::cpu()).expect("compiled");
    let mut ws = Workspace::default();
    let mut best = (f64::INFINITY, String::new());
    let mut timed = Vec::new();
    for v in k.variants() {
        let t = measure(1, runs, || k.run_in(&c, v, &mut ws).expect("runs"));
        timed.push(json!({"variant": v.id(), "s": t.median}));
        if t.median < best.0 {
            best = (t.median, v.id());
        }
    }
    let default = k.default_variant();
    let t_default = measure(1, runs, || k.run_in(&c, default, &mut ws).expect("runs"));
    let serial = measure(1, runs, || (case.serial)()).median;
    let pool = surge_cpu::native::skeleton::pool(2);
    let rayon = pool.install(|| measure(1, runs, || (case.rayon)()).median);
    pool.install(|| probe.sample());
    let bw = pool.install(|| probe.result());
    let (limit, limit_gbps) = match case.written {
        0 => ("read", bw.read_gbps),
        _ => ("copy", bw.copy_gbps),
    };
    let gbps = case.bytes as f64 / best.0 / 1e9;
    json!({
        "pipeline": case.name,
        "variants": k.variants().len(),
        "best_s": best.0,
        "best_variant": best.1,
        "default_variant": default.id(),
        "default_s": t_default.median,
        "timed": timed,
        "serial_s": serial,
        "rayon_s": rayon,
        "best_vs_rayon": rayon / best.0,
        "best_vs_serial": serial / best.0,
        "bytes": case.bytes,
        "best_gbps": gbps,
        "limit": limit,
        "limit_gbps": limit_gbps,
        "fraction_of_limit": gbps / limit_gbps,
    })
}

fn main() {
    let a = args();
    let pool = surge_cpu::native::skeleton::pool(2);
    let mut probe = pool.install(|| Probe::new(1 << 27));
    // Two samples before the first pipeline (the first pass over fresh pages is slow), then
    // one after each.
    pool.install(|| (0..2).for_each(|_| probe.sample()));
    let mut rows = Vec::new();
    for case in cases() {
        if a.only.as_deref().is_some_and(|o| o != case.name) {
            continue;
        }
        let r = run_case(&case, a.runs, &mut probe);
        if !a.json {
            println!(
                "{:<22} best {:>8.3} ms  default {:>8.3} ms  serial {:>8.3} ms  rayon {:>8.3} ms  best/rayon {:>5.2}x  {:>5.1} GB/s ({:.2} of {} bw {:.1})",
                case.name,
                r["best_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["default_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["serial_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["rayon_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["best_vs_rayon"].as_f64().unwrap_or(0.0),
                r["best_gbps"].as_f64().unwrap_or(0.0),
                r["fraction_of_limit"].as_f64().unwrap_or(0.0),
                r["limit"].as_str().unwrap_or("?"),
                r["limit_gbps"].as_f64().unwrap_or(0.0),
            );
        }
        rows.push(r);
    }
    let bw = pool.install(|| probe.result());
    let report = json!({
        "machine_read_gbps": bw.read_gbps,
        "machine_copy_gbps": bw.copy_gbps,
        "limit_samples": bw.samples,
        "threads": bw.threads,
        "runs": a.runs,
        "pipelines": rows,
    });
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serializable")
        );
    } else {
        println!(
            "machine bandwidth (best of {} samples): read {:.1} GB/s, copy {:.1} GB/s",
            bw.samples, bw.read_gbps, bw.copy_gbps
        );
    }
}
