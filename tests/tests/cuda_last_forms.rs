//! The last CUDA refusal classes of the random programs (seeds 6 and 7, issue 19): each program
//! is the shortest of its class as the random test printed it, plus variations. Every
//! `STRIDE`-th CUDA variant is NVRTC-compiled (where NVRTC loads) and run in the emulator against
//! the interpreter.

use surge::Computation;
use surge::prelude::*;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

#[test]
fn scalar_code_over_a_join_beside_a_reduction() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![8, 2, 6, 2u32])?;
    let in1 = Seq::input("in1", vec![4.75, 1.0, 5.5, 4.5, -3.75, 0.0f64])?;
    let in2 = Seq::input("in2", vec![-5.75, -1.0, 2.5, -0.5, 1.0, -1.0, 2.0, 0.5f64])?;
    let in3 = Seq::input("in3", vec![6, 2, 6, 3, 5, 5, 0, 8, 3, 6, 5, 5, 1, 8u32])?;
    let flags = map(|v: Scalar<f64>| Ok(v.lt(lit(-4.0f64))), &in2)?;
    let y = (
        len(&join3(&in0, &in1, &flags)?).cast::<f32>(),
        reduce(max, &at(&split(&in3, lit(3u64))?, lit(0u32))?)?,
    );
    on_cuda("len of a join beside a reduce", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn an_element_of_a_zip_hoisted_out_of_a_map() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![-1, 5, 5, -6, -4, 8i64])?;
    let in1 = Seq::input("in1", vec![-5, 5, 0, 7, 7, 2i64])?;
    let in2 = Seq::input("in2", vec![0.5, 5.75, 1.0, 1.75, 0.25, 3.25f64])?;
    let in3 = Seq::input("in3", vec![-5.25, -2.0, -2.75, 0.25, 1.75, -1.5f64])?;
    let in4 = Seq::input("in4", vec![-5, 8, 5, -2, 8, 0i64])?;
    let flags = map(|v: Scalar<i64>| Ok(v.lt(lit(6i64))), &in1)?;
    let (a, b, c) = (in2.clone(), in3.clone(), in4.clone());
    let y = at(
        &map(
            move |_v: (Scalar<i64>, Scalar<bool>)| at(&zip3(&a, &b, &c)?, lit(1i64)),
            &zip(&in0, &flags)?,
        )?,
        lit(3i64),
    )?;
    on_cuda("an element of a zip in a map", &Computation::new(&y)?);
    Ok(())
}

type Rows = Seq<Seq<f32>>;

fn min_rows(a: Seq<f32>, b: Seq<f32>) -> surge::Result<Seq<f32>> {
    map(|(u, v): (Scalar<f32>, Scalar<f32>)| Ok(u.min(v)), (&a, &b))
}

fn add_rows(a: Seq<f32>, b: Seq<f32>) -> surge::Result<Seq<f32>> {
    map(|(u, v): (Scalar<f32>, Scalar<f32>)| Ok(u + v), (&b, &a))
}

fn rows_of(n: usize) -> surge::Result<(Seq<f32>, Rows)> {
    let x: Vec<f32> = (0..n).map(|k| ((k * 7) % 11) as f32 - 5.0).collect();
    let in0 = Seq::input("in0", x)?;
    let rows = reverse(&transpose(&split(&in0, lit(3u64))?)?)?;
    Ok((in0, rows))
}

#[test]
fn a_scan_of_rows_with_an_elementwise_combiner() -> surge::Result<()> {
    for n in [0usize, 3, 12, 30, 600] {
        let (in0, rows) = rows_of(n)?;
        let width = (n / 3) as u64;
        let y = scan_prefix(min_rows, &rows, replicate::<f32>(lit(5.75f32), lit(width))?)?;
        on_cuda(
            &format!("scan of rows, prefix, n = {n}"),
            &Computation::new(&y)?,
        );
        let y = scan(add_rows, &split(&in0, lit(4u64))?)?;
        if n % 4 == 0 || n < 4 {
            on_cuda(&format!("scan of rows, n = {n}"), &Computation::new(&y)?);
        } else {
            // The last row is shorter: the combiner's length error, as in the interpreter.
            fails_as_the_interpreter(&Computation::new(&y)?);
        }
    }
    // A prefix of the wrong length: the combiner's error on the first row, unless only one
    // row (an exclusive scan never combines the last row).
    let (_, rows) = rows_of(12)?;
    let y = scan_prefix(min_rows, &rows, replicate::<f32>(lit(1.0f32), lit(2u64))?)?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    let one = at(
        &split(&Seq::input("one", vec![1.0f32, 2.0])?, lit(2u64))?,
        lit(0u32),
    )?;
    let single: Rows = replicate(&one, lit(1u64))?;
    let y = scan_prefix(min_rows, &single, replicate::<f32>(lit(1.0f32), lit(3u64))?)?;
    on_cuda("one row, prefix of another length", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_reverse_of_tuples_inside_a_map_over_a_scan() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![1.75, 6.0, -0.25, -2.5, -4.25, 1.0f64])?;
    let in1 = Seq::input("in1", vec![6, 8, 8, 6, 1u32])?;
    let in2 = Seq::input("in2", vec![1, 1, 4, 6, 7u32])?;
    let in3 = Seq::input("in3", vec![1, 4, 5, 4, 8u32])?;
    let flags = map(|v: Scalar<u32>| Ok(v.lt(lit(2u32))), &in3)?;
    let pairs = zip(&in2, &flags)?;
    let y = map(
        move |_v: Scalar<f64>| {
            reverse(&map(
                |(_a, b): (Scalar<u32>, (Scalar<u32>, Scalar<bool>))| {
                    Ok((lit(2.5f32), !b.0.lt(lit(6u32)), lit(-2i64)))
                },
                (&in1, &pairs),
            )?)
        },
        &scan_prefix(min, &reverse(&in0)?, lit(2.0f64))?,
    )?;
    on_cuda("reverse of tuples in a map", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_scatter_of_a_scan_of_tuples_inside_a_map() -> surge::Result<()> {
    scatter_of_scanned_pairs(vec![1, 4, 4, 1], "duplicate indices")?;
    scatter_of_scanned_pairs(vec![0, 2, 3, 4], "every index once")?;
    scatter_of_scanned_pairs(vec![3, 1, 5, -1], "an index out of range")
}

/// The random programs' scatter of a scan of pairs inside a map, at `indices`.
fn scatter_of_scanned_pairs(indices: Vec<i64>, what: &str) -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![-3i64, 2])?;
    let in1 = Seq::input("in1", vec![3u32, 1])?;
    let in2 = Seq::input("in2", vec![-2.75, -3.25, -1.25, 1.75f64])?;
    let in3 = Seq::input("in3", vec![0.25, -0.25, 1.75, 0.0f32])?;
    let in4 = Seq::input("in4", indices.clone())?;
    let in5 = Seq::input("in5", vec![1.0f32, 7.0, -1.0, 2.0, 0.5])?;
    let in6 = Seq::input("in6", vec![0.5f32, 1.5, 2.5, 3.5, 4.5])?;
    let y = map(
        move |(_v1, _v2): (Scalar<i64>, Scalar<u32>)| {
            let flags = map(|v: Scalar<f64>| Ok(v.lt(lit(1.0f64))), &in2)?;
            let sums = scan(
                |a: (Scalar<bool>, Scalar<f32>), b: (Scalar<bool>, Scalar<f32>)| {
                    Ok((a.0.and(&b.0), a.1 + b.1))
                },
                &zip(&flags, &in3)?,
            )?;
            let dest_flags = map(|v: Scalar<f32>| Ok(v.lt(lit(5.5f32))), &in5)?;
            scatter(&sums, &in4, &striding(&zip(&dest_flags, &in6)?, lit(1u64))?)
        },
        (&reverse(&in0)?, &in1),
    )?;
    let c = Computation::new(&y)?;
    if indices.iter().all(|&i| (0..5).contains(&i)) {
        on_cuda(&format!("scatter of a scan of tuples, {what}"), &c);
    } else {
        fails_as_the_interpreter(&c);
    }
    Ok(())
}

#[test]
fn a_root_scatter_of_triples_into_a_replicated_tuple() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![8, 0, 4, 1, 6, 3, 3u32])?;
    let in1 = Seq::input("in1", vec![2, 3, 4, 6, 1, 0, 0u32])?;
    let in2 = Seq::input("in2", vec![5, 5, 3, 6, 4, 6, 5u32])?;
    let in3 = Seq::input("in3", vec![2, 2, 3, 4, 4, 4, 1u32])?;
    let flags = map(|v: Scalar<u32>| Ok(v.lt(lit(3u32))), &in1)?;
    let dest = replicate::<(u32, bool, u32)>(
        (lit(0u32), lit(-3i64).lt(lit(-3i64)), lit(6u32)),
        lit(5u64),
    )?;
    let y = scatter(&zip3(&in0, &flags, &in2)?, &in3, &dest)?;
    on_cuda(
        "a scatter of triples into a replicated tuple",
        &Computation::new(&y)?,
    );
    Ok(())
}

#[test]
fn scalar_code_over_a_root_reduce_of_rows() -> surge::Result<()> {
    let in0 = Seq::input(
        "in0",
        vec![6, 6, 4, 1, 4, 8, 6, 3, 3, 2, 3, 0, 0, 1, 5, 0u32],
    )?;
    let in1 = Seq::input("in1", vec![2, 3, 3, 1, 4, 2, 1, 3u32])?;
    let in2 = Seq::input("in2", vec![2, 5, 3, 1, 6, 4u32])?;
    let mul_rows =
        |a: Seq<u32>, b: Seq<u32>| map(|(u, v): (Scalar<u32>, Scalar<u32>)| Ok(u * v), (&a, &b));
    let product = reduce(mul_rows, &split(&in2, lit(3u64))?)?;
    let y = (
        lit(0u32)
            .lt(lit(7u32))
            .select(lit(-4.25f32).abs(), lit(-3.0f32)),
        at(&gather(&in0, &in1)?, lit(2i64))?,
        len(&product).cast::<f64>(),
    );
    on_cuda(
        "the length of a reduce of rows in a tuple",
        &Computation::new(&y)?,
    );
    let y = at(&product, lit(1u32))?;
    on_cuda("an element of a reduce of rows", &Computation::new(&y)?);
    let (_, rows) = rows_of(12)?;
    let running = scan(min_rows, &rows)?;
    let y = len(&running);
    on_cuda("the length of a scan of rows", &Computation::new(&y)?);
    let y = at(&running, lit(2u32))?;
    on_cuda("a row of a scan of rows", &Computation::new(&y)?);
    Ok(())
}

/// Groups of rows of pairs.
type Groups = Seq<Seq<Seq<(u32, u32)>>>;

/// Rows of rows of pairs, one group per element of `in0` (`in2` and `in3` zipped and split in
/// threes), and a destination of `dest_groups` groups of rows of pairs.
fn groups_of_pairs(
    in0: Vec<u32>,
    pairs: usize,
    dest_groups: Vec<u32>,
) -> surge::Result<(Groups, Groups)> {
    let in0 = Seq::input("in0", in0)?;
    let in2 = Seq::input(
        "in2",
        (0..pairs as u32).map(|k| k * 3 % 10).collect::<Vec<_>>(),
    )?;
    let in3 = Seq::input(
        "in3",
        (0..pairs as u32).map(|k| k * 7 % 9).collect::<Vec<_>>(),
    )?;
    let in5 = Seq::input("in5", vec![4, 1, 6, 6, 4, 4u32])?;
    let in6 = Seq::input("in6", vec![0, 7, 1, 1, 4, 3u32])?;
    let in7 = Seq::input("in7", vec![0, 2, 3, 3, 4, 5, 6i64])?;
    let in8 = Seq::input("in8", dest_groups)?;
    let (a, b) = (in2.clone(), in3.clone());
    let per = map(move |_v: Scalar<u32>| split(&zip(&a, &b)?, lit(3u64)), &in0)?;
    let dest = nest(&nest(&zip(&in5, &in6)?, &in7)?, &in8)?;
    Ok((per, dest))
}

/// A phase whose value is rows of rows of tuples that a later phase reads (found by the random
/// programs, seed 7) is stored in parts: its outer level once, its rows once per component.
#[test]
fn rows_of_tuples_per_element() -> surge::Result<()> {
    let (per, dest) = groups_of_pairs(vec![5, 5, 5, 0, 1], 4, vec![0, 1, 1, 3, 4, 6])?;
    on_cuda("rows of tuples per element", &Computation::new(&per)?);
    on_cuda(
        "one element's rows of tuples",
        &Computation::new(&at(&per, lit(2i64))?)?,
    );
    let in4 = Seq::input("in4", vec![2, 1, 0, 1, 0i64])?;
    let moved = scatter(&per, &in4, &dest)?;
    for k in [2i64, 4] {
        let y = at(&moved, lit(k))?;
        on_cuda(
            &format!("element {k} of a scatter of rows of tuples"),
            &Computation::new(&y)?,
        );
    }
    on_cuda("a scatter of rows of tuples", &Computation::new(&moved)?);
    let y = len(&at(&moved, lit(3i64))?);
    on_cuda(
        "the row count of an element of a scatter of rows of tuples",
        &Computation::new(&y)?,
    );
    let lens = map(|r: Seq<Seq<(u32, u32)>>| Ok(len(&r)), &moved)?;
    on_cuda(
        "row counts of a scatter of rows of tuples",
        &Computation::new(&lens)?,
    );
    let k = Seq::input("k", vec![0u32, 2, 4])?;
    let firsts = map(
        |k: Scalar<u32>| {
            let g = at(&moved, k)?;
            let (u, v) = at(&at(&g, 0u32)?, 0u32)?;
            Ok(len(&g).cast::<u32>() + u * v)
        },
        &k,
    )?;
    on_cuda(
        "first pairs of a scatter of rows of tuples",
        &Computation::new(&firsts)?,
    );
    // `per` itself read by a later phase: its row counts, and rows picked by a map.
    let lens = map(|r: Seq<Seq<(u32, u32)>>| Ok(len(&r)), &per)?;
    on_cuda("row counts of rows of tuples", &Computation::new(&lens)?);
    let picked = map(
        |k: Scalar<u32>| {
            let g = at(&per, k)?;
            let (u, v) = at(&at(&g, 1u32)?, 0u32)?;
            Ok(len(&g).cast::<u32>() + u * v)
        },
        &k,
    )?;
    on_cuda(
        "pairs picked from rows of tuples",
        &Computation::new(&picked)?,
    );
    Ok(())
}

/// The same with empty levels: no elements, elements without rows, empty destination groups;
/// and an index out of range fails with the interpreter's message.
#[test]
fn rows_of_tuples_per_element_empty_and_out_of_range() -> surge::Result<()> {
    let cases = [
        (vec![], 4, vec![0u32], vec![]),
        (vec![1, 2], 0, vec![0, 1, 1, 3], vec![2i64, 0]),
        (vec![1, 2, 3], 5, vec![0, 0, 0, 0], vec![2, 2, 0]),
    ];
    for (k, (in0, pairs, groups, idx)) in cases.into_iter().enumerate() {
        let (per, dest) = groups_of_pairs(in0, pairs, groups)?;
        let moved = scatter(&per, &Seq::input("in4", idx)?, &dest)?;
        on_cuda(&format!("empty case {k}"), &Computation::new(&moved)?);
        let lens = map(|r: Seq<Seq<(u32, u32)>>| Ok(len(&r)), &moved)?;
        on_cuda(
            &format!("empty case {k}, counts"),
            &Computation::new(&lens)?,
        );
    }
    for idx in [vec![2, 1, 5, 1, 0i64], vec![-1, 1, 0, 1, 0]] {
        let (per, dest) = groups_of_pairs(vec![5, 5, 5, 0, 1], 4, vec![0, 1, 1, 3, 4, 6])?;
        let moved = scatter(&per, &Seq::input("in4", idx)?, &dest)?;
        fails_as_the_interpreter(&Computation::new(&at(&moved, lit(2i64))?)?);
        fails_as_the_interpreter(&Computation::new(&moved)?);
    }
    Ok(())
}

/// Rows of rows of triples with a boolean component (stored as `u32`), per element of `in0`,
/// read by a later phase and scattered into a replicated element of themselves.
#[test]
fn rows_of_triples_with_booleans_per_element() -> surge::Result<()> {
    let in0 = Seq::input("in0", vec![1.5f64, -2.0, 0.25])?;
    let x = Seq::input("x", vec![0.5, -1.0, 2.0, 3.5, -0.25f64])?;
    let k = Seq::input("k", vec![3i64, -1, 4, 0, 2])?;
    let per = map(
        move |v: Scalar<f64>| {
            let flags = map(move |a: Scalar<f64>| Ok(a.lt(v.clone())), &x)?;
            split(&zip3(&x, &flags, &k)?, lit(2u64))
        },
        &in0,
    )?;
    let lens = map(|g: Seq<Seq<(f64, bool, i64)>>| Ok(len(&g)), &per)?;
    on_cuda("row counts of rows of triples", &Computation::new(&lens)?);
    let dest = replicate(&at(&per, 1u32)?, lit(4u64))?;
    let idx = Seq::input("idx", vec![3i64, 0, 3])?;
    let moved = scatter(&per, &idx, &dest)?;
    on_cuda("a scatter of rows of triples", &Computation::new(&moved)?);
    for k in [0i64, 2, 3] {
        let y = at(&moved, lit(k))?;
        on_cuda(
            &format!("element {k} of a scatter of rows of triples"),
            &Computation::new(&y)?,
        );
    }
    Ok(())
}

#[test]
fn an_element_of_a_reduce_by_key_of_triples() -> surge::Result<()> {
    for n in [5usize, 0] {
        let v = |s: f64| (0..n).map(|k| k as f64 * s).collect::<Vec<f64>>();
        let in0 = Seq::input("in0", v(1.0))?;
        let in1 = Seq::input("in1", v(0.5))?;
        let in2 = Seq::input("in2", v(-2.0))?;
        let in3 = Seq::input("in3", (0..n as u32).map(|k| k / 2).collect::<Vec<u32>>())?;
        type T = (Scalar<f64>, Scalar<f64>, Scalar<f64>);
        let sums = reduce_by_key(
            |a: T, b: T| Ok((a.0 + b.0, a.1 + b.1, a.2 + b.2)),
            &zip3(&in0, &in1, &in2)?,
            &in3,
            (lit(0.0f64), lit(0.0f64), lit(0.0f64)),
        )?;
        let c = Computation::new(&at(&sums, lit(0u32))?)?;
        if n == 0 {
            fails_as_the_interpreter(&c);
        } else {
            on_cuda("an element of a reduce_by_key of triples", &c);
        }
    }
    Ok(())
}

#[test]
fn a_row_of_a_reduce_by_key_of_rows() -> surge::Result<()> {
    let x: Vec<i64> = (0..68).map(|k| (k * 5 % 17) - 8).collect();
    let in0 = Seq::input("in0", x)?;
    let keys = vec![2, 0, 1, 3, 0, 2, 1, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0u32];
    let in1 = Seq::input("in1", keys)?;
    let in2 = Seq::input("in2", vec![-1.0, 0.5, 2.0, -3.0f64])?;
    let flags = map(|v: Scalar<i64>| Ok(v.lt(lit(3i64))), &in0)?;
    let rows = reverse(&split(&flags, lit(4u64))?)?;
    let prefix = map(|v: Scalar<f64>| Ok(v.lt(lit(0.0f64))), &in2)?;
    let or_rows = |a: Seq<bool>, b: Seq<bool>| {
        map(
            |(u, v): (Scalar<bool>, Scalar<bool>)| Ok(u.or(&v)),
            (&a, &b),
        )
    };
    let runs = reduce_by_key(or_rows, &rows, &in1, prefix)?;
    for k in [0u32, 3] {
        let y = at(&runs, lit(k))?;
        on_cuda(
            &format!("row {k} of a reduce_by_key of rows"),
            &Computation::new(&y)?,
        );
    }
    let y = len(&runs);
    on_cuda(
        "the run count of a reduce_by_key of rows",
        &Computation::new(&y)?,
    );
    let y = at(&runs, lit(12u32))?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    Ok(())
}

/// A tuple of scalar code over a cooperative reduction, stored packed for a later phase
/// (CoMD's (F(ρ̄), F′(ρ̄)) per atom), and a reduction of tuples inside an element expression
/// (CoMD's per-cell force sums inside the reduction over cells), each component folded in the
/// interpreter's order.
#[test]
fn tuples_over_reductions_and_reductions_of_tuples_in_elements() -> surge::Result<()> {
    for n in [0usize, 1, 6, 40] {
        let x = Seq::input(
            "x",
            (0..n).map(|k| k as f64 * 0.25 - 3.0).collect::<Vec<f64>>(),
        )?;
        let rows = split(&x, 2u64)?;
        let pairs = map(
            |r: Seq<f64>| {
                let s = reduce_prefix(add, &r, 0.0)?;
                Ok((s.clone() * 2.0, s - 1.0))
            },
            &rows,
        )?;
        let idx = Seq::input("idx", (0..n as u32 / 2).rev().collect::<Vec<u32>>())?;
        let later = map(
            |i: Scalar<u32>| {
                let (a, b) = at(&pairs, &i)?;
                Ok(a * b)
            },
            &idx,
        )?;
        on_cuda(
            &format!("a packed tuple over a reduction, n={n}"),
            &Computation::new(&later)?,
        );
        type P = (Scalar<f64>, Scalar<f64>);
        let add2 = |a: P, b: P| (a.0 + b.0, a.1 + b.1);
        let k = Seq::input("k", (0..5u32).collect::<Vec<u32>>())?;
        let sums = map(
            |r: Seq<f64>| {
                let per = map(
                    |j: Scalar<u32>| {
                        let terms =
                            map(|v: Scalar<f64>| (v.clone() * j.cast::<f64>(), v * 0.5), &r)?;
                        reduce_prefix(add2, &terms, (lit(0.0), lit(1.0)))
                    },
                    &k,
                )?;
                let (a, b) = reduce_prefix(add2, &per, (lit(0.0), lit(0.0)))?;
                Ok(a - b)
            },
            &rows,
        )?;
        on_cuda(
            &format!("reductions of pairs in elements, n={n}"),
            &Computation::new(&sums)?,
        );
    }
    Ok(())
}

/// Casts from floats to integers as Rust's `as` (the interpreter's): NaN is 0, out-of-range
/// values saturate, the rest truncate, for f64 and f32 to each integer type. C++ leaves the
/// out-of-range ones undefined; the emulator's host compiler gave `(u32)-2.0` = 4294967294
/// (random programs, seed 9).
#[test]
fn float_to_integer_casts_saturate_as_rust_does() -> surge::Result<()> {
    let v = vec![
        f64::NAN,
        f64::NEG_INFINITY,
        -1e20,
        -3e9,
        -3.25,
        -0.5,
        0.0,
        2.9,
        3e9,
        5e9,
        1e19,
        2e19,
        f64::INFINITY,
    ];
    casts_agree("f64 casts", Seq::input("x", v.clone())?)?;
    casts_agree(
        "f32 casts",
        Seq::input("y", v.iter().map(|&a| a as f32).collect::<Vec<f32>>())?,
    )
}

/// `x` cast to each integer type, every `STRIDE`-th CUDA variant against the interpreter.
fn casts_agree<F: surge::dsel::Float>(what: &str, x: Seq<F>) -> surge::Result<()> {
    let casts = map(
        |a: Scalar<F>| {
            (
                a.clone().cast::<i32>(),
                a.clone().cast::<u32>(),
                a.clone().cast::<i64>(),
                a.cast::<u64>(),
            )
        },
        &x,
    )?;
    on_cuda(what, &Computation::new(&casts)?);
    Ok(())
}
