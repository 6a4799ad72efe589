//! Helpers of the SpMV storage-layout tests (`sell_layout.rs`, `bcsr_layout.rs`,
//! `lanes_layout.rs`): the reference row variant every layout must equal bit for bit, a result's
//! bits, a matrix from explicit rows and the tests' `x`.

use surge::apps::spmv_app;
use surge::codegen::variant::Variant;
use surge::mtx::CsrMatrix;
use surge::prelude::*;
use surge::{Buffer, Kernels, Output, Target};

/// A matrix from explicit rows of (column, value).
pub fn from_rows(cols: usize, rows: &[Vec<(u32, f64)>]) -> CsrMatrix {
    let mut m = CsrMatrix {
        rows: rows.len(),
        cols,
        row_offsets: vec![0],
        col_indices: vec![],
        values: vec![],
    };
    for r in rows {
        for &(j, v) in r {
            m.col_indices.push(j);
            m.values.push(v);
        }
        m.row_offsets.push(m.values.len() as u64);
    }
    m
}

/// The layout tests' `x`: `0.5 + (j mod 11) / 8`, exact in binary.
pub fn x_for(cols: usize) -> Vec<f64> {
    (0..cols).map(|j| 0.5 + (j % 11) as f64 * 0.125).collect()
}

/// [`x_for`] with -0.0, NaN, ∞ and -∞ at positions 1-4 (where it has them): they pass through
/// the products as IEEE values.
pub fn x_with_specials(cols: usize) -> Vec<f64> {
    let mut x = x_for(cols);
    for (j, v) in [
        (1, -0.0),
        (2, f64::NAN),
        (3, f64::INFINITY),
        (4, f64::NEG_INFINITY),
    ] {
        if j < x.len() {
            x[j] = v;
        }
    }
    x
}

/// The small matrices every layout's edge-case test starts from: one row, one empty row, no
/// rows, random rows, power-law rows.
pub fn small_cases() -> Vec<(&'static str, CsrMatrix)> {
    use surge::apps::matgen;
    vec![
        (
            "one row",
            from_rows(5, &[vec![(0, 1.5), (3, -2.0), (4, 0.25)]]),
        ),
        ("one empty row", from_rows(3, &[vec![]])),
        ("no rows", from_rows(3, &[])),
        ("random 37 rows", matgen::random(37, 50, 5, 7)),
        ("power law", matgen::power_law(1000, 1, 1.6, 3)),
    ]
}

/// The row variant that folds each row sequentially (`unroll2=0`), one thread.
pub fn row_variant(k: &Kernels) -> &Variant {
    k.variants()
        .iter()
        .find(|v| {
            let id = v.id();
            id.contains("independent.sequential/threads=1,")
                && id.contains("unroll2=0")
                && id.contains("layout1=rows")
        })
        .expect("a sequential row variant")
}

/// The bits of a flat f64 or i64 result.
pub fn bits(o: Output) -> Vec<u64> {
    match o {
        Output::Seq(Buffer::F64(v)) => v.iter().map(|x| x.to_bits()).collect(),
        Output::Seq(Buffer::I64(v)) => v.iter().map(|x| *x as u64).collect(),
        other => panic!("expected a flat sequence, got {other:?}"),
    }
}

/// `m` with the third element of row 321 gathering from column 5000 (outside `x`): its
/// computation, kernels and the row layout's error, which names the index and the `gather` (as
/// the interpreter's does). Every layout must report exactly this error.
pub fn bad_index(mut m: CsrMatrix) -> (Computation, Kernels, String) {
    let k0 = m.row_offsets[321] as usize + 2;
    m.col_indices[k0] = 5000;
    let y = spmv_app(&m, &x_for(m.cols)).unwrap();
    let want = y.interpret().unwrap_err().to_string();
    assert!(want.contains("5000"), "{want}");
    let c = Computation::new(&y).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let expected = k.run(&c, row_variant(&k)).unwrap_err().to_string();
    assert!(
        expected.contains("5000") && expected.contains("gather"),
        "{expected}"
    );
    (c, k, expected)
}

/// Whether this test process is a child [`rerun_with_simd`] or [`rerun_with_gather`] started.
pub fn in_simd_child() -> bool {
    std::env::var_os("SURGE_CPU_SIMD").is_some() || std::env::var_os("SURGE_CPU_GATHER").is_some()
}

/// Runs `tests` of this test binary again in a child process with `SURGE_CPU_SIMD=level` (the
/// kernels' SIMD path is chosen once per process, so a lower one needs a process of its own) and
/// asserts that all of them passed.
pub fn rerun_with_simd(level: &str, tests: &[&str]) {
    rerun_with("SURGE_CPU_SIMD", level, tests);
}

/// Runs `tests` again in a child process with `SURGE_CPU_GATHER=way` (`hw` or `pairs`: how the
/// SIMD kernels load `x`, otherwise measured once per process) and asserts that all passed.
pub fn rerun_with_gather(way: &str, tests: &[&str]) {
    rerun_with("SURGE_CPU_GATHER", way, tests);
}

fn rerun_with(var: &str, value: &str, tests: &[&str]) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(&exe)
        .env(var, value)
        .arg("--exact")
        .args(tests)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains(&format!("{} passed", tests.len())),
        "{var}={value}:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
