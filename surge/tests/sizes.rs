//! Sizes are run-time values: kernels built once for a computation run every computation of its
//! structure (other input lengths, split tiles, range bounds, replicate lengths, strides and
//! integer constants) with no new `rustc` call, and refuse another structure by name.

use std::sync::Mutex;
use surge::apps::kmeans::program::argmin as argmin_op;
use surge::oracle::{Expected, Flat};
use surge::prelude::*;
use surge::{Kernels, Target, Workspace};
use surge_cpu::native::compile::rustc_calls;

/// The tests of this file count `rustc` calls of the whole process: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// `n` deterministic values.
fn data(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 37) % 101) as f64 / 8.0 - 6.0)
        .collect()
}

/// Per-tile sums of `x` (`split(x, tile)`), each scaled by `i * k + 1` for its tile index `i`
/// (`range(0, tiles)`), plus `0.25` (`replicate`) times every `stride`-th element of `w`
/// (`striding`).
fn program(n: usize, tile: u64, k: i64, stride: u64) -> Computation {
    let build = || -> Result<Computation> {
        let tiles = n.div_ceil(tile as usize);
        let x = Seq::input("x", data(n))?;
        let w = Seq::input("w", data(tiles * stride as usize))?;
        let sums = map(|row: Seq<f64>| reduce(add, &row), &split(&x, tile)?)?;
        let idx = range(0i64, tiles as i64)?;
        let quarter = replicate::<f64>(0.25, tiles as u64)?;
        let picked = striding(&w, stride)?;
        let y = map(
            |(s, i, q, v)| s * (i * k + 1).cast::<f64>() + q * v,
            (&sums, &idx, &quarter, &picked),
        )?;
        Computation::new(&y)
    };
    build().unwrap()
}

/// Runs `variant` on `c` through `k` and checks the result against the interpreter.
fn check_run(k: &Kernels, c: &Computation, variant: &surge::codegen::variant::Variant) {
    let want = Expected::interpret(c.ir(), c.buffers()).unwrap();
    let got = k.run(c, variant).unwrap();
    want.check(&Flat::of_output(&got))
        .unwrap_or_else(|e| panic!("{variant}: {e}"));
}

#[test]
fn kernels_built_for_one_size_run_another_without_compiling() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let small = program(1000, 64, 3, 2);
    let k = Kernels::build(&small, &Target::cpu()).unwrap();
    let before = rustc_calls();
    // Other input lengths, split tile, range bound, replicate length, stride and constant `k`.
    let other = program(2500, 100, -5, 3);
    assert_ne!(small.ir().stable_hash(), other.ir().stable_hash());
    assert_eq!(small.ir().structure_hash(), other.ir().structure_hash());
    for v in k.variants().iter().step_by(7).chain([k.default_variant()]) {
        check_run(&k, &small, v);
        check_run(&k, &other, v);
    }
    // Alternating sizes through one workspace.
    let mut ws = Workspace::default();
    for c in [&small, &other, &small] {
        k.run_in(c, k.default_variant(), &mut ws).unwrap();
        let want = Expected::interpret(c.ir(), c.buffers()).unwrap();
        want.check(&Flat::of_output(&ws.output().unwrap())).unwrap();
    }
    // Building kernels for the other size finds the same library.
    let again = Kernels::build(&other, &Target::cpu()).unwrap();
    assert_eq!(again.source_path(), k.source_path());
    assert_eq!(rustc_calls(), before, "a new size compiled nothing");
}

#[test]
fn kernels_refuse_a_computation_of_another_structure_by_name() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = program(100, 8, 2, 2);
    let v = c.variants(&Target::cpu().platform().unwrap()).unwrap();
    let v = v.default_variant().clone();
    let k = Kernels::build_variants(&c, std::slice::from_ref(&v)).unwrap();
    // The same program with a `u32` tile index: a literal of another type.
    let other = {
        let x = Seq::input("x", data(100)).unwrap();
        let w = Seq::input("w", data(26)).unwrap();
        let sums = map(|row: Seq<f64>| reduce(add, &row), &split(&x, 8u64).unwrap()).unwrap();
        let idx = range(0u32, 13u32).unwrap();
        let quarter = replicate::<f64>(0.25, 13u64).unwrap();
        let picked = striding(&w, 2u64).unwrap();
        let y = map(
            |(s, i, q, v)| s * (i * 2 + 1).cast::<f64>() + q * v,
            (&sums, &idx, &quarter, &picked),
        )
        .unwrap();
        Computation::new(&y).unwrap()
    };
    let e = k.run(&other, &v).unwrap_err().to_string();
    assert!(
        e.contains("compiled for a computation of another structure: its node %")
            && e.contains("of type u32, the compiled one's")
            && e.contains("of type i64"),
        "{e}"
    );
}

/// Per element `v` of `x`, the index of the `d`-tile of `c` nearest to it (the sum of squared
/// differences over the tile; `c`'s last tile may be short): the shape whose tile loops are
/// expanded per width (surge-codegen's emit/cpu/spec.rs).
fn nearest_tile(n: usize, m: usize, d: u64) -> Computation {
    let build = || -> Result<Computation> {
        let x = Seq::input("x", data(n))?;
        let c = Seq::input("c", data(m + 3)[3..].to_vec())?;
        let y = map(
            |v: Scalar<f64>| {
                let sums = map(
                    |q: Seq<f64>| reduce_prefix(add, &map(|u| (&u - &v) * (&u - &v), &q)?, 0.0),
                    &split(&c, d)?,
                )?;
                let k = len(&sums).cast::<u32>();
                Ok(reduce(argmin_op, &zip(&sums, &range(0u32, k)?)?)?.1)
            },
            &x,
        )?;
        Computation::new(&y)
    };
    build().unwrap()
}

#[test]
fn every_tile_width_runs_its_expansion_or_the_generic_loop_as_the_interpreter() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let first = nearest_tile(40, 12, 4);
    let k = Kernels::build(&first, &Target::cpu()).unwrap();
    let source = std::fs::read_to_string(k.source_path()).unwrap();
    for w in 2..=4 {
        assert!(
            source.contains(&format!("elems_w!({w})")),
            "no width-{w} expansion"
        );
    }
    let before = rustc_calls();
    // Widths with an expansion and without one; full tiles (the expansion) and a short last
    // tile (the generic loop), one tile, a tile longer than `c`.
    for (m, d) in [
        (12, 4),
        (13, 4),
        (12, 3),
        (14, 3),
        (8, 2),
        (9, 2),
        (10, 5),
        (5, 1),
        (3, 7),
    ] {
        let c = nearest_tile(40, m, d);
        for v in k.variants().iter().step_by(5).chain([k.default_variant()]) {
            check_run(&k, &c, v);
        }
    }
    assert_eq!(rustc_calls(), before, "other widths compiled nothing");
}
