//! CUDA refusal classes of the random programs, seed 25 (issue 19): each program is the
//! shortest of its class as the random test printed it, plus variations. Every `STRIDE`-th
//! CUDA variant is NVRTC-compiled (where NVRTC loads) and run in the emulator against the
//! interpreter, errors included.

use surge::Computation;
use surge::prelude::*;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

/// `map(|(_, a, b)| reduce_by_key(op, in2, keys, prefix(a, b)), ..)`: a row of runs per
/// element, read lazily in the map's body.
/// `keys` are read as a row of a nest (their length known when it runs) when `short`.
fn runs_per_element(keys: Vec<i64>, values: Vec<f64>, short: bool) -> surge::Result<Computation> {
    let in0 = Seq::input("in0", vec![-2, 7, -1, 3, 7i64])?;
    let in1 = Seq::input("in1", vec![0.25, 0.75, 3.0, 3.5, 0.5f64])?;
    let in2 = Seq::input("in2", values)?;
    let n = keys.len() as u32;
    let mut in3 = Seq::input("in3", keys)?;
    if short {
        in3 = at(&nest(&in3, &Seq::input("off", vec![0u32, n])?)?, lit(0u32))?;
    }
    let y = map(
        |(_v1, v2, v3): (Scalar<u32>, Scalar<i64>, Scalar<f64>)| -> surge::Result<_> {
            reduce_by_key(
                mul,
                &in2,
                &in3,
                v2.clone().lt(lit(6i64)).select(lit(-2.25f64), v3.clone()),
            )
        },
        (&replicate::<u32>(lit(6u32), lit(5u64))?, &in0, &in1),
    )?;
    Computation::new(&y)
}

#[test]
fn a_reduce_by_key_of_scalars_per_element() -> surge::Result<()> {
    // The random program.
    let c = runs_per_element(
        vec![3, 0, 3, 1, 4, 0, 2, 4],
        vec![4.25, -0.5, 4.25, -4.25, -0.25, 0.25, 4.75, 1.75],
        false,
    )?;
    on_cuda("a reduce_by_key per element", &c);
    // Runs longer than one, one run, no keys.
    let keys: Vec<i64> = (0..300).map(|i| i / 7 - (i / 100) * 3).collect();
    let values = (0..300).map(|i| 1.0 + (i % 5) as f64 / 8.0).collect();
    on_cuda(
        "long runs per element",
        &runs_per_element(keys, values, false)?,
    );
    on_cuda(
        "one run per element",
        &runs_per_element(vec![2; 6], vec![1.5, -1.0, 2.0, 0.5, 3.0, -2.0], true)?,
    );
    on_cuda(
        "no runs per element",
        &runs_per_element(Vec::new(), Vec::new(), false)?,
    );
    // The input and the keys of different lengths: the interpreter's error.
    fails_as_the_interpreter(&runs_per_element(vec![1, 1, 2], vec![1.0, 2.0], true)?);
    Ok(())
}

#[test]
fn runs_per_element_read_by_their_consumers() -> surge::Result<()> {
    let x = Seq::input("x", vec![3u32, 0, 7, 2, 9, 9, 1])?;
    let k = Seq::input("k", vec![0u32, 0, 1, 1, 1, 5, 2, 2, 7])?;
    let v = Seq::input("v", vec![5u32, 1, 8, 2, 2, 6, 4, 0, 3])?;
    // A sum of the runs' maxima per element, and their count.
    let y = map(
        |p: Scalar<u32>| -> surge::Result<_> {
            let runs = reduce_by_key(max, &v, &k, p)?;
            Ok(reduce_prefix(add, &runs, 0u32)? + len(&runs).cast::<u32>())
        },
        &x,
    )?;
    on_cuda("a sum of runs per element", &Computation::new(&y)?);
    // One run picked per element (its index checked).
    let y = map(
        |p: Scalar<u32>| at(&reduce_by_key(min, &v, &k, p)?, lit(2u32)),
        &x,
    )?;
    on_cuda("an element of the runs per element", &Computation::new(&y)?);
    let y = map(
        |p: Scalar<u32>| at(&reduce_by_key(min, &v, &k, p)?, lit(5u32)),
        &x,
    )?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    Ok(())
}

type Triple = (Scalar<f32>, Scalar<f64>, Scalar<bool>);
type Triples = Seq<(f32, f64, bool)>;

/// An argmin-like combiner of rows of triples: component 1 and the choice of component 0 both
/// read component 0.
fn pick_rows(a: Triples, b: Triples) -> surge::Result<Triples> {
    map(
        |(u, v): (Triple, Triple)| -> surge::Result<_> {
            let le = u.0.clone().le(v.0.clone());
            Ok((
                le.clone().select(u.0.clone(), v.0.clone()),
                le.select(u.1.clone(), v.1.clone()),
                u.2.clone().and(&v.2.clone()),
            ))
        },
        (&a, &b),
    )
}

/// The random program: `reduce_by_key(pick_rows, replicate(row, n), keys, prefix)`, its
/// prefix `wide` (as wide as the rows) or of one triple.
fn runs_of_triples(keys: Vec<u32>, wide: bool) -> surge::Result<Seq<Seq<(f32, f64, bool)>>> {
    let in0 = Seq::input("in0", vec![4.5, -3.5, -1.25f32])?;
    let in1 = Seq::input("in1", vec![-2.5, 1.5, 2.0f64])?;
    let in2 = Seq::input("in2", vec![1.25, 0.0, -3.0f32])?;
    let n = keys.len() as u64;
    let in3 = Seq::input("in3", keys)?;
    let (in4, in5, in6) = if wide {
        (
            vec![-1.0, 5.0, -1.25f32],
            vec![-1.0, 0.5, 3.0f64],
            vec![-4, -5, 0i64],
        )
    } else {
        (vec![-1.0f32], vec![-1.0f64], vec![-4i64])
    };
    let (in4, in5, in6) = (
        Seq::input("in4", in4)?,
        Seq::input("in5", in5)?,
        Seq::input("in6", in6)?,
    );
    let flags = map(|v1: Scalar<f32>| Ok(v1.lt(lit(3.25f32))), &in2)?;
    let rows = replicate::<Seq<(f32, f64, bool)>>(zip3(&in0, &in1, &flags)?, lit(n))?;
    let pflags = map(|v6: Scalar<i64>| Ok(v6.lt(lit(-4i64))), &in6)?;
    reduce_by_key(pick_rows, &rows, &in3, zip3(&in4, &in5, &pflags)?)
}

#[test]
fn a_reduce_by_key_of_rows_of_tuples_mixing_components() -> surge::Result<()> {
    let keys = vec![
        3, 2, 1, 0, 1, 2, 1, 0, 0, 2, 2, 2, 2, 1, 4, 4, 2, 0, 4, 3u32,
    ];
    // The random program: its prefix is narrower than the rows (the combiner's error).
    fails_as_the_interpreter(&Computation::new(&runs_of_triples(keys.clone(), false)?)?);
    let y = runs_of_triples(keys, true)?;
    on_cuda("runs of rows of triples", &Computation::new(&y)?);
    // Read by a later phase: the runs' lengths, and one run's first components.
    let lens = map(|r: Triples| Ok(len(&r)), &y)?;
    on_cuda(
        "lengths of runs of rows of triples",
        &Computation::new(&lens)?,
    );
    let firsts = map(|t: Triple| t.1, &at(&y, lit(2u32))?)?;
    on_cuda("one run of rows of triples", &Computation::new(&firsts)?);
    // Long runs, one run, no rows.
    let keys = (0..200u32).map(|i| i / 9).collect();
    on_cuda(
        "long runs of rows of triples",
        &Computation::new(&runs_of_triples(keys, true)?)?,
    );
    on_cuda(
        "one run of rows of triples",
        &Computation::new(&runs_of_triples(vec![7; 5], true)?)?,
    );
    on_cuda(
        "no runs of rows of triples",
        &Computation::new(&runs_of_triples(Vec::new(), true)?)?,
    );
    Ok(())
}

#[test]
fn a_reduce_by_key_of_rows_with_an_elementwise_combiner_in_a_map() -> surge::Result<()> {
    // Runs of rows inside an element expression: the sum of run `k`'s row, from a prefix
    // that is the element's (so the runs are folded per element, lazily).
    let x = Seq::input(
        "x",
        (0..24).map(|i| (i % 7) as f32 - 2.5).collect::<Vec<_>>(),
    )?;
    let rows = split(&x, lit(3u64))?;
    let keys = Seq::input("keys", vec![0u32, 0, 1, 1, 1, 2, 4, 4])?;
    let pick = Seq::input("pick", vec![2u32, 0, 3, 1])?;
    let y = map(
        |k: Scalar<u32>| -> surge::Result<_> {
            let runs = reduce_by_key(
                |a: Seq<f32>, b: Seq<f32>| {
                    map(|(u, v): (Scalar<f32>, Scalar<f32>)| Ok(u.max(v)), (&a, &b))
                },
                &rows,
                &keys,
                replicate::<f32>(k.cast::<f32>() - 1.5f32, lit(3u64))?,
            )?;
            reduce_prefix(add, &at(&runs, k)?, 0.0f32)
        },
        &pick,
    )?;
    on_cuda("a run of rows per element", &Computation::new(&y)?);
    Ok(())
}
