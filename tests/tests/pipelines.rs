//! Ordinary pipelines a new user writes with `surge::prelude` only (issue 19's list: histograms,
//! k-means assignment and the dissertation's Listing 5.5 update, argmin, L2 norm, segmented
//! scans, stencils, dense mat-vec and mat-mat, scatter), each run natively with every CPU
//! variant and checked against the interpreter.

use surge::prelude::*;
use tests::conformance::{CpuBackend, check_all};

fn check(what: &str, y: impl Into<Computation>) {
    let c: Computation = y.into();
    let n = check_all(&CpuBackend, what, &c);
    eprintln!("{what}: {n} variants match the interpreter");
}

fn values(n: usize, seed: u64) -> Vec<f64> {
    tests::conformance::values(n, seed)
}

/// Cluster of point `i` among `k`, sorted (points are grouped by cluster).
fn sorted_keys(n: usize, k: u32) -> Vec<u32> {
    (0..n)
        .map(|i| (i as u64 * k as u64 / n as u64) as u32)
        .collect()
}

#[test]
fn histogram_by_reduce_by_key_over_sorted_keys() -> surge::Result<()> {
    let keys = Seq::input("keys", sorted_keys(300, 7))?;
    let ones = map(|k: Scalar<u32>| k.cast::<u64>().min(0u64) + 1u64, &keys)?;
    check(
        "histogram",
        Computation::new(&reduce_by_key(add, &ones, &keys, 0u64)?)?,
    );
    Ok(())
}

#[test]
fn listing_5_5_centroid_update_with_vector_valued_combiner() -> surge::Result<()> {
    let (n, d) = (60usize, 3u64);
    let x = Seq::input("x", values(n * d as usize, 1))?;
    let points = split(&x, d)?;
    let assign = Seq::input("assign", sorted_keys(n, 4))?;
    let zero = Seq::input("zero", vec![0.0f64; d as usize])?;
    let sums = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        &points,
        &assign,
        &zero,
    )?;
    check("Listing 5.5", Computation::new(&sums)?);
    Ok(())
}

/// The in-place form of an element-wise vector combiner (`acc[j] = f(acc[j], x[j])`) with its
/// operands swapped and a body that uses an outer value; and its length check, which must fail
/// as the interpreter fails on ragged rows.
#[test]
fn element_wise_vector_combiner_swapped_and_ragged() -> surge::Result<()> {
    let x = Seq::input("x", values(60, 8))?;
    let points = split(&x, 3u64)?;
    let keys = Seq::input("keys", sorted_keys(20, 3))?;
    let zero = Seq::input("zero", vec![-5.0f64; 3])?;
    let w = Seq::input("w", vec![0.5f64])?;
    let weight = at(&w, 0u64)?;
    let maxes = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| {
            map(
                |(u, v): (Scalar<f64>, Scalar<f64>)| v.max(&u) + &weight * 0.0,
                (&b, &a),
            )
        },
        &points,
        &keys,
        &zero,
    )?;
    check("swapped element-wise combiner", Computation::new(&maxes)?);
    // Rows of 3 values accumulated into a prefix of 2: every variant fails as the interpreter.
    let short = Seq::input("short", vec![0.0f64; 2])?;
    let bad = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        &points,
        &keys,
        &short,
    )?;
    let c = Computation::new(&bad)?;
    let want = c.interpret().unwrap_err().to_string();
    let k = surge::Kernels::build(&c, &surge::Target::cpu())?;
    for v in k.variants() {
        let got = k.run(&c, v).unwrap_err().to_string();
        assert_eq!(got, want, "{}", v.id());
    }
    Ok(())
}

#[test]
fn argmin_as_a_tuple_reduction() -> surge::Result<()> {
    // Long enough (10^4) that cooperative variants split it into chunks of 64 and 4096.
    let d = Seq::input("d", values(10_000, 2))?;
    let idx = range(0u32, 10_000u32)?;
    let best = reduce(
        |a: (Scalar<f64>, Scalar<u32>), b: (Scalar<f64>, Scalar<u32>)| {
            let take_a = a.0.le(&b.0);
            (take_a.select(&a.0, &b.0), take_a.select(&a.1, &b.1))
        },
        &zip(&d, &idx)?,
    )?;
    check("argmin index", Computation::new(&best.1)?);
    Ok(())
}

#[test]
fn l2_norm_with_sqrt_at_the_root() -> surge::Result<()> {
    let x = Seq::input("x", values(1000, 3))?;
    let norm = reduce(add, &map(|v: Scalar<f64>| &v * &v, &x)?)?.sqrt();
    check("L2 norm", Computation::new(&norm)?);
    Ok(())
}

#[test]
fn k_means_assignment_with_argmin_per_point() -> surge::Result<()> {
    let (n, k, d) = (50usize, 4usize, 3u64);
    let x = Seq::input("x", values(n * d as usize, 4))?;
    let c = Seq::input("c", values(k * d as usize, 5))?;
    let points = split(&x, d)?;
    let centroids = split(&c, d)?;
    let assign = map(
        |p: Seq<f64>| {
            let dists = map(
                |q: Seq<f64>| {
                    reduce_prefix(add, &map(|(a, b)| (&a - &b) * (&a - &b), (&p, &q))?, 0.0)
                },
                &centroids,
            )?;
            let best = reduce(
                |a: (Scalar<f64>, Scalar<u32>), b: (Scalar<f64>, Scalar<u32>)| {
                    let take_a = a.0.le(&b.0);
                    (take_a.select(&a.0, &b.0), take_a.select(&a.1, &b.1))
                },
                &zip(&dists, &range(0u32, k as u32)?)?,
            )?;
            Ok(best.1)
        },
        &points,
    )?;
    check("k-means assignment", Computation::new(&assign)?);
    Ok(())
}

/// Argmin over per-centroid distances: the emitter jams four centroids' reductions into one loop,
/// then two (`emit/cpu/jam.rs`). Centroid counts that leave every tail (none, two, one, two and
/// one), one centroid, inner
/// reductions with and without a prefix, the index read first or second in the zip, and a
/// ragged point or centroid, whose error must be the interpreter's on every variant.
#[test]
fn jammed_argmin_matches_the_interpreter() -> surge::Result<()> {
    type Best = (Scalar<f64>, Scalar<u32>);
    let min = |a: Best, b: Best| {
        let take_a = a.0.le(&b.0);
        (take_a.select(&a.0, &b.0), take_a.select(&a.1, &b.1))
    };
    let build = |xs: usize, cs: usize, d: u64, prefix: bool, index_first: bool| {
        let x = Seq::input("x", values(xs, 8))?;
        let c = Seq::input("c", values(cs, 9))?;
        let centroids = split(&c, d)?;
        let k = cs.div_ceil(d as usize) as u32;
        let assign = map(
            |p: Seq<f64>| {
                let dists = map(
                    |q: Seq<f64>| {
                        let sq = map(|(a, b)| (&a - &b) * (&a - &b), (&p, &q))?;
                        if prefix {
                            reduce_prefix(add, &sq, 0.0)
                        } else {
                            reduce(add, &sq)
                        }
                    },
                    &centroids,
                )?;
                let ids = range(0u32, k)?;
                if index_first {
                    let best = reduce(
                        |a: (Scalar<u32>, Scalar<f64>), b: (Scalar<u32>, Scalar<f64>)| {
                            let (l, r) = min((a.1, a.0), (b.1, b.0));
                            (r, l)
                        },
                        &zip(&ids, &dists)?,
                    )?;
                    Ok(best.0)
                } else {
                    Ok(reduce(min, &zip(&dists, &ids)?)?.1)
                }
            },
            &split(&x, d)?,
        )?;
        Computation::new(&assign)
    };
    for (k, d, prefix, index_first) in [
        (1, 3, true, false),
        (2, 5, false, false),
        (7, 4, true, false),
        (6, 2, false, true),
        (3, 2, false, false),
        (4, 3, true, false),
        (5, 3, false, true),
        (10, 4, true, false),
    ] {
        let c = build(40 * d, k * d, d as u64, prefix, index_first)?;
        check(&format!("argmin over {k} centroids of {d}"), c);
    }
    for (xs, cs, what) in [
        (40 * 4 - 1, 7 * 4, "a ragged point"),
        (40 * 4, 7 * 4 - 2, "a ragged centroid"),
        (40 * 4, 4 * 4 - 1, "a ragged centroid in a jam of four"),
        (
            40 * 4,
            10 * 4 - 3,
            "a ragged centroid after two jams of four",
        ),
    ] {
        let c = build(xs, cs, 4, true, false)?;
        let want = c.interpret().expect_err(what).to_string();
        use tests::conformance::Backend;
        for (id, r) in CpuBackend.run_all(&c).expect("kernels build") {
            assert_eq!(r.expect_err(what), want, "{what}: variant {id}");
        }
    }
    Ok(())
}

#[test]
fn dense_k_means_update_counts_and_sums_per_cluster() -> surge::Result<()> {
    let n = 80usize;
    let x = Seq::input("x", values(n, 6))?;
    let assign = Seq::input(
        "assign",
        (0..n as u32).map(|i| (i * 7) % 5).collect::<Vec<_>>(),
    )?;
    let clusters = range(0u32, 5u32)?;
    let means = map(
        |c: Scalar<u32>| {
            let count: Scalar<f64> = reduce_prefix(
                add,
                &map(|a: Scalar<u32>| a.equal(&c).select(1.0, 0.0), &assign)?,
                0.0,
            )?;
            let sum = reduce_prefix(
                add,
                &map(
                    |(a, v): (Scalar<u32>, Scalar<f64>)| a.equal(&c).select(&v, 0.0),
                    (&assign, &x),
                )?,
                0.0,
            )?;
            Ok(sum / count.max(1.0))
        },
        &clusters,
    )?;
    check("dense k-means update", Computation::new(&means)?);
    Ok(())
}

#[test]
fn segmented_scan_over_csr_rows() -> surge::Result<()> {
    let s = Seq::input("s", values(30, 7))?;
    let off = Seq::input("off", vec![0u32, 5, 5, 12, 30])?;
    let rows = nest(&s, &off)?;
    check(
        "segmented scan",
        Computation::new(&map(|r: Seq<f64>| scan(add, &r), &rows)?)?,
    );
    Ok(())
}

#[test]
fn scan_inside_a_row_feeding_a_reduction() -> surge::Result<()> {
    let s = Seq::input("s", values(24, 8))?;
    let rows = split(&s, 5u64)?;
    let y = map(
        |r: Seq<f64>| reduce_prefix(max, &scan(add, &r)?, -1e300),
        &rows,
    )?;
    check("max prefix sum per row", Computation::new(&y)?);
    Ok(())
}

#[test]
fn mat_mat_through_transpose_of_split() -> surge::Result<()> {
    let (m, q, p) = (4u64, 3u64, 5u64);
    let a = Seq::input("a", values((m * q) as usize, 9))?;
    let b = Seq::input("b", values((q * p) as usize, 10))?;
    let bcols = transpose(&split(&b, p)?)?;
    let y = map(
        |arow: Seq<f64>| {
            map(
                |bcol: Seq<f64>| reduce_prefix(add, &map(|(u, v)| u * v, (&arow, &bcol))?, 0.0),
                &bcols,
            )
        },
        &split(&a, q)?,
    )?;
    check("mat-mat", Computation::new(&y)?);
    Ok(())
}

#[test]
fn scatter_into_a_copy() -> surge::Result<()> {
    let s = Seq::input("s", values(10, 11))?;
    let idx = Seq::input("idx", vec![3u32, 1, 4, 1, 5, 9, 2, 6, 5, 3])?;
    let d = Seq::input("d", values(12, 12))?;
    let y = map(|v: Scalar<f64>| v * 2.0, &scatter(&s, &idx, &d)?)?;
    check("scatter", Computation::new(&y)?);
    Ok(())
}

#[test]
fn scatter_per_row_inside_a_map() -> surge::Result<()> {
    let s = Seq::input("s", values(12, 13))?;
    let rows = split(&s, 4u64)?;
    let idx = Seq::input("idx", vec![3u32, 0, 2, 1])?;
    let y = map(|r: Seq<f64>| reduce(max, &scatter(&r, &idx, &r)?), &rows)?;
    check("scatter per row", Computation::new(&y)?);
    Ok(())
}

#[test]
fn three_point_stencil() -> surge::Result<()> {
    let x = Seq::input("x", values(50, 14))?;
    let n = 48u32;
    let y = map(
        |i: Scalar<u32>| Ok(at(&x, &i)? + at(&x, &i + 1u32)? * 2.0 + at(&x, &i + 2u32)?),
        &range(0u32, n)?,
    )?;
    check("stencil", Computation::new(&y)?);
    Ok(())
}

#[test]
fn results_of_tuples_and_booleans() -> surge::Result<()> {
    let d = Seq::input("d", values(5000, 15))?;
    let idx = range(0u32, 5000u32)?;
    let best = reduce(
        |a: (Scalar<f64>, Scalar<u32>), b: (Scalar<f64>, Scalar<u32>)| {
            let take_a = a.0.le(&b.0);
            (take_a.select(&a.0, &b.0), take_a.select(&a.1, &b.1))
        },
        &zip(&d, &idx)?,
    )?;
    check("argmin (value, index)", Computation::new(&best)?);
    let sum_and_max = (reduce(add, &d)?, reduce(max, &d)?);
    check("(sum, max)", Computation::new(&sum_and_max)?);
    let signs = map(|v: Scalar<f64>| v.gt(0.0), &d)?;
    check("signs as booleans", Computation::new(&signs)?);
    let pairs = map(|v: Scalar<f64>| (v.abs(), v.lt(0.0)), &d)?;
    check("pairs of a number and a boolean", Computation::new(&pairs)?);
    let rows = split(&d, 7u64)?;
    let row_pairs = map(
        |r: Seq<f64>| map(|v: Scalar<f64>| (&v * 2.0, v.ge(0.5)), &r),
        &rows,
    )?;
    check("rows of pairs", Computation::new(&row_pairs)?);
    Ok(())
}

/// Phases whose results are tuples or booleans, read by a later phase (stored as words,
/// `surge-codegen/src/emit/cpu/packed.rs`; refused by the CPU backend before).
#[test]
fn intermediate_phases_of_tuples_and_booleans() -> surge::Result<()> {
    let d = Seq::input("d", values(3000, 21))?;
    let idx = range(0u32, 3000u32)?;
    let argmin = |a: (Scalar<f64>, Scalar<u32>), b: (Scalar<f64>, Scalar<u32>)| {
        let take_a = a.0.le(&b.0);
        (take_a.select(&a.0, &b.0), take_a.select(&a.1, &b.1))
    };
    // A tuple (one reduction) read by every element of the next phase.
    let best = reduce(argmin, &zip(&d, &idx)?)?;
    let shifted = map(|v: Scalar<f64>| (&v - &best.0) * best.1.cast::<f64>(), &d)?;
    check("a map over an argmin's tuple", Computation::new(&shifted)?);
    // A sequence of tuples (a running argmin) reduced by the next phase (by `max`: exact in any
    // order; the oracle's Σ|x| bound, taken on |d|, does not bound a sum of argmins of d).
    let running = scan(argmin, &zip(&d, &idx)?)?;
    let total = reduce(
        max,
        &map(
            |(m, i): (Scalar<f64>, Scalar<u32>)| m * i.cast::<f64>(),
            &running,
        )?,
    )?;
    check("the largest of a scan of tuples", Computation::new(&total)?);
    // Booleans: a running `or` of a predicate, counted.
    let flags = scan(
        |a: Scalar<bool>, b: Scalar<bool>| a.or(&b),
        &map(|v: Scalar<f64>| v.gt(1.5), &d)?,
    )?;
    let count = reduce(add, &map(|f: Scalar<bool>| f.select(1u64, 0u64), &flags)?)?;
    check("a count over a scan of booleans", Computation::new(&count)?);
    // Rows of tuples (a scan per row), then a phase reading them row by row.
    let rows = split(&d, 9u64)?;
    let per_row = map(
        |r: Seq<f64>| scan(argmin, &zip(&r, &range(0u32, len(&r).cast::<u32>())?)?),
        &rows,
    )?;
    let sums = map(
        |r: Seq<(f64, u32)>| {
            reduce(
                max,
                &map(|(m, i): (Scalar<f64>, Scalar<u32>)| m + i.cast::<f64>(), &r)?,
            )
        },
        &reverse(&per_row)?,
    )?;
    check("rows of scanned tuples, reversed", Computation::new(&sums)?);
    Ok(())
}

/// Found by the random programs (500-case run): a map whose body is a closed `scan` (an earlier
/// phase's result) re-emitted the scan in the map's phase, reading the earlier phase's literals
/// (`lit0` not in scope: rustc failed).
#[test]
fn map_whose_body_is_an_earlier_phases_scan() -> surge::Result<()> {
    let d = Seq::input("d", values(50, 23))?;
    let e = Seq::input("e", values(50, 24))?;
    let idx = Seq::input("i", (0..37u32).collect::<Vec<_>>())?;
    let y = map(
        |(_, _): (Scalar<f64>, Scalar<f64>)| scan(add, &striding(&idx, 4u64)?),
        (&d, &reverse(&e)?),
    )?;
    check("a map of a closed scan", Computation::new(&y)?);
    Ok(())
}

#[test]
fn reduce_by_key_runs_across_chunks_with_a_prefix() -> surge::Result<()> {
    // Runs of 100 and 37 cross the cooperative variants' chunks of 64 and 4096; the prefix 10 is
    // not an identity, so a run continued in the next chunk must not get it twice.
    let n = 20_000usize;
    let s = Seq::input("s", values(n, 16))?;
    let keys: Vec<i64> = (0..n)
        .map(|i| {
            if i < 9000 {
                (i / 100) as i64
            } else {
                (i / 37) as i64
            }
        })
        .collect();
    let k = Seq::input("k", keys)?;
    check(
        "reduce_by_key with a prefix",
        Computation::new(&reduce_by_key(add, &s, &k, 10.0)?)?,
    );
    let empty = Seq::input("e", Vec::<f64>::new())?;
    let no_keys = Seq::input("ek", Vec::<u32>::new())?;
    check(
        "reduce_by_key of nothing",
        Computation::new(&reduce_by_key(max, &empty, &no_keys, 0.0)?)?,
    );
    Ok(())
}

/// Found by the random programs (`tests/tests/random_programs.rs`): a reassociated `f32` product
/// rounds at `f32` precision, so the oracle bounds `f32` results with `f32`'s epsilon.
#[test]
fn f32_product_of_a_scatter() -> surge::Result<()> {
    let s = Seq::input(
        "s",
        vec![
            0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.75, 0.0, 4.5, 0.0,
            5.0, 4.25, 0.25,
        ],
    )?;
    let idx = Seq::input(
        "idx",
        vec![0u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 4, 2],
    )?;
    let d = Seq::input(
        "d",
        vec![
            0.0f32, 0.0, 0.0, 0.0, 0.0, 0.75, 0.75, 3.75, 0.25, 1.5, 1.25, 0.75,
        ],
    )?;
    check(
        "f32 product",
        Computation::new(&reduce(mul, &scatter(&s, &idx, &d)?)?)?,
    );
    let x = Seq::input(
        "x",
        (0..300)
            .map(|i| 1.0f32 + (i % 7) as f32 / 64.0)
            .collect::<Vec<_>>(),
    )?;
    check("f32 product of 300", Computation::new(&reduce(mul, &x)?)?);
    Ok(())
}

/// Found by the random programs: an index into a sequence whose elements do not depend on it
/// (every element of a `replicate` is its value) is still checked, in every variant.
#[test]
fn indices_into_a_replicate_are_checked() -> surge::Result<()> {
    let idx = Seq::input("idx", vec![0u32, 4, 1])?;
    let g = gather(&replicate::<f64>(lit(1.75f64), lit(1u64))?, &idx)?;
    let pairs = gather(
        &replicate::<(f64, u32)>((lit(0.5f64), lit(3u32)), 2u64)?,
        &idx,
    )?;
    let rows = transpose(&split(
        &replicate::<(i64, i64, f32)>((lit(2i64), lit(6i64), lit(4.75f32)), lit(2u64))?,
        lit(1u64),
    )?)?;
    let row = at(&rows, lit(2u32))?;
    for (what, c) in [
        ("gather of a replicate", Computation::new(&g)?),
        ("gather of a replicate of pairs", Computation::new(&pairs)?),
        ("a row of a transposed replicate", Computation::new(&row)?),
    ] {
        let results = cpu_run_all(&c);
        assert!(!results.is_empty(), "{what}");
        for (id, r) in results {
            let e = r.expect_err(&format!(
                "{what}: variant {id} accepted an out-of-range index"
            ));
            assert!(e.contains("out of range"), "{what}: variant {id}: {e}");
        }
    }
    // In range, the same programs run.
    let ok = Seq::input("ok", vec![0u32, 0, 0])?;
    check(
        "gather of a replicate in range",
        Computation::new(&gather(&replicate::<f64>(lit(1.75f64), lit(1u64))?, &ok)?)?,
    );
    Ok(())
}

fn cpu_run_all(c: &Computation) -> tests::conformance::VariantResults {
    use tests::conformance::Backend;
    CpuBackend.run_all(c).expect("kernels build")
}

/// Found by the random programs: a scan over per-row values of reversed tiles read the split's
/// tile-size local where another evaluation of the split had declared it (a rustc error).
#[test]
fn scan_over_rows_of_reversed_tiles() -> surge::Result<()> {
    for n in [0usize, 1, 7] {
        let s = Seq::input("s", values(n, 17))?;
        let rows = reverse(&split(&s, lit(2u64))?)?;
        let y = scan(add, &map(|r: Seq<f64>| reduce_prefix(add, &r, 0.5), &rows)?)?;
        check("scan of reversed row sums", Computation::new(&y)?);
        let empty = Seq::input("e", Vec::<f64>::new())?;
        let y = scan(
            add,
            &map(
                |_r: Seq<f64>| -> surge::Result<_> { Ok(lit(0.0f64)) },
                &reverse(&split(&empty, lit(1u64))?)?,
            )?,
        )?;
        check("scan over reversed tiles", Computation::new(&y)?);
    }
    Ok(())
}

/// Found by the random programs: a root scan evaluated its input twice, for the loop and for
/// the row, and read the locals one evaluation declared (a transpose's row count and width, a
/// tile's subslice) where only the other's had run (rustc errors).
#[test]
fn scan_over_a_row_of_a_transpose() -> surge::Result<()> {
    let s = Seq::input("s", values(12, 19))?;
    let tile = at(&reverse(&split(&s, lit(4u64))?)?, lit(0u32))?;
    let y = scan(add, &map(|v: Scalar<f64>| v, &striding(&tile, lit(1u64))?)?)?;
    check("scan over a reversed tile", Computation::new(&y)?);
    for n in [0usize, 6] {
        let s = Seq::input("s", values(n, 18))?;
        let col = at(&transpose(&split(&s, lit(2u64))?)?, lit(0u32))?;
        let y = scan(
            add,
            &map(|v: Scalar<f64>| v * 2.0, &striding(&col, lit(1u64))?)?,
        )?;
        let c = Computation::new(&y)?;
        if n == 0 {
            // No rows: the column index is out of range in the interpreter and every variant.
            assert!(c.interpret().is_err());
            for (id, r) in cpu_run_all(&c) {
                assert!(
                    r.is_err(),
                    "variant {id} accepted an empty transpose's column 0"
                );
            }
        } else {
            check("scan over a column", c);
        }
    }
    Ok(())
}
