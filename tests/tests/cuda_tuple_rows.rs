//! Rows of tuples on CUDA (issue 19): stored one phase per component when a later phase reads
//! them (`surge-codegen/src/emit/cuda/tuple_rows.rs`), a `scatter` of rows of tuples and a
//! `reduce_by_key` of rows of tuples with a component-wise combiner, every `STRIDE`-th variant
//! NVRTC-compiled and run in the emulator against the interpreter; a combiner that mixes
//! components reads its runs lazily.

use surge::Computation;
use surge::apps::kmeans::program::argmin;
use surge::prelude::*;
use tests::conformance::values;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

type Pair = (Scalar<f64>, Scalar<i64>);

fn pairs(n: usize, seed: u64) -> surge::Result<Seq<(f64, i64)>> {
    let x = Seq::input(format!("x{seed}"), values(n, seed))?;
    let i = Seq::input(
        format!("i{seed}"),
        (0..n as i64).map(|v| (v * 7) % 13).collect(),
    )?;
    zip(&x, &i)
}

/// Labels in runs (sorted), one per row of `rows` rows.
fn labels(rows: usize) -> surge::Result<Seq<u32>> {
    Seq::input("keys", (0..rows as u32).map(|r| r / 3).collect())
}

#[test]
fn a_reduce_by_key_of_rows_of_tuples() -> surge::Result<()> {
    let rows = split(&pairs(40, 1)?, 4u64)?;
    let zero = zip(
        &Seq::input("z0", vec![0.0f64; 4])?,
        &Seq::input("z1", vec![0i64; 4])?,
    )?;
    let sums = reduce_by_key(
        |a: Seq<(f64, i64)>, b: Seq<(f64, i64)>| {
            map(|(u, v): (Pair, Pair)| (u.0 + v.0, max(u.1, v.1)), (&a, &b))
        },
        &rows,
        &labels(10)?,
        &zero,
    )?;
    // Read by a later phase: the first column's sums and maxima.
    let firsts = map(
        |r: Seq<(f64, i64)>| {
            let (s, m) = at(&r, 0u32)?;
            Ok(s + m.cast::<f64>())
        },
        &sums,
    )?;
    on_cuda(
        "rows of pairs reduced per label, read",
        &Computation::new(&firsts)?,
    );
    on_cuda("rows of pairs reduced per label", &Computation::new(&sums)?);
    Ok(())
}

#[test]
fn a_scatter_of_rows_of_tuples() -> surge::Result<()> {
    let src = split(&pairs(12, 2)?, 3u64)?;
    let dest = nest(
        &pairs(20, 3)?,
        &Seq::input("off", vec![0u32, 5, 5, 9, 14, 20])?,
    )?;
    let idx = Seq::input("idx", vec![4i64, 0, 4, 2])?;
    let moved = scatter(&src, &idx, &dest)?;
    let sizes = map(
        |r: Seq<(f64, i64)>| {
            Ok(len(&r).cast::<f64>() + reduce_prefix(add, &map(|t: Pair| t.0, &r)?, 0.0)?)
        },
        &moved,
    )?;
    on_cuda("rows of pairs scattered, read", &Computation::new(&sizes)?);
    on_cuda("rows of pairs scattered", &Computation::new(&moved)?);
    // An index out of range: the interpreter's error.
    let bad = Seq::input("idx", vec![4i64, 0, 9, 2])?;
    let moved = scatter(&src, &bad, &dest)?;
    let sizes = map(|r: Seq<(f64, i64)>| len(&r), &moved)?;
    fails_as_the_interpreter(&Computation::new(&sizes)?);
    Ok(())
}

/// A combiner that computes a component from another: the runs are read lazily, every
/// component folded in each component's phase (`lazy_keyed.rs`; refused before seed 25).
#[test]
fn a_combiner_that_mixes_components() -> surge::Result<()> {
    let rows = split(&pairs(40, 4)?, 4u64)?;
    let zero = zip(
        &Seq::input("z0", vec![0.0f64; 4])?,
        &Seq::input("z1", vec![0i64; 4])?,
    )?;
    let mixed = reduce_by_key(
        |a: Seq<(f64, i64)>, b: Seq<(f64, i64)>| {
            map(
                |(u, v): (Pair, Pair)| (u.0 + v.1.cast::<f64>(), max(u.1, v.1)),
                (&a, &b),
            )
        },
        &rows,
        &labels(10)?,
        &zero,
    )?;
    let firsts = map(|r: Seq<(f64, i64)>| Ok(at(&r, 0u32)?.0), &mixed)?;
    on_cuda("mixed components, firsts", &Computation::new(&firsts)?);
    on_cuda("mixed components", &Computation::new(&mixed)?);
    Ok(())
}

#[test]
fn the_random_programs_reduce_by_key_of_rows_of_triples() -> surge::Result<()> {
    // Found by the random programs (seed 5): a reduce_by_key of rows of triples, transposed,
    // one row of it reduced.
    type Triple = (Scalar<u32>, Scalar<f64>, Scalar<i64>);
    let in0 = Seq::input("in0", vec![2u32, 1, 5, 4, 6, 6, 1, 4])?;
    let in1 = Seq::input("in1", values(8, 30))?;
    let in2 = Seq::input("in2", vec![3i64, -1, 0, 7, 2, 2, 9, -4])?;
    let keys = Seq::input("in3", vec![0u32, 0, 1, 1, 1, 2, 2, 2])?;
    let in4 = Seq::input("in4", vec![1u32])?;
    let in5 = Seq::input("in5", vec![0.5f64])?;
    let in6 = Seq::input("in6", vec![-2i64])?;
    let add3 = |a: Triple, b: Triple| (a.0 + b.0, a.1 + b.1, a.2 + b.2);
    let runs = reduce_by_key(
        |v1: Seq<(u32, f64, i64)>, v2: Seq<(u32, f64, i64)>| {
            map(|(u, v): (Triple, Triple)| add3(u, v), (&v1, &v2))
        },
        &split(&zip3(&in0, &in1, &in2)?, 1u64)?,
        &keys,
        zip3(&in4, &in5, &in6)?,
    )?;
    let y = reduce(add3, &at(&transpose(&runs)?, 0u32)?)?;
    on_cuda(
        "triples reduced per key, transposed",
        &Computation::new(&y)?,
    );
    Ok(())
}

/// A `reduce_by_key` of flat tuples of scalars (one tuple per element): `keys` and the
/// elements' distances, an argmin per run of equal keys (ties: the first index), at the root
/// and read by a later phase.
fn argmin_per_key(keys: Vec<u32>, what: &str) -> surge::Result<()> {
    let n = keys.len();
    // Distances that repeat, so runs hold ties.
    let d = Seq::input("d", (0..n).map(|i| ((i * 37) % 11) as f64).collect())?;
    let k = Seq::input("k", keys)?;
    let best = reduce_by_key(
        argmin,
        &zip(&d, &range(0u32, n as u32)?)?,
        &k,
        (lit(f64::INFINITY), lit(u32::MAX)),
    )?;
    on_cuda(what, &Computation::new(&best)?);
    let idx = map(|t: (Scalar<f64>, Scalar<u32>)| t.1, &best)?;
    on_cuda(&format!("{what}, its indices"), &Computation::new(&idx)?);
    let y = reduce_prefix(add, &map(|t: (Scalar<f64>, Scalar<u32>)| t.0, &best)?, 0.0)?;
    on_cuda(&format!("{what}, summed"), &Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_reduce_by_key_of_tuples_argmin_per_key() -> surge::Result<()> {
    // Runs from one element to several blocks' worth.
    let keys = (0..700u32).map(|i| i / 3 + (i / 200) * 50).collect();
    argmin_per_key(keys, "argmin per key")?;
    argmin_per_key(vec![5; 300], "argmin of one run")?;
    argmin_per_key(
        (0..300).map(|i| 3 * i + 1).collect(),
        "argmin per distinct key",
    )?;
    argmin_per_key(Vec::new(), "argmin per key of nothing")
}

#[test]
fn a_reduce_by_key_of_tuples_count_and_sum_per_key() -> surge::Result<()> {
    type Cs = (Scalar<u64>, Scalar<f64>);
    let n = 500usize;
    let x = Seq::input("x", values(n, 9))?;
    let ones: Seq<u64> = replicate(1u64, n as u64)?;
    let k = Seq::input("k", (0..n as i64).map(|i| (i * i) / 97 - 3).collect())?;
    let cs = reduce_by_key(
        |a: Cs, b: Cs| (a.0 + b.0, a.1 + b.1),
        &zip(&ones, &x)?,
        &k,
        (lit(0u64), lit(0.5f64)),
    )?;
    on_cuda("(count, sum) per key", &Computation::new(&cs)?);
    let means = map(|t: Cs| t.1 / t.0.cast::<f64>(), &cs)?;
    on_cuda("mean per key", &Computation::new(&means)?);
    // The input and the keys of different lengths (known when it runs: a row of a nest): the
    // interpreter's error.
    let kk = Seq::input("kk", vec![0i64; n - 1])?;
    let short = at(
        &nest(&kk, &Seq::input("off", vec![0u32, n as u32 - 1])?)?,
        0u32,
    )?;
    let bad = reduce_by_key(
        |a: Cs, b: Cs| (a.0 + b.0, a.1 + b.1),
        &zip(&ones, &x)?,
        &short,
        (lit(0u64), lit(0.5f64)),
    )?;
    fails_as_the_interpreter(&Computation::new(&bad)?);
    // A combiner that fails (an integer division by zero in the third run): the interpreter's
    // error, on every variant.
    type Qs = (Scalar<i64>, Scalar<i64>);
    let num = Seq::input("num", vec![7i64, -9, 100, 5, 3, 8, 2])?;
    let den = Seq::input("den", vec![2i64, 4, -7, 1, 0, 3, 1])?;
    let k = Seq::input("k", vec![1u32, 1, 2, 2, 3, 3, 3])?;
    let q = reduce_by_key(
        |a: Qs, b: Qs| (a.0 / b.1.clone(), a.1 + b.1),
        &zip(&num, &den)?,
        &k,
        (lit(1000i64), lit(0i64)),
    )?;
    fails_as_the_interpreter(&Computation::new(&q)?);
    let ok = Seq::input("den", vec![2i64, 4, -7, 1, 5, 3, 1])?;
    let q = reduce_by_key(
        |a: Qs, b: Qs| (a.0 / b.1.clone(), a.1 + b.1),
        &zip(&num, &ok)?,
        &k,
        (lit(1000i64), lit(0i64)),
    )?;
    on_cuda("quotients per key", &Computation::new(&q)?);
    Ok(())
}

#[test]
fn a_reduce_by_key_with_an_operator_without_identity() -> surge::Result<()> {
    // Scalars whose operator has no identity: folded in order, as the interpreter does.
    let n = 300usize;
    let x = Seq::input("x", values(n, 11))?;
    let k = Seq::input("k", (0..n as u32).map(|i| i / 7).collect())?;
    let decayed = reduce_by_key(|a: Scalar<f64>, b: Scalar<f64>| a * 0.5 + b, &x, &k, 1.0)?;
    on_cuda("a decaying sum per key", &Computation::new(&decayed)?);
    let y = reduce(max, &decayed)?;
    on_cuda("the largest decaying sum per key", &Computation::new(&y)?);
    Ok(())
}
