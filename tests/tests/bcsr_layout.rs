//! The CPU backend's register-blocked layout (`layout1 = bcsr_<r>_<c>`): block rows of r rows in
//! r×c blocks, explicit zeros filled, compute bit for bit what the interpreter computes on every
//! shared matrix, on each shared matrix blown up into blocks of every shape (so that the layout,
//! not only its fallback, runs), and on the edge cases (empty rows, tail rows, unsorted and
//! duplicate columns, blocks at the end of x, -0.0 values, NaN and ∞ in the matrix and in x,
//! prefix-less and other reductions); a bad index is the row layout's error.

use surge::apps::{matgen, spmv_app};
use surge::codegen::policy::bcsr::BcsrShape;
use surge::codegen::variant::Variant;
use surge::mtx::{CsrMatrix, read_mtx};
use surge::prelude::*;
use surge::{Kernels, Target, Workspace};
use tests::layouts::{bad_index, bits, from_rows, row_variant, x_for};
use tests::shared_matrix_files;

fn bcsr_variants(k: &Kernels) -> Vec<&Variant> {
    let vs: Vec<_> = k
        .variants()
        .iter()
        .filter(|v| v.id().contains("layout1=bcsr_"))
        .collect();
    assert_eq!(
        vs.iter()
            .map(|v| shape_of(v))
            .collect::<std::collections::HashSet<_>>()
            .len(),
        BcsrShape::all().len(),
        "every shape has variants"
    );
    vs
}

fn shape_of(v: &Variant) -> BcsrShape {
    let id = v.id();
    let name = id.split(',').find_map(|p| p.strip_prefix("layout1="));
    BcsrShape::parse(name.expect("a layout")).expect("a BCSR layout")
}

/// Runs every BCSR variant of `c` twice in one workspace (the second run reuses the layouts)
/// and compares each result with `want`, bit for bit. Returns the block rows each shape's
/// layout held (0 without a layout).
fn check_all(name: &str, c: &Computation, k: &Kernels, want: &[u64]) -> Vec<usize> {
    let mut ws = Workspace::default();
    for v in bcsr_variants(k) {
        for run in 0..2 {
            k.run_in(c, v, &mut ws)
                .unwrap_or_else(|e| panic!("{name}: {v}: {e}"));
            let got = bits(ws.output().unwrap());
            if got != want {
                let i = got.iter().zip(want).position(|(a, b)| a != b);
                panic!("{name}: {v}, run {run}: first difference at row {i:?}");
            }
        }
    }
    BcsrShape::all()
        .iter()
        .map(|&s| ws.bcsr_layout(0, s).map_or(0, |l| l.block_rows()))
        .collect()
}

fn spmv(m: &CsrMatrix, x: &[f64]) -> (Computation, Vec<u64>) {
    let y = spmv_app(m, x).unwrap();
    let want: Vec<u64> = y.interpret().unwrap().iter().map(|v| v.to_bits()).collect();
    (Computation::new(&y).unwrap(), want)
}

/// `m ⊗ P` for an `r × c` pattern `P`: each element `(i, j, v)` becomes a block of `r × c`
/// elements at rows `i r ..`, columns `j c ..`, some left out (by position, so that blocks fill
/// unevenly and some block rows fill too poorly for the layout), values varied and signed.
fn blown_up(m: &CsrMatrix, s: BcsrShape) -> CsrMatrix {
    let (r, c) = (s.r, s.c);
    let mut out = CsrMatrix {
        rows: m.rows * r,
        cols: m.cols * c,
        row_offsets: vec![0],
        col_indices: vec![],
        values: vec![],
    };
    for i in 0..m.rows {
        let (a, b) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
        for t in 0..r {
            for k in a..b {
                let j = m.col_indices[k] as usize;
                for u in 0..c {
                    let keep = !(i * 7 + j * 3 + t * 5 + u).is_multiple_of(4 + i % 5);
                    if keep {
                        out.col_indices.push((j * c + u) as u32);
                        out.values
                            .push(m.values[k] * (1.0 + t as f64 - 0.25 * u as f64));
                    }
                }
            }
            out.row_offsets.push(out.values.len() as u64);
        }
    }
    out
}

#[test]
fn every_bcsr_variant_matches_the_interpreter_on_every_shared_matrix() {
    let mut kernels: Option<Kernels> = None;
    let (mut checked, mut held) = (0, vec![0; BcsrShape::all().len()]);
    for path in shared_matrix_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(m) = read_mtx(&path) else {
            continue; // young1c is complex (see spmv_matrices.rs)
        };
        let (c, want) = spmv(&m, &x_for(m.cols));
        // One library serves every matrix: the kernels take sizes as arguments.
        let k = kernels.get_or_insert_with(|| Kernels::build(&c, &Target::cpu()).unwrap());
        check_all(&name, &c, k, &want);
        // Blown up into blocks of each shape (the smaller matrices: test time), so that the
        // layout holds most block rows and leaves some to the rows.
        if m.nnz() <= 20_000 {
            for (q, s) in BcsrShape::all().into_iter().enumerate() {
                let b = blown_up(&m, s);
                let (c, want) = spmv(&b, &x_for(b.cols));
                let rows = check_all(&format!("{name} in {s}"), &c, k, &want);
                assert!(rows[q] > 0, "{name} in {s}: no block row in the layout");
                held[q] += 1;
            }
        }
        checked += 1;
    }
    assert!(checked >= 24, "only {checked} matrices checked");
    assert!(held.iter().all(|&h| h >= 10), "blown-up matrices: {held:?}");
}

/// Rows of 12 columns `12 (i / 12) + 0..12` (mod `cols`): block rows of 2, 3 and 4 rows share
/// them. Every `hole`-th position is left out, differently per row (0: none), so blocks store
/// zeros. Values of both signs and `-0.0`.
fn banded_rows(n: usize, cols: usize, hole: usize) -> Vec<Vec<(u32, f64)>> {
    (0..n)
        .map(|i| {
            (0..12usize)
                .filter(|k| hole == 0 || (i * 5 + k) % hole != 0)
                .map(|k| (((i / 12) * 12 + k) % cols) as u32)
                .collect::<std::collections::BTreeSet<u32>>()
                .into_iter()
                .map(|j| {
                    let v = match (i + j as usize) % 7 {
                        0 => -0.0,
                        1 => -1.5,
                        _ => 0.25 * (j % 5) as f64 + 0.5,
                    };
                    (j, v)
                })
                .collect()
        })
        .collect()
}

#[test]
fn edge_cases_match_the_interpreter() {
    let band = banded_rows(203, 64, 5);
    let mut cases: Vec<(&str, CsrMatrix)> = vec![
        // 203 rows: a tail of 203 mod r rows runs as rows for every shape.
        ("banded with a tail", from_rows(64, &band)),
        (
            "one row",
            from_rows(5, &[vec![(0, 1.5), (3, -2.0), (4, 0.25)]]),
        ),
        ("no rows", from_rows(3, &[])),
        (
            "x narrower than a block",
            from_rows(1, &vec![vec![(0, 2.0)]; 8]),
        ),
        ("random 37 rows", matgen::random(37, 50, 5, 7)),
        ("power law", matgen::power_law(1000, 1, 1.6, 3)),
        ("9-point stencil", matgen::stencil_2d_9pt(20)),
    ];
    // Empty rows inside block rows and whole empty block rows; a block at the last columns of
    // x (moved left so that it ends there); unsorted and duplicate columns (those block rows
    // run as rows); explicit zeros, -0.0, NaN and ∞ among the values.
    let mut rows = band.clone();
    rows[5].clear();
    rows[8..12].iter_mut().for_each(|r| r.clear());
    rows[20] = vec![(62, 1.0), (63, -2.0)];
    rows[21] = vec![(63, 4.0)];
    rows[30] = vec![(7, 1.0), (3, 2.0)];
    rows[41] = vec![(3, 1.0), (3, 2.0)];
    rows[50] = vec![(1, f64::NAN), (2, 0.0), (9, f64::INFINITY)];
    rows[51] = vec![(1, -0.0), (4, f64::NEG_INFINITY)];
    cases.push(("irregular rows", from_rows(64, &rows)));
    for (name, m) in &cases {
        let (c, want) = spmv(m, &x_for(m.cols));
        let k = Kernels::build(&c, &Target::cpu()).unwrap();
        check_all(name, &c, &k, &want);
    }
}

#[test]
fn nan_and_infinity_in_x_run_as_rows_and_negative_zero_stays_neutral() {
    // The rows of a block row miss different columns, so each block stores zeros: a zero times
    // an infinite x is NaN, where the row layout has no product at all.
    let m = from_rows(104, &banded_rows(96, 104, 4));
    let mut ws_checked = 0;
    for special in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e308] {
        let mut x = x_for(m.cols);
        for j in (0..m.cols).step_by(13) {
            x[j] = special;
        }
        // -0.0 everywhere a -0.0 value reads: products of -0.0, summed from +0.0.
        x[2] = -0.0;
        let (c, want) = spmv(&m, &x);
        if special.is_nan() {
            assert!(want.iter().any(|b| f64::from_bits(*b).is_nan()));
        }
        let k = Kernels::build(&c, &Target::cpu()).unwrap();
        let held = check_all(&format!("x with {special}"), &c, &k, &want);
        // Every shape holds the block rows (their fill is 4/3); with a non-finite x the layout
        // is built but refused for the run, which the rows compute.
        if special.is_finite() {
            assert!(held.iter().all(|&h| h > 0), "{special}: {held:?}");
            ws_checked += 1;
        }
    }
    assert_eq!(ws_checked, 2);
}

#[test]
fn the_same_kernels_run_a_finite_x_in_blocks_and_an_infinite_one_as_rows() {
    let rows = banded_rows(64, 32, 4);
    let m = from_rows(32, &rows);
    let x = x_for(m.cols);
    let (c, want) = spmv(&m, &x);
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut bad = x.clone();
    bad[5] = f64::INFINITY;
    let (c_bad, want_bad) = spmv(&m, &bad);
    for v in bcsr_variants(&k) {
        assert_eq!(bits(k.run_on(v, c.buffers()).unwrap()), want, "{v}");
        assert_eq!(bits(k.run_on(v, c_bad.buffers()).unwrap()), want_bad, "{v}");
    }
}

/// `y[i] = reduce(+, v[i,k] · x[col[i,k]])` from `prefix`, or without one: the first element
/// starts the fold, so a row of `-0.0` products is `-0.0` (a stored zero's `0.0 · x` would make
/// it `+0.0`), and an empty row is the interpreter's error.
fn reduction(m: &CsrMatrix, x: &[f64], prefix: Option<f64>) -> Seq<f64> {
    let v = Seq::input("v", m.values.clone()).unwrap();
    let cols = Seq::input("cols", m.col_indices.clone()).unwrap();
    let offs = Seq::input("offs", m.row_offsets.clone()).unwrap();
    let x = Seq::input("x", x.to_vec()).unwrap();
    let rows = nest(&v, &offs).unwrap();
    let idx = nest(&cols, &offs).unwrap();
    map(
        |(row, ix): (Seq<f64>, Seq<u32>)| {
            let g = gather(&x, &ix)?;
            let prod = map(|(a, b): (Scalar<f64>, Scalar<f64>)| a * b, (&row, &g))?;
            let add = |a: Scalar<f64>, b: Scalar<f64>| a + b;
            match prefix {
                Some(p) => reduce_prefix(add, &prod, p),
                None => reduce(add, &prod),
            }
        },
        (&rows, &idx),
    )
    .unwrap()
}

#[test]
fn other_reductions_run_as_rows() {
    // Rows whose products are all -0.0: -0.0 without a prefix or from -0.0, +0.0 from +0.0.
    let rows: Vec<Vec<(u32, f64)>> = (0..64u32)
        .map(|i| {
            (0..(1 + i % 5))
                .map(|k| ((i / 2) * 2 + k % 3, if i % 3 == 0 { -0.0 } else { 1.0 }))
                .collect()
        })
        .collect();
    let m = from_rows(66, &rows);
    let x = x_for(m.cols);
    for prefix in [None, Some(-0.0), Some(1.0)] {
        let y = reduction(&m, &x, prefix);
        let want: Vec<u64> = y.interpret().unwrap().iter().map(|v| v.to_bits()).collect();
        assert!(want.contains(&(-0.0f64).to_bits()) || prefix == Some(1.0));
        let c = Computation::new(&y).unwrap();
        let k = Kernels::build(&c, &Target::cpu()).unwrap();
        let held = check_all(&format!("prefix {prefix:?}"), &c, &k, &want);
        assert!(held.iter().all(|&h| h == 0), "{prefix:?}: {held:?}");
    }
    // An empty row without a prefix: the row layout's error, from every BCSR variant.
    let mut rows = rows;
    rows[33].clear();
    let m = from_rows(66, &rows);
    let c = Computation::new(&reduction(&m, &x, None)).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let expected = k.run(&c, row_variant(&k)).unwrap_err().to_string();
    for v in bcsr_variants(&k) {
        assert_eq!(k.run(&c, v).unwrap_err().to_string(), expected, "{v}");
    }
}

#[test]
fn an_out_of_range_index_is_the_row_layouts_error() {
    let (c, k, expected) = bad_index(from_rows(64, &banded_rows(400, 64, 0)));
    for v in bcsr_variants(&k) {
        let mut ws = Workspace::default();
        let got = k.run_in(&c, v, &mut ws).unwrap_err().to_string();
        assert_eq!(got, expected, "{v}");
        // The layout holds the valid block rows; the bad one is left to the rows.
        let l = ws.bcsr_layout(0, shape_of(v)).expect("a layout");
        assert!(l.rest.iter().any(|&(a, e)| (a..e).contains(&321)));
    }
}

#[test]
fn the_layout_is_kept_per_shape_and_reports_its_cost() {
    let m = from_rows(200, &banded_rows(1001, 200, 0));
    let (c, want) = spmv(&m, &x_for(m.cols));
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut ws = Workspace::default();
    for v in bcsr_variants(&k) {
        k.run_in(&c, v, &mut ws).unwrap();
        assert_eq!(bits(ws.output().unwrap()), want, "{v}");
    }
    for s in BcsrShape::all() {
        let l = ws.bcsr_layout(0, s).expect("a layout per shape");
        assert_eq!(l.shape, s);
        assert_eq!(l.rows, 1001);
        assert_eq!(l.starts.len(), l.block_rows() + 1);
        assert_eq!(l.values.len(), l.cols.len() * s.r * s.c);
        assert!(l.inspect_seconds > 0.0 && l.sample.seconds > 0.0);
        assert!(l.inspect_seconds >= l.sample.seconds);
        assert!(l.fill() >= 1.0, "{}", l.fill());
        assert!(
            l.fill() <= surge_cpu::native::bcsr::MAX_FILL,
            "{}",
            l.fill()
        );
        assert_eq!(l.sample.share, 1.0);
        assert_eq!(l.nnz + rest_nnz(&m, &l.rest), m.nnz());
        assert_eq!(l.rest_rows(), 1001 % s.r, "the tail only");
        // The kernel reads x unchecked from an input at least this long.
        assert_eq!(l.gather_len, m.cols);
    }
    // Another computation's inputs get their own layout.
    let mut m2 = m.clone();
    m2.values.iter_mut().for_each(|v| *v *= -3.0);
    let (c2, want2) = spmv(&m2, &x_for(m2.cols));
    let v = bcsr_variants(&k)[0];
    k.run_in(&c2, v, &mut ws).unwrap();
    assert_eq!(bits(ws.output().unwrap()), want2);
}

fn rest_nnz(m: &CsrMatrix, rest: &[(usize, usize)]) -> usize {
    rest.iter()
        .map(|&(a, b)| (m.row_offsets[b] - m.row_offsets[a]) as usize)
        .sum()
}
