//! Results three or more levels of sequences deep (issue 19) and scans over tuples run natively
//! on the CPU, every variant equal to the interpreter, errors included: a deep phase stores one
//! level of offsets per level of sequences (`surge-codegen/src/emit/cpu/deep.rs`).

use surge::prelude::*;
use surge::{Computation, Kernels, Target};
use tests::conformance::{CpuBackend, check_all, f32s, offsets, values};

fn check(what: &str, c: &Computation) {
    assert!(check_all(&CpuBackend, what, c) > 1, "{what}: one variant");
}

/// Every CPU variant of `c` fails with the interpreter's message, which contains `needle`.
fn fails_as_interpreter(what: &str, c: &Computation, needle: &str) {
    let want = c.interpret().unwrap_err().to_string();
    assert!(want.contains(needle), "{what}: {want}");
    let k = Kernels::build(c, &Target::cpu()).unwrap();
    for v in k.variants() {
        let got = k.run(c, v).unwrap_err().to_string();
        assert_eq!(got, want, "{what}: {}", v.id());
    }
}

#[test]
fn groups_of_rows_of_a_nest() -> surge::Result<()> {
    // Empty rows, a last partial group, no rows at all, and enough rows for every schedule.
    for (n, seed) in [(0, 1), (1, 2), (20, 3), (41, 4), (3000, 5)] {
        let x = Seq::input("x", f32s(n, seed))?;
        let off = Seq::input("off", offsets(n, seed))?;
        let groups = split(&nest(&x, &off)?, 3u64)?;
        check(
            &format!("split(nest, 3) n={n}"),
            &Computation::new(&groups)?,
        );
    }
    let x = Seq::input("x", Vec::<f32>::new())?;
    let off = Seq::input("off", vec![0u32, 0, 0, 0, 0])?;
    let groups = split(&nest(&x, &off)?, 3u64)?;
    check("four empty rows", &Computation::new(&groups)?);
    Ok(())
}

#[test]
fn a_map_whose_body_builds_rows_of_rows() -> surge::Result<()> {
    let s = Seq::input("s", values(30, 7))?;
    let deep: Seq<Seq<Seq<f64>>> = map(
        |t: Seq<f64>| map(|x: Scalar<f64>| replicate(&x, 2u64), &t),
        &split(&s, 4u64)?,
    )?;
    check("replicated tiles", &Computation::new(&deep)?);
    let x = Seq::input("x", f32s(500, 8))?;
    let off = Seq::input("off", offsets(500, 8))?;
    let halves = map(|r: Seq<f32>| split(&r, 2u64), &nest(&x, &off)?)?;
    check("rows split in pairs", &Computation::new(&halves)?);
    Ok(())
}

#[test]
fn four_levels() -> surge::Result<()> {
    let x = Seq::input("x", values(700, 9))?;
    let off = Seq::input("off", offsets(700, 9))?;
    let quads = split(&split(&nest(&x, &off)?, 2u64)?, 3u64)?;
    check("split(split(nest))", &Computation::new(&quads)?);
    Ok(())
}

#[test]
fn tuples_and_booleans_inside_three_levels() -> surge::Result<()> {
    let x = Seq::input("x", f32s(400, 10))?;
    let i = Seq::input("i", (0..400u32).collect::<Vec<_>>())?;
    let off = Seq::input("off", offsets(400, 10))?;
    let pairs = split(&nest(&zip(&x, &i)?, &off)?, 2u64)?;
    check("groups of rows of pairs", &Computation::new(&pairs)?);
    let signs = map(
        |r: Seq<f32>| split(&map(|v: Scalar<f32>| v.gt(0.0f32), &r)?, 2u64),
        &nest(&x, &off)?,
    )?;
    check("rows of pairs of signs", &Computation::new(&signs)?);
    Ok(())
}

/// `k` of each row's pairs, read by a later phase: the pairs are a phase of their own (a closed
/// map inside the later phase's lambda), so the later phase reads the stored levels.
fn picks<T: Item>(rows: &Seq<Seq<Seq<T>>>, k: &Seq<u32>) -> surge::Result<Computation>
where
    T::Sym: Clone,
{
    let picked = map(
        |k: Scalar<u32>| {
            let g = at(rows, k)?;
            let last = at(&g, len(&g) - 1u64)?;
            Ok((len(&g) * 1000u64 + len(&last), at(&last, 0u32)?))
        },
        k,
    )?;
    let c = Computation::new(&picked)?;
    let phases = c.analyze()?.phases;
    let first = c.ir().node(phases[0].root).ty.depth();
    assert_eq!(
        (phases.len(), first),
        (2, 3),
        "a deep phase read by a later one"
    );
    Ok(c)
}

#[test]
fn a_later_phase_reads_a_deep_result() -> surge::Result<()> {
    let x = Seq::input("x", values(900, 11))?;
    let i = Seq::input("i", (0..900i64).collect::<Vec<_>>())?;
    // Rows of 1..5 values, none empty.
    let mut off = vec![0u32];
    while *off.last().unwrap() < 900 {
        off.push((off.last().unwrap() + 1 + off.len() as u32 % 5).min(900));
    }
    let off = Seq::input("off", off)?;
    let k = Seq::input("k", vec![2u32, 0, 5, 1, 7, 2])?;
    let pairs = map(|r: Seq<f64>| split(&r, 2u64), &nest(&x, &off)?)?;
    check("numbers", &picks(&pairs, &k)?);
    let tuples = map(
        |r: Seq<(f64, i64)>| split(&r, 2u64),
        &nest(&zip(&x, &i)?, &off)?,
    )?;
    check("tuples", &picks(&tuples, &k)?);
    // An empty row: the later phase's index fails as the interpreter's does.
    let empty = Seq::input("off", vec![0u32, 3, 3, 5])?;
    let pairs = map(|r: Seq<f64>| split(&r, 2u64), &nest(&x, &empty)?)?;
    let k = Seq::input("k", vec![0u32, 1])?;
    fails_as_interpreter("an empty row", &picks(&pairs, &k)?, "out of range");
    Ok(())
}

#[test]
fn errors_in_deep_results_are_the_interpreters() -> surge::Result<()> {
    let x = Seq::input("x", f32s(10, 12))?;
    // Offsets the kernels compute (an input's are checked when the program is built).
    for bad in [vec![0u32, 4, 2, 10], vec![0, 4, 11]] {
        let bad = map(|o: Scalar<u32>| o * 1u32, &Seq::input("off", bad)?)?;
        let groups = split(&nest(&x, &bad)?, 2u64)?;
        fails_as_interpreter("a bad offset", &Computation::new(&groups)?, "offset");
    }
    // Ragged rows transposed, inside groups of rows.
    let off = Seq::input("off", vec![0u32, 2, 5, 7, 10])?;
    let flipped = map(
        |g: Seq<Seq<f32>>| transpose(&g),
        &split(&nest(&x, &off)?, 2u64)?,
    )?;
    fails_as_interpreter("a ragged row", &Computation::new(&flipped)?, "transpose");
    // Element 0 fails two levels down (rows of 2 zipped with 3 values), element 1 one level
    // down (a tile of 0): element 0's error is the one reported, as the interpreter's.
    let x = Seq::input("x", values(8, 17))?;
    let y = Seq::input("y", values(3, 18))?;
    let t = Seq::input("t", vec![2u64, 0])?;
    let deep = map(
        |(r, t): (Seq<f64>, Scalar<u64>)| map(|q: Seq<f64>| zip(&q, &y), &split(&r, t)?),
        (&split(&x, 4u64)?, &t),
    )?;
    fails_as_interpreter("errors in order", &Computation::new(&deep)?, "zip");
    Ok(())
}

#[test]
fn scans_over_tuples() -> surge::Result<()> {
    for n in [0usize, 1, 7, 5000] {
        let x = Seq::input("x", values(n, 13))?;
        let y = Seq::input(
            "y",
            (0..n as i64).map(|v| (v * 7919) % 101).collect::<Vec<_>>(),
        )?;
        let f = |a: (Scalar<f64>, Scalar<i64>), b: (Scalar<f64>, Scalar<i64>)| {
            (a.0 + b.0, max(a.1, b.1))
        };
        let s = scan(f, &zip(&x, &y)?)?;
        check(&format!("scan of pairs n={n}"), &Computation::new(&s)?);
        let p = scan_prefix(f, &zip(&x, &y)?, (lit(0.5f64), lit(-3i64)))?;
        check(
            &format!("scan of pairs with a prefix n={n}"),
            &Computation::new(&p)?,
        );
        // Short rows, and (n = 5000) long ones that cooperative variants split into chunks.
        let off = match n {
            5000 => vec![0u64, 3000, 3000, 4999, 5000],
            _ => offsets(n, 14).into_iter().map(u64::from).collect(),
        };
        let off = Seq::input("off", off)?;
        let rows = map(
            |r: Seq<(f64, i64)>| scan(f, &r),
            &nest(&zip(&x, &y)?, &off)?,
        )?;
        check(
            &format!("scans of rows of pairs n={n}"),
            &Computation::new(&rows)?,
        );
        let rows = map(
            |r: Seq<(f64, i64)>| scan_prefix(f, &r, (lit(1.0f64), lit(0i64))),
            &nest(&zip(&x, &y)?, &off)?,
        )?;
        check(
            &format!("prefixed scans of rows n={n}"),
            &Computation::new(&rows)?,
        );
        let any = |a: Scalar<bool>, b: Scalar<bool>| a.or(&b);
        let flags = scan(any, &map(|v: Scalar<f64>| v.gt(0.9), &x)?)?;
        check(
            &format!("a scan of booleans n={n}"),
            &Computation::new(&flags)?,
        );
    }
    Ok(())
}

/// The row with the smallest weight and its weight: a reduction whose accumulator is a tuple
/// holding a row.
fn lightest(rows: &Seq<Seq<f64>>, w: &Seq<f64>) -> surge::Result<(Seq<f64>, Scalar<f64>)> {
    reduce(
        |a: (Seq<f64>, Scalar<f64>), b: (Seq<f64>, Scalar<f64>)| {
            let take = a.1.le(&b.1);
            let row = map(
                |(u, v): (Scalar<f64>, Scalar<f64>)| take.select(&u, &v),
                (&a.0, &b.0),
            )
            .expect("rows of one length");
            (row, take.select(&a.1, &b.1))
        },
        &zip(rows, w)?,
    )
}

#[test]
fn a_later_phase_reads_a_tuple_holding_a_row() -> surge::Result<()> {
    let x = Seq::input("x", values(4000, 15))?;
    let w = Seq::input("w", values(1000, 16))?;
    let best = lightest(&split(&x, 4u64)?, &w)?;
    let k = Seq::input("k", vec![0u32, 3, 1, 2])?;
    let y = map(|k: Scalar<u32>| Ok(at(&best.0, k)? + &best.1), &k)?;
    let c = Computation::new(&y)?;
    assert_eq!(
        c.analyze()?.phases.len(),
        2,
        "the tuple is a phase of its own"
    );
    check("a row and its weight, read", &c);
    // Rows of tuples holding rows: `(row, weight)` per group of rows.
    let groups = split(&split(&x, 4u64)?, 10u64)?;
    let per_group = map(
        |g: Seq<Seq<f64>>| {
            let ws = map(|r: Seq<f64>| reduce(add, &r), &g)?;
            lightest(&g, &ws)
        },
        &groups,
    )?;
    let total = map(
        |k: Scalar<u32>| {
            let (row, weight) = at(&per_group, k)?;
            Ok(reduce(add, &row)? * weight)
        },
        &k,
    )?;
    let c = Computation::new(&total)?;
    assert_eq!(
        c.analyze()?.phases.len(),
        2,
        "the rows of tuples are a phase"
    );
    check("rows of rows and weights, read", &c);
    check("rows of rows and weights", &Computation::new(&per_group)?);
    // A bad index in the later phase fails as the interpreter's does.
    let bad = Seq::input("k", vec![1u32, 9])?;
    let y = map(|k: Scalar<u32>| Ok(at(&best.0, k)? + &best.1), &bad)?;
    fails_as_interpreter("a bad index", &Computation::new(&y)?, "out of range");
    Ok(())
}
