//! Sequences three levels deep on CUDA (issue 19): results stored in two phases (the outer
//! level, then the nested rows; `surge-codegen/src/emit/cuda/deep.rs`), maps over them and
//! `index` into them, every `STRIDE`-th variant NVRTC-compiled and run in the emulator against
//! the interpreter, errors included. The CPU runs the same programs in `deep_results.rs`.

use surge::Computation;
use surge::prelude::*;
use tests::conformance::{f32s, offsets, values};
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

#[test]
fn groups_of_rows_of_a_nest() -> surge::Result<()> {
    for (n, seed) in [(0, 1), (1, 2), (41, 4), (700, 5)] {
        let x = Seq::input("x", f32s(n, seed))?;
        let off = Seq::input("off", offsets(n, seed))?;
        let groups = split(&nest(&x, &off)?, 3u64)?;
        on_cuda(
            &format!("split(nest, 3) n={n}"),
            &Computation::new(&groups)?,
        );
    }
    // A nest of a nest, and the groups reversed and gathered.
    let x = Seq::input("x", values(300, 6))?;
    let rows = nest(&x, &Seq::input("off", offsets(300, 6))?)?;
    let runs = Seq::input("runs", vec![0u32, 2, 2, 9, 20])?;
    let nested = nest(&rows, &runs)?;
    on_cuda("nest(nest)", &Computation::new(&nested)?);
    on_cuda(
        "reverse(nest(nest))",
        &Computation::new(&reverse(&nested)?)?,
    );
    let pick = Seq::input("pick", vec![3u32, 0, 0, 2])?;
    on_cuda(
        "gather(nest(nest))",
        &Computation::new(&gather(&nested, &pick)?)?,
    );
    Ok(())
}

#[test]
fn a_map_whose_body_builds_rows_of_rows() -> surge::Result<()> {
    let s = Seq::input("s", values(30, 7))?;
    let deep: Seq<Seq<Seq<f64>>> = map(
        |t: Seq<f64>| map(|x: Scalar<f64>| replicate(&x, 2u64), &t),
        &split(&s, 4u64)?,
    )?;
    on_cuda("replicated tiles", &Computation::new(&deep)?);
    let x = Seq::input("x", f32s(500, 8))?;
    let off = Seq::input("off", offsets(500, 8))?;
    let halves = map(|r: Seq<f32>| split(&r, 2u64), &nest(&x, &off)?)?;
    on_cuda("rows split in pairs", &Computation::new(&halves)?);
    let signs = map(
        |r: Seq<f32>| split(&map(|v: Scalar<f32>| v.gt(0.0f32), &r)?, 2u64),
        &nest(&x, &off)?,
    )?;
    on_cuda("rows of pairs of signs", &Computation::new(&signs)?);
    Ok(())
}

#[test]
fn maps_over_groups_of_rows_and_their_elements() -> surge::Result<()> {
    let x = Seq::input("x", values(400, 9))?;
    let off = Seq::input("off", offsets(400, 9))?;
    let groups = split(&nest(&x, &off)?, 3u64)?;
    let sizes = map(
        |g: Seq<Seq<f64>>| {
            let sums = map(|r: Seq<f64>| reduce_prefix(add, &r, 0.0), &g)?;
            Ok(reduce_prefix(add, &sums, 0.0)? + len(&g).cast::<f64>())
        },
        &groups,
    )?;
    on_cuda("a sum per group", &Computation::new(&sizes)?);
    // Element 2 of the groups, then row 1 of it (`index` of rows of rows).
    let row = at(&at(&groups, 2u32)?, 1u32)?;
    let y = map(|v: Scalar<f64>| v * 2.0, &row)?;
    on_cuda("a row of a group", &Computation::new(&y)?);
    let group = at(&groups, 4u32)?;
    on_cuda("a group", &Computation::new(&group)?);
    Ok(())
}

#[test]
fn errors_in_deep_values_are_the_interpreters() -> surge::Result<()> {
    let x = Seq::input("x", f32s(10, 12))?;
    // Offsets the kernels compute (an input's are checked when the program is built).
    for bad in [vec![0u32, 4, 2, 10], vec![0, 4, 11]] {
        let bad = map(|o: Scalar<u32>| o * 1u32, &Seq::input("off", bad)?)?;
        let groups = split(&nest(&x, &bad)?, 2u64)?;
        fails_as_the_interpreter(&Computation::new(&groups)?);
    }
    let off = Seq::input("off", vec![0u32, 2, 5, 7, 10])?;
    let rows = nest(&x, &off)?;
    let runs = map(
        |o: Scalar<u32>| o * 1u32,
        &Seq::input("runs", vec![0u32, 3, 1])?,
    )?;
    fails_as_the_interpreter(&Computation::new(&nest(&rows, &runs)?)?);
    // An index past the groups, in a map's body.
    let groups = split(&rows, 2u64)?;
    let k = Seq::input("k", vec![1u32, 5])?;
    let firsts = map(
        |k: Scalar<u32>| reduce_prefix(add, &at(&at(&groups, k)?, 0u32)?, 0.0f32),
        &k,
    )?;
    fails_as_the_interpreter(&Computation::new(&firsts)?);
    let k = Seq::input("k", vec![1u32, 0])?;
    let firsts = map(
        |k: Scalar<u32>| reduce_prefix(add, &at(&at(&groups, k)?, 0u32)?, 0.0f32),
        &k,
    )?;
    on_cuda("a row of a group per element", &Computation::new(&firsts)?);
    Ok(())
}

/// `k` of each group's rows, read by a later phase from the stored deep value (both its
/// phases: the outer level's offsets and the rows).
fn picks(rows: &Seq<Seq<Seq<f64>>>, k: &Seq<u32>) -> surge::Result<Computation> {
    let picked = map(
        |k: Scalar<u32>| {
            let g = at(rows, k)?;
            let last = at(&g, len(&g) - 1u64)?;
            Ok(len(&g).cast::<f64>() * 1000.0 + len(&last).cast::<f64>() + at(&last, 0u32)?)
        },
        k,
    )?;
    let c = Computation::new(&picked)?;
    let phases = c.analyze()?.phases;
    let first = c.ir().node(phases[0].root).ty.depth();
    assert_eq!((phases.len(), first), (2, 3), "a deep phase read later");
    Ok(c)
}

#[test]
fn a_later_phase_reads_a_deep_value() -> surge::Result<()> {
    let x = Seq::input("x", values(900, 11))?;
    // Rows of 1..5 values, none empty.
    let mut off = vec![0u32];
    while *off.last().unwrap() < 900 {
        off.push((off.last().unwrap() + 1 + off.len() as u32 % 5).min(900));
    }
    let off = Seq::input("off", off)?;
    let k = Seq::input("k", vec![2u32, 0, 5, 1, 7, 2])?;
    let pairs = map(|r: Seq<f64>| split(&r, 2u64), &nest(&x, &off)?)?;
    on_cuda("picks", &picks(&pairs, &k)?);
    // An empty row: the later phase's index fails as the interpreter's does.
    let empty = Seq::input("off", vec![0u32, 3, 3, 5])?;
    let pairs = map(|r: Seq<f64>| split(&r, 2u64), &nest(&x, &empty)?)?;
    let k = Seq::input("k", vec![0u32, 1])?;
    fails_as_the_interpreter(&picks(&pairs, &k)?);
    Ok(())
}

#[test]
fn tuples_inside_three_levels() -> surge::Result<()> {
    let x = Seq::input("x", f32s(400, 10))?;
    let i = Seq::input("i", (0..400u32).collect::<Vec<_>>())?;
    let off = Seq::input("off", offsets(400, 10))?;
    let pairs = split(&nest(&zip(&x, &i)?, &off)?, 2u64)?;
    on_cuda("groups of rows of pairs", &Computation::new(&pairs)?);
    Ok(())
}

#[test]
fn a_deep_value_in_a_map_body_is_a_phase_of_its_own() -> surge::Result<()> {
    // Found by the random programs (seed 6): the groups do not depend on the map's parameter,
    // so they are a phase of their own, three levels deep.
    let in0 = Seq::input("in0", vec![2i64, -4])?;
    let in1 = Seq::input("in1", vec![0i64, 0, 0, 0, 1, 2, 2, 2])?;
    let in2 = Seq::input("in2", Vec::<i64>::new())?;
    let in3 = Seq::input("in3", vec![0i64; 16])?;
    let groups = split(&nest(&in2, &in3)?, 3u64)?;
    let y = at(
        &map(
            |_v: Scalar<i64>| at(&groups, 3u32),
            &at(&nest(&in0, &in1)?, 3u32)?,
        )?,
        0u32,
    )?;
    on_cuda("a closed group", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_scatter_of_groups_of_rows() -> surge::Result<()> {
    let x = Seq::input("x", values(60, 20))?;
    // Eight rows (one empty) in four groups.
    let off = Seq::input("off", vec![0u32, 3, 3, 10, 17, 29, 40, 41, 60])?;
    let src = split(&nest(&x, &off)?, 2u64)?;
    let y = Seq::input("y", values(40, 21))?;
    let dest = split(&split(&y, 3u64)?, 3u64)?;
    // Duplicate indices (the last write wins), an untouched destination element.
    let idx = Seq::input("idx", vec![1i64, 3, 1, 0])?;
    let moved = scatter(&src, &idx, &dest)?;
    on_cuda("groups scattered", &Computation::new(&moved)?);
    let k = Seq::input("k", vec![0u32, 1, 3, 4])?;
    let sums = map(
        |k: Scalar<u32>| {
            let g = at(&moved, k)?;
            Ok(len(&g).cast::<f64>() + reduce_prefix(add, &at(&g, 0u32)?, 0.0)?)
        },
        &k,
    )?;
    on_cuda("groups scattered, read", &Computation::new(&sums)?);
    // Found by the random programs (seed 5): rows of rows scattered, then one element read.
    let in0 = Seq::input("in0", vec![-2.5f64])?;
    let in1 = Seq::input("in1", vec![0i64, 1, 1, 1, 1, 1])?;
    let in2 = Seq::input("in2", vec![0i64, 2, 5])?;
    let in3 = Seq::input("in3", vec![0i64, 0])?;
    let in4 = Seq::input("in4", values(20, 22))?;
    let in5 = Seq::input("in5", vec![0i64, 1, 2, 2, 3, 3])?;
    let y = at(
        &scatter(
            &nest(&nest(&in0, &in1)?, &in2)?,
            &in3,
            &nest(&split(&in4, 4u64)?, &in5)?,
        )?,
        3u32,
    )?;
    on_cuda(
        "an element of scattered rows of rows",
        &Computation::new(&y)?,
    );
    // An index out of range: the interpreter's error.
    let bad = Seq::input("idx", vec![1i64, 7, 1, 0])?;
    let moved = scatter(&src, &bad, &dest)?;
    fails_as_the_interpreter(&Computation::new(&moved)?);
    Ok(())
}
