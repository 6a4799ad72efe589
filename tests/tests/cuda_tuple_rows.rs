//! Rows of tuples on CUDA (issue 19): stored one phase per component when a later phase reads
//! them (`surge-codegen/src/emit/cuda/tuple_rows.rs`), a `scatter` of rows of tuples and a
//! `reduce_by_key` of rows of tuples with a component-wise combiner, every `STRIDE`-th variant
//! NVRTC-compiled and run in the emulator against the interpreter; a combiner that mixes
//! components is refused with a message naming it.

use surge::Computation;
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

#[test]
fn a_combiner_that_mixes_components_is_refused() -> surge::Result<()> {
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
    let c = Computation::new(&firsts)?;
    let err = surge::execute(&c, &surge::Target::cuda_emulated())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a component computed from another component")
            && err.contains("cuda_tuple_rows.rs"),
        "{err}"
    );
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
