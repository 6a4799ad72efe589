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
