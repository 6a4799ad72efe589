//! Issue 19's pipelines against plain Rust written the obvious way, serial and rayon, in the
//! same run: histogram by `reduce_by_key` over sorted keys, k-means assignment, tuple argmin,
//! L2 norm with `sqrt`, segmented scan and transpose-based mat-mat. Every Surge variant is
//! compiled once and timed; the report gives the best and the default variant, the references,
//! and the fraction of the machine's measured read bandwidth the best one reaches.
//!
//! `cargo run --release -p benchmarks --bin pipelines -- [--runs N] [--only NAME] [--json]`

use benchmarks::pipelines::{Case, cases};
use serde_json::json;
use surge::bench::measure;
use surge::{Kernels, Target, Workspace};

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
                a.runs = v[i].parse().expect("--runs N");
            }
            "--only" => {
                i += 1;
                a.only = Some(v[i].clone());
            }
            "--json" => a.json = true,
            other => panic!("unknown argument {other}; see the file's header"),
        }
        i += 1;
    }
    a
}

fn run_case(case: &Case, runs: usize, read_gbps: f64) -> serde_json::Value {
    let c = (case.build)();
    let k = Kernels::build(&c, &Target::cpu()).expect("compiled");
    let mut ws = Workspace::default();
    let mut best = (f64::INFINITY, String::new());
    for v in k.variants() {
        let t = measure(1, runs, || k.run_in(&c, v, &mut ws).expect("runs"));
        if t.median < best.0 {
            best = (t.median, v.id());
        }
    }
    let default = k.default_variant();
    let t_default = measure(1, runs, || k.run_in(&c, default, &mut ws).expect("runs"));
    let serial = measure(1, runs, || (case.serial)()).median;
    let pool = surge_cpu::native::skeleton::pool(2);
    let rayon = pool.install(|| measure(1, runs, || (case.rayon)()).median);
    let gbps = case.bytes as f64 / best.0 / 1e9;
    json!({
        "pipeline": case.name,
        "variants": k.variants().len(),
        "best_s": best.0,
        "best_variant": best.1,
        "default_s": t_default.median,
        "serial_s": serial,
        "rayon_s": rayon,
        "best_vs_rayon": rayon / best.0,
        "best_vs_serial": serial / best.0,
        "bytes": case.bytes,
        "best_gbps": gbps,
        "fraction_of_read_bandwidth": gbps / read_gbps,
    })
}

fn main() {
    let a = args();
    let bw = surge::bench::bandwidth();
    let mut rows = Vec::new();
    for case in cases() {
        if a.only.as_deref().is_some_and(|o| o != case.name) {
            continue;
        }
        let r = run_case(&case, a.runs, bw.read_gbps);
        if !a.json {
            println!(
                "{:<22} best {:>8.3} ms  default {:>8.3} ms  serial {:>8.3} ms  rayon {:>8.3} ms  best/rayon {:>5.2}x  {:>5.1} GB/s ({:.2} of read bw)",
                case.name,
                r["best_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["default_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["serial_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["rayon_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["best_vs_rayon"].as_f64().unwrap_or(0.0),
                r["best_gbps"].as_f64().unwrap_or(0.0),
                r["fraction_of_read_bandwidth"].as_f64().unwrap_or(0.0),
            );
        }
        rows.push(r);
    }
    let report = json!({
        "machine_read_gbps": bw.read_gbps,
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
        println!("machine read bandwidth {:.1} GB/s", bw.read_gbps);
    }
}
