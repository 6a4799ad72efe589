//! Every emitted CUDA variant of every built-in app compiles with NVRTC (no GPU needed), and a
//! GPU-less machine gets a clean error from the execution path.

use std::time::Instant;
use surge::apps::{App, AppInput, BuiltApp};
use surge_codegen::emit::cuda;
use surge_codegen::target::Platform;
use surge_codegen::variant::Variant;

fn all_variants(app: App) -> (BuiltApp, Vec<Vec<Variant>>) {
    let input = match app {
        App::Spmv => AppInput::Default,
        _ => AppInput::Size(10_000),
    };
    let built = BuiltApp::new(app, &input).unwrap();
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    let lists = built
        .computation
        .variants(&platform)
        .unwrap()
        .phases()
        .to_vec();
    (built, lists)
}

#[test]
fn every_cuda_variant_of_every_app_compiles_with_nvrtc() {
    surge_cuda::nvrtc_available()
        .unwrap_or_else(|e| panic!("NVRTC is required (.ci/run installs libnvrtc): {e}"));
    for app in App::ALL {
        let (built, lists) = all_variants(app);
        let c = built.computation.ir();
        let analysis = built.computation.analyze().unwrap();
        let program = cuda::emit(c, &analysis, &lists).unwrap_or_else(|e| panic!("{app}: {e}"));
        let total: usize = lists.iter().map(Vec::len).sum();
        assert_eq!(program.kernels.len(), total, "{app}");
        // The same variants, split into one program per core and compiled in parallel.
        let t = Instant::now();
        let parts = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunks: Vec<Vec<Vec<Variant>>> = (0..parts)
            .map(|k| {
                lists
                    .iter()
                    .map(|l| l.iter().skip(k).step_by(parts).cloned().collect())
                    .collect()
            })
            .collect();
        let a = &analysis;
        let ptx: String = std::thread::scope(|s| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|chunk| {
                    s.spawn(move || {
                        let p = cuda::emit(c, a, chunk).unwrap_or_else(|e| panic!("{app}: {e}"));
                        surge_cuda::compile_source(&p.source, surge_cuda::DEFAULT_ARCH)
                            .unwrap_or_else(|e| panic!("{app}: {e}"))
                            .to_src()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        println!(
            "{app}: {total} variants, {} lines of CUDA, {} KiB of PTX, NVRTC {:.2} s",
            program.source.lines().count(),
            ptx.len() / 1024,
            t.elapsed().as_secs_f64()
        );
        for k in &program.kernels {
            assert!(
                ptx.contains(&format!(".entry {}(", k.name)),
                "{app}: kernel {} of variant {} missing from the PTX",
                k.name,
                k.variant
            );
        }
    }
}

#[test]
fn execution_without_a_gpu_is_a_clean_error() {
    let (built, lists) = all_variants(App::Reduce);
    let v = lists[0][0].clone();
    match surge_cuda::execute(built.computation.ir(), built.computation.buffers(), &[v]) {
        Err(surge_cuda::CudaError::Unavailable { library, reason }) => {
            println!("no GPU here, as expected of the error path: {library}: {reason}");
            assert!(!reason.is_empty());
        }
        Err(e) => {
            // A machine with a driver but no usable device, or a real failure: must not panic.
            println!("execute returned an error: {e}");
        }
        Ok(out) => println!("ran on a GPU: {out:?}"),
    }
}

/// A negated negative literal in scalar glue compiles (it printed `--1.0f`, C's decrement
/// operator: found by the random programs, seed 23).
#[test]
fn negated_negative_literals_compile_with_nvrtc() {
    use surge::prelude::*;
    surge_cuda::nvrtc_available()
        .unwrap_or_else(|e| panic!("NVRTC is required (.ci/run installs libnvrtc): {e}"));
    let x = Seq::input("x", vec![1.0f32, 2.0]).unwrap();
    let y = lit(2.0f32).fma(reduce_prefix(add, &x, 0.0f32).unwrap(), -lit(-1.0f32));
    let c = surge::Computation::new(&y).unwrap();
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    let lists: Vec<Vec<Variant>> = c
        .variants(&platform)
        .unwrap()
        .phases()
        .iter()
        .map(|l| l.iter().take(2).cloned().collect())
        .collect();
    let p = cuda::emit(c.ir(), &c.analyze().unwrap(), &lists).unwrap();
    assert!(!p.source.contains("--1"), "{}", p.source);
    surge_cuda::compile_source(&p.source, surge_cuda::DEFAULT_ARCH).unwrap();
}
