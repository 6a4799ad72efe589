//! The CPU backend's SELL-C-σ layout (`layout1 = sell_<C>_<σ>`): chunks of C rows, sorted within
//! windows of σ, compute bit for bit what the interpreter computes on every shared matrix and on
//! the edge cases (empty rows, one row, a partial last chunk, long rows, -0.0, NaN and ∞ in x,
//! prefix-less reductions), and a bad index is the row layout's error.

use surge::apps::{matgen, spmv_app};
use surge::codegen::policy::sell::SellShape;
use surge::codegen::variant::Variant;
use surge::mtx::{CsrMatrix, read_mtx};
use surge::prelude::*;
use surge::{Kernels, Target, Workspace};
use tests::layouts::{
    bad_index, bits, from_rows, in_simd_child, rerun_with_gather, rerun_with_simd, row_variant,
    small_cases, x_for, x_with_specials,
};
use tests::shared_matrix_files;

fn sell_variants(k: &Kernels) -> Vec<&Variant> {
    let vs: Vec<_> = k
        .variants()
        .iter()
        .filter(|v| v.id().contains("layout1=sell_"))
        .collect();
    assert_eq!(
        vs.iter()
            .map(|v| shape_of(v))
            .collect::<std::collections::HashSet<_>>()
            .len(),
        SellShape::all().len(),
        "every shape has variants"
    );
    vs
}

fn shape_of(v: &Variant) -> SellShape {
    let id = v.id();
    let name = id.split(',').find_map(|p| p.strip_prefix("layout1="));
    SellShape::parse(name.expect("a layout")).expect("a SELL layout")
}

/// Runs every SELL variant of `c` twice in one workspace (the second run reuses the layouts)
/// and compares each result with `want`, bit for bit.
fn check_all(name: &str, c: &Computation, k: &Kernels, want: &[u64]) {
    let mut ws = Workspace::default();
    for v in sell_variants(k) {
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
}

fn spmv(m: &CsrMatrix, x: &[f64]) -> (Computation, Vec<u64>) {
    let y = spmv_app(m, x).unwrap();
    let want: Vec<u64> = y.interpret().unwrap().iter().map(|v| v.to_bits()).collect();
    (Computation::new(&y).unwrap(), want)
}

#[test]
fn every_sell_variant_matches_the_interpreter_on_every_shared_matrix() {
    let mut kernels: Option<Kernels> = None;
    let mut checked = 0;
    for path in shared_matrix_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(m) = read_mtx(&path) else {
            continue; // young1c is complex (see spmv_matrices.rs)
        };
        let (c, want) = spmv(&m, &x_for(m.cols));
        // One library serves every matrix: the kernels take sizes as arguments.
        let k = kernels.get_or_insert_with(|| Kernels::build(&c, &Target::cpu()).unwrap());
        check_all(&name, &c, k, &want);
        checked += 1;
    }
    assert!(checked >= 24, "only {checked} matrices checked");
}

#[test]
fn edge_cases_match_the_interpreter() {
    let mut cases = small_cases();
    cases.extend([("arrowhead", matgen::arrowhead(600, 3, 2))]);
    // Empty rows between rows of every length up to 40 (longer than the mean by far, so the
    // longest are computed outside the layout) in windows wider than σ.
    let mut rows = Vec::new();
    for i in 0..700u32 {
        let len = match i % 9 {
            0 | 4 => 0,
            8 => 1 + (i % 41) as usize,
            _ => (i % 5) as usize,
        };
        rows.push(
            (0..len)
                .map(|k| ((i as usize * 7 + k * 13) % 300) as u32)
                .map(|j| (j, 1.0 + f64::from(j % 5) - 2.5))
                .collect(),
        );
    }
    cases.push(("ragged with empty rows", from_rows(300, &rows)));
    for (name, m) in &cases {
        let x = x_with_specials(m.cols);
        let (c, want) = spmv(m, &x);
        let k = Kernels::build(&c, &Target::cpu()).unwrap();
        check_all(name, &c, &k, &want);
    }
}

/// `y[i] = reduce(+, v[i,k] · x[col[i,k]])` without a prefix: the first element starts the fold,
/// so a row of `-0.0` products is `-0.0` (adding a padding `0.0 · x` would make it `+0.0`), and an
/// empty row is the interpreter's error.
fn prefixless(m: &CsrMatrix, x: &[f64]) -> Seq<f64> {
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
            reduce(|a: Scalar<f64>, b: Scalar<f64>| a + b, &prod)
        },
        (&rows, &idx),
    )
    .unwrap()
}

#[test]
fn prefixless_reductions_keep_negative_zero_and_report_empty_rows() {
    // Rows of 1..=20 elements; x holds -0.0 where the short rows read, NaN and ∞ where only
    // long rows read (their chunk's short rows must not pick them up from padding).
    let rows: Vec<Vec<(u32, f64)>> = (0..203u32)
        .map(|i| {
            let len = 1 + (i * 7 % 20) as usize;
            (0..len)
                .map(|k| {
                    let j = if len < 4 { 0 } else { (k % 3) as u32 + 1 };
                    (j, if k % 2 == 0 { 1.0 } else { -0.5 })
                })
                .collect()
        })
        .collect();
    let m = from_rows(4, &rows);
    let x = vec![-0.0, f64::NAN, 2.0, f64::INFINITY];
    let y = prefixless(&m, &x);
    let want: Vec<u64> = y.interpret().unwrap().iter().map(|v| v.to_bits()).collect();
    assert!(want.contains(&(-0.0f64).to_bits()));
    let c = Computation::new(&y).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    check_all("prefix-less", &c, &k, &want);

    // An empty row: the row layout's error, from every SELL variant.
    let mut rows = rows;
    rows[150].clear();
    let m = from_rows(4, &rows);
    let c = Computation::new(&prefixless(&m, &x)).unwrap();
    let expected = k.run(&c, row_variant(&k)).unwrap_err().to_string();
    for v in sell_variants(&k) {
        let got = k.run(&c, v).unwrap_err().to_string();
        assert_eq!(got, expected, "{v}");
    }
}

#[test]
fn an_out_of_range_index_is_the_row_layouts_error() {
    let (c, k, expected) = bad_index(matgen::random(500, 400, 6, 11));
    for v in sell_variants(&k) {
        let mut ws = Workspace::default();
        let got = k.run_in(&c, v, &mut ws).unwrap_err().to_string();
        assert_eq!(got, expected, "{v}");
    }
}

#[test]
fn the_layout_is_kept_per_shape_and_reports_its_cost() {
    let m = matgen::power_law(3000, 2, 1.8, 5);
    let (c, want) = spmv(&m, &x_for(m.cols));
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut ws = Workspace::default();
    for v in sell_variants(&k) {
        k.run_in(&c, v, &mut ws).unwrap();
        assert_eq!(bits(ws.output().unwrap()), want, "{v}");
    }
    for s in SellShape::all() {
        let l = ws.sell_layout(0, s).expect("a layout per shape");
        assert_eq!(l.shape, s);
        assert_eq!(l.rows, 3000);
        assert_eq!(l.perm.len(), l.chunks() * s.chunk);
        assert!(l.inspect_seconds > 0.0);
        assert!(l.fill() >= 1.0, "{}", l.fill());
        assert_eq!(l.nnz + rest_nnz(&m, &l.rest), m.nnz());
        // The kernel gathers unchecked from an input at least this long.
        assert_eq!(l.gather_len, m.cols);
    }
    // Sorting within windows lowers the padding, the whole matrix's rows most.
    let f = |c, sigma| {
        ws.sell_layout(0, SellShape { chunk: c, sigma })
            .unwrap()
            .fill()
    };
    assert!(f(8, 256) < f(8, 1), "{} vs {}", f(8, 256), f(8, 1));
    assert!(f(8, 4096) <= f(8, 256), "{} vs {}", f(8, 4096), f(8, 256));
    // Another computation's inputs get their own layout.
    let mut m2 = m.clone();
    m2.values.iter_mut().for_each(|v| *v *= -3.0);
    let (c2, want2) = spmv(&m2, &x_for(m2.cols));
    let v = sell_variants(&k)[0];
    k.run_in(&c2, v, &mut ws).unwrap();
    assert_eq!(bits(ws.output().unwrap()), want2);
}

fn rest_nnz(m: &CsrMatrix, rest: &[(usize, usize)]) -> usize {
    rest.iter()
        .map(|&(a, b)| (m.row_offsets[b] - m.row_offsets[a]) as usize)
        .sum()
}

/// A matrix whose elements all have one value (a graph's pattern of ones; also an infinite and a
/// NaN value, which the ragged columns' masks must keep out of the shorter rows): the layout
/// notes the value, its SIMD paths read no values, and every row is the interpreter's, bit for
/// bit, on rows of 1 to 9 elements (ragged chunks).
#[test]
fn one_valued_matrices_match_the_interpreter() {
    for one in [1.0, 0.5, f64::INFINITY, f64::NAN] {
        let full = matgen::random(300, 400, 9, 11);
        let rows: Vec<Vec<(u32, f64)>> = (0..full.rows)
            .map(|i| {
                let a = full.row_offsets[i] as usize;
                let e = full.row_offsets[i + 1] as usize;
                (a..e.min(a + 1 + i % 9))
                    .map(|k| (full.col_indices[k], one))
                    .collect()
            })
            .collect();
        let m = from_rows(400, &rows);
        let x: Vec<f64> = (0..400).map(|i| 0.5 + (i % 13) as f64 * 0.25).collect();
        let (c, want) = spmv(&m, &x);
        let k = Kernels::build(&c, &Target::cpu()).unwrap();
        check_all(&format!("value {one}"), &c, &k, &want);
        let v = sell_variants(&k)[0];
        let mut ws = Workspace::default();
        k.run_in(&c, v, &mut ws).unwrap();
        let l = ws.sell_layout(0, shape_of(v)).expect("the layout is kept");
        assert_eq!(
            l.iso.map(f64::to_bits),
            Some(one.to_bits()),
            "value {one}: the layout's one value"
        );
    }
}

/// The SELL kernels of the `f64` SpMV form take the widest SIMD path the CPU has (AVX-512F, then
/// AVX2; `templates/cpu/sell_simd.rs`), chosen once per process. `SURGE_CPU_SIMD` lowers it, so
/// the two tests above run again in a child process per lower path: every path is checked, bit
/// for bit, on every machine that has it.
#[test]
fn every_simd_path_matches_the_interpreter() {
    if in_simd_child() {
        return;
    }
    for level in ["avx2", "none"] {
        rerun_with_simd(
            level,
            &[
                "every_sell_variant_matches_the_interpreter_on_every_shared_matrix",
                "edge_cases_match_the_interpreter",
                "one_valued_matrices_match_the_interpreter",
            ],
        );
    }
}

/// The SIMD kernels load `x` with the hardware gather or with pairs of scalar loads, whichever
/// this CPU did faster (measured once per process, `templates/cpu/sell_simd.rs`); both ways,
/// forced in a child process each, match the interpreter bit for bit.
#[test]
fn both_ways_of_loading_x_match_the_interpreter() {
    if in_simd_child() {
        return;
    }
    for way in ["hw", "pairs"] {
        rerun_with_gather(
            way,
            &[
                "every_sell_variant_matches_the_interpreter_on_every_shared_matrix",
                "edge_cases_match_the_interpreter",
                "one_valued_matrices_match_the_interpreter",
            ],
        );
    }
}
