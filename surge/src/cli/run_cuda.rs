//! `surge run APP --platform cuda|cuda-emu`: the default CUDA variant (or `--variant`), or
//! `--all` of them checked against the reference interpreter, on GPU 0 or on the CUDA emulator
//! (the emitted source compiled for the host and run with CUDA's execution model). Emulated
//! times are host time, labelled so; they say nothing of a GPU.

use super::run::{RunArgs, report, summary_of};
use super::{CliError, print_json};
use serde_json::json;
use std::time::Instant;
use surge::oracle::{self, Flat};
use surge::{SurgeError, Target};
use surge_codegen::target::Platform;
use surge_codegen::variant::Variant;
use surge_cuda::{DeviceKernels, Runtime};

/// The CUDA target `--platform` names.
pub fn target(platform: &str) -> Result<Target, CliError> {
    match platform {
        "cuda" => Ok(Target::cuda(0)),
        "cuda-emu" => Ok(Target::cuda_emulated()),
        other => Err(CliError {
            code: 2,
            message: format!("unknown platform `{other}`; surge run runs on cpu, cuda or cuda-emu"),
        }),
    }
}

pub fn run(args: &RunArgs, built: &surge::apps::BuiltApp, target: &Target) -> Result<(), CliError> {
    if args.tuned {
        return Err(CliError {
            code: 2,
            message: "--tuned selects among CPU variants; on CUDA give --variant or --all".into(),
        });
    }
    if args.all {
        return match target {
            Target::Cuda(i) => run_all(
                args,
                built,
                &surge_cuda::Device::open(*i).map_err(SurgeError::from)?,
                "cuda",
            ),
            Target::CudaEmulated(d) => run_all(
                args,
                built,
                &surge_cuda::Emulator::new(d.clone()),
                "cuda-emu",
            ),
            Target::Cpu(_) => unreachable!("internal: a CPU target in the CUDA runner"),
        };
    }
    let c = &built.computation;
    let start = Instant::now();
    let out = match &args.variant {
        Some(id) => surge::execute_variant(c, target, id)?,
        None => surge::execute(c, target)?,
    };
    let seconds = start.elapsed().as_secs_f64();
    let mut o = summary_of(built, &out);
    o.insert("engine".into(), json!(target.kind()));
    if let Some(id) = &args.variant {
        o.insert("variant".into(), json!(id));
    }
    o.insert("seconds_with_compile".into(), json!(seconds));
    report(args, built, o)
}

/// `--all`: every variant of each phase (the others at their default), compiled once, each
/// run checked against the interpreter and then timed once.
fn run_all<R: Runtime>(
    args: &RunArgs,
    built: &surge::apps::BuiltApp,
    rt: &R,
    engine: &str,
) -> Result<(), CliError> {
    let c = &built.computation;
    let expected = oracle::Expected::interpret(c.ir(), c.buffers()).map_err(SurgeError::from)?;
    let set = c.variants(&Platform::Cuda(rt.info().clone()))?;
    let lists = set.phases().to_vec();
    let start = Instant::now();
    let k = DeviceKernels::build(rt, c.ir(), &lists).map_err(SurgeError::from)?;
    let build_seconds = start.elapsed().as_secs_f64();
    let firsts: Vec<&Variant> = lists.iter().map(|l| &l[0]).collect();
    let p = k.prepare(c.buffers(), &firsts).map_err(SurgeError::from)?;
    let (mut rows, mut failed) = (Vec::new(), Vec::new());
    for (pi, vs) in lists.iter().enumerate() {
        for v in vs {
            let combo = set.combination(pi, v);
            let chosen: Vec<&Variant> = combo.iter().collect();
            let checked = p
                .run(&chosen)
                .and_then(|()| p.output())
                .map_err(|e| e.to_string())
                .and_then(|out| {
                    expected
                        .check(&Flat::of_output(&out))
                        .map_err(|m| format!("differs from the interpreter: {m}"))
                });
            match checked.and_then(|()| p.time(&chosen, 0, 1).map_err(|e| e.to_string())) {
                Ok(t) => {
                    if !args.app.json {
                        println!("{:>10.3} ms  phase {pi}: {v}", t.median_ms);
                    }
                    rows.push(json!({"phase": pi, "variant": v.id(), "ms": t.median_ms}));
                }
                Err(e) => {
                    if !args.app.json {
                        println!("    FAILED  phase {pi}: {v}: {e}");
                    }
                    failed.push(json!({"phase": pi, "variant": v.id(), "error": e}));
                }
            }
        }
    }
    let clock = if engine == "cuda-emu" {
        "emulated: host time of the CUDA emulator, not a GPU's"
    } else {
        "GPU time (CUDA events)"
    };
    if args.app.json {
        print_json(&json!({
            "app": built.app.name(), "input": built.input_name, "engine": engine,
            "device": rt.info().name, "build_seconds": build_seconds, "times": clock,
            "variants": rows, "failed": failed, "all_match_interpreter": failed.is_empty(),
        }));
    } else {
        println!(
            "{} of {} variants match the interpreter ({engine}, {}; kernels built in {build_seconds:.2} s; times: {clock})",
            rows.len(),
            rows.len() + failed.len(),
            rt.info().name
        );
    }
    match failed.first() {
        None => Ok(()),
        Some(f) => Err(CliError {
            code: 1,
            message: format!("variant {} failed: {}", f["variant"], f["error"]),
        }),
    }
}
