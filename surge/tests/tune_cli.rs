//! `surge tune` end to end: on the simulated platform (the tuner's logic, where the right
//! answers are known), and on this machine's CPU by default, then `surge run --tuned`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("surge-tune-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn surge(data: &PathBuf, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_surge"))
        .args(args)
        .env("SURGE_DATA", data)
        .output()
        .expect("surge runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn tune_reduce_on_the_simulated_platform() {
    let d = tmp("reduce");
    let report = d.join("report");
    let v = json(&surge(
        &d,
        &[
            "tune",
            "reduce",
            "--platform",
            "sim",
            "--scale",
            "small",
            "--json",
            "--report",
            report.to_str().unwrap(),
        ],
    ));
    assert_eq!(v["app"], "reduce");
    assert!(v["tuned_vs_exhaustive"].as_f64().unwrap() >= 0.95, "{v}");
    let store = PathBuf::from(v["store"].as_str().unwrap());
    assert!(
        store.starts_with(&d),
        "default store under $SURGE_DATA: {}",
        store.display()
    );
    assert!(store.is_file());
    for f in ["report.json", "performance.svg", "variants.svg"] {
        let text = std::fs::read_to_string(report.join(f)).unwrap();
        assert!(text.len() > 200, "{f}");
    }
    assert!(
        std::fs::read_to_string(report.join("performance.svg"))
            .unwrap()
            .contains("<svg")
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    assert!(r["evaluation"]["results"].as_array().unwrap().len() > 10);
}

#[test]
fn tune_with_inputs_file_out_file_failing_variant_and_incremental() {
    let d = tmp("inputs");
    let sizes = d.join("sizes.txt");
    std::fs::write(
        &sizes,
        "# sizes\n100 1000, 5000\n20000 80000\n300000 900000 2000000\n",
    )
    .unwrap();
    let test = d.join("test.txt");
    std::fs::write(&test, "200 4000 50000 600000 3000000\n").unwrap();
    let out = d.join("store.json");
    let v = json(&surge(
        &d,
        &[
            "tune",
            "scan",
            "--platform",
            "sim",
            "--inputs",
            sizes.to_str().unwrap(),
            "--test",
            test.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--sim-failing-variant",
            "--json",
            "--incremental",
            "--iterations",
            "2",
        ],
    ));
    assert!(out.is_file());
    assert_eq!(v["labelled_inputs"], 4 + 2);
    assert!(
        v["failures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["variant"] == "sim/scan/broken")
    );
    assert_eq!(v["failures"].as_array().unwrap().len(), 6);
}

#[test]
fn tune_usage_errors() {
    let d = tmp("usage");
    if surge::bench::cuda::open_device().is_err() {
        // Without a GPU the CUDA backend cannot open: a usage error that says why.
        let o = surge(&d, &["tune", "reduce", "--platform", "cuda"]);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no CUDA device"), "{err}");
    } else {
        eprintln!(
            "a GPU is present: `tune --platform cuda` would tune; its usage error is not checked"
        );
    }
    let o = surge(&d, &["tune", "reduce", "--platform", "tpu"]);
    assert_eq!(o.status.code(), Some(2));
    let o = surge(&d, &["tune", "reduce", "--incremental"]);
    assert_eq!(o.status.code(), Some(2));
    let o = surge(&d, &["tune", "reduce", "--iterations", "3"]);
    assert_eq!(o.status.code(), Some(2));
    let o = surge(&d, &["tune", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "12 x\n").unwrap();
    let o = surge(&d, &["tune", "reduce", "--inputs", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.txt:1: `x` is not a size"));
}

/// The quality target's setting: train on generated matrices, test on the real ones.
#[test]
fn tune_spmv_tested_on_the_shared_matrices() {
    let m = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/matrices");
    assert!(
        m.is_dir(),
        "the shared matrices are required: {} not found (CI puts ../shared beside the checkout)",
        m.display()
    );
    let d = tmp("spmv");
    let o = surge(
        &d,
        &[
            "tune",
            "spmv",
            "--platform",
            "sim",
            "--scale",
            "small",
            "--test",
            m.to_str().unwrap(),
            "--selection-rows",
            "0",
            "--json",
        ],
    );
    let v = json(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("young1c.mtx"));
    assert_eq!(v["test_inputs"], 24);
    // The quality target (Nitro reported 93 %).
    assert!(v["tuned_vs_exhaustive"].as_f64().unwrap() >= 0.95, "{v}");
    // Class pruning: few classes, the cover's tolerance and bound reported.
    let l = &v["labelling"];
    assert_eq!(l["tolerance"], 0.03);
    assert!(l["classes"].as_u64().unwrap() <= 3, "{l}");
    assert_eq!(l["classes"], v["model"]["class_count"]);
    let bound = l["cover_bound"].as_f64().unwrap();
    assert!((1.0 / 1.03..=1.0).contains(&bound), "{l}");
    assert_eq!(v["training"]["retime_rounds"], 7);
}

/// What `surge run --tuned` says when it cannot use a model: exit 2 and the reason.
fn refused(d: &PathBuf, args: &[&str], expect: &[&str]) {
    let o = surge(d, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for e in expect {
        assert!(err.contains(e), "{args:?}: `{e}` not in: {err}");
    }
}

/// `surge tune reduce` with no `--platform` tunes on this machine (the CPU here: no GPU), and
/// `surge run reduce --tuned` uses what it stored; a missing, corrupt or stale store is refused.
#[test]
fn tune_on_this_machine_then_run_tuned() {
    let d = tmp("cpu");
    refused(
        &d,
        &["run", "reduce", "--tuned", "--size", "5000"],
        &["no tuning store for `reduce`", "tune it first"],
    );
    let train = d.join("train.txt");
    std::fs::write(&train, "1000 30000 300000\n").unwrap();
    let test = d.join("test.txt");
    std::fs::write(&test, "5000 100000\n").unwrap();
    let quick = [
        "--repetitions",
        "1",
        "--retime-within",
        "-1",
        "--confirm-rounds",
        "1",
        "--selection-rows",
        "0",
        "--min-class-inputs",
        "1",
        "--json",
    ];
    let mut args = vec![
        "tune",
        "reduce",
        "--inputs",
        train.to_str().unwrap(),
        "--test",
        test.to_str().unwrap(),
    ];
    args.extend(quick);
    let o = surge(&d, &args);
    let v = json(&o);
    if surge::bench::cuda::open_device().is_err() {
        assert!(String::from_utf8_lossy(&o.stderr).contains("tuning on the CPU"));
        assert!(v["platform"].as_str().unwrap().starts_with("cpu:"), "{v}");
    }
    let store = PathBuf::from(v["store"].as_str().unwrap());
    if !v["platform"].as_str().unwrap().starts_with("cpu:") {
        eprintln!("tuned on a GPU: `run --tuned` (CPU models) is not checked");
        return;
    }
    let o = surge(
        &d,
        &["run", "reduce", "--tuned", "--size", "20000", "--json"],
    );
    let r = json(&o);
    assert_eq!(r["selection"]["from_model"], true, "{r}");
    // Outside the training range: a warning, then the model's pick.
    let o = surge(
        &d,
        &["run", "reduce", "--tuned", "--size", "2000000", "--json"],
    );
    let r = json(&o);
    assert_eq!(r["selection"]["from_model"], true, "{r}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("outside the training range"));

    // A store whose computation changed: refused, untouched.
    let text = std::fs::read_to_string(&store).unwrap();
    let mut s: serde_json::Value = serde_json::from_str(&text).unwrap();
    s["key"]["structure"] = "0123".into();
    std::fs::write(&store, s.to_string()).unwrap();
    refused(
        &d,
        &["run", "reduce", "--tuned", "--size", "20000"],
        &["structure changed", "retune"],
    );
    assert_eq!(
        std::fs::read_to_string(&store).unwrap(),
        s.to_string(),
        "nothing overwritten"
    );
    std::fs::write(&store, &text[..text.len() / 2]).unwrap();
    refused(
        &d,
        &["run", "reduce", "--tuned", "--size", "20000"],
        &["corrupt tuning store"],
    );
}

/// A campaign journals its records beside the store and removes the journal once the store is
/// written; a journal left by an unfinished campaign is refused without `--resume`.
#[test]
fn tune_journal_and_resume() {
    let d = tmp("journal");
    let store = d.join("s.json");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "tune",
            "reduce",
            "--platform",
            "sim",
            "--scale",
            "small",
            "--json",
        ];
        a.extend_from_slice(&["--out", store.to_str().unwrap()]);
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        surge(&d, &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    json(&run(&[]));
    let journal = d.join("s.json.journal");
    assert!(
        store.is_file() && !journal.exists(),
        "journal removed after the store"
    );
    std::fs::write(&journal, "{}\n").unwrap();
    let a = args(&[]);
    refused(
        &d,
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &[
            "s.json.journal holds the records of a campaign that did not finish",
            "--resume",
        ],
    );
    let a = args(&["--resume"]);
    refused(
        &d,
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &["s.json.journal line 1 is not a tuning journal's header"],
    );
    std::fs::remove_file(&journal).unwrap();
    json(&run(&["--resume"]));
    refused(
        &d,
        &[
            "tune",
            "reduce",
            "--incremental",
            "--iterations",
            "2",
            "--resume",
        ],
        &["--resume continues an exhaustive campaign"],
    );
}

/// `surge tune gemm`: what it refuses (exit 2, naming the option). The campaign itself is
/// covered on the simulated backend (`tune::filtered`); a real one times 1,112 GEMM variants on
/// 12 shapes and takes minutes.
#[test]
fn tune_gemm_refuses_what_it_cannot_use() {
    let d = tmp("gemm");
    for (args, says) in [
        (
            &["tune", "gemm", "--platform", "cuda"][..],
            "tunes the CPU GEMM family (--platform cuda)",
        ),
        (
            &["tune", "gemm", "--inputs", "x"][..],
            "it takes no --inputs or --test",
        ),
        (
            &["tune", "gemm", "--incremental"][..],
            "takes none of --incremental",
        ),
    ] {
        let o = surge(&d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
