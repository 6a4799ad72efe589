//! The report of `surge bench`: its JSON value (per input and per app, with the ratios against
//! the reference and the memory bandwidth) and its text lines.
//!
//! The medians over inputs (`median_ratio`, `median_variant_ratio`) are computed by the caller
//! and passed in as [`Medians`].

use super::cuda::{CudaInputResult, DeviceBandwidth};
use super::{InputResult, Reference, VariantResult};
use crate::apps::App;
use serde_json::{Value, json};
use surge_cpu::baseline::bandwidth::Bandwidth;

/// The medians over a report's inputs: of the best variant's and of the median variant's ratio
/// to the reference.
#[derive(Debug, Clone, Copy)]
pub struct Medians {
    pub ratio: f64,
    pub variant_ratio: f64,
}

/// The summary keys printed after the inputs in the text report on cpu, in order.
pub const CPU_SUMMARY: [&str; 8] = [
    "median_ratio",
    "median_tuned_ratio",
    "median_tuned_ratio_with_selection",
    "median_variant_ratio",
    "bandwidth_gbps",
    "fraction_of_bandwidth",
    "copy_gbps",
    "fraction_of_copy",
];

/// The summary keys printed after the inputs in the text report on cuda, in order.
pub const CUDA_SUMMARY: [&str; 6] = [
    "median_ratio",
    "median_variant_ratio",
    "bandwidth_gbps",
    "fraction_of_bandwidth",
    "cublas_gbps",
    "ratio_vs_cublas",
];

/// The reference's name as the reports spell it (`mkl`, `rayon`, `cusparse`, ...).
pub fn reference_name(r: Reference) -> String {
    json!(r).as_str().unwrap_or("").to_string()
}

/// One spmv input of the JSON report: best, default, worst and median variant against the
/// reference, in GFLOP/s.
pub fn spmv_input_json(r: &InputResult) -> Value {
    let mut j = json!({
        "name": r.name, "rows": r.rows, "nnz": r.nnz,
        "best_variant": r.best_variant, "best_gflops": r.best_rate,
        "default_variant": r.default_variant, "default_gflops": r.default_rate,
        "worst_variant": r.worst_variant, "worst_gflops": r.worst_rate,
        "median_variant_gflops": r.median_variant_rate,
        "reference": r.reference, "reference_gflops": r.reference_rate,
        "ratio": r.ratio, "median_variant_ratio": r.median_variant_ratio,
    });
    if let Some(c) = &r.confirmation {
        j["ratio_low"] = json!(c.ratio_low);
        j["ratio_high"] = json!(c.ratio_high);
        j["confirmation"] = json!(c);
    }
    if let Some(t) = &r.tuned {
        j["tuned_ratio"] = json!(t.ratio);
        j["tuned"] = json!(t);
    }
    if let Some(t) = &r.traffic {
        j["bytes"] = json!(t.bytes);
        j["best_gbps"] = json!(t.best_gbps);
        j["bandwidth_gbps"] = json!(t.bandwidth_gbps);
        j["bandwidth_limit"] = json!(t.limit);
        j["read_probe_gbps"] = json!(t.read_gbps);
        j["fraction_of_bandwidth"] = json!(t.fraction_of_bandwidth);
    }
    j
}

/// The best rate per storage layout (`layout1`; variants without one store rows): how the
/// layouts compare on one input.
pub fn best_by_layout(variants: &[VariantResult]) -> std::collections::BTreeMap<String, f64> {
    let mut best = std::collections::BTreeMap::new();
    for v in variants {
        let layout = v
            .variant
            .rsplit('/')
            .next()
            .and_then(|ps| ps.split(',').find_map(|p| p.strip_prefix("layout1=")))
            .unwrap_or("rows");
        let e = best.entry(layout.to_string()).or_insert(f64::NEG_INFINITY);
        *e = f64::max(*e, v.rate);
    }
    best
}

/// The JSON report of spmv on cpu.
pub fn cpu_spmv(reference: Reference, runs: usize, results: &[InputResult], m: Medians) -> Value {
    let inputs: Vec<_> = results
        .iter()
        .map(|r| {
            let mut j = spmv_input_json(r);
            j["best_by_layout"] = json!(best_by_layout(&r.variants));
            j
        })
        .collect();
    let mut o = json!({
        "app": "spmv", "platform": "cpu", "reference": reference, "runs": runs,
        "inputs": inputs,
        "median_ratio": m.ratio,
        "median_variant_ratio": m.variant_ratio,
    });
    let tuned: Vec<f64> = results
        .iter()
        .filter_map(|r| r.tuned.as_ref().map(|t| t.ratio))
        .collect();
    if !tuned.is_empty() {
        o["median_tuned_ratio"] = json!(crate::stats::median(&tuned));
        let with: Vec<f64> = results
            .iter()
            .filter_map(|r| r.tuned.as_ref().map(|t| t.ratio_with_selection))
            .collect();
        o["median_tuned_ratio_with_selection"] = json!(crate::stats::median(&with));
    }
    o
}

/// The JSON report of reduce or scan on cpu: against rayon and the machine's bandwidth (reduce:
/// read bandwidth; scan, one read and one write per element: copy).
pub fn cpu_reduce_or_scan(app: App, runs: usize, r: &InputResult, bw: &Bandwidth) -> Value {
    let mut o = json!({
        "app": app.name(), "platform": "cpu", "n": r.rows, "runs": runs,
        "best_variant": r.best_variant, "best_gbps": r.best_rate,
        "default_variant": r.default_variant, "default_gbps": r.default_rate,
        "worst_variant": r.worst_variant, "worst_gbps": r.worst_rate,
        "median_variant_gbps": r.median_variant_rate,
        "rayon_gbps": r.reference_rate, "ratio_vs_rayon": r.ratio,
        "bandwidth_gbps": bw.read_gbps, "copy_gbps": bw.copy_gbps, "triad_gbps": bw.triad_gbps,
    });
    if app == App::Reduce {
        o["fraction_of_bandwidth"] = json!(r.best_rate / bw.read_gbps);
    } else {
        o["fraction_of_copy"] = json!(r.best_rate / bw.copy_gbps);
    }
    o
}

/// The JSON report of spmv on cuda (`platform`: `cuda:<device name>`).
pub fn cuda_spmv(
    platform: &str,
    reference: Reference,
    runs: usize,
    results: &[CudaInputResult],
    m: Medians,
) -> Value {
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
        "app": "spmv", "platform": platform, "reference": reference, "runs": runs,
        "inputs": inputs,
        "median_ratio": m.ratio,
        "median_variant_ratio": m.variant_ratio,
    })
}

/// The JSON report of reduce or scan on cuda: against the device's copy bandwidth, and for
/// reduce cuBLAS.
pub fn cuda_reduce_or_scan(
    app: App,
    platform: &str,
    reference: Reference,
    runs: usize,
    c: &CudaInputResult,
    bw: Option<DeviceBandwidth>,
) -> Value {
    let r = &c.result;
    let copy = bw.map_or(f64::NAN, |b| b.copy_gbps);
    let mut o = json!({
        "app": app.name(), "platform": platform, "reference": reference,
        "n": r.rows, "runs": runs,
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

/// One input's lines of the text report: best, default and worst variant against the reference
/// (with the confirmation rounds' lowest and highest ratio), then the best variant's id.
pub fn input_text(r: &InputResult) -> String {
    let spread = r.confirmation.as_ref().map_or(String::new(), |c| {
        format!(
            " [{:.2}-{:.2} over {} rounds]",
            c.ratio_low, c.ratio_high, c.rounds
        )
    });
    let tuned = r.tuned.as_ref().map_or(String::new(), |t| {
        format!(
            "\n    tuned: {:.3} {} ({:.2}x, {:.2}x with its selection; selection {:.2} calls, first call {:.1} calls{}) {}",
            t.gflops,
            r.unit,
            t.ratio,
            t.ratio_with_selection,
            t.selection_calls,
            t.first_call_calls,
            if t.from_model {
                ""
            } else {
                ", the model's default"
            },
            t.variant
        )
    });
    let traffic = r.traffic.as_ref().map_or(String::new(), |t| {
        t.fraction_of_bandwidth.map_or(
            format!("\n    {:.1} GB/s (fits the last-level cache)", t.best_gbps),
            |f| {
                let how = match t.limit {
                    super::spmv_cpu::LimitKind::Traffic => format!(
                        "moving its bytes in the same rounds; read-only probe {:.1}",
                        t.read_gbps
                    ),
                    super::spmv_cpu::LimitKind::Read => "read-only probe".into(),
                };
                format!(
                    "\n    {:.1} GB/s of {:.1} measured ({how}): {f:.2} of the bandwidth",
                    t.best_gbps, t.bandwidth_gbps
                )
            },
        )
    });
    format!(
        "{:<34} best {:>8.3} {} ({:.2}x{spread} {})  default {:>8.3}  worst {:>8.3}  median variant {:.2}x\n    best: {}{tuned}{traffic}",
        r.name,
        r.best_rate,
        r.unit,
        r.ratio,
        r.reference,
        r.default_rate,
        r.worst_rate,
        r.median_variant_ratio,
        r.best_variant
    )
}

/// The summary lines of the text report: `key: value` for each of `keys` that `report` has.
pub fn summary_lines(report: &Value, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .filter_map(|k| report.get(k).map(|v| format!("{k}: {v}")))
        .collect()
}
