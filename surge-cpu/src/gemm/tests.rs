use super::*;
use surge_codegen::gemm::{Machine, Parallel};

fn naive(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                c[i * n + j] += a[i * k + p] * b[p * n + j];
            }
        }
    }
    c
}

fn data(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f64 / 1000.0 - 1.0
        })
        .collect()
}

/// A few variants of every kernel shape the machine's space has, small blocks so that edges
/// and several blocks of each loop are exercised.
fn test_variants() -> Vec<GemmVariant> {
    let m = Machine::query();
    let mut vs = surge_codegen::gemm::variants(&m).unwrap();
    vs.sort_by_key(|v| (v.kernel(), v.kc, v.mc, v.nc));
    vs.dedup_by_key(|v| (v.kernel(), v.parallel));
    for v in &mut vs {
        v.kc = 16;
        v.mc = v.mr * 2;
        v.nc = v.nr * 3;
    }
    vs
}

#[test]
fn every_kernel_matches_the_naive_product_on_ragged_shapes() {
    let vs = test_variants();
    let g = GemmKernels::build(&vs).unwrap();
    for &(m, n, k) in &[
        (1, 1, 1),
        (7, 5, 3),
        (33, 47, 61),
        (64, 64, 64),
        (5, 130, 17),
    ] {
        let a = data(m * k, 1);
        let b = data(k * n, 2);
        let want = naive(m, n, k, &a, &b);
        for v in &vs {
            for threads in [1, 2] {
                let mut c = vec![f64::NAN; m * n];
                g.gemm(
                    v,
                    threads,
                    MatRef::new(&a, m, k),
                    MatRef::new(&b, k, n),
                    &mut c,
                )
                .unwrap();
                for (i, (x, y)) in c.iter().zip(&want).enumerate() {
                    assert!(
                        (x - y).abs() <= 1e-12 * k as f64,
                        "{v} {m}x{n}x{k} threads {threads} at {i}: {x} vs {y}"
                    );
                }
            }
        }
    }
}

#[test]
fn leading_dimensions_write_only_their_block() {
    let vs = test_variants();
    let v = vs
        .iter()
        .find(|v| v.parallel == Parallel::Jr)
        .unwrap_or(&vs[0]);
    let g = GemmKernels::build(std::slice::from_ref(v)).unwrap();
    let (m, n, k, ld) = (9, 11, 13, 20);
    let a = data(m * ld, 3);
    let b = data(k * ld, 4);
    let mut c = vec![7.0; m * ld];
    let am = MatRef {
        data: &a,
        rows: m,
        cols: k,
        ld,
    };
    let bm = MatRef {
        data: &b,
        rows: k,
        cols: n,
        ld,
    };
    g.gemm_ld(v, 2, am, bm, &mut c, ld).unwrap();
    for i in 0..m {
        for j in 0..ld {
            let want = if j < n {
                (0..k).map(|p| a[i * ld + p] * b[p * ld + j]).sum()
            } else {
                7.0
            };
            assert!((c[i * ld + j] - want).abs() < 1e-12, "({i},{j})");
        }
    }
}

#[test]
fn non_conforming_shapes_are_errors_naming_them() {
    let vs = test_variants();
    let g = GemmKernels::build(&vs[..1]).unwrap();
    let a = vec![0.0; 6];
    let mut c = vec![0.0; 4];
    let e = g
        .gemm(
            &vs[0],
            1,
            MatRef::new(&a, 2, 3),
            MatRef::new(&a, 2, 3),
            &mut c,
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "gemm: A is 2x3 and B is 2x3: A's columns must equal B's rows"
    );
    let e = g
        .gemm(
            &vs[0],
            1,
            MatRef::new(&a, 2, 3),
            MatRef::new(&a, 3, 2),
            &mut c[..3],
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "gemm: C is 2x2 (leading dimension 2) but its buffer holds 3 values"
    );
    let e = g
        .gemm(
            &vs[0],
            1,
            MatRef::new(&a[..5], 2, 3),
            MatRef::new(&a, 3, 2),
            &mut c,
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("A is 2x3 (leading dimension 3) but its buffer holds 5"),
        "{e}"
    );
    // k = 0: C is zero; m = 0 or n = 0: nothing to do.
    let mut c = vec![5.0; 4];
    g.gemm(
        &vs[0],
        1,
        MatRef::new(&[], 2, 0),
        MatRef::new(&[], 0, 2),
        &mut c,
    )
    .unwrap();
    assert_eq!(c, vec![0.0; 4]);
}

#[test]
fn nan_propagates_like_the_naive_product() {
    let vs = test_variants();
    let g = GemmKernels::build(&vs[..1]).unwrap();
    let (m, n, k) = (5, 6, 7);
    let mut a = data(m * k, 5);
    a[k + 2] = f64::NAN; // row 1
    let b = data(k * n, 6);
    let mut c = vec![0.0; m * n];
    g.gemm(
        &vs[0],
        2,
        MatRef::new(&a, m, k),
        MatRef::new(&b, k, n),
        &mut c,
    )
    .unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(c[i * n + j].is_nan(), i == 1, "({i},{j})");
        }
    }
}

/// Variants of another SIMD width than this machine's: scalar code runs anywhere and is checked
/// here; AVX-512 code is compiled (and run only where the CPU has AVX-512F).
#[test]
fn other_simd_widths_compile_and_scalar_code_is_correct() {
    let v = |mr, nr, simd_bits| GemmVariant {
        mr,
        nr,
        ku: 4,
        kc: 16,
        mc: mr * 2,
        nc: nr * 3,
        parallel: Parallel::Ic,
        simd_bits,
    };
    let scalar = [v(4, 4, 64), v(3, 5, 64)];
    let g = GemmKernels::build(&scalar).unwrap();
    let (m, n, k) = (13, 17, 19);
    let (a, b) = (data(m * k, 7), data(k * n, 8));
    let want = naive(m, n, k, &a, &b);
    for s in &scalar {
        let mut c = vec![0.0; m * n];
        g.gemm(s, 2, MatRef::new(&a, m, k), MatRef::new(&b, k, n), &mut c)
            .unwrap();
        for (x, y) in c.iter().zip(&want) {
            assert!((x - y).abs() < 1e-12, "{s}");
        }
    }
    let wide = [v(8, 16, 512), v(6, 24, 512)];
    let g = GemmKernels::build(&wide).unwrap();
    if std::arch::is_x86_feature_detected!("avx512f") {
        for s in &wide {
            let mut c = vec![0.0; m * n];
            g.gemm(s, 2, MatRef::new(&a, m, k), MatRef::new(&b, k, n), &mut c)
                .unwrap();
            for (x, y) in c.iter().zip(&want) {
                assert!((x - y).abs() < 1e-12, "{s}");
            }
        }
    }
}

/// GEMMs from several threads at once share the cached 2-thread pool: a pool thread waiting in
/// a parallel loop runs other GEMMs' tasks, which must not find its packed buffers borrowed
/// (they once did: "already borrowed", a flaky test).
#[test]
fn concurrent_gemms_sharing_a_pool_agree() {
    let vs = test_variants();
    let g = GemmKernels::build(&vs).unwrap();
    let (m, n, k) = (37, 53, 29);
    let (a, b) = (data(m * k, 9), data(k * n, 10));
    let want = naive(m, n, k, &a, &b);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (g, vs, a, b, want) = (&g, &vs, &a, &b, &want);
            s.spawn(move || {
                for r in 0..30 {
                    let v = &vs[(t + r) % vs.len()];
                    let mut c = vec![f64::NAN; m * n];
                    g.gemm(v, 2, MatRef::new(a, m, k), MatRef::new(b, k, n), &mut c)
                        .unwrap();
                    for (x, y) in c.iter().zip(want) {
                        assert!((x - y).abs() <= 1e-12 * k as f64, "{v}: {x} vs {y}");
                    }
                }
            });
        }
    });
}

/// `C = A·Btᵀ` with B stored by its columns (the rows of `bt`) gives, bit for bit, what the same
/// variant gives on the row-major B: the packed panels are the same values.
#[test]
fn a_b_stored_by_columns_packs_to_the_same_panels() {
    let vs = test_variants();
    let g = GemmKernels::build(&vs).unwrap();
    for &(m, n, k) in &[(1, 1, 1), (7, 5, 3), (33, 47, 61), (5, 130, 17)] {
        let a = data(m * k, 3);
        let bt = data(n * k, 4);
        let b: Vec<f64> = (0..k * n).map(|i| bt[(i % n) * k + i / n]).collect();
        for v in &vs {
            for threads in [1, 2] {
                let mut want = vec![0.0; m * n];
                g.gemm(
                    v,
                    threads,
                    MatRef::new(&a, m, k),
                    MatRef::new(&b, k, n),
                    &mut want,
                )
                .unwrap();
                let mut c = vec![f64::NAN; m * n];
                g.gemm_bt(
                    v,
                    threads,
                    MatRef::new(&a, m, k),
                    MatRef::new(&bt, n, k),
                    &mut c,
                )
                .unwrap();
                let same = c.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{v} on {m}x{n}x{k}, {threads} threads");
            }
        }
    }
    let mut c = vec![0.0; 4];
    let err = g
        .gemm_bt(
            &vs[0],
            1,
            MatRef::new(&[0.0; 6], 2, 3),
            MatRef::new(&[0.0; 4], 2, 2),
            &mut c,
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("A is 2x3 and B is 2x2 (stored by columns)"),
        "{err}"
    );
}

#[test]
fn ic_blocks_are_even_over_the_threads_and_at_most_mc() {
    use super::driver::ic_step;
    // 1024 rows in blocks of MC = 336 left 16 rows to a fourth block: now four blocks of 266 at
    // most (a multiple of MR = 14), two per thread.
    assert_eq!(ic_step(1024, 336, 14, 2), 266);
    for (m, mc, mr, t) in [
        (1024, 336, 14, 2),
        (2048, 64, 16, 2),
        (3, 16, 4, 2),
        (100, 24, 6, 1),
        (4096, 96, 8, 3),
    ] {
        let s = ic_step(m, mc, mr, t);
        assert!(
            s <= mc && s.is_multiple_of(mr) && s > 0,
            "{m} {mc} {mr} {t}: {s}"
        );
        assert!(m.div_ceil(s) >= m.div_ceil(mc), "{m} {mc} {mr} {t}: {s}");
    }
}
