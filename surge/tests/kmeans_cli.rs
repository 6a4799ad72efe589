//! `surge run kmeans` as a user runs it on their own points: CSV and .npy input, --init or
//! k-means++ (--seed), --json; bad input named by file and line, exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("surge-kmeans-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn surge(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_surge"))
        .args(args)
        .current_dir(dir)
        .env("SURGE_DATA", dir)
        .output()
        .expect("surge runs")
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

fn fails(dir: &Path, args: &[&str], expect: &str) {
    let o = surge(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: `{expect}` not in {err}");
}

/// A directory holding `p.csv` (six points in two clusters, a comment line) and `init.csv`
/// (two centroids).
fn two_clusters(name: &str) -> PathBuf {
    let d = tmp(name);
    std::fs::write(
        d.join("p.csv"),
        "1,2\n1.5,1.8\n# a comment\n5,8\n8,8\n1,0.6\n9,11\n",
    )
    .unwrap();
    std::fs::write(d.join("init.csv"), "1,2\n5,8\n").unwrap();
    d
}

#[test]
fn clusters_a_csv_from_given_centroids() {
    let d = two_clusters("csv");
    let v = json(&surge(
        &d,
        &[
            "run", "kmeans", "--input", "p.csv", "--init", "init.csv", "--json",
        ],
    ));
    assert_eq!(v["k"], 2);
    assert_eq!(v["counts"], serde_json::json!([3, 3]));
    let c = &v["centroids"];
    let near = |v: &serde_json::Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
    assert!(
        near(&c[0][0], 3.5 / 3.0) && near(&c[0][1], 4.4 / 3.0),
        "{c}"
    );
    assert!(near(&c[1][0], 22.0 / 3.0) && near(&c[1][1], 9.0), "{c}");
    assert_eq!(v["converged"], true);
    assert_eq!(v["variants"].as_array().unwrap().len(), 2);
}

#[test]
fn clusters_npy_and_generated_points_with_kmeans_plus_plus() {
    let d = tmp("npy");
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 1), }          \n";
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((header.len() as u16).to_le_bytes());
    b.extend(header.as_bytes());
    for x in [0.0f64, 0.5, 10.0, 10.5] {
        b.extend(x.to_le_bytes());
    }
    std::fs::write(d.join("p.npy"), &b).unwrap();
    let v = json(&surge(
        &d,
        &[
            "run", "kmeans", "--input", "p.npy", "--k", "2", "--seed", "3", "--json",
        ],
    ));
    let mut c: Vec<f64> = v["centroids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_f64().unwrap())
        .collect();
    c.sort_by(f64::total_cmp);
    assert_eq!(c, vec![0.25, 10.25]);
    let a = json(&surge(
        &d,
        &["run", "kmeans", "--size", "3000", "--k", "4", "--json"],
    ));
    let b = json(&surge(
        &d,
        &["run", "kmeans", "--size", "3000", "--k", "4", "--json"],
    ));
    assert_eq!(a["centroids"], b["centroids"], "seeded: the same run twice");
    assert_eq!(a["dimension"], 32);
}

#[test]
fn bad_points_centroids_and_flags_exit_2_naming_what() {
    let d = tmp("bad");
    std::fs::write(d.join("ragged.csv"), "1,2\n3,4\n5\n").unwrap();
    std::fs::write(d.join("word.csv"), "1,2\n3,four\n").unwrap();
    std::fs::write(d.join("p.csv"), "1,2\n3,4\n5,6\n").unwrap();
    std::fs::write(d.join("init3.csv"), "1,2,3\n").unwrap();
    fails(
        &d,
        &["run", "kmeans", "--input", "ragged.csv"],
        "ragged.csv`: line 3: 1 values, the first point has 2",
    );
    fails(
        &d,
        &["run", "kmeans", "--input", "word.csv"],
        "line 2: `four` is not a finite number",
    );
    fails(
        &d,
        &["run", "kmeans", "--input", "p.csv", "--k", "4"],
        "k = 4 clusters for 3 points",
    );
    fails(
        &d,
        &["run", "kmeans", "--input", "p.csv", "--init", "init3.csv"],
        "centroids of dimension 3, the points have 2",
    );
    fails(
        &d,
        &["run", "kmeans", "--input", "missing.csv"],
        "missing.csv",
    );
    fails(
        &d,
        &["run", "reduce", "--k", "3"],
        "--k, --init and --seed are for `surge run kmeans`",
    );
    fails(
        &d,
        &["run", "kmeans", "--input", "p.csv", "--k", "2", "--tuned"],
        "no tuning store for `kmeans`",
    );
}

/// The same points clustered on the CUDA emulator (both programs emitted as CUDA and run with
/// CUDA's execution model) reach the CPU's counts and centroids; `--tuned` selects CPU variants
/// only, and an unknown platform is named.
#[test]
fn clusters_on_the_cuda_emulator_as_on_the_cpu() {
    let d = two_clusters("emu");
    let run = |platform: &str| {
        json(&surge(
            &d,
            &[
                "run",
                "kmeans",
                "--input",
                "p.csv",
                "--init",
                "init.csv",
                "--json",
                "--platform",
                platform,
            ],
        ))
    };
    let (cpu, emu) = (run("cpu"), run("cuda-emu"));
    assert_eq!(emu["platform"], "cuda-emu");
    assert_eq!(emu["counts"], cpu["counts"]);
    assert_eq!(emu["iterations"], cpu["iterations"]);
    let flat = |v: &serde_json::Value| -> Vec<f64> {
        v["centroids"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
            .collect()
    };
    for (a, b) in flat(&emu).iter().zip(flat(&cpu)) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
    }
    assert!(emu["variants"][0].as_str().unwrap().starts_with("cuda:"));
    fails(
        &d,
        &[
            "run",
            "kmeans",
            "--input",
            "p.csv",
            "--platform",
            "cuda-emu",
            "--tuned",
        ],
        "--tuned selects among CPU variants",
    );
    fails(
        &d,
        &["run", "kmeans", "--input", "p.csv", "--platform", "tpu"],
        "unknown platform `tpu`",
    );
}
