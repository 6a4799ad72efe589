//! `transpose` of a sequence of nested sequences on CUDA (issue 19, random seed 24): element `j`
//! of the result is row `j` of every input element, the input's elements checked to have the
//! same number of rows (`surge-codegen/src/emit/cuda/deep.rs`). Every `STRIDE`-th variant is
//! NVRTC-compiled (where NVRTC loads) and run in the emulator against the interpreter, errors
//! included.

use surge::Computation;
use surge::prelude::*;
use tests::conformance::f32s;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

/// Offsets of `rows` rows over `n` values (rows 0, 3, 6, .. empty).
fn even_offsets(n: u32, rows: u32) -> Vec<u32> {
    let at = |k: u32| (k * n).checked_div(rows).unwrap_or(0);
    (0..=rows)
        .map(|k| if k % 3 == 1 { at(k - 1) } else { at(k) })
        .collect()
}

#[test]
fn an_element_of_the_transposed_tiles_of_a_nest() -> surge::Result<()> {
    // The random program: at(transpose(split(nest(in0, in1), 3)), 2).
    let in0 = Seq::input("in0", vec![3i64, -1, 4, 1, -5, 9, 2, -6, 5, 3, 5, 8])?;
    let in1 = Seq::input("in1", vec![0u32, 2, 2, 5, 7, 7, 12])?;
    let y = at(
        &transpose(&split(&nest(&in0, &in1)?, lit(3u64))?)?,
        lit(2u32),
    )?;
    on_cuda("at(transpose(split(nest, 3)), 2)", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn transposed_tiles_of_rows() -> surge::Result<()> {
    // (values, rows, tile): the rows a multiple of the tile, or one short tile.
    for (n, rows, tile) in [
        (0u32, 0u32, 3u64),
        (40, 12, 3),
        (40, 12, 4),
        (9, 6, 2),
        (5, 2, 3),
        (700, 60, 5),
    ] {
        let x = Seq::input("x", f32s(n as usize, u64::from(n) + 3))?;
        let off = Seq::input("off", even_offsets(n, rows))?;
        let t = transpose(&split(&nest(&x, &off)?, lit(tile))?)?;
        let what = format!("transpose(split(nest, {tile})) n={n} rows={rows}");
        on_cuda(&what, &Computation::new(&t)?);
        if rows > 0 {
            let w = u64::from(rows).div_ceil(tile) - 1;
            let y = at(&t, lit(1u32))?;
            on_cuda(&format!("at(.., 1) of {what}"), &Computation::new(&y)?);
            // Nested `at`: row w of element 1 (row 1 of the last tile), and its sum.
            let y = at(&at(&t, lit(1u32))?, lit(w))?;
            on_cuda(
                &format!("at(at(.., 1), {w}) of {what}"),
                &Computation::new(&y)?,
            );
            // The last element (as many as the first tile has rows).
            let last = tile.min(u64::from(rows)) - 1;
            let y = reduce_prefix(add, &at(&at(&t, lit(last))?, lit(0u32))?, 1.5f32)?;
            on_cuda(&format!("sum of a row of {what}"), &Computation::new(&y)?);
        }
        // Maps over the transposed result: a sum per element, and its row counts.
        let sums = map(
            |g: Seq<Seq<f32>>| {
                let sums = map(|r: Seq<f32>| reduce_prefix(add, &r, 0.0f32), &g)?;
                Ok(reduce_prefix(add, &sums, 0.0f32)? + len(&g).cast::<f32>())
            },
            &t,
        )?;
        on_cuda(&format!("sums over {what}"), &Computation::new(&sums)?);
        let counts = map(|g: Seq<Seq<f32>>| Ok(len(&g)), &t)?;
        on_cuda(&format!("lens over {what}"), &Computation::new(&counts)?);
        // Transposed back: the tiles again.
        on_cuda(
            &format!("transpose twice of {what}"),
            &Computation::new(&transpose(&t)?)?,
        );
    }
    Ok(())
}

#[test]
fn an_uneven_last_tile_is_the_interpreters_error() -> surge::Result<()> {
    let x = Seq::input("x", f32s(30, 7))?;
    let off = Seq::input("off", even_offsets(30, 7))?;
    let t = transpose(&split(&nest(&x, &off)?, lit(3u64))?)?;
    fails_as_the_interpreter(&Computation::new(&t)?);
    fails_as_the_interpreter(&Computation::new(&at(&t, lit(0u32))?)?);
    Ok(())
}

#[test]
fn a_map_of_maps_of_reductions() -> surge::Result<()> {
    // `map.map.reduce`: a row of reductions per element, the reductions read lazily.
    for (n, rows, tile) in [(0u32, 0u32, 3u64), (40, 12, 3), (300, 40, 4)] {
        let x = Seq::input("x", f32s(n as usize, u64::from(n) + 5))?;
        let off = Seq::input("off", even_offsets(n, rows))?;
        let groups = split(&nest(&x, &off)?, lit(tile))?;
        let sums = |g: Seq<Seq<f32>>| map(|r: Seq<f32>| reduce_prefix(add, &r, 0.5f32), &g);
        let what = format!("n={n} rows={rows} tile={tile}");
        on_cuda(
            &format!("sums per row of the groups, {what}"),
            &Computation::new(&map(sums, &groups)?)?,
        );
        on_cuda(
            &format!("sums per row of the transposed groups, {what}"),
            &Computation::new(&map(sums, &transpose(&groups)?)?)?,
        );
        let lens = map(
            |g: Seq<Seq<f32>>| map(|r: Seq<f32>| Ok(len(&r)), &g),
            &groups,
        )?;
        on_cuda(&format!("lens per row, {what}"), &Computation::new(&lens)?);
        // Over rows: a reduction per element of each row.
        let y = map(
            |r: Seq<f32>| {
                map(
                    |v: Scalar<f32>| -> surge::Result<Scalar<f32>> {
                        reduce(max, &replicate::<f32>(&(v * 2.0f32), 3u64)?)
                    },
                    &r,
                )
            },
            &nest(&x, &off)?,
        )?;
        on_cuda(
            &format!("a reduce per element of rows, {what}"),
            &Computation::new(&y)?,
        );
    }
    // A reduction that fails (of an empty row, without a prefix): the interpreter's error.
    let x = Seq::input("x", f32s(10, 9))?;
    let off = Seq::input("off", vec![0u32, 3, 3, 10])?;
    let y = map(
        |g: Seq<Seq<f32>>| map(|r: Seq<f32>| reduce(add, &r), &g),
        &split(&nest(&x, &off)?, lit(2u64))?,
    )?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    Ok(())
}

#[test]
fn transposed_groups_of_rows_of_pairs() -> surge::Result<()> {
    type Pair = (Scalar<u32>, Scalar<f32>);
    let n = 60u32;
    let k = Seq::input("k", (0..n).map(|i| i * 7 % 10).collect::<Vec<_>>())?;
    let x = Seq::input("x", f32s(n as usize, 11))?;
    let off = Seq::input("off", even_offsets(n, 12))?;
    let t = transpose(&split(&nest(&zip(&k, &x)?, &off)?, lit(4u64))?)?;
    on_cuda("transposed groups of pairs", &Computation::new(&t)?);
    on_cuda(
        "an element of transposed groups of pairs",
        &Computation::new(&at(&t, lit(3u32))?)?,
    );
    let y = map(
        |g: Seq<Seq<(u32, f32)>>| {
            let firsts = map(|r: Seq<(u32, f32)>| Ok(len(&r)), &g)?;
            reduce_prefix(add, &firsts, 0u64)
        },
        &t,
    )?;
    on_cuda("pair counts per transposed group", &Computation::new(&y)?);
    let y = map(
        |p: Pair| p.1 * p.0.cast::<f32>(),
        &at(&at(&t, lit(2u32))?, lit(1u32))?,
    )?;
    on_cuda(
        "a row of a transposed group of pairs",
        &Computation::new(&y)?,
    );
    Ok(())
}
