//! The tuner on the real backends, written once and run per backend: tune reduce on a few small
//! generated inputs (every variant compiled, checked where the backend checks, and timed), keep
//! the store, and run the model's pick through `Tuned::execute` against the interpreter. The
//! CPU backend runs everywhere; the CUDA backend where a GPU is present, else the test says why
//! it skipped (and checks that the backend's error says why too).

use std::time::Duration;
use surge::apps::App;
use surge::tune::cpu::CpuBackend;
use surge::tune::cuda::CudaBackend;
use surge::tune::{Outcome, TrainingConfig, TuneInput, TuneOptions, Tuned, TuningBackend, tune};
use surge::{Output, Target, Value};

fn flat(o: &Output) -> Vec<f64> {
    match o {
        Output::Scalar(s) => vec![s.as_f64().unwrap()],
        Output::Seq(b) => (0..b.len())
            .map(|i| b.get(i).unwrap().as_f64().unwrap())
            .collect(),
        Output::Nested { data, .. } | Output::Deep { data, .. } => (0..data.len())
            .map(|i| data.get(i).unwrap().as_f64().unwrap())
            .collect(),
        Output::Composite { .. } => panic!("the tuned apps have numeric results"),
    }
}

/// Tunes reduce on inputs of `sizes` with `backend`, whose store is keyed `platform` and whose
/// variant ids start with `prefix`, then runs the picks on `target`.
fn tunes_reduce_and_runs_the_pick(
    backend: &dyn TuningBackend,
    target: &Target,
    (platform, prefix): (&str, &str),
    sizes: &[usize],
) {
    let inputs: Vec<TuneInput> = sizes
        .iter()
        .copied()
        .map(|n| TuneInput::sized(App::Reduce, n).unwrap())
        .collect();
    let features = App::Reduce.workload();
    let opts = TuneOptions {
        training: TrainingConfig {
            warmup: 1,
            repetitions: 3,
            min_sample_time: Duration::ZERO,
            timeout: Duration::from_secs(10),
            ..TrainingConfig::default()
        },
        ..TuneOptions::default()
    };
    let store = tune(backend, &features, &inputs, &opts, &mut |_| {}).unwrap();
    assert_eq!(store.key.platform, platform, "{:?}", store.key);
    assert!(store.variants.len() > 1, "{:?}", store.variants);
    assert!(store.variants.contains(&store.default_variant));
    for r in &store.inputs {
        assert_eq!(r.measurements.len(), store.variants.len(), "{}", r.name);
        for m in &r.measurements {
            match &m.outcome {
                Outcome::Ok { median_seconds, .. } => assert!(*median_seconds > 0.0),
                Outcome::Failed { reason } => {
                    panic!("`{}` failed on {}: {reason}", m.variant, r.name)
                }
            }
        }
        assert!(store.variants.contains(r.best.as_ref().unwrap()));
    }
    let mut tuned = Tuned::from_store(&features, store, backend);
    tuned.print_warnings = false;
    for input in [&inputs[1], &TuneInput::sized(App::Reduce, 77_777).unwrap()] {
        let (out, sel) = tuned.execute(input, target).unwrap();
        assert!(sel.from_model, "{:?}", sel.warnings);
        assert!(
            sel.variant.starts_with(&format!("{prefix}:")),
            "{}",
            sel.variant
        );
        let want = match input.computation.interpret().unwrap() {
            Value::Scalar(s) => vec![s.as_f64().unwrap()],
            v => v.to_f64_vec().unwrap(),
        };
        let got = flat(&out);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{g} vs {w}");
        }
    }
}

#[test]
fn the_cpu_backend_tunes_reduce_and_runs_the_pick() {
    tunes_reduce_and_runs_the_pick(
        &CpuBackend::new(),
        &Target::cpu(),
        ("cpu", "cpu"),
        &[100, 3_000, 40_000, 200_000],
    );
}

#[test]
fn opening_the_cuda_backend_names_its_device_or_what_is_missing() {
    match CudaBackend::open(0) {
        Ok(b) => assert!(b.platform().starts_with("cuda:"), "{}", b.platform()),
        Err(e) => {
            let m = e.to_string();
            assert!(
                ["libcuda", "NVRTC", "nvrtc", "device"]
                    .iter()
                    .any(|w| m.contains(w)),
                "the error should say what is missing: {m}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
fn the_cuda_backend_tunes_reduce_and_runs_the_pick() {
    let b = CudaBackend::open(0).unwrap_or_else(|e| panic!("no CUDA device: {e}"));
    tunes_reduce_and_runs_the_pick(
        &b,
        &Target::cuda(0),
        ("cuda", "cuda"),
        &[100, 3_000, 40_000, 200_000],
    );
}

/// The CUDA backend's correctness path on every machine: every variant checked in the
/// emulator, timed in host time under its own key (`cuda-emu`), the pick run on the emulator.
#[test]
fn the_cuda_backend_tunes_reduce_in_the_emulator() {
    let b = CudaBackend::emulated().expect("a C++ compiler for the emulator");
    tunes_reduce_and_runs_the_pick(
        &b,
        &Target::cuda_emulated(),
        ("cuda-emu", "cuda"),
        &[100, 3_000, 20_000],
    );
}
