//! The `surge` program end to end: output shapes, exit codes, error messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn surge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_surge"))
        .args(args)
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

/// `../shared/matrices`, a test requirement (CI puts `../shared` beside the checkout).
fn matrices() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/matrices");
    assert!(
        d.is_dir(),
        "the shared matrices are required: {} not found",
        d.display()
    );
    d
}

#[test]
fn analyze_spmv_reports_map_reduce() {
    let v = json(&surge(&["analyze", "spmv", "--json"]));
    assert_eq!(v["app"], "spmv");
    assert_eq!(v["expression_sequence"], "map.reduce");
    assert_eq!(v["fusion"][1]["consumer"], "reduce");
    assert_eq!(
        v["fusion"][1]["fused"],
        serde_json::json!(["map", "gather"])
    );
    assert_eq!(v["features"]["length"], 65536);
    assert!(v["features"]["avg_row_length"].as_f64().unwrap() > 4.9);
}

#[test]
fn run_spmv_on_every_shared_matrix() {
    let dir = matrices();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "mtx"));
    files.sort();
    for f in files {
        let out = surge(&["run", "spmv", "--input", f.to_str().unwrap(), "--json"]);
        if f.ends_with("young1c.mtx") {
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("young1c.mtx") && err.contains("complex"),
                "{err}"
            );
            continue;
        }
        let v = json(&out);
        for key in ["rows", "cols", "nnz", "sum_y", "norm2_y"] {
            assert!(v.get(key).is_some(), "{}: no {key}", f.display());
        }
    }
}

#[test]
fn run_spmv_summary_is_right_for_a_known_matrix() {
    let dir = matrices();
    // bcsstk13: symmetric, 2003 x 2003, 83883 nonzeros after expansion.
    let v = json(&surge(&[
        "run",
        "spmv",
        "--input",
        dir.join("bcsstk13.mtx").to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(
        (v["rows"].as_u64(), v["cols"].as_u64(), v["nnz"].as_u64()),
        (Some(2003), Some(2003), Some(83883))
    );
    // G51 is a symmetric pattern matrix: every entry counts 1.0.
    let v = json(&surge(&[
        "run",
        "spmv",
        "--input",
        dir.join("G51.mtx").to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(
        v["sum_y"].as_f64(),
        Some(11818.0),
        "pattern entries are 1.0, x = ones: sum y = nnz"
    );
}

#[test]
fn malformed_mtx_exits_2_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("surge-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("broken.mtx");
    std::fs::write(
        &f,
        "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 2.0\n",
    )
    .unwrap();
    let out = surge(&["run", "spmv", "--input", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.mtx:4:"), "{err}");
    let missing = surge(&[
        "run",
        "spmv",
        "--input",
        dir.join("nope.mtx").to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope.mtx"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_errors_exit_2() {
    let out = surge(&["run", "gemv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown application `gemv`"));
    assert_eq!(
        surge(&["run", "reduce", "--input", "x.mtx"]).status.code(),
        Some(2)
    );
    assert_eq!(surge(&["frobnicate"]).status.code(), Some(2));
    assert!(surge(&["--help"]).status.success());
}

#[test]
fn bench_gemm_usage_errors_exit_2_naming_the_value() {
    for (args, message) in [
        (
            &["--shapes", "cube"][..],
            "unknown GEMM shape `cube`; use square, rank-k, panel, tall-skinny",
        ),
        (&["--sizes", "0"][..], "GEMM sizes must be positive"),
        (
            &["--vs", "atlas"][..],
            "unknown GEMM reference `atlas`; use all, openblas, mkl",
        ),
        (
            &["--platform", "tpu"][..],
            "surge bench gemm runs on cpu or cuda, not `tpu`",
        ),
    ] {
        let mut all = vec!["bench", "gemm", "--sizes", "64"];
        all.extend_from_slice(args);
        let out = surge(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn run_reduce_and_scan() {
    let v = json(&surge(&["run", "reduce", "--size", "10000", "--json"]));
    let want: f64 = surge::apps::sum_input(10000).iter().sum();
    assert!((v["sum"].as_f64().unwrap() - want).abs() < 1e-9 * want);
    let v = json(&surge(&["run", "scan", "--size", "1000", "--json"]));
    let data = surge::apps::sum_input(1000);
    let last: f64 = data[..999].iter().sum();
    assert!((v["last"].as_f64().unwrap() - last).abs() < 1e-9 * last);
    let v = json(&surge(&["analyze", "scan", "--size", "1000", "--json"]));
    assert_eq!(v["expression_sequence"], "map.reduce, map.scan, map.scan");
}

#[test]
fn variants_spmv_cuda_h200_json() {
    let v = json(&surge(&[
        "variants",
        "spmv",
        "--platform",
        "cuda",
        "--device",
        "h200",
        "--json",
    ]));
    assert_eq!(v["app"], "spmv");
    assert_eq!(v["platform"], "cuda:h200");
    let schedules: Vec<&str> = v["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["schedule"].as_str().unwrap())
        .collect();
    assert_eq!(
        schedules,
        [
            "independent.cooperative",
            "independent.sequential",
            "sequential.cooperative",
            "sequential.sequential"
        ]
    );
    let mut sum = 0;
    for s in v["schedules"].as_array().unwrap() {
        let ids = s["variant_ids"].as_array().unwrap();
        assert_eq!(ids.len() as u64, s["variants"].as_u64().unwrap());
        assert!(s["parameters"].as_array().unwrap().len() >= 5);
        assert!(ids[0].as_str().unwrap().starts_with("cuda:h200/"));
        sum += ids.len();
    }
    assert_eq!(v["total_variants"], sum);
    assert_eq!(v["total_variants"], 320);
    assert!(v["pruned_by"]["threads_per_block"].as_u64().unwrap() > 0);
}

#[test]
fn variants_cpu_text_and_phases() {
    let out = surge(&["variants", "spmv", "--platform", "cpu"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("independent.cooperative"), "{text}");
    assert!(
        text.contains("num_threads, enable_nesting, schedule1, chunk_size1"),
        "{text}"
    );
    assert!(text.contains("pruned by"), "{text}");
    let v = json(&surge(&[
        "variants",
        "scan",
        "--platform",
        "cpu",
        "--device",
        "haswell32",
        "--json",
        "--no-ids",
    ]));
    assert_eq!(v["phases"].as_array().unwrap().len(), 3);
    assert_eq!(v["total_variants"], 3 * 184);
    assert!(v["schedules"][0].get("variant_ids").is_none());
}

#[test]
fn variants_one_pass_and_errors() {
    let out = surge(&["variants", "spmv", "--pass", "strongest"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("independent.cooperative"));
    let out = surge(&["variants", "spmv", "--pass", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
    let out = surge(&["variants", "spmv", "--platform", "cuda", "--device", "p100"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("p100"));
    let out = surge(&["variants", "spmv", "--platform", "fpga"]);
    assert_eq!(out.status.code(), Some(2));
    // The live GPU when present; without one, exit 1 with a message, never a panic.
    let out = surge(&[
        "variants",
        "spmv",
        "--platform",
        "cuda",
        "--device",
        "live",
        "--json",
    ]);
    match out.status.code() {
        Some(0) => assert!(json(&out)["total_variants"].as_u64().unwrap() > 0),
        code => {
            assert_eq!(code, Some(1));
            assert!(String::from_utf8_lossy(&out.stderr).contains("--device live"));
        }
    }
}

fn space(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../surge-codegen/spaces")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn beast_counts_lists_and_rejects_bad_input() {
    let dir = std::env::temp_dir().join(format!("surge-beast-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let small = dir.join("small.toml");
    std::fs::write(
        &small,
        "[settings]\nn = 12\n[iterators]\nx = \"range(1, n + 1)\"\ny = \"range(x, n + 1, x)\"\n\
         [constraints.hard]\ntoo_big = \"x * y > n\"\n",
    )
    .unwrap();
    let v = json(&surge(&[
        "beast",
        small.to_str().unwrap(),
        "--count",
        "--json",
    ]));
    // Pairs (x, y) with y a multiple of x in [x, 12] and x * y <= 12, by brute force:
    let want = (1..=12)
        .flat_map(|x| (x..=12).step_by(x).map(move |y| (x, y)))
        .filter(|(x, y)| x * y <= 12)
        .count();
    assert_eq!(v["survivors"].as_u64(), Some(want as u64));
    for key in ["visited", "rejected_by", "seconds"] {
        assert!(v.get(key).is_some(), "no {key}");
    }
    let list = surge(&["beast", small.to_str().unwrap(), "--list", "--limit", "3"]);
    assert!(list.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["x"], 1);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[iterators]\nx = \"range(1, 5\"\n").unwrap();
    let out = surge(&["beast", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("x: column"));
    let out = surge(&["beast", small.to_str().unwrap(), "--disable", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn beast_shipped_gemm_space_plans() {
    let out = surge(&[
        "beast",
        &space("beast_gemm_k40c.toml"),
        "--plan",
        "--list",
        "--limit",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bench_on_cuda_explains_its_options_and_rejects_bad_ones() {
    let out = surge(&["bench", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--platform",
        "cuda",
        "cusparse",
        "cublas",
        "copy bandwidth",
        "CUDA events",
    ] {
        assert!(help.contains(needle), "--help lacks `{needle}`:\n{help}");
    }
    for (args, needle) in [
        (
            &["bench", "spmv", "--platform", "cuda", "--vs", "mkl"][..],
            "on cuda spmv compares with cusparse",
        ),
        (
            &["bench", "reduce", "--platform", "cuda", "--vs", "cusparse"][..],
            "on cuda reduce compares with cublas",
        ),
        (
            &["bench", "spmv", "--vs", "cusparse"][..],
            "add --platform cuda",
        ),
        (
            &["bench", "scan", "--platform", "cuda", "--inputs", "/tmp"][..],
            "--inputs and --only are for spmv",
        ),
        (
            &["bench", "spmv", "--platform", "tpu"][..],
            "unknown platform `tpu`",
        ),
    ] {
        let out = surge(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn bench_on_cuda_without_a_gpu_exits_2_saying_why() {
    if surge_cuda::Device::open(0).is_ok() {
        // On a GPU machine the same command runs: a small reduce benchmark succeeds.
        let out = surge(&[
            "bench",
            "reduce",
            "--platform",
            "cuda",
            "--size",
            "4096",
            "--json",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        return;
    }
    for app in ["spmv", "reduce", "scan", "gemm"] {
        for extra in [
            &[][..],
            &["--json"][..],
            &["--vs", "cusparse", "--runs", "10"][..],
        ] {
            if app != "spmv" && extra.contains(&"cusparse") {
                continue;
            }
            let mut args = vec!["bench", app, "--platform", "cuda"];
            args.extend_from_slice(extra);
            let out = surge(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains("error: no CUDA device:") && err.contains("no NVIDIA driver"),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
}

#[test]
fn run_all_on_the_cuda_emulator_checks_every_variant() {
    let v = json(&surge(&[
        "run",
        "reduce",
        "--platform",
        "cuda-emu",
        "--all",
        "--size",
        "1000",
        "--json",
    ]));
    assert_eq!(v["engine"], "cuda-emu");
    assert_eq!(v["all_match_interpreter"], true, "{v}");
    assert!(v["variants"].as_array().unwrap().len() > 10, "{v}");
    assert!(v["times"].as_str().unwrap().starts_with("emulated"), "{v}");
    // One variant, the default: a result like the CPU's.
    let d = json(&surge(&[
        "run",
        "reduce",
        "--platform",
        "cuda-emu",
        "--size",
        "1000",
        "--json",
    ]));
    let cpu = json(&surge(&["run", "reduce", "--size", "1000", "--json"]));
    let (a, b) = (d["sum"].as_f64().unwrap(), cpu["sum"].as_f64().unwrap());
    assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} vs {b}");
}

#[test]
fn bench_on_the_cuda_emulator_checks_and_never_compares() {
    let v = json(&surge(&[
        "bench",
        "scan",
        "--platform",
        "cuda-emu",
        "--size",
        "3000",
        "--json",
    ]));
    assert_eq!(v["all_match"], true, "{v}");
    assert!(v["times"].as_str().unwrap().starts_with("emulated"), "{v}");
    let input = &v["inputs"][0];
    assert!(input["matched"].as_array().unwrap().len() > 10, "{v}");
    // Emulated runs have no reference to be compared with.
    let out = surge(&[
        "bench",
        "scan",
        "--platform",
        "cuda-emu",
        "--vs",
        "cusparse",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("emulated runs are checked"));
}

#[test]
fn an_unknown_run_platform_is_a_usage_error() {
    let out = surge(&["run", "reduce", "--platform", "tpu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("surge run runs on cpu, cuda or cuda-emu"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bench_spmv_confirms_the_best_against_mkl_in_interleaved_rounds() {
    let dir = std::env::temp_dir().join(format!("surge_bench_spmv_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = surge::apps::matgen::laplacian_2d(40);
    surge::mtx::write_mtx(&dir.join("lap40.mtx"), &m).unwrap();
    refuses_what_it_cannot_use(&dir);
    if surge_cpu::baseline::mkl::Mkl::get().is_err() {
        // Without MKL the confirmation cannot run: the bench says so instead.
        eprintln!("skipped the timed part: no MKL here (Debian's libmkl-dev, or the mkl wheel)");
        let out = surge(&["bench", "spmv", "--inputs", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{err}");
        assert!(err.contains("MKL is not available"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
        return;
    }
    let v = json(&surge(&[
        "bench",
        "spmv",
        "--inputs",
        dir.to_str().unwrap(),
        "--json",
    ]));
    let i = &v["inputs"][0];
    let c = &i["confirmation"];
    assert_eq!(c["rounds"], 30);
    assert_eq!(c["round_ratios"].as_array().unwrap().len(), 30);
    let (lo, med, hi) = (
        c["ratio_low"].as_f64().unwrap(),
        c["ratio_median"].as_f64().unwrap(),
        c["ratio_high"].as_f64().unwrap(),
    );
    assert!(lo > 0.0 && lo <= med && med <= hi, "{c}");
    // The headline is the confirmation's, and names the MKL it timed.
    assert_eq!(i["ratio"], c["ratio"]);
    assert!(
        i["reference"]
            .as_str()
            .unwrap()
            .contains("Math Kernel Library"),
        "{i}"
    );
    assert!(
        i["best_variant"].as_str().unwrap().starts_with("cpu:"),
        "{i}"
    );
    // Both sides are in the confirmation: the own variants (two per thread count) and MKL.
    let contenders = c["contenders"].as_array().unwrap();
    assert!(contenders.iter().any(|t| t["reference"] == true));
    assert!(
        contenders
            .iter()
            .filter(|t| t["reference"] == false)
            .count()
            >= 2
    );
    for t in contenders {
        let (min, low) = (
            t["min_seconds"].as_f64().unwrap(),
            t["low_seconds"].as_f64().unwrap(),
        );
        assert!(
            min > 0.0 && min <= low && low <= t["median_seconds"].as_f64().unwrap(),
            "{t}"
        );
    }
    // A matrix that fits the cache reports its traffic, but no fraction of DRAM bandwidth.
    assert!(i["best_gbps"].as_f64().unwrap() > 0.0, "{i}");
    assert_eq!(i["bytes"], (8 * (m.nnz() + m.rows + m.cols)) as f64);
    assert!(i["fraction_of_bandwidth"].is_null(), "{i}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A store that is not there is refused naming it; --tuned is for spmv only.
fn refuses_what_it_cannot_use(dir: &std::path::Path) {
    let missing = dir.join("no_store.json");
    let out = surge(&[
        "bench",
        "spmv",
        "--inputs",
        dir.to_str().unwrap(),
        "--tuned",
        missing.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("no_store.json") && err.contains("no tuning store"),
        "{err}"
    );
    let out = surge(&["bench", "reduce", "--size", "1000", "--tuned", "x.json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--tuned is for spmv"), "{err}");
}
