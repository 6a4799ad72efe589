//! CUDA backend conformance: every CUDA variant of every built-in app computes what the
//! reference interpreter computes (within a floating-point tolerance). Runs only where a GPU is
//! present; elsewhere each test prints `skipping: no CUDA device (...)`.

use surge::apps::{App, AppInput, BuiltApp};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::passes;
use surge_codegen::target::Platform;
use surge_cpu::Value;
use surge_cuda::{CudaError, Device};

fn device() -> Option<Device> {
    match Device::open(0) {
        Ok(d) => Some(d),
        Err(e) => {
            println!("skipping: no CUDA device ({e})");
            None
        }
    }
}

fn flat(v: &Value) -> Vec<f64> {
    match v.as_seq() {
        Some(items) => items.iter().flat_map(flat).collect(),
        None => vec![v.as_scalar().and_then(|s| s.as_f64()).unwrap_or(f64::NAN)],
    }
}

fn out_flat(o: &Output) -> Vec<f64> {
    let b = match o {
        Output::Scalar(s) => return vec![s.as_f64().unwrap_or(f64::NAN)],
        Output::Seq(b) | Output::Nested { data: b, .. } => b,
    };
    (0..b.len())
        .map(|i| b.get(i).and_then(|s| s.as_f64()).unwrap_or(f64::NAN))
        .collect()
}

fn close(a: &[f64], b: &[f64]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(usize::MAX);
    }
    a.iter()
        .zip(b)
        .position(|(x, y)| (x - y).abs() > 1e-9 * (1.0 + x.abs().max(y.abs())) * 64.0)
}

fn conformance(app: App, input: AppInput) {
    let Some(dev) = device() else { return };
    let built = BuiltApp::new(app, &input).unwrap();
    let c = &built.computation;
    let want = flat(&c.interpret().unwrap());
    let analysis = c.analyze().unwrap();
    let platform = Platform::Cuda(dev.info.clone());
    let phases = passes::run(&analysis, &platform).unwrap();
    // Every variant of each phase, with the first variant of the other phases.
    let firsts: Vec<_> = phases
        .iter()
        .map(|p| p.spaces[0].variants[0].clone())
        .collect();
    let mut failures = Vec::new();
    let mut runs = 0;
    for (pi, p) in phases.iter().enumerate() {
        for v in p.spaces.iter().flat_map(|s| &s.variants) {
            let mut vs = firsts.clone();
            vs[pi] = v.clone();
            runs += 1;
            match surge_cuda::execute_on(&dev, c.ir(), c.buffers(), &vs) {
                Ok(out) => {
                    if let Some(i) = close(&want, &out_flat(&out)) {
                        failures.push(format!("{v}: differs at element {i}"));
                    }
                }
                Err(e) => failures.push(format!("{v}: {e}")),
            }
        }
    }
    println!("{app}: {runs} variant runs, {} failures", failures.len());
    assert!(failures.is_empty(), "{app}:\n{}", failures.join("\n"));
}

#[test]
fn cuda_reduce_variants_match_the_interpreter() {
    conformance(App::Reduce, AppInput::Size(100_003));
}

#[test]
fn cuda_scan_variants_match_the_interpreter() {
    conformance(App::Scan, AppInput::Size(100_003));
}

#[test]
fn cuda_spmv_variants_match_the_interpreter() {
    conformance(App::Spmv, AppInput::Default);
}

#[test]
fn gpu_absence_is_an_error_value() {
    if Device::open(0).is_ok() {
        return;
    }
    let built = BuiltApp::new(App::Reduce, &AppInput::Size(10)).unwrap();
    let v = "cuda:h200/sequential.sequential/bx=64,by=1,lw=1,unroll1=0,unroll2=0"
        .parse()
        .unwrap();
    let bufs: Vec<Buffer> = built.computation.buffers().to_vec();
    let e = surge_cuda::execute(built.computation.ir(), &bufs, &[v]).unwrap_err();
    assert!(matches!(e, CudaError::Unavailable { .. }), "{e}");
    println!("skipping: no CUDA device ({e})");
}
