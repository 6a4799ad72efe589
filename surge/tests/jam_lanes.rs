//! The lanes form of the unroll-and-jam (surge-codegen's emit/cpu/jam/lanes.rs): eight
//! centroids' inner reductions at once from a transposed copy of the split buffer. Every variant
//! must equal the interpreter bit for bit: labels, and the distances themselves (their bits),
//! over tile widths with and without an expansion, centroid counts around the group of eight,
//! ties, NaN and infinite coordinates, short last tiles (the old path) and a body that can fail
//! (no lanes form). Kernels are built once per program structure; sizes are run-time values.

use std::sync::Mutex;
use surge::apps::kmeans::program::{argmin, relabel};
use surge::codegen::data::ScalarValue;
use surge::oracle::Flat;
use surge::prelude::*;
use surge::{Kernels, Target};
use surge_cpu::native::compile::rustc_calls;

/// The tests of this file count `rustc` calls of the whole process: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// `n` coordinates in a small set (ties between points and centroids), with a NaN and
/// infinities where `special`.
fn coords(n: usize, seed: usize, special: bool) -> Vec<f64> {
    (0..n)
        .map(|i| match (special, (i * 7 + seed) % 23) {
            (true, 0) => f64::NAN,
            (true, 5) => f64::INFINITY,
            (true, 11) => f64::NEG_INFINITY,
            _ => ((i * 37 + seed * 11) % 13) as f64 / 4.0 - 1.5,
        })
        .collect()
}

/// Centroids `k × d`, the fifth a copy of the second (a tie everywhere).
fn centroids(k: usize, d: usize, special: bool) -> Vec<f64> {
    let mut c = coords(k * d, 3, special);
    if k > 4 {
        let row: Vec<f64> = c[d..2 * d].to_vec();
        c[4 * d..5 * d].copy_from_slice(&row);
    }
    c
}

/// The relabel program's shape with its distance as the result (`best.0`) instead of the label.
fn nearest_distance(points: Vec<f64>, cs: Vec<f64>, d: usize) -> Computation {
    let build = || -> Result<Computation> {
        let k = (cs.len() / d) as u32;
        let x = Seq::input("points", points)?;
        let c = Seq::input("centroids", cs)?;
        let centroids = split(&c, d as u64)?;
        let best = map(
            |p: Seq<f64>| {
                let dists = map(
                    |q: Seq<f64>| {
                        reduce_prefix(add, &map(|(a, b)| (&a - &b) * (&a - &b), (&p, &q))?, 0.0)
                    },
                    &centroids,
                )?;
                Ok(reduce(argmin, &zip(&dists, &range(0u32, k)?)?)?.0)
            },
            &split(&x, d as u64)?,
        )?;
        Computation::new(&best)
    };
    build().unwrap()
}

/// The result's elements as bits (floats) or values (integers).
fn bits(f: &Flat) -> Vec<u64> {
    f.items
        .iter()
        .map(|s| match *s {
            ScalarValue::F64(v) => v.to_bits(),
            ScalarValue::F32(v) => v.to_bits() as u64,
            s => s.as_i128().expect("an integer") as u64,
        })
        .collect()
}

/// Runs every `step`-th variant of `k` (and the default) on `c`: each equals the interpreter bit
/// for bit.
fn same_bits(k: &Kernels, c: &Computation, step: usize, what: &str) {
    let want = bits(&Flat::of_value(&c.interpret().unwrap()));
    for v in k
        .variants()
        .iter()
        .step_by(step)
        .chain([k.default_variant()])
    {
        let got = bits(&Flat::of_output(&k.run(c, v).unwrap()));
        assert_eq!(got, want, "{what}: variant {v}");
    }
}

const DS: [usize; 5] = [1, 3, 8, 32, 33];
const KS: [usize; 9] = [1, 7, 8, 9, 10, 12, 16, 17, 24];

#[test]
fn relabel_labels_and_distances_equal_the_interpreter_bit_for_bit() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 12;
    let labels = Kernels::build(
        &relabel(coords(n * 4, 0, false), centroids(10, 4, false), 4).unwrap(),
        &Target::cpu(),
    )
    .unwrap();
    let source = std::fs::read_to_string(labels.source_path()).unwrap();
    assert!(
        source.contains("lane_groups::<f64, 8>") && source.contains("Lanes (jam/lanes.rs)"),
        "the k-means relabel takes the lanes form"
    );
    let dist = nearest_distance(coords(n * 4, 0, false), centroids(10, 4, false), 4);
    let dists = Kernels::build(&dist, &Target::cpu()).unwrap();
    let before = rustc_calls();
    for d in DS {
        for k in KS {
            for special in [false, true] {
                let (p, c) = (coords(n * d, d, special), centroids(k, d, special));
                let what = format!("d = {d}, k = {k}, special = {special}");
                let r = relabel(p.clone(), c.clone(), d).unwrap();
                same_bits(&labels, &r, 9, &what);
                same_bits(&dists, &nearest_distance(p, c, d), 9, &what);
            }
        }
    }
    assert_eq!(rustc_calls(), before, "other sizes compiled nothing");
}

/// Per element `v` of `x`, the index of the `d`-tile of `c` nearest to it (`c`'s last tile may
/// be short: no expansion, and the groups that reach it take the old path).
fn nearest_tile(x: Vec<f64>, c: Vec<f64>, d: u64) -> Computation {
    let build = || -> Result<Computation> {
        let x = Seq::input("x", x)?;
        let c = Seq::input("c", c)?;
        let y = map(
            |v: Scalar<f64>| {
                let sums = map(
                    |q: Seq<f64>| reduce_prefix(add, &map(|u| (&u - &v) * (&u - &v), &q)?, 0.0),
                    &split(&c, d)?,
                )?;
                let k = len(&sums).cast::<u32>();
                Ok(reduce(argmin, &zip(&sums, &range(0u32, k)?)?)?.1)
            },
            &x,
        )?;
        Computation::new(&y)
    };
    build().unwrap()
}

#[test]
fn short_last_tiles_take_the_old_path_with_the_same_bits() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let k = Kernels::build(
        &nearest_tile(coords(8, 1, false), coords(36, 2, false), 4),
        &Target::cpu(),
    )
    .unwrap();
    let source = std::fs::read_to_string(k.source_path()).unwrap();
    assert!(
        source.contains("lane_groups::<f64, 8>"),
        "lanes form emitted"
    );
    let before = rustc_calls();
    for (m, d) in [
        (36, 4),
        (35, 4),
        (17 * 3, 3),
        (17 * 3 - 1, 3),
        (9 * 8 + 5, 8),
        (20, 1),
        (33 * 9 + 1, 33),
    ] {
        for special in [false, true] {
            let c = nearest_tile(coords(16, 5, special), coords(m, 2, special), d);
            same_bits(&k, &c, 5, &format!("m = {m}, d = {d}, special = {special}"));
        }
    }
    assert_eq!(rustc_calls(), before, "other sizes compiled nothing");
}

#[test]
fn a_body_that_can_fail_keeps_the_old_path() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The inner body reads `q[1]` (a checked index): no step may run before its turn.
    let build = |points: Vec<f64>, cs: Vec<f64>, d: usize| -> Computation {
        let f = || -> Result<Computation> {
            let k = (cs.len() / d) as u32;
            let x = Seq::input("points", points)?;
            let c = Seq::input("centroids", cs)?;
            let centroids = split(&c, d as u64)?;
            let labels = map(
                |p: Seq<f64>| {
                    let dists = map(
                        |q: Seq<f64>| {
                            let q1 = at(&q, 1u64)?;
                            let sq = map(|(a, b)| (&a - &b) * (&a - &b) + &q1, (&p, &q))?;
                            reduce_prefix(add, &sq, 0.0)
                        },
                        &centroids,
                    )?;
                    Ok(reduce(argmin, &zip(&dists, &range(0u32, k)?)?)?.1)
                },
                &split(&x, d as u64)?,
            )?;
            Computation::new(&labels)
        };
        f().unwrap()
    };
    let c = build(coords(40, 0, false), centroids(10, 4, false), 4);
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let source = std::fs::read_to_string(k.source_path()).unwrap();
    assert!(
        !source.contains("Lanes (jam/lanes.rs)"),
        "no lanes form where a step can fail: {}",
        k.source_path().display()
    );
    same_bits(&k, &c, 5, "fallible, d = 4");
    // Tiles of one value: `q[1]` fails, with the interpreter's error on every variant.
    let bad = build(coords(10, 0, false), centroids(10, 1, false), 1);
    let want = bad.interpret().unwrap_err().to_string();
    for v in k.variants().iter().step_by(5).chain([k.default_variant()]) {
        assert_eq!(k.run(&bad, v).unwrap_err().to_string(), want, "variant {v}");
    }
}

/// Timing, not a check (`cargo test -p surge --test jam_lanes -- --ignored --nocapture`): the
/// relabel program's build time (set `SURGE_CACHE` to an empty folder to compile) and its run
/// time on one thread, 10^5 points of 32, k = 10 and 16, best of 5.
#[test]
#[ignore]
fn relabel_timing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (n, d) = (100_000, 32);
    let t = std::time::Instant::now();
    let k = Kernels::build(
        &relabel(coords(n * d, 0, false), centroids(10, d, false), d).unwrap(),
        &Target::cpu(),
    )
    .unwrap();
    println!("build: {:.1} s", t.elapsed().as_secs_f64());
    let ones: Vec<_> = k
        .variants()
        .iter()
        .filter(|v| {
            v.to_string()
                .ends_with("sequential.sequential/threads=1,nesting=0,unroll1=0,unroll2=0")
        })
        .collect();
    for v in ones {
        println!("variant {v}");
        for kc in [10, 16] {
            let c = relabel(coords(n * d, 0, false), centroids(kc, d, false), d).unwrap();
            let best = (0..5)
                .map(|_| {
                    let t = std::time::Instant::now();
                    k.run(&c, v).unwrap();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min);
            println!(
                "k = {kc}: {:.1} ms, {:.2} Mpoints/s",
                best * 1e3,
                n as f64 / best / 1e6
            );
        }
    }
}
