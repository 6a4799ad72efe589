//! A scalar value used more than once stays one node: `y ← y·y − y` repeated 40 times is 40 IR
//! nodes, not a tree of 2^40 leaves, and runs natively (CPU, and the emitted CUDA in the emulator) with the interpreter's result. Before the
//! DSEL kept shared scalars as nodes, lowering this program did not finish.

use surge::prelude::*;
use surge::{Computation, Output, Target, execute};

const STEPS: usize = 40;

/// `y ← y·y − y`, `STEPS` times: every step reads `y` twice.
fn chain(mut y: Scalar<f64>) -> Scalar<f64> {
    for _ in 0..STEPS {
        y = &y * &y - &y;
    }
    y
}

/// The same recurrence in plain Rust, in the same order of operations.
fn chain_host(mut y: f64) -> f64 {
    for _ in 0..STEPS {
        y = y * y - y;
    }
    y
}

fn values(o: Output) -> Vec<f64> {
    match o {
        Output::Seq(b) => (0..b.len())
            .map(|i| b.get(i).unwrap().as_f64().unwrap())
            .collect(),
        Output::Scalar(s) => vec![s.as_f64().unwrap()],
        other => panic!("unexpected output {other:?}"),
    }
}

#[test]
fn a_reused_scalar_in_a_map_is_one_node_and_runs_natively() {
    let xs: Vec<f64> = (0..1000).map(|i| (i % 17) as f64 / 16.0 - 0.5).collect();
    let x = Seq::input("x", xs.clone()).unwrap();
    let y = map(chain, &x).unwrap();
    let c = Computation::new(&y).unwrap();
    let nodes = c.ir().nodes.len();
    assert!(nodes < 2 * STEPS + 10, "{nodes} IR nodes for {STEPS} steps");
    let want: Vec<f64> = xs.iter().map(|&v| chain_host(v)).collect();
    assert_eq!(y.interpret().unwrap(), want);
    assert_eq!(values(execute(&c, &Target::cpu()).unwrap()), want);
    assert_eq!(values(execute(&c, &Target::cuda_emulated()).unwrap()), want);
}

#[test]
fn a_reused_scalar_over_a_reduction_runs_natively() {
    let xs: Vec<f64> = (0..1000).map(|i| (i % 5) as f64 * 1e-4).collect();
    let x = Seq::input("x", xs.clone()).unwrap();
    let s = reduce(add, &x).unwrap();
    let y = chain(s);
    let c = Computation::new(&y).unwrap();
    let sum: f64 = xs.iter().sum();
    let want = chain_host(sum);
    let got = y.interpret().unwrap();
    assert!((got - want).abs() <= 1e-12, "{got} vs {want}");
    let native = values(execute(&c, &Target::cpu()).unwrap());
    assert!((native[0] - want).abs() <= 1e-12, "{native:?} vs {want}");
    let emulated = values(execute(&c, &Target::cuda_emulated()).unwrap());
    assert!(
        (emulated[0] - want).abs() <= 1e-12,
        "{emulated:?} vs {want}"
    );
}
