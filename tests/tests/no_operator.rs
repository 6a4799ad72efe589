//! Programs without a data-parallel operator (issue 19): an input returned as it is, a literal,
//! scalar code over `len` and `at` of the inputs. `Computation::new` anchors them in a copy or a
//! one-element map (`surge_codegen::ir::anchored`), so they run natively on the CPU and in the
//! CUDA emulator, every variant equal to the interpreter, errors included.

use surge::prelude::*;
use surge::{Computation, Target, execute};
use tests::conformance::{CpuBackend, CudaEmuBackend, check_all};

fn on_both(what: &str, c: &Computation) {
    assert!(check_all(&CpuBackend, what, c) > 1, "{what}: one variant");
    assert!(check_all(&CudaEmuBackend { full: true }, what, c) > 1);
}

#[test]
fn an_input_returned_as_it_is_runs_natively() {
    let x = Seq::input("x", vec![1.5f64, -0.0, f64::INFINITY, 2.0]).unwrap();
    let c = Computation::new(&x).unwrap();
    assert!(matches!(
        c.ir().root_node().op,
        surge::codegen::ir::Op::Map { .. }
    ));
    on_both("input", &c);
    let empty = Seq::input("e", Vec::<u32>::new()).unwrap();
    on_both("empty input", &Computation::new(&empty).unwrap());
}

#[test]
fn literals_and_scalar_code_over_inputs_run_natively() {
    on_both("f64 literal", &Computation::new(&lit(-5.75f64)).unwrap());
    on_both("i64 literal", &Computation::new(&lit(-7i64)).unwrap());
    let x = Seq::input("x", vec![1.0f64, 2.5, 4.0]).unwrap();
    let y = at(&x, 1u32).unwrap() * len(&x).cast::<f64>() + 0.5;
    let c = Computation::new(&y).unwrap();
    assert_eq!(
        c.interpret().unwrap().as_scalar().unwrap().as_f64(),
        Some(8.0)
    );
    on_both("scalar code", &c);
}

#[test]
fn an_error_in_scalar_code_is_the_interpreters_on_every_backend() {
    let x = Seq::input("x", vec![1.0f64, 2.5]).unwrap();
    let i = Seq::input("i", vec![5u32]).unwrap();
    let y = at(&x, at(&i, 0u32).unwrap()).unwrap();
    let c = Computation::new(&y).unwrap();
    let want = c.interpret().unwrap_err().to_string();
    assert!(
        want.contains("no_operator.rs") && want.contains("index 5 is out of range"),
        "{want}"
    );
    for t in [Target::cpu(), Target::cuda_emulated()] {
        let got = execute(&c, &t).unwrap_err().to_string();
        assert!(got.contains(&want), "{t:?}: {got}");
    }
}
