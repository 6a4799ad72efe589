//! CUDA refusal classes of the random programs (seed 23, issue 19): each class reduced by hand
//! to its smallest program, plus the shortest program the random test printed. Every
//! `STRIDE`-th CUDA variant is NVRTC-compiled (where NVRTC loads) and run in the emulator against
//! the interpreter.

use surge::Computation;
use surge::prelude::*;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

/// A map whose body is code over a scan rather than the scan itself (`scan_bodies.rs`).
#[test]
fn code_over_a_scan_in_a_map_body() -> surge::Result<()> {
    for n in [0usize, 2, 9, 40] {
        let x: Vec<f64> = (0..n).map(|k| ((k * 5) % 7) as f64 - 3.0).collect();
        let in0 = Seq::input("in0", x)?;
        let rows = split(&in0, lit(3u64))?;
        let y = map(
            |r: Seq<f64>| Ok(len(&scan_prefix(min, &r, lit(1.5f64))?).cast::<f32>()),
            &rows,
        )?;
        on_cuda(&format!("len of a scan, n = {n}"), &Computation::new(&y)?);
        let y = map(
            |r: Seq<f64>| {
                let s = scan(add, &r)?;
                Ok(at(&s, lit(0u64))? * lit(2.0f64) + len(&s).cast::<f64>())
            },
            &rows,
        )?;
        let rows_nonempty = n % 3 == 0;
        if rows_nonempty {
            on_cuda(
                &format!("element of a scan, n = {n}"),
                &Computation::new(&y)?,
            );
        }
    }
    Ok(())
}

/// The shortest program of the class as the random test printed it (seed 23).
#[test]
fn code_over_a_scan_of_reduced_rows() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![7, -8, 1, 3, -6i64])?;
    let in1 = Seq::input("in1", vec![1, 1, 2, 2, 3, 3, 4, 5, 5u32])?;
    let in2 = Seq::input(
        "in2",
        vec![-5.0, -2.5, 0.75, 1.5, 3.25, 0.75, 5.25, -5.75f32],
    )?;
    let in3 = Seq::input(
        "in3",
        vec![0.0, -0.75, -2.75, -0.75, -1.25, -5.25, -0.75, -1.0, -1.0f64],
    )?;
    let in3c = in3.clone();
    let y = map(
        move |(v3, _v4, _v5): (Scalar<f64>, Seq<i64>, Scalar<f32>)| {
            let rows = split(&in3c, lit(3u64))?;
            let r = reduce_prefix(
                |a: Seq<f64>, b: Seq<f64>| {
                    map(|(u, w): (Scalar<f64>, Scalar<f64>)| Ok(u.min(w)), (&a, &b))
                },
                &rows,
                replicate::<f64>(v3.clone(), lit(3u64))?,
            )?;
            let s = scan_prefix(min, &r, lit(1.5f64).fma(v3.clone(), v3))?;
            Ok(len(&s).cast::<f32>())
        },
        (
            &replicate::<f64>(lit(-5.75f64), lit(8u64))?,
            &reverse(&nest(&in0, &in1)?)?,
            &reverse(&scan(max, &in2)?)?,
        ),
    )?;
    on_cuda("len of a scan of reduced rows", &Computation::new(&y)?);
    Ok(())
}

fn min_rows(a: Seq<f64>, b: Seq<f64>) -> surge::Result<Seq<f64>> {
    map(|(u, w): (Scalar<f64>, Scalar<f64>)| Ok(u.min(w)), (&b, &a))
}

/// A reduction of rows with an element-wise combiner inside a map's body, read lazily
/// (`lazy_rows.rs`); rows of another length fail as the interpreter fails.
#[test]
fn a_reduction_of_rows_in_a_map_body() -> surge::Result<()> {
    for (n, w) in [(0usize, 3u64), (9, 3), (12, 4), (10, 3)] {
        let x: Vec<f64> = (0..n).map(|k| ((k * 5) % 7) as f64 - 3.0).collect();
        let in0 = Seq::input("in0", x)?;
        let in1 = Seq::input("in1", vec![0.5, -1.0, 2.0f64])?;
        let y = map(
            move |v: Scalar<f64>| {
                let p = replicate::<f64>(v, lit(w))?;
                let r = reduce_prefix(min_rows, &split(&in0, lit(w))?, p)?;
                Ok(reduce(add, &r)? + len(&r).cast::<f64>())
            },
            &in1,
        )?;
        let c = Computation::new(&y)?;
        if n % w as usize == 0 {
            on_cuda(&format!("a reduction of rows in a map, n = {n}"), &c);
        } else {
            fails_as_the_interpreter(&c);
        }
    }
    Ok(())
}

type Pair = (Scalar<f32>, Scalar<bool>);

fn min_and(a: Pair, b: Pair) -> surge::Result<Pair> {
    Ok((a.0.min(b.0), a.1.and(&b.1)))
}

fn max_or(a: Pair, b: Pair) -> surge::Result<Pair> {
    Ok((a.0.max(b.0), a.1.or(&b.1)))
}

/// A `reduce_by_key` of tuples inside a map's body, its prefix the map's element
/// (`lazy_keyed.rs`), reduced in order by the body.
#[test]
fn a_reduce_by_key_of_tuples_in_a_map_body() -> surge::Result<()> {
    for (vals, keys) in [
        (vec![], vec![]),
        (vec![-0.75, -1.5f32], vec![2, 4u32]),
        (vec![1.0, -2.0, 3.5, 0.25, -4.0], vec![1, 1, 0, 0, 1u32]),
    ] {
        let n = vals.len();
        let flags: Vec<f64> = (0..n).map(|k| k as f64 - 1.0).collect();
        let a = Seq::input("a", vals)?;
        let b = map(
            |v: Scalar<f64>| Ok(v.lt(lit(-0.75f64))),
            &Seq::input("b", flags)?,
        )?;
        let k = Seq::input("k", keys)?;
        let xs = Seq::input("x", vec![1.0, -1.0, 2.0f64])?;
        let x = map(|v: Scalar<f64>| Ok(v.lt(lit(0.0f64))), &xs)?;
        let y = map(
            move |v: Scalar<bool>| {
                let runs = reduce_by_key(min_and, &zip(&a, &b)?, &k, (lit(3.25f32), v))?;
                reduce_prefix(max_or, &runs, (lit(5.0f32), lit(1.0f32).lt(lit(0.0f32))))
            },
            &x,
        )?;
        on_cuda(
            &format!("reduce_by_key in a map, n = {n}"),
            &Computation::new(&y)?,
        );
    }
    Ok(())
}

/// The shortest program of the class as the random test printed it (seed 23).
#[test]
fn runs_of_tuples_reduced_in_a_map_body() -> surge::Result<()> {
    let in0 = Seq::input("in0", Vec::<i64>::new())?;
    let in1 = Seq::input("in1", vec![0u32])?;
    let in2 = Seq::input("in2", vec![-0.75, -1.5f32])?;
    let in3 = Seq::input("in3", vec![-0.25, -0.5f64])?;
    let in4 = Seq::input("in4", vec![2, 4u32])?;
    let in5 = Seq::input(
        "in5",
        vec![-6, -5, 3, 5, 3, -4, -1, 6, 5, -4, 5, 0, 4, 5i64],
    )?;
    let in6 = Seq::input(
        "in6",
        vec![
            0.0, 4.5, -1.25, 0.75, -4.5, 2.0, 2.5, -0.25, -1.25, -0.25, -0.5, 2.5, -4.25, 1.25f32,
        ],
    )?;
    let mut seven = vec![0.0f64; 14];
    seven[..3].copy_from_slice(&[6.0, 3.25, 0.5]);
    let in7 = Seq::input("in7", seven)?;
    let in8 = Seq::input("in8", vec![0.0f32; 14])?;
    let in9 = Seq::input("in9", vec![0.0f64; 14])?;
    type Quad = (
        Scalar<i64>,
        (Scalar<f32>, Scalar<f64>, Scalar<f32>),
        Scalar<f64>,
    );
    type Two = (Scalar<i64>, Scalar<i64>);
    let sums = map(
        |(v9, _v10, _v11): Quad| Ok((v9.clone(), v9)),
        (&in5, &zip3(&in6, &in7, &in8)?, &in9),
    )?;
    let per = map(
        |_v1: Seq<i64>| {
            Ok((
                lit(0.25f64).lt(lit(1.0f64)),
                lit(5.0f64).lt(lit(5.0f64)),
                lit(-3i64),
            ))
        },
        &nest(&in0, &in1)?,
    )?;
    let flags = map(|v3: Scalar<f64>| Ok(v3.lt(lit(-0.75f64))), &in3)?;
    let runs = map(
        move |v2: (Scalar<bool>, Scalar<bool>, Scalar<i64>)| {
            let r = reduce_by_key(min_and, &zip(&in2, &flags)?, &in4, (lit(3.25f32), v2.0))?;
            reduce_prefix(max_or, &r, (lit(5.0f32), lit(0.25f32).lt(lit(2.5f32))))
        },
        &per,
    )?;
    let y = map(
        move |_v8: Pair| reduce(|a: Two, b: Two| Ok((a.0 + b.0, a.1 + b.1)), &sums),
        &runs,
    )?;
    on_cuda("runs of tuples reduced in a map", &Computation::new(&y)?);
    Ok(())
}

/// A map whose body is rows of tuples (a value three levels deep of tuples), scattered.
#[test]
fn rows_of_tuples_as_a_map_body() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![-2.75, 0.0f64])?;
    let in1 = Seq::input("in1", vec![1.0, -1.0f64])?;
    let in2 = Seq::input("in2", vec![2.0, 3.0f64])?;
    let in3 = Seq::input("in3", vec![0.5, 1.5f32])?;
    let in4 = Seq::input("in4", vec![0, 1, 2u32])?;
    let in5 = Seq::input("in5", vec![1, 0u32])?;
    let (a, b, c, k) = (in1.clone(), in2.clone(), in3.clone(), in4.clone());
    let m = map(
        move |_v1: Scalar<f64>| {
            let flags = map(|v: Scalar<f64>| Ok(v.lt(lit(0.0f64))), &a)?;
            nest(&zip3(&flags, &b, &c)?, &k)
        },
        &in0,
    )?;
    on_cuda("rows of tuples in a map", &Computation::new(&m)?);
    let flags = map(|v: Scalar<f64>| Ok(v.lt(lit(0.0f64))), &in1)?;
    let one = nest(&zip3(&flags, &in2, &in3)?, &in4)?;
    let dest = nest(&one, &Seq::input("in6", vec![0, 1, 1u32])?)?;
    let y = scatter(&m, &in5, &dest)?;
    on_cuda(
        "a scatter of rows of tuples in a map",
        &Computation::new(&y)?,
    );
    Ok(())
}

/// The shortest program of the class as the random test printed it (seed 23).
#[test]
fn a_scatter_of_rows_of_tuples_in_a_map() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![-2.75, 0.0f64])?;
    let in1 = Seq::input("in1", Vec::<f64>::new())?;
    let in2 = Seq::input("in2", Vec::<f64>::new())?;
    let in3 = Seq::input("in3", Vec::<f32>::new())?;
    let in4 = Seq::input("in4", vec![0u32])?;
    let in5 = Seq::input("in5", vec![0, 0u32])?;
    let in6 = Seq::input("in6", Vec::<f64>::new())?;
    let in7 = Seq::input("in7", Vec::<f64>::new())?;
    let in8 = Seq::input("in8", Vec::<f32>::new())?;
    let in9 = Seq::input("in9", vec![0u32])?;
    let in10 = Seq::input("in10", vec![0u32])?;
    let m = map(
        move |_v1: Scalar<f64>| {
            let flags = map(|v2: Scalar<f64>| Ok(v2.lt(lit(0.0f64))), &in1)?;
            nest(&zip3(&flags, &in2, &in3)?, &in4)
        },
        &in0,
    )?;
    let flags = map(|v3: Scalar<f64>| Ok(v3.lt(lit(0.0f64))), &in6)?;
    let dest = nest(&nest(&zip3(&flags, &in7, &in8)?, &in9)?, &in10)?;
    // Index 0 into an empty destination: emitted, and failing as the interpreter fails.
    fails_as_the_interpreter(&Computation::new(&scatter(&m, &in5, &dest)?)?);
    Ok(())
}
