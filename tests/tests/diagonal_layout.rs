//! The CPU backend's diagonal layout (`layout1 = diagonals`): bands of rows stored by diagonal
//! compute exactly what the row layout and the interpreter compute, including on rows outside
//! the band, overflowing sums, bad indices and integer reductions without a prefix; the layout
//! is built once per computation and never reused for another.

use surge::apps::{matgen, spmv_app};
use surge::mtx::CsrMatrix;
use surge::prelude::*;
use surge::{Kernels, Output, Target, Value, Workspace};

fn diagonal_variants(k: &Kernels) -> Vec<&surge::codegen::variant::Variant> {
    let vs: Vec<_> = k
        .variants()
        .iter()
        .filter(|v| v.id().contains("layout1=diagonals"))
        .collect();
    assert!(!vs.is_empty(), "no diagonal variants");
    vs
}

fn as_value(o: Output) -> Value {
    match o {
        Output::Seq(b) => Value::from_buffer(&b),
        other => panic!("expected a flat sequence, got {other:?}"),
    }
}

/// Runs every diagonal variant twice in one workspace (the second run reuses the layout) and
/// compares each result with the interpreter's, exactly. Returns the diagonal block count.
fn check_all(c: &Computation) -> usize {
    let want = format!("{:?}", c.interpret().unwrap());
    let k = Kernels::build(c, &Target::cpu()).unwrap();
    let mut blocks = 0;
    for v in diagonal_variants(&k) {
        let mut ws = Workspace::default();
        for run in 0..2 {
            k.run_in(c, v, &mut ws)
                .unwrap_or_else(|e| panic!("{v}: {e}"));
            let got = format!("{:?}", as_value(ws.output().unwrap()));
            assert_eq!(got, want, "{v}, run {run}");
        }
        blocks = ws.diagonal_layout(0).map_or(0, |l| l.diagonal_blocks());
    }
    blocks
}

fn x_for(m: &CsrMatrix) -> Vec<f64> {
    (0..m.cols).map(|j| 0.5 + (j % 11) as f64 * 0.125).collect()
}

#[test]
fn banded_matrices_use_the_layout_and_match_the_interpreter() {
    // 1000 rows: 15 full blocks of 64; rows 0..3 and 997.. are outside the band.
    let m = matgen::banded(1000, 3, 5);
    let c = Computation::new(&spmv_app(&m, &x_for(&m)).unwrap()).unwrap();
    let blocks = check_all(&c);
    assert!(blocks >= 14, "only {blocks} diagonal blocks");
}

#[test]
fn rows_outside_the_band_and_overflowing_sums_match_the_interpreter() {
    let mut m = matgen::banded(1000, 2, 9);
    // Row 300 loses its last element: its block runs through the row kernel.
    let (a, b) = (m.row_offsets[300] as usize, m.row_offsets[301] as usize);
    m.values.remove(b - 1);
    m.col_indices.remove(b - 1);
    for o in &mut m.row_offsets[301..] {
        *o -= 1;
    }
    assert!(b - 1 > a);
    // These overflow inside the sums, where the order of the additions decides between ±inf
    // and NaN; NaN and ∞ inputs pass through as IEEE values.
    let mut x = x_for(&m);
    x[10] = 1.5e308;
    x[500] = 1.7e308;
    x[501] = -1.7e308;
    x[700] = f64::NAN;
    x[800] = f64::INFINITY;
    x[900] = f64::NEG_INFINITY;
    let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
    let blocks = check_all(&c);
    assert!(blocks >= 13, "only {blocks} diagonal blocks");
}

#[test]
fn an_out_of_range_index_is_the_interpreters_error() {
    let mut m = matgen::banded(1000, 2, 3);
    let k = m.row_offsets[640] as usize + 1;
    m.col_indices[k] = 5000;
    let c = Computation::new(&spmv_app(&m, &x_for(&m)).unwrap()).unwrap();
    let want = c.interpret().unwrap_err().to_string();
    let kern = Kernels::build(&c, &Target::cpu()).unwrap();
    for v in diagonal_variants(&kern) {
        let mut ws = Workspace::default();
        let got = kern.run_in(&c, v, &mut ws).unwrap_err().to_string();
        assert!(got.contains("5000"), "{v}: {got}");
        assert!(
            want.contains("5000") && got.contains("gather"),
            "{v}: {got} vs {want}"
        );
    }
}

#[test]
fn a_workspace_never_reuses_the_layout_of_another_computation() {
    let m = matgen::banded(700, 2, 1);
    let x = x_for(&m);
    let c1 = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
    let mut m2 = m.clone();
    for v in &mut m2.values {
        *v *= -3.0;
    }
    let c2 = Computation::new(&spmv_app(&m2, &x).unwrap()).unwrap();
    let k = Kernels::build(&c1, &Target::cpu()).unwrap();
    let v = diagonal_variants(&k)[0];
    let mut ws = Workspace::default();
    for c in [&c1, &c2, &c1] {
        k.run_in(c, v, &mut ws).unwrap();
        assert!(ws.diagonal_layout(0).is_some());
        let got = format!("{:?}", as_value(ws.output().unwrap()));
        assert_eq!(got, format!("{:?}", c.interpret().unwrap()));
    }
}

#[test]
fn integer_reductions_without_a_prefix_use_the_layout() {
    // y[i] = Σ_k v[i,k] · x[col[i,k]] over i64, `reduce` without a prefix.
    let m = matgen::banded(900, 4, 2);
    let vals: Vec<i64> = (0..m.nnz()).map(|k| (k % 13) as i64 - 6).collect();
    let xs: Vec<i64> = (0..m.cols).map(|j| (j % 17) as i64 - 8).collect();
    let v = Seq::input("v", vals).unwrap();
    let cols = Seq::input("cols", m.col_indices.clone()).unwrap();
    let offs = Seq::input("offs", m.row_offsets.clone()).unwrap();
    let x = Seq::input("x", xs).unwrap();
    let rows = nest(&v, &offs).unwrap();
    let idx = nest(&cols, &offs).unwrap();
    let y = map(
        |(row, ix): (Seq<i64>, Seq<u32>)| {
            let g = gather(&x, &ix)?;
            let prod = map(|(a, b): (Scalar<i64>, Scalar<i64>)| a * b, (&row, &g))?;
            reduce(|a: Scalar<i64>, b: Scalar<i64>| a + b, &prod)
        },
        (&rows, &idx),
    )
    .unwrap();
    let c = Computation::new(&y).unwrap();
    let blocks = check_all(&c);
    assert!(blocks >= 12, "only {blocks} diagonal blocks");
}

#[test]
fn the_laplacian_band_is_found_despite_grid_aliasing() {
    // 512 × 512 grid: a quarter of the blocks hold a grid boundary; evenly spaced samples land
    // on boundaries of grids like 2048². The band must be the five diagonals.
    let m = matgen::laplacian_2d(512);
    let c = Computation::new(&spmv_app(&m, &x_for(&m)).unwrap()).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let v = diagonal_variants(&k)[0];
    let mut ws = Workspace::default();
    k.run_in(&c, v, &mut ws).unwrap();
    let l = ws.diagonal_layout(0).expect("a layout");
    assert_eq!(l.offsets, vec![-512, -1, 0, 1, 512]);
    // Every block is diagonal but those of the first and last grid rows, whose windows of x for
    // the ±512 diagonals fall outside it; the grid boundaries j = 0 and j = 511 of the other grid
    // rows are recomputed as rows. That exact band computes over 99% of the rows diagonally, so
    // it is kept rather than a zero-filled one (which would check x on every run).
    assert!(!l.filled);
    assert_eq!(l.diagonal_blocks(), l.diagonal.len() - 2 * 8);
    assert_eq!(l.fixups.len(), 2 * 510);
    assert!(l.fixups.iter().all(|r| r % 512 == 0 || r % 512 == 511));
    let got = format!("{:?}", as_value(ws.output().unwrap()));
    assert_eq!(got, format!("{:?}", c.interpret().unwrap()));
}

/// A 3-D stencil's boundary rows lack some of its diagonals (a third of the rows of a 12³ grid):
/// the zero-filled band stores them all, and every diagonal variant, run twice, gives the
/// interpreter's bits, `-0.0` values included.
#[test]
fn a_zero_filled_band_matches_the_interpreter() {
    let mut m = matgen::stencil_3d_7pt(12);
    for (k, v) in m.values.iter_mut().enumerate() {
        if k % 13 == 0 {
            *v = -0.0;
        } else if k % 5 == 0 {
            *v = -*v;
        }
    }
    let c = Computation::new(&spmv_app(&m, &x_for(&m)).unwrap()).unwrap();
    assert_eq!(check_all(&c), 1728 / 64);
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut ws = Workspace::default();
    k.run_in(&c, diagonal_variants(&k)[0], &mut ws).unwrap();
    let l = ws.diagonal_layout(0).expect("a layout");
    assert!(l.filled && l.fixups.is_empty());
    assert_eq!(l.offsets, vec![-144, -12, -1, 0, 1, 12, 144]);
}

/// A stored zero times ∞ or NaN is NaN where the row layout adds nothing: with a non-finite `x`
/// the filled layout is not used, and the result is still the interpreter's.
#[test]
fn a_zero_filled_band_is_not_used_on_a_non_finite_x() {
    let m = matgen::stencil_3d_7pt(8);
    let mut x = x_for(&m);
    x[3] = f64::INFINITY;
    x[200] = f64::NAN;
    let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
    check_all(&c);
}

/// Sparsely filled diagonals would store several zeros per element: such a band is not
/// zero-filled (the exact band is tried instead), and the result is the interpreter's.
#[test]
fn a_band_that_would_store_mostly_zeros_is_not_filled() {
    let m = matgen::scattered_band(3000, 8, 4, 11);
    let c = Computation::new(&spmv_app(&m, &x_for(&m)).unwrap()).unwrap();
    check_all(&c);
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut ws = Workspace::default();
    k.run_in(&c, diagonal_variants(&k)[0], &mut ws).unwrap();
    assert!(ws.diagonal_layout(0).is_none_or(|l| !l.filled));
}
