//! The CPU backend's four-partial-sum row layout (`layout1 = lanes`): each row's products summed
//! in four partial sums (element k into sum k mod 4, the row `(s0 + s2) + (s1 + s3)`). Every
//! variant computes exactly that order (checked bit for bit against a plain-Rust model of it) and
//! stays within the oracle's tolerance of the interpreter, on every shared matrix and on the edge
//! cases (empty rows, no rows, rows of 1-40 elements, -0.0, NaN and ∞ in x) and on the layout's
//! narrower forms (`u16` indices, one value for all elements); the SIMD path and
//! the scalar fallback agree bit for bit; a bad index is the row layout's error.

use surge::apps::{matgen, spmv_app};
use surge::codegen::variant::Variant;
use surge::mtx::{CsrMatrix, read_mtx};
use surge::oracle::{Expected, Flat};
use surge::prelude::*;
use surge::{Buffer, Kernels, Output, Target, Workspace};
use tests::layouts::{
    bad_index, from_rows, in_simd_child, rerun_with_gather, rerun_with_simd, small_cases, x_for,
    x_with_specials,
};
use tests::shared_matrix_files;

fn lanes_variants(k: &Kernels) -> Vec<&Variant> {
    let vs: Vec<_> = k
        .variants()
        .iter()
        .filter(|v| v.id().ends_with("layout1=lanes"))
        .collect();
    assert!(vs.len() >= 6, "{} lanes variants", vs.len());
    vs
}

/// The layout's summation order in plain Rust: what every lanes variant must compute.
fn model(m: &CsrMatrix, x: &[f64]) -> Vec<f64> {
    (0..m.rows)
        .map(|i| {
            let mut s = [0.0f64; 4];
            let (a, e) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
            for (j, k) in (a..e).enumerate() {
                s[j % 4] += m.values[k] * x[m.col_indices[k] as usize];
            }
            (s[0] + s[2]) + (s[1] + s[3])
        })
        .collect()
}

/// Equal bits, every NaN equal to every NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Runs every lanes variant of `m·x` twice in one workspace (the second run reuses the layout):
/// each result is the model's, and within the oracle's tolerance of the interpreter.
fn check_all(name: &str, m: &CsrMatrix, x: &[f64], k: Option<&Kernels>) {
    let y = spmv_app(m, x).unwrap();
    let c = Computation::new(&y).unwrap();
    let built;
    let k = match k {
        Some(k) => k,
        None => {
            built = Kernels::build(&c, &Target::cpu()).unwrap();
            &built
        }
    };
    let expected = Expected::interpret(c.ir(), c.buffers()).unwrap();
    let want = model(m, x);
    let mut ws = Workspace::default();
    for v in lanes_variants(k) {
        for run in 0..2 {
            k.run_in(&c, v, &mut ws)
                .unwrap_or_else(|e| panic!("{name}: {v}: {e}"));
            let out = ws.output().unwrap();
            if let Err(e) = expected.check(&Flat::of_output(&out)) {
                panic!("{name}: {v}, run {run}: not the interpreter's: {e}");
            }
            let Output::Seq(Buffer::F64(got)) = out else {
                panic!("{name}: a flat f64 result");
            };
            if let Some(i) = (0..want.len()).find(|&i| !same(got[i], want[i])) {
                panic!(
                    "{name}: {v}, run {run}: row {i} is {} where four partial sums give {}",
                    got[i], want[i]
                );
            }
        }
    }
}

#[test]
fn every_lanes_variant_sums_in_four_lanes_on_every_shared_matrix() {
    let mut kernels: Option<Kernels> = None;
    let mut checked = 0;
    for path in shared_matrix_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(m) = read_mtx(&path) else {
            continue; // young1c is complex (see spmv_matrices.rs)
        };
        let x = x_for(m.cols);
        // One library serves every matrix: the kernels take sizes as arguments.
        let k = kernels.get_or_insert_with(|| {
            let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
            Kernels::build(&c, &Target::cpu()).unwrap()
        });
        check_all(&name, &m, &x, Some(k));
        checked += 1;
    }
    assert!(checked >= 24, "only {checked} matrices checked");
}

#[test]
fn edge_cases_sum_in_four_lanes() {
    let mut cases = small_cases();
    // Rows of every length from 0 to 40, so every tail (1-3 elements) follows every number of
    // whole steps, and empty rows between them.
    let rows: Vec<Vec<(u32, f64)>> = (0..700u32)
        .map(|i| {
            let len = if i % 7 == 0 { 0 } else { (i % 41) as usize };
            (0..len)
                .map(|k| ((i as usize * 7 + k * 13) % 300) as u32)
                .map(|j| (j, 1.0 + f64::from(j % 5) - 2.5))
                .collect()
        })
        .collect();
    cases.push(("ragged with empty rows", from_rows(300, &rows)));
    // Rows of -0.0 products: each partial sum starts at +0.0, as the interpreter's fold does.
    cases.push((
        "negative zeros",
        from_rows(2, &[vec![(0, -0.0), (1, -0.0)], vec![(1, -1.0)]]),
    ));
    for (name, m) in &cases {
        let x = x_with_specials(m.cols);
        check_all(name, m, &x, None);
    }
}

#[test]
fn an_out_of_range_index_is_the_row_layouts_error() {
    let (c, k, expected) = bad_index(matgen::random(500, 400, 6, 11));
    for v in lanes_variants(&k) {
        let mut ws = Workspace::default();
        let got = k.run_in(&c, v, &mut ws).unwrap_err().to_string();
        assert_eq!(got, expected, "{v}");
        assert!(
            ws.lanes_layout(0).is_none(),
            "{v}: no layout over a bad row"
        );
    }
}

#[test]
fn the_layout_is_kept_per_computation_and_reports_its_cost() {
    let m = matgen::power_law(3000, 1, 1.6, 9);
    let x = x_for(m.cols);
    let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let v = lanes_variants(&k)[0];
    let mut ws = Workspace::default();
    k.run_in(&c, v, &mut ws).unwrap();
    let l = ws.lanes_layout(0).expect("a kept layout");
    assert_eq!((l.rows, l.starts.len()), (m.rows, m.rows + 1));
    assert_eq!(l.starts, m.row_offsets);
    assert!(l.inspect_seconds > 0.0);
    // Another computation's inputs get their own layout.
    let mut m2 = m.clone();
    m2.values.iter_mut().for_each(|v| *v *= -3.0);
    m2.row_offsets.pop();
    m2.row_offsets.push(m.row_offsets[m.rows] - 1);
    m2.col_indices.pop();
    m2.values.pop();
    let c2 = Computation::new(&spmv_app(&m2, &x).unwrap()).unwrap();
    k.run_in(&c2, v, &mut ws).unwrap();
    assert_eq!(ws.lanes_layout(0).unwrap().starts, m2.row_offsets);
    let Output::Seq(Buffer::F64(got)) = ws.output().unwrap() else {
        panic!("a flat f64 result");
    };
    assert!(got.iter().zip(model(&m2, &x)).all(|(a, b)| same(*a, b)));
}

/// The lanes kernels take AVX2 where the CPU has it, else the scalar loop in the same order;
/// `SURGE_CPU_SIMD=none` forces the scalar loop, so the two tests above run again in a child
/// process without SIMD: both paths give the model's bits on every machine that has AVX2.
/// The layout's narrower forms (indices as `u16` where `x` has at most 65,536 elements; no values
/// read where every element has one value, an infinite one included, whose masked tail must add
/// `+0.0`) sum in the same order, on rows of 0 to 9 elements (every tail after the four-wide
/// steps); the layout kept is the form expected.
#[test]
fn narrow_indices_and_one_value_sum_in_four_lanes() {
    let cases: [(usize, Option<f64>, bool, bool); 5] = [
        (500, None, true, false),
        (500, Some(1.0), true, true),
        (70_000, Some(0.5), false, true),
        (70_000, None, false, false),
        (300, Some(f64::INFINITY), true, true),
    ];
    for (cols, one, narrow, iso) in cases {
        let name = format!("{cols} columns, value {one:?}");
        let full = matgen::random(200, cols, 9, cols as u64);
        let rows: Vec<Vec<(u32, f64)>> = (0..full.rows)
            .map(|i| {
                let a = full.row_offsets[i] as usize;
                let e = full.row_offsets[i + 1] as usize;
                (a..e.min(a + i % 10))
                    .map(|k| (full.col_indices[k], one.unwrap_or(full.values[k])))
                    .collect()
            })
            .collect();
        let m = from_rows(cols, &rows);
        let x: Vec<f64> = (0..cols).map(|i| 1.0 + (i % 17) as f64 * 0.125).collect();
        check_all(&name, &m, &x, None);
        let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
        let k = Kernels::shared(&c, &Target::cpu()).unwrap();
        let mut ws = Workspace::default();
        k.run_in(&c, lanes_variants(&k)[0], &mut ws).unwrap();
        let l = ws
            .lanes_layout(0)
            .expect("the lanes layout was built and kept");
        assert_eq!(
            (!l.narrow.is_empty(), l.iso.is_some()),
            (narrow, iso),
            "{name}: the layout's form"
        );
    }
}

#[test]
fn the_scalar_path_sums_in_the_same_order() {
    if in_simd_child() {
        return;
    }
    rerun_with_simd(
        "none",
        &[
            "every_lanes_variant_sums_in_four_lanes_on_every_shared_matrix",
            "edge_cases_sum_in_four_lanes",
            "narrow_indices_and_one_value_sum_in_four_lanes",
        ],
    );
}

/// The AVX2 kernel loads `x` with the hardware gather or with pairs of scalar loads, whichever
/// this CPU did faster (measured once per process, `templates/cpu/sell_simd.rs`); both ways,
/// forced in a child process each, give the same bits on every matrix and edge case.
#[test]
fn both_ways_of_loading_x_sum_in_the_same_order() {
    if in_simd_child() {
        return;
    }
    for way in ["hw", "pairs"] {
        rerun_with_gather(
            way,
            &[
                "every_lanes_variant_sums_in_four_lanes_on_every_shared_matrix",
                "edge_cases_sum_in_four_lanes",
                "narrow_indices_and_one_value_sum_in_four_lanes",
            ],
        );
    }
}
