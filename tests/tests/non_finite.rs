//! One rule for non-finite floats at every entry point: NaN and ±∞ are IEEE values that pass
//! through, whether they come from `Seq::input`, a literal, or a buffer given to
//! `Kernels::run_on`, and the kernels compute what the interpreter computes with them. (The
//! conformance suite runs the same on every variant of every backend.)

use surge::codegen::data::Buffer;
use surge::oracle::{Expected, Flat};
use surge::prelude::*;
use surge::{Kernels, Target};

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

#[test]
fn seq_input_accepts_nan_and_infinities() {
    let s = Seq::input("s", vec![1.0f64, NAN, INF, -INF]).unwrap();
    let y = map(|x| x + 1.0, &s).unwrap().interpret().unwrap();
    assert_eq!((y[0], y[2], y[3]), (2.0, INF, -INF));
    assert!(y[1].is_nan());
    assert!(reduce(add, &s).unwrap().interpret().unwrap().is_nan());
    // `min` and `max` ignore a NaN operand, as Rust's do.
    assert_eq!(reduce(max, &s).unwrap().interpret().unwrap(), INF);
    assert_eq!(reduce(min, &s).unwrap().interpret().unwrap(), -INF);
    let f = Seq::input("f", vec![f32::NAN, 2.0]).unwrap();
    assert_eq!(reduce(min, &f).unwrap().interpret().unwrap(), 2.0);
}

#[test]
fn literals_accept_nan_and_infinities() {
    let s = Seq::input("s", vec![1.0f64, -2.0]).unwrap();
    let y = map(|x: Scalar<f64>| x.max(NAN) * INF + lit(-INF), &s).unwrap();
    let got = y.interpret().unwrap();
    assert!(got[0].is_nan()); // ∞ - ∞
    assert_eq!(got[1], -INF);
    let c = Computation::new(&y).unwrap();
    let out = surge::execute(&c, &Target::cpu()).unwrap();
    Expected::interpret(c.ir(), c.buffers())
        .unwrap()
        .check(&Flat::of_output(&out))
        .unwrap();
}

#[test]
fn run_on_buffers_with_nan_and_infinities_matches_the_interpreter() {
    let s = Seq::input("s", vec![1.0f64; 200]).unwrap();
    let y = surge::apps::reduce_app(&s, 16).unwrap();
    let c = Computation::new(&y).unwrap();
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    let mut data: Vec<f64> = (0..200).map(|i| i as f64 * 0.5).collect();
    data[3] = NAN;
    data[40] = INF;
    data[41] = -INF; // tile 2 sums to NaN
    data[100] = INF; // tile 6 sums to +∞
    let bufs = vec![Buffer::F64(data)];
    let want = Expected::interpret(c.ir(), &bufs).unwrap();
    for v in k.variants() {
        let got = k.run_on(v, &bufs).unwrap();
        want.check(&Flat::of_output(&got))
            .unwrap_or_else(|m| panic!("{v}: {m}"));
    }
}
