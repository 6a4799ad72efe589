//! `surge plan spmv` end to end: its JSON on a small shared matrix, and its usage errors (exit 2,
//! naming the value).

use std::path::PathBuf;
use std::process::{Command, Output};

fn surge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_surge"))
        .args(args)
        .output()
        .expect("surge runs")
}

/// A file of `../shared/matrices`, a test requirement (CI puts `../shared` beside the checkout).
fn shared(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/matrices")
        .join(name);
    assert!(
        p.is_file(),
        "the shared matrices are required: {} not found",
        p.display()
    );
    p.to_str().unwrap().to_string()
}

/// Exit 2 with every one of `wanted` in the message.
fn refused(args: &[&str], wanted: &[&str]) {
    let out = surge(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for w in wanted {
        assert!(err.contains(w), "{args:?}: {w:?} not in: {err}");
    }
}

#[test]
fn bad_rank_counts_are_refused_naming_the_value() {
    let m = shared("494_bus.mtx");
    refused(
        &["plan", "spmv", "--input", &m, "--ranks", "2,0"],
        &["'0'", "--ranks", "at least 1"],
    );
    refused(
        &["plan", "spmv", "--input", &m, "--ranks", "2,x16"],
        &["'x16'", "--ranks"],
    );
    refused(
        &["plan", "spmv", "--input", &m, "--latency-us", "-1"],
        &["'-1'", "--latency-us"],
    );
    refused(
        &["plan", "spmv", "--input", &m, "--bandwidth-gbs", "0"],
        &["'0'", "--bandwidth-gbs"],
    );
    refused(&["plan", "kmeans"], &["'kmeans'", "only spmv"]);
}

#[test]
fn missing_and_complex_matrices_are_refused_naming_the_file() {
    refused(
        &["plan", "spmv", "--input", "/nonexistent/m.mtx"],
        &["/nonexistent/m.mtx"],
    );
    refused(
        &["plan", "spmv", "--input", &shared("young1c.mtx")],
        &["young1c.mtx", "complex"],
    );
}

#[test]
fn plan_json_and_svg_on_a_small_matrix() {
    let svg = std::env::temp_dir().join(format!("surge-plan-{}.svg", std::process::id()));
    let m = shared("494_bus.mtx");
    let args = [
        "plan", "spmv", "--input", &m, "--ranks", "1,3,600", "--json", "--svg",
    ];
    let out = surge(&[&args[..], &[svg.to_str().unwrap()]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["rows"], 494);
    assert!(
        v["model"]["formula"]
            .as_str()
            .unwrap()
            .contains("max(compute(interior rows)")
    );
    assert_eq!(v["model"]["parameters"]["latency_seconds"], 1.5e-6);
    assert!(v["measured"]["seconds"].as_f64().unwrap() > 0.0);
    let plans = v["plans"].as_array().unwrap();
    assert_eq!(plans.len(), 3);
    assert_eq!(plans[0]["worst_rank"]["neighbours"], 0);
    assert_eq!(plans[2]["ranks"], 600);
    // 600 ranks over 494 rows: at least 106 have none (more: a block may hold two rows).
    assert!(plans[2]["empty_ranks"].as_u64().unwrap() >= 106);
    assert_eq!(plans[2]["rows"]["min"], 0.0);
    for p in plans {
        let e = p["efficiency"].as_f64().unwrap();
        assert!(e > 0.0 && e <= 1.0 + 1e-12, "{p}");
        for k in ["min", "mean", "max", "max_rank"] {
            assert!(p["ghosts_received"][k].is_number(), "{k}: {p}");
        }
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("predicted parallel efficiency") && text.contains("600 ranks"));
    std::fs::remove_file(&svg).unwrap();
}
