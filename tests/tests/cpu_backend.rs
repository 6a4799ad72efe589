//! The native CPU backend's error paths: compile errors name the variant, unknown variants and
//! mismatched buffers are errors, and the cache reuses a compiled library.

use surge::apps::{App, AppInput, BuiltApp};
use surge::{Buffer, Kernels, Output, Target, execute, execute_into, execute_variant};
use surge_codegen::emit::cpu::EmitOptions;
use surge_cpu::CpuError;
use surge_cpu::native::NativeKernels;

fn spmv() -> BuiltApp {
    BuiltApp::new(App::Spmv, &AppInput::Default).unwrap()
}

#[test]
fn a_compile_error_names_the_variant_and_keeps_the_source() {
    let b = spmv();
    let ir = b.computation.ir();
    let cpu = surge::Target::cpu().platform().unwrap();
    let variants = b.computation.variants(&cpu).unwrap().variants().to_vec();
    // Poison a variant whose module holds only unrolled inner loops.
    let victim = variants
        .iter()
        .find(|v| v.get("unroll2").is_some())
        .unwrap()
        .id();
    let opts = EmitOptions {
        poison_variant: Some(victim.clone()),
    };
    let e = NativeKernels::build_with(ir, &variants, &opts).unwrap_err();
    let CpuError::Compile {
        variants: named,
        message,
        source_path,
    } = &e
    else {
        panic!("expected a compile error, got {e}");
    };
    assert!(named.contains(&victim), "{named:?} lacks {victim}");
    assert!(
        message.contains("surge_undefined_template_variable"),
        "{message}"
    );
    let src = source_path.as_ref().expect("source kept");
    assert!(
        std::fs::read_to_string(src)
            .unwrap()
            .contains("surge_undefined_template_variable")
    );
    assert!(e.to_string().contains(&named[0]), "{e}");
}

#[test]
fn unknown_variant_ids_are_errors() {
    let b = spmv();
    let e = execute_variant(
        &b.computation,
        &Target::cpu(),
        "cpu:host/independent/bogus=1",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown variant") && e.contains("bogus"), "{e}");
}

#[test]
fn the_default_variant_runs_and_fills_a_caller_buffer() {
    let b = spmv();
    let want = b.computation.interpret().unwrap().to_f64_vec().unwrap();
    match execute(&b.computation, &Target::cpu()).unwrap() {
        Output::Seq(Buffer::F64(y)) => assert_eq!(y.len(), want.len()),
        other => panic!("unexpected {other:?}"),
    }
    let k = Kernels::build(&b.computation, &Target::cpu()).unwrap();
    let id = k.default_variant().id();
    let mut out = Buffer::F64(vec![0.0; want.len()]);
    execute_into(&b.computation, &Target::cpu(), &id, &mut out).unwrap();
    let Buffer::F64(y) = &out else { unreachable!() };
    for (g, w) in y.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0));
    }
    let mut short = Buffer::F64(vec![0.0; 3]);
    let e = execute_into(&b.computation, &Target::cpu(), &id, &mut short)
        .unwrap_err()
        .to_string();
    assert!(e.contains("output buffer holds 3"), "{e}");
}

#[test]
fn buffers_that_do_not_match_the_declarations_are_errors() {
    let b = spmv();
    let k = Kernels::build(&b.computation, &Target::cpu()).unwrap();
    let v = k.default_variant().clone();
    let mut bufs = b.computation.buffers().to_vec();
    bufs[3] = Buffer::F64(vec![1.0; 2]); // x too short
    let e = k.run_on(&v, &bufs).unwrap_err().to_string();
    assert!(e.contains('x'), "{e}");
    // A second build of the same computation loads the cached library.
    let again = Kernels::build(&b.computation, &Target::cpu()).unwrap();
    assert!(!again.compiled());
}

#[test]
fn cuda_targets_without_a_gpu_say_why() {
    let b = spmv();
    match execute(&b.computation, &Target::cuda(0)) {
        Err(surge::SurgeError::Cuda(e)) => eprintln!("no GPU here, as expected: {e}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => eprintln!("a GPU is present: CUDA executed"),
    }
}

#[test]
fn kernels_run_other_inputs_of_the_same_structure() {
    let small = spmv();
    let k = Kernels::build(&small.computation, &Target::cpu()).unwrap();
    let m = surge::apps::matgen::random(50, 40, 3, 9);
    let x = vec![0.5; 40];
    let other = surge::Computation::new(&surge::apps::spmv_app(&m, &x).unwrap()).unwrap();
    let want = other.interpret().unwrap().to_f64_vec().unwrap();
    for v in k.variants().iter().take(8) {
        let Output::Seq(Buffer::F64(y)) = k.run(&other, v).unwrap() else {
            panic!("flat f64 result")
        };
        for (g, w) in y.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{v}");
        }
    }
    let reduce = BuiltApp::new(App::Reduce, &AppInput::Size(100)).unwrap();
    let e = k
        .run(&reduce.computation, k.default_variant())
        .unwrap_err()
        .to_string();
    assert!(e.contains("another structure"), "{e}");
}
