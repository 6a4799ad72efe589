//! The tuner on the simulated backend, where the right answers are known (planted rules).

use std::path::PathBuf;
use std::time::Duration;
use surge::apps::App;
use surge::apps::matgen;
use surge::tune::incremental::IncrementalStop;
use surge::tune::report;
use surge::tune::simulated::SimulatedBackend;
use surge::tune::{
    FeatureSet, ModelKind, Outcome, TrainingConfig, TuneInput, TuneOptions, Tuned, TuningBackend,
    TuningStore, Workload, tune,
};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("surge-tune-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Random matrices (row lengths all equal, so only the average row length matters).
fn spmv_inputs(rows: usize, ks: &[usize], seed: u64) -> Vec<TuneInput> {
    ks.iter()
        .map(|&k| {
            TuneInput::spmv(
                format!("random-{rows}-k{k}"),
                matgen::random(rows, rows, k, seed + k as u64),
            )
            .unwrap()
        })
        .collect()
}

fn train_set() -> Vec<TuneInput> {
    let mut v = spmv_inputs(300, &[1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 16, 20, 32], 1);
    v.extend(spmv_inputs(900, &[1, 3, 6, 7, 9, 11, 24, 40], 2));
    v
}

fn test_set() -> Vec<TuneInput> {
    let mut v = spmv_inputs(500, &[2, 5, 6, 10, 14, 28], 100);
    v.extend(spmv_inputs(1500, &[3, 4, 12, 18], 200));
    v
}

/// A store tuned on the simulated spmv backend's planted rule, quickly.
fn planted_spmv_store() -> TuningStore {
    let backend = SimulatedBackend::sparse("spmv");
    let features = App::Spmv.workload();
    tune(&backend, &features, &train_set(), &quick(), &mut |_| {}).unwrap()
}

fn quick() -> TuneOptions {
    TuneOptions {
        training: TrainingConfig {
            warmup: 1,
            repetitions: 3,
            timeout: Duration::from_secs(10),
            ..TrainingConfig::default()
        },
        ..TuneOptions::default()
    }
}

/// The test inputs' scores travel between MPI ranks as JSON (`surge::mpi::campaign`): they
/// come back the same, and sum up to the same evaluation, as scored in this process.
#[test]
fn test_scores_travel_as_json_unchanged() {
    let backend = SimulatedBackend::sparse("spmv");
    let features = App::Spmv.workload();
    let opts = quick();
    let store = tune(&backend, &features, &train_set(), &opts, &mut |_| {}).unwrap();
    let mut tuned = Tuned::from_store(&features, store, &backend);
    tuned.print_warnings = false;
    let scored: Vec<surge::tune::scoring::Scored> = test_set()
        .iter()
        .map(|i| {
            surge::tune::scoring::score(&tuned, &backend, i, &opts.training, &mut |_, _| {})
                .unwrap()
        })
        .collect();
    let travelled: Vec<surge::tune::scoring::Scored> = scored
        .iter()
        .map(|s| serde_json::from_slice(&serde_json::to_vec(s).unwrap()).unwrap())
        .collect();
    let here = report::Evaluation::from_scored(scored).unwrap();
    let there = report::Evaluation::from_scored(travelled).unwrap();
    assert_eq!(
        serde_json::to_value(&here).unwrap(),
        serde_json::to_value(&there).unwrap()
    );
    assert_eq!(here.results.len(), test_set().len());
    assert!(report::Evaluation::from_scored(Vec::new()).is_err());
}

fn learns_planted_rule(kind: ModelKind) {
    let backend = SimulatedBackend::sparse("spmv");
    let features = App::Spmv.workload();
    let opts = TuneOptions {
        model: kind,
        ..quick()
    };
    let store = tune(&backend, &features, &train_set(), &opts, &mut |_| {}).unwrap();
    let mut tuned = Tuned::from_store(&features, store, &backend);
    tuned.print_warnings = false;
    assert!(tuned.warning().is_none());
    // The planted rule: row-per-thread below 8 nonzeros per row, row-per-warp above.
    let test = test_set();
    for t in &test {
        let k = t.matrix.as_ref().unwrap().row_len(0);
        let want = if k < 8 {
            "sim/spmv/row-per-thread"
        } else {
            "sim/spmv/row-per-warp"
        };
        assert_eq!(
            tuned.select(t).unwrap().variant,
            want,
            "{kind:?} on {}",
            t.name
        );
    }
    let eval = report::evaluate(&tuned, &backend, &test, &opts.training, &mut |_, _| {}).unwrap();
    // Scored from the confirmation round: the exhaustive pick, the tuned pick and the default
    // timed afresh.
    for r in &eval.results {
        assert!(
            !r.confirmation.is_empty() && r.confirmation.len() <= 3,
            "{}",
            r.name
        );
        assert_eq!(r.confirmation[0].variant, r.best.clone().unwrap());
        let t = r.tuned_vs_best.unwrap();
        assert!(t <= 1.0 && r.tuned_vs_best_unconfirmed.unwrap() <= 1.0);
        if r.best.as_deref() == Some(r.tuned.as_str()) {
            assert_eq!(t, 1.0, "{}", r.name);
        }
    }
    assert!(
        eval.exact_accuracy >= 0.99,
        "{kind:?}: {}",
        eval.exact_accuracy
    );
    assert!(eval.tuned_vs_exhaustive > 0.99);
    assert!(eval.default_vs_exhaustive < eval.tuned_vs_exhaustive);
}

#[test]
fn svm_learns_the_planted_spmv_rule() {
    learns_planted_rule(ModelKind::Svm);
}

#[test]
fn tree_nearest_and_neighbours_learn_the_planted_spmv_rule() {
    learns_planted_rule(ModelKind::Tree);
    learns_planted_rule(ModelKind::Nearest);
    learns_planted_rule(ModelKind::Neighbours);
}

fn reduce_inputs(sizes: &[usize]) -> Vec<TuneInput> {
    sizes
        .iter()
        .map(|&n| TuneInput::sized(App::Reduce, n).unwrap())
        .collect()
}

fn reduce_store(backend: &SimulatedBackend) -> TuningStore {
    let sizes: Vec<usize> = (0..28)
        .map(|i| (2f64.powf(6.0 + i as f64 * 0.55)) as usize)
        .collect();
    let features = App::Reduce.workload();
    tune(
        backend,
        &features,
        &reduce_inputs(&sizes),
        &quick(),
        &mut |_| {},
    )
    .unwrap()
}

#[test]
fn reduce_learns_the_size_thresholds() {
    let backend = SimulatedBackend::sized("reduce");
    let store = reduce_store(&backend);
    let mut tuned = Tuned::from_store(&App::Reduce.workload(), store, &backend);
    tuned.print_warnings = false;
    for (n, want) in [
        (300, "sequential"),
        (3000, "sequential"),
        (60_000, "tiled"),
        (300_000, "tiled"),
        (3_000_000, "blocked"),
    ] {
        let s = tuned
            .select(&TuneInput::sized(App::Reduce, n).unwrap())
            .unwrap();
        assert_eq!(s.variant, format!("sim/reduce/{want}"), "n = {n}");
        assert!(s.from_model);
    }
    // Beyond the training range: still an answer, with a warning naming the feature.
    let s = tuned
        .select(&TuneInput::sized(App::Reduce, 20_000_000).unwrap())
        .unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("elements") && w.contains("outside the training range")),
        "{:?}",
        s.warnings
    );
    // A later input outside the range: printed no more (once per feature), still returned.
    let again = tuned
        .select(&TuneInput::sized(App::Reduce, 30_000_000).unwrap())
        .unwrap();
    assert!(
        again
            .warnings
            .iter()
            .any(|w| w.contains("elements = 30000000")),
        "{again:?}"
    );
}

#[test]
fn store_round_trips_and_loads() {
    let backend = SimulatedBackend::sized("reduce");
    let store = reduce_store(&backend);
    let dir = tmp("roundtrip");
    let path = dir.join("nested/reduce.json");
    store.save(&path).unwrap();
    assert_eq!(TuningStore::load(&path).unwrap(), store);
    // No temporary file is left behind.
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
    // Every measurement is kept.
    assert!(store.inputs.iter().all(|r| r.measurements.len() == 3));
    let tuned = Tuned::load_from(&path, &App::Reduce.workload(), &backend);
    assert!(tuned.warning().is_none());
    let s = tuned
        .select(&TuneInput::sized(App::Reduce, 500).unwrap())
        .unwrap();
    assert_eq!(s.variant, "sim/reduce/sequential");
    assert!(s.from_model);
}

fn falls_back(path: &std::path::Path, app: App, backend: &dyn TuningBackend, expect: &str) {
    let tuned = Tuned::load_from(path, &app.workload(), backend);
    let w = tuned.warning().expect("a warning").to_string();
    assert!(w.contains(expect), "warning `{w}` lacks `{expect}`");
    let input = TuneInput::sized(app, 500).unwrap();
    let s = tuned.select(&input).unwrap();
    assert!(!s.from_model);
    assert_eq!(s.variant, backend.default_variant(&input).unwrap());
    assert!(!s.warnings.is_empty());
}

#[test]
fn schema_mismatch_corrupt_and_missing_stores_fall_back_to_the_default() {
    let backend = SimulatedBackend::sized("reduce");
    let store = reduce_store(&backend);
    let dir = tmp("bad");
    let path = dir.join("reduce.json");
    store.save(&path).unwrap();

    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["schema_version"] = 999.into();
    let other = dir.join("schema.json");
    std::fs::write(&other, v.to_string()).unwrap();
    falls_back(&other, App::Reduce, &backend, "schema version 999");

    let text = std::fs::read_to_string(&path).unwrap();
    let corrupt = dir.join("corrupt.json");
    std::fs::write(&corrupt, &text[..text.len() / 2]).unwrap();
    falls_back(&corrupt, App::Reduce, &backend, "corrupt tuning store");

    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["model"]["classifier"] = serde_json::json!({"kind": "oracle"});
    let bad_model = dir.join("bad_model.json");
    std::fs::write(&bad_model, v.to_string()).unwrap();
    falls_back(&bad_model, App::Reduce, &backend, "corrupt tuning store");

    falls_back(
        &dir.join("missing.json"),
        App::Reduce,
        &backend,
        "cannot read",
    );

    // A store for another app.
    let scan = SimulatedBackend::sized("scan");
    falls_back(&path, App::Scan, &scan, "tuned for `reduce`, not `scan`");
}

/// A user's workload, tuned through the open API: a dot product on the sized planted rule.
fn dot_workload() -> Workload {
    Workload::new("dot").with_unit("GFLOP/s", 1e-9)
}

fn dot_input(w: &Workload, n: usize) -> TuneInput {
    use surge::prelude::*;
    let x = Seq::input("x", vec![1.5f64; n]).unwrap();
    let y = Seq::input("y", vec![2.0f64; n]).unwrap();
    let p = map(|(a, b): (Scalar<f64>, Scalar<f64>)| a * b, (&x, &y)).unwrap();
    let c = Computation::new(&reduce(add, &p).unwrap()).unwrap();
    w.input(format!("n={n}"), c).unwrap().with_data(n)
}

#[test]
fn a_user_workload_is_tuned_stored_and_selected_without_an_app() {
    // The inferred features by default; here the user's own alone, from the data attached.
    assert_eq!(
        dot_workload().features().names(),
        [
            "length",
            "aspect_ratio",
            "avg_row_length",
            "elements",
            "inner_aspect_ratio",
            "inner_avg_row_length"
        ]
    );
    let w = dot_workload().with_features(FeatureSet::default().with_feature("n", true, |i| {
        i.data::<usize>()
            .map(|n| *n as f64)
            .ok_or_else(|| surge::SurgeError::Usage("no size attached".into()))
    }));
    let backend = SimulatedBackend::sized("dot");
    let sizes: Vec<usize> = (0..28)
        .map(|i| (2f64.powf(6.0 + i as f64 * 0.55)) as usize)
        .collect();
    let inputs: Vec<TuneInput> = sizes.iter().map(|&n| dot_input(&w, n)).collect();
    // Work defaults to the inferred element count, which the sized rule reads.
    assert_eq!(inputs[3].work, sizes[3] as f64);
    let store = tune(&backend, &w, &inputs, &quick(), &mut |_| {}).unwrap();
    assert_eq!(store.key.computation, "dot");
    assert_eq!(store.key.structure, inputs[0].structure());
    assert_eq!(store.model.feature_names, ["n"]);
    let dir = tmp("dot");
    let path = dir.join("dot.json");
    store.save(&path).unwrap();
    let tuned = Tuned::open_from(&path, &w, &backend).unwrap();
    for (n, want) in [
        (300, "sequential"),
        (60_000, "tiled"),
        (1_600_000, "blocked"),
    ] {
        let s = tuned.select(&dot_input(&w, n)).unwrap();
        assert_eq!(s.variant, format!("sim/dot/{want}"), "n = {n}");
        assert!(s.from_model);
    }
}

#[test]
fn tuning_refuses_inputs_of_another_workload_or_structure() {
    let w = dot_workload();
    let backend = SimulatedBackend::sized("dot");
    let mut inputs: Vec<TuneInput> = [100, 1000].iter().map(|&n| dot_input(&w, n)).collect();
    inputs.push(TuneInput::sized(App::Reduce, 1000).unwrap());
    let e = tune(&backend, &w, &inputs, &quick(), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("input `n=1000` is an input of `reduce`, not of `dot`"),
        "{e}"
    );
    // Same name, another program: a sum of squares is not a dot product.
    use surge::prelude::*;
    let x = Seq::input("x", vec![1.0f64; 50]).unwrap();
    let sq = map(|a: Scalar<f64>| a.clone() * a, &x).unwrap();
    let other = w
        .input(
            "squares",
            Computation::new(&reduce(add, &sq).unwrap()).unwrap(),
        )
        .unwrap();
    inputs.pop();
    inputs.push(other);
    let e = tune(&backend, &w, &inputs, &quick(), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("input `squares` of `dot` is another computation than input `n=100`"),
        "{e}"
    );
}

#[test]
fn a_stale_store_is_refused_with_a_message_to_retune() {
    let w = dot_workload();
    let backend = SimulatedBackend::sized("dot");
    let inputs: Vec<TuneInput> = [100, 1000, 10_000, 100_000, 1_000_000]
        .iter()
        .map(|&n| dot_input(&w, n))
        .collect();
    let store = tune(&backend, &w, &inputs, &quick(), &mut |_| {}).unwrap();
    let dir = tmp("stale");
    let path = dir.join("dot.json");
    store.save(&path).unwrap();
    // The program changed since it was tuned: another structure under the same name.
    use surge::prelude::*;
    let x = Seq::input("x", vec![1.0f64; 500]).unwrap();
    let sq = map(|a: Scalar<f64>| a.clone() * a, &x).unwrap();
    let changed = w
        .input(
            "changed",
            Computation::new(&reduce(add, &sq).unwrap()).unwrap(),
        )
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let tuned = Tuned::open_from(&path, &w, &backend).unwrap();
    // Inputs of the tuned program of other sizes match (the first by its hash, the next by
    // comparison with the first), and after them the changed program still does not.
    assert_eq!(tuned.mismatch(&dot_input(&w, 777)), None);
    assert_eq!(tuned.mismatch(&dot_input(&w, 12)), None);
    let why = tuned.mismatch(&changed).expect("a mismatch");
    assert!(
        why.contains("structure changed") && why.contains("retune"),
        "{why}"
    );
    let mut lenient = Tuned::load_from(&path, &w, &backend);
    lenient.print_warnings = false;
    let s = lenient.select(&changed).unwrap();
    assert!(!s.from_model);
    assert!(s.warnings[0].contains("retune"), "{:?}", s.warnings);
    // Nothing was overwritten.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // A missing store is an error that says to tune first.
    let e = Tuned::open_from(&dir.join("none.json"), &w, &backend)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no tuning store for `dot`") && e.contains("tune it first"),
        "{e}"
    );
}

#[test]
fn a_changed_variant_set_falls_back_to_the_default() {
    let backend = SimulatedBackend::sized("reduce");
    let store = reduce_store(&backend);
    let more = SimulatedBackend::sized("reduce").with_failing_variant();
    let mut tuned = Tuned::from_store(&App::Reduce.workload(), store, &more);
    tuned.print_warnings = false;
    let s = tuned
        .select(&TuneInput::sized(App::Reduce, 300).unwrap())
        .unwrap();
    assert!(!s.from_model);
    assert_eq!(s.variant, "sim/reduce/tiled");
    assert!(s.warnings[0].contains("variant set"), "{:?}", s.warnings);
}

#[test]
fn a_failing_variant_is_recorded_and_skipped() {
    let backend = SimulatedBackend::sized("reduce").with_failing_variant();
    let store = reduce_store(&backend);
    assert_eq!(store.variants.len(), 4);
    for r in &store.inputs {
        let broken = r
            .measurements
            .iter()
            .find(|m| m.variant == "sim/reduce/broken")
            .expect("the broken variant was tried");
        match &broken.outcome {
            Outcome::Failed { reason } => assert!(reason.contains("simulated failure"), "{reason}"),
            Outcome::Ok { .. } => panic!("the broken variant cannot succeed"),
        }
        assert!(r.best.is_some());
    }
    assert!(!store.model.classes.iter().any(|c| c.contains("broken")));
}

/// A backend whose one variant takes longer than any sensible limit.
#[derive(Debug)]
struct Slow;
impl TuningBackend for Slow {
    fn platform(&self) -> String {
        "test:slow".into()
    }
    fn variants(&self, _: &TuneInput) -> surge::Result<Vec<String>> {
        Ok(vec!["fast".into(), "slow".into()])
    }
    fn run_once(&self, _: &TuneInput, v: &str) -> Result<Duration, String> {
        Ok(Duration::from_millis(if v == "slow" { 5000 } else { 1 }))
    }
    fn default_variant(&self, _: &TuneInput) -> surge::Result<String> {
        Ok("fast".into())
    }
}

#[test]
fn a_variant_over_the_time_limit_is_recorded_as_timed_out() {
    let opts = TuneOptions {
        training: TrainingConfig {
            warmup: 0,
            repetitions: 3,
            timeout: Duration::from_secs(1),
            ..TrainingConfig::default()
        },
        ..TuneOptions::default()
    };
    let inputs = reduce_inputs(&[100, 200]);
    let store = tune(&Slow, &App::Reduce.workload(), &inputs, &opts, &mut |_| {}).unwrap();
    let slow = &store.inputs[0].measurements[1];
    assert!(matches!(&slow.outcome, Outcome::Failed { reason } if reason.contains("timed out")));
    assert_eq!(store.inputs[0].best.as_deref(), Some("fast"));
}

#[test]
fn incremental_tuning_stops_by_iterations_and_by_accuracy() {
    let backend = SimulatedBackend::sparse("spmv");
    let features = App::Spmv.workload();
    let train = train_set();
    let opts = TuneOptions {
        incremental: Some(IncrementalStop {
            iterations: Some(4),
            accuracy: None,
        }),
        ..quick()
    };
    let mut iterations = 0;
    let store = tune(&backend, &features, &train, &opts, &mut |p| {
        if matches!(p, surge::tune::Progress::Iteration { .. }) {
            iterations += 1;
        }
    })
    .unwrap();
    // Seed: one input per variant (3), then 4 chosen by best-vs-second-best.
    assert_eq!(store.inputs.len(), 3 + 4);
    assert_eq!(iterations, 5);

    let opts = TuneOptions {
        incremental: Some(IncrementalStop {
            iterations: None,
            accuracy: Some(0.75),
        }),
        ..quick()
    };
    let store = tune(&backend, &features, &train, &opts, &mut |_| {}).unwrap();
    assert!(
        store.inputs.len() < train.len(),
        "stopped before labelling everything"
    );
    assert!(store.model.cv_accuracy.unwrap() >= 0.75);
    // The actively chosen inputs still teach the rule.
    let mut tuned = Tuned::from_store(&features, store, &backend);
    tuned.print_warnings = false;
    let eval = report::evaluate(
        &tuned,
        &backend,
        &test_set(),
        &quick().training,
        &mut |_, _| {},
    )
    .unwrap();
    assert!(
        eval.tuned_vs_exhaustive > 0.9,
        "{}",
        eval.tuned_vs_exhaustive
    );
}

#[test]
fn user_defined_features_and_cusp_features() {
    let m = matgen::power_law(400, 2, 1.5, 3);
    let input = TuneInput::spmv("pl", m.clone()).unwrap();
    let fs = App::Spmv.workload().with_feature("nnz", true, |i| {
        Ok(i.matrix.as_ref().map_or(0.0, |m| m.nnz() as f64))
    });
    let names = fs.features().names();
    let v = fs.features().evaluate(&input).unwrap();
    assert_eq!(v.values.len(), names.len());
    assert_eq!(v.group_seconds.len(), 3);
    let at = |n: &str| v.values[names.iter().position(|x| x == n).unwrap()];
    assert_eq!(at("nnz"), m.nnz() as f64);
    let c = surge::tune::features::CuspFeatures::of(&m);
    assert!((at("avg_nnz_per_row") - m.nnz() as f64 / 400.0).abs() < 1e-12);
    assert!(c.ell_fill_in >= 1.0 && c.dia_fill_in >= 1.0 && c.row_length_std_dev > 0.0);
    // The Laplacian: 5 diagonals, ELL pads only the boundary rows.
    let l = surge::tune::features::CuspFeatures::of(&matgen::laplacian_2d(10));
    assert!((l.dia_fill_in - 5.0 * 100.0 / 460.0).abs() < 1e-12, "{l:?}");
    // A failing feature names itself and the input.
    let bad = FeatureSet::default().with_feature("boom", false, |_| {
        Err(surge::SurgeError::Usage("no".into()))
    });
    let e = bad.evaluate(&input).unwrap_err().to_string();
    assert!(e.contains("boom") && e.contains("pl"), "{e}");
}

#[test]
fn near_ties_are_labelled_by_the_set_cover() {
    use surge::tune::Measurement;
    use surge::tune::store::InputRecord;
    let rec = |times: &[(&str, Option<f64>)]| InputRecord {
        name: "x".into(),
        features: vec![],
        feature_seconds: 0.0,
        measurements: times
            .iter()
            .map(|(v, t)| match t {
                Some(t) => Measurement::ok(*v, *t),
                None => Measurement::failed(*v, "no"),
            })
            .collect(),
        best: None,
        disturbance: Default::default(),
    };
    let records = vec![
        rec(&[("a", Some(1.00)), ("b", Some(1.01)), ("c", Some(2.0))]),
        rec(&[("a", Some(1.50)), ("b", Some(1.00)), ("c", Some(2.0))]),
        rec(&[("a", Some(1.02)), ("b", Some(1.00)), ("c", Some(0.5))]),
        rec(&[("a", None), ("b", None), ("c", None)]),
    ];
    // b is within 3 % of the best on two inputs, a on one: the cover is {b, c}, and each
    // input gets the faster of the two.
    let l = surge::tune::labels(&records, 0.03, 1);
    assert_eq!(
        l,
        vec![Some("b".into()), Some("b".into()), Some("c".into()), None]
    );
    // Without tolerance, the strict winners.
    let l = surge::tune::labels(&records, 0.0, 1);
    assert_eq!(
        l,
        vec![Some("a".into()), Some("b".into()), Some("c".into()), None]
    );
}

/// A backend that logs its runs and whose variant `lucky` is fast only for its first runs (as
/// if the machine had been quiet then): what the interleaved second round is for.
#[derive(Debug, Default)]
struct Drifting {
    log: std::sync::Mutex<Vec<String>>,
}
impl TuningBackend for Drifting {
    fn platform(&self) -> String {
        "test:drifting".into()
    }
    fn variants(&self, _: &TuneInput) -> surge::Result<Vec<String>> {
        Ok(vec!["steady".into(), "lucky".into(), "slow".into()])
    }
    fn run_once(&self, _: &TuneInput, v: &str) -> Result<Duration, String> {
        let mut log = self.log.lock().unwrap();
        let runs_before = log.iter().filter(|x| *x == v).count();
        log.push(v.to_string());
        Ok(Duration::from_micros(match v {
            "steady" => 100,
            "lucky" if runs_before < 40 => 90,
            "lucky" => 120,
            _ => 1000,
        }))
    }
    fn default_variant(&self, _: &TuneInput) -> surge::Result<String> {
        Ok("steady".into())
    }
}

#[test]
fn samples_are_batched_and_contenders_retimed_interleaved() {
    use surge::tune::training::measure_all;
    let input = TuneInput::sized(App::Reduce, 100).unwrap();
    let variants = Drifting::default().variants(&input).unwrap();
    // Batches: 1 ms samples of 100 µs runs are 10 runs each.
    let single = TrainingConfig {
        warmup: 1,
        repetitions: 3,
        min_sample_time: Duration::from_millis(1),
        retime_within: -1.0,
        ..TrainingConfig::default()
    };
    let b = Drifting::default();
    let ms = measure_all(&b, &input, &variants, &single, &[], &mut |_, _| {});
    let log = b.log.lock().unwrap().clone();
    assert_eq!(log.iter().filter(|v| *v == "steady").count(), 1 + 3 * 10);
    // 1 ms runs: one run per sample.
    assert_eq!(log.iter().filter(|v| *v == "slow").count(), 1 + 3);
    // Without a second round, the lucky first runs win.
    assert_eq!(surge::tune::training::best(&ms), Some("lucky"));
    assert!(ms.iter().all(|m| m.first_round_seconds.is_none()));

    // With it, the contenders (within 20 % of the best) are re-timed round-robin, and their
    // times come from that round alone: `steady` wins.
    let cfg = TrainingConfig {
        retime_within: 0.2,
        retime_rounds: 4,
        retime_max: 8,
        ..single
    };
    let b = Drifting::default();
    let ms = measure_all(&b, &input, &variants, &cfg, &[], &mut |_, _| {});
    assert_eq!(surge::tune::training::best(&ms), Some("steady"));
    let lucky = ms.iter().find(|m| m.variant == "lucky").unwrap();
    assert!((lucky.first_round_seconds.unwrap() - 90e-6).abs() < 1e-9);
    // Round two: lucky 120 µs, steady 100 µs; scaled by the median ratio of the rounds,
    // (90/120 + 100/100) / 2, back to round one's level.
    let steady = ms.iter().find(|m| m.variant == "steady").unwrap();
    assert!((lucky.round_scale.unwrap() - 0.875).abs() < 1e-9);
    assert!((lucky.seconds().unwrap() - 120e-6 * 0.875).abs() < 1e-12);
    assert!((steady.seconds().unwrap() - 100e-6 * 0.875).abs() < 1e-12);
    assert_eq!(
        ms.iter()
            .find(|m| m.variant == "slow")
            .unwrap()
            .first_round_seconds,
        None,
        "not a contender"
    );
    // Interleaved: after the first round, the two contenders alternate batch by batch.
    let log = b.log.lock().unwrap().clone();
    // First round: warm-up plus 3 samples; `lucky` runs 12 times per sample (90 µs runs).
    let first_round = (1 + 3 * 10) + (1 + 3 * 12) + (1 + 3);
    let second = &log[first_round..];
    // Second round: each contender warms up, then 4 samples.
    assert_eq!(second.len(), 2 + 4 * 10 + 4 * 12);
    let mut groups: Vec<&str> = Vec::new();
    for v in &second[2..] {
        if groups.last() != Some(&v.as_str()) {
            groups.push(v);
        }
    }
    assert!(groups.len() >= 5, "{groups:?}");
    // The slow variant is re-timed too when asked to (e.g. it is the tuned choice).
    let b = Drifting::default();
    let ms = measure_all(&b, &input, &variants, &cfg, &["slow"], &mut |_, _| {});
    assert!(
        ms.iter()
            .find(|m| m.variant == "slow")
            .unwrap()
            .first_round_seconds
            .is_some()
    );
}

#[test]
fn the_confirmation_round_times_the_picks_afresh() {
    use surge::tune::training::{best, confirm, measure_all};
    let input = TuneInput::sized(App::Reduce, 100).unwrap();
    let variants = Drifting::default().variants(&input).unwrap();
    let cfg = TrainingConfig {
        warmup: 1,
        repetitions: 3,
        min_sample_time: Duration::ZERO,
        retime_within: -1.0,
        ..TrainingConfig::default()
    };
    // The exhaustive round sees `lucky` at its lucky 90 µs...
    let b = Drifting::default();
    let ms = measure_all(&b, &input, &variants, &cfg, &[], &mut |_, _| {});
    assert_eq!(best(&ms), Some("lucky"));
    assert_eq!(ms[1].seconds(), Some(90e-6));
    // ...so a pick of `steady` would score 0.9 against it. Timed afresh, interleaved, the
    // pick is what it is now: 120 µs against steady's 100.
    for _ in 0..40 {
        b.run_once(&input, "lucky").unwrap();
    }
    let before = b.log.lock().unwrap().len();
    let c = confirm(&b, &input, &["lucky", "steady"], &cfg, 5);
    assert_eq!(c.len(), 2);
    assert_eq!(
        (c[0].variant.as_str(), c[0].seconds()),
        ("lucky", Some(120e-6))
    );
    assert_eq!(
        (c[1].variant.as_str(), c[1].seconds()),
        ("steady", Some(100e-6))
    );
    let log = b.log.lock().unwrap()[before..].to_vec();
    // One warm-up each, then five rotated rounds.
    assert_eq!(
        log,
        [
            "lucky", "steady", "lucky", "steady", "steady", "lucky", "lucky", "steady", "steady",
            "lucky", "lucky", "steady"
        ]
    );
    // A variant that fails (here: times out) is recorded with its reason, not dropped.
    let strict = TrainingConfig {
        timeout: Duration::from_micros(500),
        ..cfg
    };
    let c = confirm(&b, &input, &["steady", "slow"], &strict, 3);
    assert_eq!(c[0].seconds(), Some(100e-6));
    assert!(
        matches!(&c[1].outcome, surge::tune::training::Outcome::Failed { reason } if reason.contains("timed out")),
        "{:?}",
        c[1]
    );
}

/// A backend whose machine has 1000 s of CPU time stolen by the first reading after the first.
#[derive(Debug, Default)]
struct Stolen {
    reads: std::sync::atomic::AtomicUsize,
    runs: std::sync::atomic::AtomicUsize,
}
impl TuningBackend for Stolen {
    fn platform(&self) -> String {
        "test:stolen".into()
    }
    fn variants(&self, _: &TuneInput) -> surge::Result<Vec<String>> {
        Ok(vec!["a".into()])
    }
    fn run_once(&self, _: &TuneInput, _: &str) -> Result<Duration, String> {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Duration::from_micros(100))
    }
    fn default_variant(&self, _: &TuneInput) -> surge::Result<String> {
        Ok("a".into())
    }
    fn stolen(&self) -> Option<(Duration, usize)> {
        let r = self
            .reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some((Duration::from_secs(if r == 0 { 0 } else { 1000 }), 2))
    }
}

#[test]
fn a_measurement_during_steal_is_repeated_and_its_steal_recorded() {
    use std::sync::atomic::Ordering;
    use surge::tune::training::{guarded, measure_all};
    let input = TuneInput::sized(App::Reduce, 100).unwrap();
    let cfg = TrainingConfig::single_runs(1, 3, Duration::from_secs(10));
    let measure = |b: &Stolen, cfg: &TrainingConfig| {
        guarded(b, cfg, || {
            measure_all(b, &input, &["a".into()], cfg, &[], &mut |_, _| {})
        })
    };
    // Off (the single-runs configuration): measured once, the steal recorded.
    let b = Stolen::default();
    let (ms, d) = measure(&b, &cfg);
    assert_eq!((d.discarded, b.runs.load(Ordering::Relaxed)), (0, 4));
    assert!(d.steal.unwrap() > 1.0, "{d:?}");
    assert_eq!(ms[0].seconds(), Some(100e-6));
    // On: the first attempt is discarded, the second (no steal) kept.
    let on = TrainingConfig {
        max_steal: 0.02,
        steal_attempts: 3,
        ..cfg
    };
    let b = Stolen::default();
    let (_, d) = measure(&b, &on);
    assert_eq!((d.discarded, d.steal), (1, Some(0.0)));
    assert_eq!(b.runs.load(Ordering::Relaxed), 8);
    // A backend that cannot tell (the simulated one): measured once, steal unknown.
    let sim = SimulatedBackend::sized("reduce");
    let (_, d) = guarded(&sim, &on, || ());
    assert_eq!((d.discarded, d.steal), (0, None));
}

/// CPU time is counted in 10 ms ticks: a short window that reads a tick or two taken is not
/// judged disturbed however large the fraction, three ticks are.
#[test]
fn a_short_measurement_is_not_repeated_for_a_tick_or_two() {
    use surge::tune::training::{MIN_TAKEN, guarded};
    let cfg = TrainingConfig {
        max_steal: 0.10,
        steal_attempts: 3,
        ..quick().training
    };
    let run = |step: Duration| {
        // Every reading finds `step` more taken.
        let b = Disturbed::new(App::Reduce, move |r| step * r as u32);
        guarded(&b, &cfg, || std::thread::sleep(Duration::from_millis(2))).1
    };
    let d = run(Duration::from_millis(20));
    assert_eq!(d.discarded, 0, "{d:?}");
    assert!(
        d.steal.unwrap() > cfg.max_steal,
        "the fraction is still recorded: {d:?}"
    );
    assert_eq!(run(MIN_TAKEN).discarded, 2);
}

#[test]
fn the_labels_are_the_set_covers_classes() {
    // The simulated spmv store: the model's classes are exactly the cover's variants, few of
    // them, and the cover's bound is reported.
    let store = planted_spmv_store();
    let c = store
        .labelling
        .as_ref()
        .expect("the store records its labelling");
    let mut cover = c.variants.clone();
    cover.sort();
    assert_eq!(cover, store.model.classes);
    assert!(cover.len() <= 3);
    assert!(c.bound >= 1.0 / 1.03 && c.bound <= 1.0, "{}", c.bound);
    assert!((c.tolerance - 0.03).abs() < 1e-12);
    // Every training input's label is in the cover and within tolerance of its best.
    assert_eq!((c.min_inputs, c.uncovered), (2, 0));
    let labels = surge::tune::labels(&store.inputs, c.tolerance, c.min_inputs);
    for (r, l) in store.inputs.iter().zip(&labels) {
        let l = l.as_deref().unwrap();
        let t = |v: &str| {
            r.measurements
                .iter()
                .find(|m| m.variant == v)
                .and_then(|m| m.seconds())
                .unwrap()
        };
        let best = t(r.best.as_deref().unwrap());
        assert!(t(l) <= best * 1.03 * (1.0 + 1e-12), "{}: {l}", r.name);
    }
    // A store written before the labelling was recorded still loads.
    let d = tmp("old-store");
    let mut v = serde_json::to_value(&store).unwrap();
    v.as_object_mut().unwrap().remove("labelling");
    let p = d.join("old.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(TuningStore::load(&p).unwrap().labelling, None);
}

/// A backend where every run in a burst (runs 2 to 4 of the whole sequence, as if another
/// process took the core for a moment) is three times slower; `a` is 5% faster than `b`.
#[derive(Debug, Default)]
struct Bursty {
    runs: std::sync::Mutex<Vec<String>>,
}
impl TuningBackend for Bursty {
    fn platform(&self) -> String {
        "test:bursty".into()
    }
    fn variants(&self, _: &TuneInput) -> surge::Result<Vec<String>> {
        Ok(vec!["a".into(), "b".into()])
    }
    fn run_once(&self, _: &TuneInput, v: &str) -> Result<Duration, String> {
        let mut runs = self.runs.lock().unwrap();
        let n = runs.len();
        runs.push(v.to_string());
        let base = if v == "a" { 100 } else { 105 };
        Ok(Duration::from_micros(if (2..=4).contains(&n) {
            3 * base
        } else {
            base
        }))
    }
    fn default_variant(&self, _: &TuneInput) -> surge::Result<String> {
        Ok("a".into())
    }
}

#[test]
fn an_interleaved_first_round_spreads_a_load_burst_over_the_variants() {
    use surge::tune::training::{best, measure_all};
    let input = TuneInput::sized(App::Reduce, 100).unwrap();
    let back_to_back = TrainingConfig::single_runs(1, 5, Duration::from_secs(10));
    let interleaved = TrainingConfig {
        interleaved: true,
        ..back_to_back.clone()
    };
    // Back to back, the burst takes three of `a`'s five samples: its median is the burst's.
    let b = Bursty::default();
    let ms = measure_all(
        &b,
        &input,
        &["a".into(), "b".into()],
        &back_to_back,
        &[],
        &mut |_, _| {},
    );
    assert_eq!(best(&ms), Some("b"));
    // Interleaved (warm-ups, then passes a b, b a, ...), it takes one sample of `a` and two
    // of `b`, and the medians see through it.
    let b = Bursty::default();
    let mut steps = Vec::new();
    let ms = measure_all(
        &b,
        &input,
        &["a".into(), "b".into()],
        &interleaved,
        &[],
        &mut |_, v| steps.push(v.to_string()),
    );
    assert_eq!(best(&ms), Some("a"));
    assert_eq!(ms[0].seconds(), Some(100e-6));
    assert_eq!(ms[1].seconds(), Some(105e-6));
    let runs = b.runs.lock().unwrap().clone();
    assert_eq!(
        runs,
        ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a", "a", "b"]
    );
    // Every variant reported once, when its last sample is taken.
    assert_eq!(steps, ["a", "b"]);
}

/// A simulated backend whose reading `r` of the CPU time taken by others is `taken(r)`.
struct Disturbed {
    sim: SimulatedBackend,
    taken: Box<dyn Fn(usize) -> Duration>,
    reads: std::sync::atomic::AtomicUsize,
    runs: std::sync::atomic::AtomicUsize,
}

impl Disturbed {
    fn new(app: App, taken: impl Fn(usize) -> Duration + 'static) -> Disturbed {
        Disturbed {
            sim: if app == App::Spmv {
                SimulatedBackend::sparse("spmv")
            } else {
                SimulatedBackend::sized(app.name())
            },
            taken: Box::new(taken),
            reads: Default::default(),
            runs: Default::default(),
        }
    }
}
impl TuningBackend for Disturbed {
    fn platform(&self) -> String {
        self.sim.platform()
    }
    fn variants(&self, input: &TuneInput) -> surge::Result<Vec<String>> {
        self.sim.variants(input)
    }
    fn run_once(&self, input: &TuneInput, variant: &str) -> Result<Duration, String> {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.sim.run_once(input, variant)
    }
    fn default_variant(&self, input: &TuneInput) -> surge::Result<String> {
        self.sim.default_variant(input)
    }
    fn stolen(&self) -> Option<(Duration, usize)> {
        let r = self
            .reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(((self.taken)(r), 2))
    }
}

#[test]
fn a_burst_during_the_confirmation_alone_repeats_the_confirmation() {
    let features = App::Spmv.workload();
    let store = planted_spmv_store();
    let cfg = TrainingConfig {
        max_steal: 0.10,
        steal_attempts: 3,
        confirm_rounds: 3,
        ..quick().training
    };
    let input = &test_set()[..1];
    let evaluate = |burst: std::ops::Range<usize>| {
        // 1000 s during one stretch of readings only: a burst that a window around it does
        // not see (not monotonic, which a real counter is, so the enclosing window can be
        // kept undisturbed).
        let b = Disturbed::new(App::Spmv, move |r| {
            Duration::from_secs(if burst.contains(&r) { 1000 } else { 0 })
        });
        let mut tuned = Tuned::from_store(&features, store.clone(), &b);
        tuned.print_warnings = false;
        let e = report::evaluate(&tuned, &b, input, &cfg, &mut |_, _| {}).unwrap();
        let runs = b.runs.load(std::sync::atomic::Ordering::Relaxed);
        (
            e.results[0].disturbance,
            e.results[0].confirmation.len(),
            runs,
        )
    };
    // Readings: 0 before the input, 1 and 2 around the confirmation, 3 after the input.
    let (quiet, n, quiet_runs) = evaluate(0..0);
    assert_eq!((quiet.discarded, quiet.steal), (0, Some(0.0)));
    assert!(n >= 1);
    // A burst between readings 1 and 2 only: the confirmation is discarded and repeated
    // (readings 3 and 4), the exhaustive rounds are kept (reading 5 sees no steal).
    let (burst, n, burst_runs) = evaluate(2..3);
    assert_eq!((burst.discarded, burst.steal), (1, Some(0.0)), "{burst:?}");
    assert!(n >= 1);
    // One more confirmation (at most three variants), not a second pass over every variant.
    let extra = burst_runs - quiet_runs;
    assert!(
        extra > 0 && extra < quiet_runs / 2,
        "{extra} of {quiet_runs}"
    );
}
