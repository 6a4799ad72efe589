//! CUDA refusal classes of the random programs, seed 31 (issue 19): a scan inside an element
//! expression, read lazily (`lazy_scan.rs`), and a tuple reduction over it in a map's body
//! read at the root. Each program is the shortest of its class as the random test printed it,
//! plus variations; every `STRIDE`-th CUDA variant is NVRTC-compiled (where NVRTC loads) and
//! run in the emulator against the interpreter, errors included.

use surge::Computation;
use surge::prelude::*;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

type I2 = (Scalar<i64>, Scalar<i64>);

/// The random program's argmin of pairs: the smaller first component and its second.
fn argmin2(a: I2, b: I2) -> surge::Result<I2> {
    let le = a.0.clone().le(b.0.clone());
    Ok((le.clone().select(a.0, b.0), le.select(a.1, b.1)))
}

/// `at(map(|(_, v4)| reduce_prefix(argmin2, scan_prefix(argmin2, zip(in3, in4), p), p),
/// (reverse(in0), scan(min2, zip(in1, in2)))), k)`, `p = (v4.0, v4.0)`: the random program
/// (seed 31), its scanned pairs `pairs` and the element `k` read.
fn argmin_of_scans(pairs: (Vec<i64>, Vec<i64>), k: i64) -> surge::Result<Computation> {
    let in0 = Seq::input("in0", vec![4.25, -6.0, -5.0, -1.75f32])?;
    let in1 = Seq::input("in1", vec![-8, 3, -5, -7i64])?;
    let in2 = Seq::input("in2", vec![-3.0, 3.75, 0.75, -1.5f32])?;
    let in3 = Seq::input("in3", pairs.0)?;
    let in4 = Seq::input("in4", pairs.1)?;
    let min2 = |a: (Scalar<i64>, Scalar<f32>), b: (Scalar<i64>, Scalar<f32>)| -> surge::Result<_> {
        Ok((a.0.min(b.0), a.1.min(b.1)))
    };
    let m = map(
        |(_v3, v4): (Scalar<f32>, (Scalar<i64>, Scalar<f32>))| -> surge::Result<_> {
            let p = (v4.0.clone(), v4.0.clone());
            let s = scan_prefix(argmin2, &zip(&in3, &in4)?, p.clone())?;
            reduce_prefix(argmin2, &s, p)
        },
        (&reverse(&in0)?, &scan(min2, &zip(&in1, &in2)?)?),
    )?;
    Computation::new(&at(&m, lit(k))?)
}

#[test]
fn a_tuple_reduce_over_a_tuple_scan_in_a_map_read_at_the_root() -> surge::Result<()> {
    // The random program.
    let pairs = (vec![-7, 4, 4, -8, 2, -3], vec![6, -4, -3, -2, -6, 2]);
    on_cuda("argmin of scans", &argmin_of_scans(pairs, 2)?);
    // Ties (the first wins), no pairs, one pair.
    let ties = (vec![3, 1, 1, 5, 1, 0, 0], vec![1, 2, 3, 4, 5, 6, 7]);
    on_cuda("argmin of scans, ties", &argmin_of_scans(ties, 0)?);
    on_cuda(
        "argmin of scans, no pairs",
        &argmin_of_scans((vec![], vec![]), 3)?,
    );
    on_cuda(
        "argmin of scans, one pair",
        &argmin_of_scans((vec![-9], vec![4]), 1)?,
    );
    Ok(())
}

/// `x` and the elements `pick` the maps below run over.
fn inputs() -> surge::Result<(Seq<i32>, Seq<i32>)> {
    let x = Seq::input("x", vec![4, -2, 7, 0, -5, 3, 3, -1, 6i32])?;
    let pick = Seq::input("pick", vec![2, -3, 0, 5, 1i32])?;
    Ok((x, pick))
}

#[test]
fn a_scan_of_scalars_inside_an_element_expression() -> surge::Result<()> {
    let (x, pick) = inputs()?;
    // Exclusive from the element's prefix, read by a reduction in the body (a level).
    let y = map(
        |p: Scalar<i32>| reduce_prefix(add, &scan_prefix(max, &x, p)?, 0i32),
        &pick,
    )?;
    on_cuda("a reduce over a scan per element", &Computation::new(&y)?);
    // Inclusive, one element read (its index checked), and the length.
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let s = scan(min, &map(|e: Scalar<i32>| Ok(e * p.clone()), &x)?)?;
            Ok(at(&s, lit(4u32))? + len(&s).cast::<i32>())
        },
        &pick,
    )?;
    on_cuda("an element of a scan per element", &Computation::new(&y)?);
    let y = map(
        |p: Scalar<i32>| at(&scan_prefix(add, &x, p.clone())?, p),
        &pick,
    )?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    // A row per element: the scan mapped (a map of rows).
    let y = map(
        |p: Scalar<i32>| map(|e: Scalar<i32>| Ok(e - 1i32), &scan_prefix(add, &x, p)?),
        &pick,
    )?;
    on_cuda("a mapped scan per element", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_scan_of_tuples_inside_an_element_expression() -> surge::Result<()> {
    let (x, pick) = inputs()?;
    let xs = map(|e: Scalar<i32>| Ok(e.cast::<i64>()), &x)?;
    let ids = map(|e: Scalar<i32>| Ok((e * 3i32).cast::<i64>()), &x)?;
    // One element's second component, from the element's prefix.
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let p = (p.clone().cast::<i64>(), p.cast::<i64>() + 100i64);
            let s = scan_prefix(argmin2, &zip(&xs, &ids)?, p)?;
            Ok(at(&s, lit(6u32))?.1)
        },
        &pick,
    )?;
    on_cuda(
        "an element of a tuple scan per element",
        &Computation::new(&y)?,
    );
    // Inclusive, reduced without a prefix at the root of a map of pairs.
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let shifted = map(|e: Scalar<i64>| Ok(e + p.clone().cast::<i64>()), &xs)?;
            reduce(argmin2, &scan(argmin2, &zip(&ids, &shifted)?)?)
        },
        &pick,
    )?;
    on_cuda(
        "a reduce over a tuple scan per element",
        &Computation::new(&y)?,
    );
    Ok(())
}

/// The element-wise maximum of two rows.
fn max_rows(a: Seq<i32>, b: Seq<i32>) -> surge::Result<Seq<i32>> {
    map(|(u, v): (Scalar<i32>, Scalar<i32>)| Ok(u.max(v)), (&a, &b))
}

#[test]
fn a_scan_of_rows_inside_an_element_expression() -> surge::Result<()> {
    let (x, pick) = inputs()?;
    let rows = split(&x, lit(3u64))?;
    // Exclusive from the element's row: the sum of one row of the scan.
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let s = scan_prefix(max_rows, &rows, replicate::<i32>(p, lit(3u64))?)?;
            reduce_prefix(add, &at(&s, lit(2u32))?, 0i32)
        },
        &pick,
    )?;
    on_cuda(
        "a row of a scan of rows per element",
        &Computation::new(&y)?,
    );
    // Inclusive: the length of the last row and the sum of every row's first element.
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let s = scan(
                max_rows,
                &map(
                    |r: Seq<i32>| map(|e: Scalar<i32>| Ok(e * p.clone()), &r),
                    &rows,
                )?,
            )?;
            let firsts = map(|r: Seq<i32>| at(&r, lit(0u32)), &s)?;
            Ok(reduce_prefix(add, &firsts, 0i32)? + len(&at(&s, lit(2u32))?).cast::<i32>())
        },
        &pick,
    )?;
    on_cuda("rows of a scan of rows per element", &Computation::new(&y)?);
    // Rows of different lengths: the combiner's error without a prefix; with one, the last
    // row is never combined (no error).
    let uneven = nest(&x, &Seq::input("off", vec![0u32, 3, 6, 8])?)?;
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let s = scan(max_rows, &uneven)?;
            Ok(at(&at(&s, lit(0u32))?, lit(1u32))? + p)
        },
        &pick,
    )?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let s = scan_prefix(max_rows, &uneven, replicate::<i32>(p, lit(3u64))?)?;
            reduce_prefix(add, &at(&s, lit(2u32))?, 0i32)
        },
        &pick,
    )?;
    on_cuda("a scan of uneven rows per element", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn an_element_read_inside_an_element_read() -> surge::Result<()> {
    // The inner `at`'s element reads the outer one's (`p`): each index is named by its node
    // (the inner one shadowed the outer: element 2 of the map was read, not element 1).
    let (x, pick) = inputs()?;
    let y = map(
        |p: Scalar<i32>| at(&scan_prefix(add, &x, p)?, lit(2u32)),
        &pick,
    )?;
    on_cuda(
        "an element of a scan, read at the root",
        &Computation::new(&at(&y, lit(1u32))?)?,
    );
    let y = map(
        |p: Scalar<i32>| at(&map(|e: Scalar<i32>| Ok(e + p.clone()), &x)?, lit(3u32)),
        &pick,
    )?;
    on_cuda(
        "an element of a map, read at the root",
        &Computation::new(&at(&y, lit(1u32))?)?,
    );
    let y = map(
        |p: Scalar<i32>| {
            at(
                &gather(
                    &x,
                    &map(
                        |e: Scalar<i32>| Ok((e + p.clone()).abs().cast::<u32>() % 9u32),
                        &pick,
                    )?,
                )?,
                lit(2u32),
            )
        },
        &pick,
    )?;
    on_cuda(
        "an element of a gather, read at the root",
        &Computation::new(&at(&y, lit(3u32))?)?,
    );
    Ok(())
}

#[test]
fn a_map_whose_body_reads_a_scan_of_rows() -> surge::Result<()> {
    let (x, pick) = inputs()?;
    let rows = split(&x, lit(3u64))?;
    // One row of the scan per element, and its length (the scan and its combiner's map are
    // levels of the phase, read lazily in the body).
    let y = map(
        |p: Scalar<i32>| {
            at(
                &scan_prefix(max_rows, &rows, replicate::<i32>(p, lit(3u64))?)?,
                lit(1u32),
            )
        },
        &pick,
    )?;
    on_cuda(
        "a row of a scan of rows as a map's body",
        &Computation::new(&y)?,
    );
    let y = map(
        |p: Scalar<i32>| -> surge::Result<_> {
            let s = scan(
                max_rows,
                &map(
                    |r: Seq<i32>| map(|e: Scalar<i32>| Ok(e - p.clone()), &r),
                    &rows,
                )?,
            )?;
            Ok(len(&s))
        },
        &pick,
    )?;
    on_cuda(
        "the length of a scan of rows as a map's body",
        &Computation::new(&y)?,
    );
    Ok(())
}
