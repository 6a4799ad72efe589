//! `surge run comd` as CoMD users run it: CoMD's printed lines reproduced, `--json`, and bad
//! input (small boxes, nonsensical numbers, missing or malformed potential files) refused with
//! exit code 2 and a message naming what is wrong.

use std::path::PathBuf;
use std::process::{Command, Output};

/// CoMD's reference data (`shared/comd` beside the checkout or one of its parents).
fn data() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let found = manifest
        .ancestors()
        .map(|a| a.join("shared/comd"))
        .find(|d| d.is_dir());
    found.unwrap_or_else(|| panic!("shared/comd is in no parent of {}", manifest.display()))
}

fn adams() -> String {
    data().join("Cu_u6.eam").display().to_string()
}

fn surge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_surge"))
        .args(args)
        .output()
        .expect("surge runs")
}

fn comd(extra: &[&str]) -> Output {
    let pot = adams();
    let mut args = vec!["run", "comd", "--potential", pot.as_str()];
    args.extend_from_slice(extra);
    surge(&args)
}

fn fails(o: Output, expect: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(expect), "`{expect}` not in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The first six columns of CoMD's printed line (the timing column differs).
fn columns(line: &str) -> Vec<&str> {
    line.split_whitespace().take(6).collect()
}

#[test]
fn prints_comds_lines_for_its_864_atom_run() {
    let o = comd(&["--cells", "6", "--steps", "20", "--print-rate", "10"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("#  Loop   Time(fs)       Total Energy"),
        "{out}"
    );
    let line = |step: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(step))
            .unwrap_or_else(|| panic!("no step {step} in {out}"))
    };
    // comd-1.1-serial-runs.txt, run adams_6x6x6_T600.
    let comd = [
        "      0       0.00    -3.460523233086    -3.538079224686     0.077555991600     600.0000",
        "     10      10.00    -3.460522546690    -3.530103332047     0.069580785357     538.3010",
        "     20      20.00    -3.460524047338    -3.510325073258     0.049801025920     385.2780",
    ];
    for c in comd {
        let step = c.split_whitespace().next().unwrap();
        assert_eq!(columns(line(step)), columns(c));
    }
    assert!(out.contains("Initial energy  : -3.460523233086"), "{out}");
}

#[test]
fn json_has_every_printed_step() {
    let pot = data().join("Cu01.eam.alloy").display().to_string();
    let args = [
        "run",
        "comd",
        "--potential",
        &pot,
        "--nx",
        "6",
        "--ny",
        "6",
        "--nz",
        "6",
    ];
    let extra = [
        "--temperature",
        "0",
        "--delta",
        "0.1",
        "--steps",
        "3",
        "--print-rate",
        "2",
        "--json",
    ];
    let o = surge(&[&args[..], &extra[..]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["potential"]["format"], "setfl");
    assert_eq!(v["atoms"], 864);
    assert_eq!(v["link_cells"], serde_json::json!([3, 3, 3]));
    let steps: Vec<u64> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [0, 2, 3]);
    // CoMD's mishin_6x6x6_T0_delta0.1, step 0.
    let u0 = v["samples"][0]["potential"].as_f64().unwrap();
    assert!((u0 - -3.502405361212).abs() < 1e-11, "{u0}");
    assert!(v["million_atom_steps_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_box_too_small_for_the_cutoff_is_refused() {
    fails(
        comd(&["--cells", "4"]),
        "simulation too small: 4×4×4 unit cells of 3.615 Å make a box of 14.4600 × 14.4600 × \
         14.4600 Å, 2×2×2 link cells",
    );
    fails(
        comd(&["--cells", "6", "--lattice", "2"]),
        "use at least 8 unit cells per axis",
    );
}

#[test]
fn nonsensical_numbers_are_refused() {
    let cases: [(&[&str], &str); 6] = [
        (&["--dt", "-1"], "--dt must be a time step > 0 fs, not -1"),
        (&["--dt", "nan"], "--dt must be a time step > 0 fs, not NaN"),
        (
            &["--temperature", "-5"],
            "--temperature must be a number of kelvin ≥ 0, not -5",
        ),
        (
            &["--print-rate", "0"],
            "--print-rate must be at least 1 step",
        ),
        (&["--cells", "0"], "at least one unit cell per axis"),
        (
            &["--format", "lammps"],
            "unknown EAM potential format `lammps`",
        ),
    ];
    for (args, expect) in cases {
        fails(comd(args), expect);
    }
    let o = comd(&["--steps", "-3"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn missing_or_malformed_potential_files_are_named() {
    fails(
        surge(&["run", "comd"]),
        "`surge run comd` needs --potential FILE",
    );
    fails(
        surge(&["run", "comd", "--potential", "/nonexistent/Cu.eam"]),
        "input `/nonexistent/Cu.eam`: cannot read this funcfl potential file",
    );
    let dir = std::env::temp_dir().join(format!("surge-comd-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(adams()).unwrap();
    let cut: Vec<&str> = text.lines().take(40).collect();
    let short = dir.join("short.eam");
    std::fs::write(&short, cut.join("\n")).unwrap();
    let o = surge(&["run", "comd", "--potential", short.to_str().unwrap()]);
    fails(o, "line 40: the file ends inside");
    let bad = dir.join("bad.eam");
    std::fs::write(&bad, text.replacen("500", "five", 1)).unwrap();
    fails(
        surge(&["run", "comd", "--potential", bad.to_str().unwrap()]),
        "line 3",
    );
}

#[test]
fn options_belong_to_their_app() {
    fails(comd(&["--k", "3"]), "`surge run comd` does not take --k");
    fails(
        comd(&["--size", "10"]),
        "`surge run comd` does not take --size",
    );
    fails(
        surge(&["run", "reduce", "--steps", "3"]),
        "are for `surge run comd`",
    );
}

#[test]
fn help_explains_the_comd_options() {
    let o = surge(&["run", "--help"]);
    let out = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "--potential",
        "--format",
        "--cells",
        "--lattice",
        "--temperature",
        "--dt",
        "--print-rate",
    ] {
        assert!(out.contains(flag), "{flag} not in {out}");
    }
}

/// `surge tune comd` and `surge run comd --tuned`: what they refuse (exit 2, naming the
/// option). The tuning itself is covered on the simulated backend in `apps::comd::tuning`; a
/// real campaign compiles 248 variants (two rustc calls) and takes minutes.
#[test]
fn tuning_comd_refuses_what_it_cannot_use() {
    let pot = adams();
    fails(
        surge(&["tune", "comd"]),
        "`surge tune comd` needs --potential FILE",
    );
    fails(
        surge(&["tune", "comd", "--potential", &pot, "--platform", "cuda"]),
        "tunes on the CPU only (--platform cuda)",
    );
    fails(
        surge(&["tune", "comd", "--potential", &pot, "--inputs", "x"]),
        "it takes no --inputs or --test",
    );
    fails(
        surge(&["tune", "spmv", "--potential", &pot]),
        "--potential and --format are comd's; `surge tune spmv` does not take them",
    );
    fails(
        surge(&["tune", "comd", "--potential", "/no/such.eam"]),
        "/no/such.eam",
    );
    fails(
        comd(&["--tuned", "--variant", "reference/rayon"]),
        "the argument '--tuned' cannot be used with '--variant <ID>'",
    );
}

/// `--platform cuda-emu`: each algorithm's Surge program with its default CUDA variants, in the
/// CUDA emulator, prints the lines the reference prints (energies and temperature); a variant
/// id other than the algorithm is refused, and `--tuned` too.
#[test]
fn the_cuda_programs_print_the_references_lines_in_the_emulator() {
    let run = |extra: &[&str]| {
        let mut args = vec!["--cells", "5", "--steps", "2", "--print-rate", "1"];
        args.extend_from_slice(extra);
        let o = comd(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let lines: Vec<Vec<String>> = out
            .lines()
            .filter(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() == 8 && w[0].parse::<u32>().is_ok()
            })
            .map(|l| columns(l).into_iter().map(String::from).collect())
            .collect();
        assert_eq!(lines.len(), 3, "{out}");
        lines
    };
    let want = run(&[]);
    for a in ["surge/direct", "surge/redistributed"] {
        assert_eq!(
            run(&["--platform", "cuda-emu", "--variant", a]),
            want,
            "{a}"
        );
    }
    fails(
        comd(&["--platform", "cuda-emu", "--variant", "surge/direct/abc"]),
        "runs surge/direct or surge/redistributed (their default CUDA variants), not `surge/direct/abc`",
    );
    fails(
        comd(&["--platform", "cuda-emu", "--tuned"]),
        "picks among CPU variants; on CUDA give --variant",
    );
}
