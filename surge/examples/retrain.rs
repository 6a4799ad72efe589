//! Offline re-evaluation of stored tuning runs: retrains the model from each tuning store's
//! measurements (with other labelling or model options) and scores it on each report's held-out
//! test measurements, without timing anything again. Scoring a store's model on the test
//! measurements of *other* runs too shows how much of a figure is the run's own noise.
//!
//! `cargo run --release -p surge --example retrain -- [--tolerance T] [--min N] [--model M]
//!  [--accuracy] [--k 5,8,12] [--folds F] [--smooth S] [--knn K [--all]] [-v]
//!  STORE.json REPORT.json [STORE.json REPORT.json ...]`
//!
//! - `--tolerance`, `--min`, `--model`: as `surge tune`'s `--tolerance`, `--min-class-inputs`,
//!   `--model`.
//! - `--accuracy`: train without the measurements (so cross-validation scores accuracy only;
//!   the SVM's parameters are chosen by accuracy either way).
//! - `--k`, `--folds`: the neighbour counts and folds cross-validated for `--model knn`.
//! - `--smooth S`: relabel each training input with the class of least summed slowdown over
//!   its S nearest training inputs before training (an experiment; it did not help).
//! - `--knn K`: answer test queries with the least summed slowdown over the K nearest training
//!   inputs directly (fixed K), among the classes, or among all variants with `--all`.
//! - `--drop a,b`: train and query without these features (by name).
//! - `--max N`: at most N classes (as `surge tune --max-classes`; default here 0, no cap).
//! - `--merge`: train one model on all the stores' training inputs together, each input's
//!   time per variant the geometric mean over the stores that measured it (the first store's
//!   variants and features), and score it on every report.
//! - `--bayes T`: pick the class of the best expected log performance under the SVM's class
//!   confidences raised to the power T and normalized, with a cost matrix from the training
//!   measurements (per label class, each class's mean log performance on its inputs). An
//!   experiment: the pairwise confidences are poor probabilities, and it did not help (0.70 at
//!   T = 1 up to 0.889 at T = 64, against 0.897 without, over seven runs).
//! - `--c 1,10`, `--gamma 0.1,0.5`: the SVM's parameter grid (default: `surge tune`'s).
//! - `-v`: list each own-run test input below 0.9 of its best.

use surge::tune::model::{Classifier, Model, ModelKind, Scaler, SvmSearch};
use surge::tune::store::InputRecord;
use surge::tune::{Cover, Measurement, TuningStore};

#[derive(Clone)]
struct Test {
    name: String,
    features: Vec<f64>,
    measurements: Vec<Measurement>,
}

fn best(ms: &[Measurement]) -> f64 {
    ms.iter()
        .filter_map(|m| m.seconds())
        .fold(f64::INFINITY, f64::min)
}

fn time(ms: &[Measurement], v: &str) -> Option<f64> {
    ms.iter().find(|m| m.variant == v).and_then(|m| m.seconds())
}

fn main() {
    let (opts, paths) = parse_args();
    let runs = load_runs(&paths);
    let all_tests: Vec<Vec<Test>> = runs
        .iter()
        .map(|r| r.1.iter().map(Test::clone).collect())
        .collect();
    let runs = if opts.merge { vec![merged(runs)] } else { runs };
    let mut scores = Scores::default();
    for (i, (store, _)) in runs.iter().enumerate() {
        evaluate_run(i, store, &opts, &all_tests, &mut scores);
    }
    print_summary(&opts, &scores);
}

/// The command-line options (see the module documentation).
struct Options {
    tol: f64,
    min: usize,
    kind: ModelKind,
    by_accuracy: bool,
    verbose: bool,
    smooth: usize,
    knn: usize,
    all_variants: bool,
    merge: bool,
    bayes: f64,
    max_classes: usize,
    drop: Vec<String>,
    search: SvmSearch,
}

/// Takes the options out of the command line; what remains are the STORE REPORT pairs.
fn parse_args() -> (Options, Vec<String>) {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str| -> Option<String> {
        let i = args.iter().position(|a| a == name)?;
        args.remove(i);
        if name.starts_with("--") && !matches!(name, "--accuracy" | "--all" | "--merge") {
            Some(args.remove(i))
        } else {
            Some(String::new())
        }
    };
    let tol: f64 = flag("--tolerance").map_or(0.03, |s| s.parse().unwrap());
    let min: usize = flag("--min").map_or(2, |s| s.parse().unwrap());
    let kind: ModelKind = flag("--model").map_or(ModelKind::Svm, |s| s.parse().unwrap());
    let by_accuracy = flag("--accuracy").is_some();
    let verbose = flag("-v").is_some();
    let smooth: usize = flag("--smooth").map_or(0, |s| s.parse().unwrap());
    let knn: usize = flag("--knn").map_or(0, |s| s.parse().unwrap());
    let all_variants = flag("--all").is_some();
    let merge = flag("--merge").is_some();
    let bayes: f64 = flag("--bayes").map_or(0.0, |s| s.parse().unwrap());
    let max_classes: usize = flag("--max").map_or(0, |s| s.parse().unwrap());
    let drop: Vec<String> =
        flag("--drop").map_or(Vec::new(), |s| s.split(',').map(String::from).collect());
    let mut search = SvmSearch::default();
    let folds = flag("--folds");
    if let Some(k) = flag("--k") {
        search.neighbours = k.split(',').map(|v| v.parse().unwrap()).collect();
    }
    if let Some(f) = folds {
        search.folds = f.parse().unwrap();
    }
    if let Some(c) = flag("--c") {
        search.c = c.split(',').map(|v| v.parse().unwrap()).collect();
    }
    if let Some(g) = flag("--gamma") {
        search.gamma = g.split(',').map(|v| v.parse().unwrap()).collect();
    }
    let opts = Options {
        tol,
        min,
        kind,
        by_accuracy,
        verbose,
        smooth,
        knn,
        all_variants,
        merge,
        bayes,
        max_classes,
        drop,
        search,
    };
    (opts, args)
}

/// Reads each STORE.json REPORT.json pair: the store and the report's test measurements.
fn load_runs(paths: &[String]) -> Vec<(TuningStore, Vec<Test>)> {
    paths
        .chunks(2)
        .map(|p| {
            let store: TuningStore =
                serde_json::from_str(&std::fs::read_to_string(&p[0]).unwrap()).unwrap();
            (store, load_tests(&p[1]))
        })
        .collect()
}

/// The held-out test measurements of a report.
fn load_tests(path: &str) -> Vec<Test> {
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    rep["evaluation"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Test {
            name: r["name"].as_str().unwrap().to_string(),
            features: serde_json::from_value(r["features"].clone()).unwrap(),
            measurements: serde_json::from_value(r["measurements"].clone()).unwrap(),
        })
        .collect()
}

/// The geometric means of tuned against exhaustive performance: on each run's own test
/// measurements (`diag`) and on the other runs' (`cross`).
#[derive(Default)]
struct Scores {
    diag: Vec<f64>,
    cross: Vec<f64>,
}

/// Retrains run `i`'s model from its store and scores it on every report's tests.
fn evaluate_run(
    i: usize,
    store: &TuningStore,
    opts: &Options,
    all_tests: &[Vec<Test>],
    scores: &mut Scores,
) {
    let cov = surge::tune::cover::cover_capped(&store.inputs, opts.tol, opts.min, opts.max_classes);
    let mut set = TrainingSet::new(store, &cov, opts);
    if opts.smooth > 0 {
        set.y = (0..set.x.len())
            .map(|i| set.choose(&set.near(&set.xs[i], opts.smooth)))
            .collect();
    }
    let t = std::time::Instant::now();
    let m = set.train(opts);
    let train_s = t.elapsed().as_secs_f64();
    let regret = regret_matrix(&m, &set);
    for (j, tests) in all_tests.iter().enumerate() {
        // A merged model was trained on every run: each report is its own.
        let own = i == j || opts.merge;
        let g = score_tests(opts, &set, &m, &regret, tests, own);
        if own {
            if let Classifier::Neighbours { k, .. } = &m.classifier {
                print!("k={k} ");
            }
            println!(
                "run {i}: classes {} cv acc {:.2} perf {:.3} bound {:.3} train {train_s:.2}s  tuned_vs_exhaustive {g:.3}",
                m.classes.len(),
                m.cv_accuracy.unwrap_or(f64::NAN),
                m.cv_performance.unwrap_or(f64::NAN),
                cov.bound,
            );
            scores.diag.push(g);
        } else {
            scores.cross.push(g);
        }
    }
}

/// A store's labelled training inputs with the kept (not dropped) features, raw and scaled.
struct TrainingSet<'a> {
    used: Vec<&'a InputRecord>,
    y: Vec<String>,
    keep: Vec<usize>,
    kept_names: Vec<String>,
    kept_log: Vec<bool>,
    x: Vec<Vec<f64>>,
    scaler: Scaler,
    xs: Vec<Vec<f64>>,
    /// The classes the nearest-neighbour picks choose among.
    cands: Vec<String>,
}

impl<'a> TrainingSet<'a> {
    fn new(store: &'a TuningStore, cov: &Cover, opts: &Options) -> Self {
        let (used, y): (Vec<&InputRecord>, Vec<String>) = store
            .inputs
            .iter()
            .zip(&cov.labels)
            .filter_map(|(r, l)| l.clone().map(|l| (r, l)))
            .unzip();
        let names = &store.model.feature_names;
        let keep: Vec<usize> = (0..names.len())
            .filter(|&j| !opts.drop.contains(&names[j]))
            .collect();
        let kept_names: Vec<String> = keep.iter().map(|&j| names[j].clone()).collect();
        let kept_log: Vec<bool> = keep.iter().map(|&j| store.model.scaler.log[j]).collect();
        let x: Vec<Vec<f64>> = used
            .iter()
            .map(|r| keep.iter().map(|&j| r.features[j]).collect())
            .collect();
        let scaler = Scaler::fit(&x, &kept_log);
        let xs: Vec<Vec<f64>> = x.iter().map(|r| scaler.transform(r)).collect();
        let cands: Vec<String> = if opts.all_variants {
            store.variants.clone()
        } else {
            cov.variants.clone()
        };
        TrainingSet {
            used,
            y,
            keep,
            kept_names,
            kept_log,
            x,
            scaler,
            xs,
            cands,
        }
    }

    /// The kept features of a full feature vector.
    fn project(&self, f: &[f64]) -> Vec<f64> {
        self.keep.iter().map(|&j| f[j]).collect()
    }

    /// Variant `v`'s performance on training input `i` (best time / its time; 0 if failed).
    fn perf(&self, i: usize, v: &str) -> f64 {
        let ms = &self.used[i].measurements;
        time(ms, v).map_or(0.0, |t| best(ms) / t)
    }

    /// The `k` training inputs nearest to the scaled query `q`.
    fn near(&self, q: &[f64], k: usize) -> Vec<usize> {
        let mut d: Vec<(f64, usize)> = self
            .xs
            .iter()
            .enumerate()
            .map(|(j, p)| {
                (
                    p.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum::<f64>(),
                    j,
                )
            })
            .collect();
        d.sort_by(|a, b| a.0.total_cmp(&b.0));
        d.iter().take(k).map(|p| p.1).collect()
    }

    /// The candidate of least summed log slowdown over the training inputs `nb`.
    fn choose(&self, nb: &[usize]) -> String {
        self.cands
            .iter()
            .max_by(|a, b| {
                let s = |v: &str| {
                    nb.iter()
                        .map(|&j| self.perf(j, v).max(1e-3).ln())
                        .sum::<f64>()
                };
                s(a).total_cmp(&s(b))
            })
            .unwrap()
            .clone()
    }

    fn train(&self, opts: &Options) -> Model {
        let perf = |i: usize, v: &str| self.perf(i, v);
        Model::train_measured(
            opts.kind,
            &self.kept_names,
            &self.kept_log,
            &self.x,
            &self.y,
            &opts.search,
            if opts.by_accuracy { None } else { Some(&perf) },
        )
        .unwrap()
    }
}

/// Cost matrix: per label class, the mean log performance of each class on its inputs.
fn regret_matrix(m: &Model, set: &TrainingSet<'_>) -> Vec<Vec<f64>> {
    let nc = m.classes.len();
    let mut regret = vec![vec![0.0f64; nc]; nc];
    let mut count = vec![0usize; nc];
    for (i, l) in set.y.iter().enumerate() {
        let a = m.classes.iter().position(|c| c == l).unwrap();
        count[a] += 1;
        for (b, c) in m.classes.iter().enumerate() {
            regret[a][b] += set.perf(i, c).max(1e-3).ln();
        }
    }
    for (row, n) in regret.iter_mut().zip(&count) {
        for r in row.iter_mut() {
            *r /= (*n).max(1) as f64;
        }
    }
    regret
}

/// The class of the best expected log performance under the model's confidences raised to
/// the power `power` (`--bayes`).
fn bayes_pick(m: &Model, regret: &[Vec<f64>], power: f64, raw: &[f64]) -> String {
    let nc = m.classes.len();
    let (_, conf) = m.scores(raw);
    let w: Vec<f64> = conf.iter().map(|c| c.max(1e-9).powf(power)).collect();
    let sum: f64 = w.iter().sum();
    let best = (0..nc)
        .max_by(|&x, &z| {
            let e = |c: usize| (0..nc).map(|a| w[a] / sum * regret[a][c]).sum::<f64>();
            e(x).total_cmp(&e(z))
        })
        .unwrap();
    m.classes[best].clone()
}

/// The variant picked for a test input's full feature vector.
fn pick(
    opts: &Options,
    set: &TrainingSet<'_>,
    m: &Model,
    regret: &[Vec<f64>],
    f: &[f64],
) -> String {
    if opts.knn > 0 {
        set.choose(&set.near(&set.scaler.transform(&set.project(f)), opts.knn))
    } else if opts.bayes > 0.0 {
        bayes_pick(m, regret, opts.bayes, &set.project(f))
    } else {
        m.predict(&set.project(f)).to_string()
    }
}

/// The geometric mean of the picks' performance on `tests`; with `-v`, lists each own-run
/// test input below 0.9 of its best.
fn score_tests(
    opts: &Options,
    set: &TrainingSet<'_>,
    m: &Model,
    regret: &[Vec<f64>],
    tests: &[Test],
    own: bool,
) -> f64 {
    let mut logs = 0.0;
    for t in tests {
        let pick = pick(opts, set, m, regret, &t.features);
        let p = time(&t.measurements, &pick).map_or(1e-3, |s| best(&t.measurements) / s);
        logs += p.ln();
        if opts.verbose && own && p < 0.9 {
            println!(
                "  {:28} {p:.3} {}",
                t.name,
                pick.rsplit('/').next().unwrap()
            );
        }
    }
    (logs / tests.len() as f64).exp()
}

fn print_summary(opts: &Options, scores: &Scores) {
    let Options {
        tol,
        min,
        smooth,
        knn,
        all_variants,
        kind,
        ..
    } = opts;
    let (diag, cross) = (&scores.diag, &scores.cross);
    let gm = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
    println!(
        "tol {tol} min {min} smooth {smooth} knn {knn} all {all_variants} {kind:?} {}: own test {:.3} (min {:.3}), other runs' tests {:.3}",
        if opts.by_accuracy {
            "by accuracy"
        } else {
            "by performance"
        },
        gm(diag),
        diag.iter().copied().fold(f64::INFINITY, f64::min),
        gm(cross)
    );
}

/// One store whose inputs are those of the first, each variant's time the geometric mean over
/// the stores that measured the input (by name); the first run's tests.
fn merged(runs: Vec<(TuningStore, Vec<Test>)>) -> (TuningStore, Vec<Test>) {
    use std::collections::HashMap;
    let mut it = runs.into_iter();
    let (mut first, tests) = it.next().expect("a store");
    let others: Vec<TuningStore> = it.map(|r| r.0).collect();
    for rec in &mut first.inputs {
        let mut logs: HashMap<String, (f64, usize)> = HashMap::new();
        for r in std::iter::once(&*rec).chain(
            others
                .iter()
                .flat_map(|s| s.inputs.iter().filter(|o| o.name == rec.name)),
        ) {
            for m in &r.measurements {
                if let Some(t) = m.seconds() {
                    let e = logs.entry(m.variant.clone()).or_insert((0.0, 0));
                    e.0 += t.ln();
                    e.1 += 1;
                }
            }
        }
        rec.measurements = rec
            .measurements
            .iter()
            .map(|m| match logs.get(&m.variant) {
                Some(&(l, n)) => Measurement::ok(m.variant.clone(), (l / n as f64).exp()),
                None => m.clone(),
            })
            .collect();
    }
    (first, tests)
}
