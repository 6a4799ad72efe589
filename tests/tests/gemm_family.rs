//! The GEMM family of the DSEL's dense contraction (`map(arow) map(bcol) reduce(add, map(*))`
//! over `split(A, k)` and `transpose(split(B, n))`, or `split(Bt, k)` for A·Btᵀ): recognized in
//! its forms and not in others,
//! every variant of the machine's GEMM space within the oracle's tolerance of the interpreter,
//! the interpreter's errors on operands that do not conform, other sizes without a compile.

use surge::codegen::gemm::{Machine, is_gemm, variants as gemm_space};
use surge::codegen::oracle::{Expected, Flat};
use surge::prelude::*;
use surge::{Kernels, Target};

fn data(len: usize, seed: u64) -> Vec<f64> {
    (0..len as u64)
        .map(|i| ((i * 2654435761 + seed) % 97) as f64 / 48.0 - 1.0)
        .collect()
}

/// `C = A·B` as a user writes it: A is m×k, B is k×n, both row-major.
fn mat_mat(a: Vec<f64>, b: Vec<f64>, k: u64, n: u64, swapped: bool, prefix: bool) -> Computation {
    let a = Seq::input("a", a).unwrap();
    let b = Seq::input("b", b).unwrap();
    let bcols = transpose(&split(&b, n).unwrap()).unwrap();
    let c = map(
        |arow: Seq<f64>| {
            map(
                |bcol: Seq<f64>| {
                    let prods = if swapped {
                        map(|(v, u)| &v * &u, (&bcol, &arow))?
                    } else {
                        map(|(u, v)| &u * &v, (&arow, &bcol))?
                    };
                    if prefix {
                        reduce_prefix(add, &prods, 0.0)
                    } else {
                        reduce(add, &prods)
                    }
                },
                &bcols,
            )
        },
        &split(&a, k).unwrap(),
    )
    .unwrap();
    Computation::new(&c).unwrap()
}

fn gemm_ids(k: &Kernels) -> Vec<&surge::codegen::variant::Variant> {
    k.variants().iter().filter(|v| is_gemm(v)).collect()
}

fn check(c: &Computation, k: &Kernels, v: &surge::codegen::variant::Variant) {
    check_against(&Expected::interpret(c.ir(), c.buffers()).unwrap(), c, k, v);
}

fn check_against(
    want: &Expected,
    c: &Computation,
    k: &Kernels,
    v: &surge::codegen::variant::Variant,
) {
    let got = k.run(c, v).unwrap_or_else(|e| panic!("{v}: {e}"));
    want.check(&Flat::of_output(&got))
        .unwrap_or_else(|e| panic!("{v}: {e}"));
}

#[test]
fn every_variant_of_the_family_matches_the_interpreter() {
    let (m, kk, n) = (37, 29, 41);
    let c = mat_mat(
        data(m * kk, 1),
        data(kk * n, 2),
        kk as u64,
        n as u64,
        false,
        false,
    );
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let family = gemm_ids(&k);
    assert_eq!(family.len(), gemm_space(&Machine::query()).unwrap().len());
    let want = Expected::interpret(c.ir(), c.buffers()).unwrap();
    for v in family {
        check_against(&want, &c, &k, v);
    }
    // The default is the family's default (the naive loops ran a 256³ mat-mat 50× slower), and
    // the phase's own variants are still there.
    assert!(is_gemm(k.default_variant()));
    check(&c, &k, k.default_variant());
    let own = k
        .variants()
        .iter()
        .find(|v| !is_gemm(v))
        .expect("the phase's own variants");
    check(&c, &k, own);
}

#[test]
fn the_forms_of_the_pattern_are_recognized_and_others_are_not() {
    for (swapped, prefix) in [(true, false), (false, true), (true, true)] {
        let c = mat_mat(data(6 * 5, 3), data(5 * 7, 4), 5, 7, swapped, prefix);
        let set = c.variants(&Target::cpu().platform().unwrap()).unwrap();
        assert!(
            set.variants().iter().any(is_gemm),
            "swapped {swapped} prefix {prefix}"
        );
    }
    // Differences instead of products (a distance's cross terms written out) are not it.
    let a = Seq::input("a", data(12, 5)).unwrap();
    let b = Seq::input("b", data(12, 6)).unwrap();
    let brows = split(&b, 3).unwrap();
    let c = map(
        |arow: Seq<f64>| {
            map(
                |brow: Seq<f64>| reduce(add, &map(|(u, v)| &u - &v, (&arow, &brow))?),
                &brows,
            )
        },
        &split(&a, 3).unwrap(),
    )
    .unwrap();
    let c = Computation::new(&c).unwrap();
    let set = c.variants(&Target::cpu().platform().unwrap()).unwrap();
    assert!(!set.variants().iter().any(is_gemm));
}

/// `C = A·Btᵀ` as a user writes it: the rows of A against the rows of `bt` (n×k), no transpose.
fn a_bt(a: Vec<f64>, bt: Vec<f64>, k: u64, kb: u64) -> Computation {
    let a = Seq::input("a", a).unwrap();
    let bt = Seq::input("bt", bt).unwrap();
    let brows = split(&bt, kb).unwrap();
    let c = map(
        |arow: Seq<f64>| {
            map(
                |brow: Seq<f64>| reduce_prefix(add, &map(|(u, v)| &u * &v, (&arow, &brow))?, 0.0),
                &brows,
            )
        },
        &split(&a, k).unwrap(),
    )
    .unwrap();
    Computation::new(&c).unwrap()
}

/// A·Btᵀ (B given by its columns, the rows of the second input) gets the family too: every
/// variant within the oracle's tolerance, operands that do not conform the interpreter's errors.
#[test]
fn a_times_rows_of_b_is_the_family_with_b_given_by_columns() {
    let (m, kk, n) = (23, 19, 31);
    let c = a_bt(data(m * kk, 7), data(n * kk, 8), kk as u64, kk as u64);
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let family = gemm_ids(&k);
    assert_eq!(family.len(), gemm_space(&Machine::query()).unwrap().len());
    let want = Expected::interpret(c.ir(), c.buffers()).unwrap();
    for v in family {
        check_against(&want, &c, &k, v);
    }
    let v = gemm_ids(&k)[0].clone();
    // Bt's rows of another length than A's (k = 3, Bt split by 4), a ragged Bt, a ragged A.
    let cases = [
        a_bt(data(9, 1), data(12, 2), 3, 4),
        a_bt(data(9, 1), data(13, 2), 3, 3),
        a_bt(data(10, 1), data(12, 2), 3, 3),
    ];
    for c in &cases {
        let want = c.interpret().unwrap_err().to_string();
        let got = k.run(c, &v).unwrap_err().to_string();
        assert_eq!(got, want);
    }
    check(&a_bt(vec![], data(12, 2), 3, 3), &k, &v);
}

#[test]
fn operands_that_do_not_conform_fail_as_the_interpreter_does() {
    // A of 10 values split by 3: a short last row, a zip of unequal lengths.
    let good = mat_mat(data(9, 1), data(12, 2), 3, 4, false, false);
    let k = Kernels::build(&good, &Target::cpu()).unwrap();
    let v = gemm_ids(&k)[0].clone();
    let ragged_a = mat_mat(data(10, 1), data(12, 2), 3, 4, false, false);
    let ragged_b = mat_mat(data(9, 1), data(13, 2), 3, 4, false, false);
    let wrong_k = mat_mat(data(8, 1), data(12, 2), 2, 4, false, false);
    for c in [&ragged_a, &ragged_b, &wrong_k] {
        let want = c.interpret().unwrap_err().to_string();
        let got = k.run(c, &v).unwrap_err().to_string();
        assert_eq!(got, want);
    }
    // Empty A: no rows, as the interpreter says.
    let empty = mat_mat(vec![], data(12, 2), 3, 4, false, false);
    check(&empty, &k, &v);
}

#[test]
fn another_size_runs_on_the_same_kernels_and_nan_passes_through() {
    let small = mat_mat(data(16 * 16, 1), data(16 * 16, 2), 16, 16, false, false);
    let k = Kernels::build(&small, &Target::cpu()).unwrap();
    let v = gemm_ids(&k).last().copied().unwrap().clone();
    let compiles = surge_cpu::native::compile::rustc_calls();
    let mut a = data(40 * 24, 3);
    a[24 * 5 + 7] = f64::NAN; // row 5
    let big = mat_mat(a, data(24 * 33, 4), 24, 33, false, false);
    check(&big, &k, &v);
    assert_eq!(surge_cpu::native::compile::rustc_calls(), compiles);
}

/// Kernels built for GEMM variants alone (what `surge bench gemm` does for the DSEL's mat-mat
/// and its A·Btᵀ) run: the library built beside them is the phase's own default, not the
/// family's (which once failed with "parameter `threads` is missing").
#[test]
fn kernels_of_gemm_variants_alone_run_both_forms() {
    let (m, kk, n) = (9, 7, 5);
    let forms = [
        surge::apps::mat_mat(data(m * kk, 1), data(kk * n, 2), kk as u64, n as u64).unwrap(),
        surge::apps::mat_mat_bt(data(m * kk, 1), data(n * kk, 2), kk as u64).unwrap(),
    ];
    for c in &forms {
        let set = c.variants(&Target::cpu().platform().unwrap()).unwrap();
        let v = set.variants().iter().find(|v| is_gemm(v)).unwrap().clone();
        let k = Kernels::build_variants(c, std::slice::from_ref(&v)).unwrap();
        check(c, &k, &v);
    }
}
