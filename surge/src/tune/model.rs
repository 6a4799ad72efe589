//! The input-adaptive model: a multi-class classifier from scaled features to the best variant.
//!
//! Features are first log-scaled where they are sizes and then mapped to [-1, 1] with the
//! training minimum and maximum, as Nitro does, so no feature dominates the RBF distance.
//! The default classifier is an RBF-kernel SVM trained by linfa-svm (binary), combined
//! one-vs-one, with (C, gamma) chosen by stratified k-fold cross-validation; a decision tree
//! (linfa-trees) and a 1-nearest-neighbour classifier are the alternatives.

use super::tune_err;
use crate::Result;
use linfa::prelude::*;
use linfa_svm::Svm;
use linfa_trees::DecisionTree;
use ndarray::{Array1, Array2, ArrayView1};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Which classifier to train.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// RBF SVM, one-vs-one, cross-validated (C, gamma): Nitro's choice.
    #[default]
    Svm,
    /// A decision tree (readable, cheap to query).
    Tree,
    /// 1-nearest neighbour in scaled feature space.
    Nearest,
}

impl FromStr for ModelKind {
    type Err = crate::SurgeError;
    fn from_str(s: &str) -> Result<ModelKind> {
        match s {
            "svm" => Ok(ModelKind::Svm),
            "tree" => Ok(ModelKind::Tree),
            "nearest" | "nn" => Ok(ModelKind::Nearest),
            _ => Err(crate::SurgeError::Usage(format!(
                "unknown model `{s}`; choose svm, tree or nearest"
            ))),
        }
    }
}

/// The cross-validated parameter grid of the SVM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SvmSearch {
    pub c: Vec<f64>,
    pub gamma: Vec<f64>,
    pub folds: usize,
}

impl Default for SvmSearch {
    fn default() -> Self {
        SvmSearch {
            c: vec![1.0, 10.0, 100.0, 1000.0],
            gamma: vec![0.1, 0.5, 2.0, 8.0],
            folds: 4,
        }
    }
}

/// Log and [-1, 1] scaling of raw feature values, fitted on the training set; values outside
/// the training range are clamped to it (and warned about by the selection).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaler {
    pub log: Vec<bool>,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
}

impl Scaler {
    fn pre(log: bool, v: f64) -> f64 {
        // Floored so a feature that is 0 where it does not apply stays finite.
        if log { v.max(1e-6).log2() } else { v }
    }

    pub fn fit(rows: &[Vec<f64>], log: &[bool]) -> Scaler {
        let d = log.len();
        let mut min = vec![f64::INFINITY; d];
        let mut max = vec![f64::NEG_INFINITY; d];
        for r in rows {
            for j in 0..d {
                let v = Scaler::pre(log[j], r[j]);
                min[j] = min[j].min(v);
                max[j] = max[j].max(v);
            }
        }
        Scaler {
            log: log.to_vec(),
            min,
            max,
        }
    }

    /// Scales `raw` into `out` (same length).
    pub fn transform_into(&self, raw: &[f64], out: &mut [f64]) {
        for j in 0..self.log.len() {
            let v = Scaler::pre(self.log[j], raw[j]);
            let span = self.max[j] - self.min[j];
            // Clamped: an RBF kernel far outside the training data sees no support vector and
            // answers arbitrarily; at the edge it answers like the most extreme training inputs.
            out[j] = if span > 0.0 {
                (2.0 * (v - self.min[j]) / span - 1.0).clamp(-1.0, 1.0)
            } else {
                0.0
            };
        }
    }

    pub fn transform(&self, raw: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.log.len()];
        self.transform_into(raw, &mut out);
        out
    }
}

/// One binary SVM of the one-vs-one ensemble: `true` (decision ≥ 0) means class `a`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SvmPair {
    pub a: usize,
    pub b: usize,
    pub svm: Svm<f64, bool>,
}

/// A fitted classifier over scaled features, predicting class indices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Classifier {
    /// Every training input had the same winner.
    Constant { class: usize },
    Svm {
        c: f64,
        gamma: f64,
        classes: usize,
        pairs: Vec<SvmPair>,
    },
    Tree {
        tree: DecisionTree<f64, usize>,
        classes: usize,
    },
    Nearest {
        points: Vec<Vec<f64>>,
        labels: Vec<usize>,
        classes: usize,
    },
}

/// A trained model: classes (variant ids), feature scaling, classifier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub kind: ModelKind,
    /// Variant ids, indexed by class.
    pub classes: Vec<String>,
    pub feature_names: Vec<String>,
    pub scaler: Scaler,
    /// The raw training range of every feature, for out-of-range warnings at run time.
    pub raw_range: Vec<(f64, f64)>,
    pub classifier: Classifier,
    /// Cross-validated accuracy of the chosen parameters (None with too few inputs).
    pub cv_accuracy: Option<f64>,
}

fn catch<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    // linfa asserts on some degenerate data; a tuning run must report that, not abort.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(tune_err(format!("{what}: the trainer panicked"))))
}

impl Classifier {
    fn fit(
        kind: ModelKind,
        x: &Array2<f64>,
        y: &[usize],
        classes: usize,
        params: (f64, f64),
    ) -> Result<Classifier> {
        let present: std::collections::BTreeSet<usize> = y.iter().copied().collect();
        if present.len() == 1 {
            return Ok(Classifier::Constant { class: y[0] });
        }
        match kind {
            ModelKind::Svm => {
                let (c, gamma) = params;
                let present: Vec<usize> = present.into_iter().collect();
                let mut pairs = Vec::new();
                for (i, &a) in present.iter().enumerate() {
                    for &b in &present[i + 1..] {
                        let rows: Vec<usize> =
                            (0..y.len()).filter(|&r| y[r] == a || y[r] == b).collect();
                        let xs = x.select(ndarray::Axis(0), &rows);
                        let ys: Array1<bool> = rows.iter().map(|&r| y[r] == a).collect();
                        let ds = Dataset::new(xs, ys);
                        let svm = catch("svm", || {
                            Svm::<f64, bool>::params()
                                .gaussian_kernel(1.0 / gamma)
                                .pos_neg_weights(c, c)
                                .fit(&ds)
                                .map_err(|e| tune_err(format!("svm (C={c}, gamma={gamma}): {e}")))
                        })?;
                        pairs.push(SvmPair { a, b, svm });
                    }
                }
                Ok(Classifier::Svm {
                    c,
                    gamma,
                    classes,
                    pairs,
                })
            }
            ModelKind::Tree => {
                let ds = Dataset::new(x.clone(), y.iter().copied().collect::<Array1<usize>>());
                let tree = catch("decision tree", || {
                    DecisionTree::params()
                        .max_depth(Some(12))
                        .fit(&ds)
                        .map_err(|e| tune_err(format!("decision tree: {e}")))
                })?;
                Ok(Classifier::Tree { tree, classes })
            }
            ModelKind::Nearest => Ok(Classifier::Nearest {
                points: x.outer_iter().map(|r| r.to_vec()).collect(),
                labels: y.to_vec(),
                classes,
            }),
        }
    }

    /// The predicted class alone: what run-time selection needs. No allocation for up to
    /// [`STACK_CLASSES`] classes (the votes live on the stack); the same answer as
    /// [`scores`](Self::scores).
    pub fn predict(&self, x: &[f64]) -> usize {
        match self {
            Classifier::Constant { class } => *class,
            Classifier::Svm { classes, pairs, .. } if *classes <= STACK_CLASSES => {
                let view = ArrayView1::from(x);
                let mut votes = [0u32; STACK_CLASSES];
                let mut conf = [0.0f64; STACK_CLASSES];
                let mut seen = [0u32; STACK_CLASSES];
                for p in pairs {
                    let dv = p.svm.weighted_sum(&view) - p.svm.rho;
                    let pa = 1.0 / (1.0 + (-dv).exp());
                    if dv >= 0.0 {
                        votes[p.a] += 1;
                    } else {
                        votes[p.b] += 1;
                    }
                    conf[p.a] += pa;
                    conf[p.b] += 1.0 - pa;
                    seen[p.a] += 1;
                    seen[p.b] += 1;
                }
                pick_vote(&votes[..*classes], &mut conf[..*classes], &seen[..*classes])
            }
            Classifier::Nearest {
                points,
                labels,
                classes,
            } if *classes <= STACK_CLASSES => {
                let mut best = (f64::INFINITY, 0usize);
                for (p, &l) in points.iter().zip(labels) {
                    let d: f64 = p.iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum();
                    // Strictly closer, or as close with a smaller class (as `scores`).
                    if d < best.0 || (d == best.0 && l < best.1) {
                        best = (d, l);
                    }
                }
                best.1
            }
            _ => self.scores(x).0,
        }
    }

    /// Per-class confidence in [0, 1] (the best-vs-second-best margin of active learning uses
    /// its two largest entries) and the predicted class.
    pub fn scores(&self, x: &[f64]) -> (usize, Vec<f64>) {
        match self {
            Classifier::Constant { class } => {
                let mut s = vec![0.0; class + 1];
                s[*class] = 1.0;
                (*class, s)
            }
            Classifier::Svm { classes, pairs, .. } => {
                let view = ArrayView1::from(x);
                let mut votes = vec![0u32; *classes];
                let mut conf = vec![0.0f64; *classes];
                let mut seen = vec![0u32; *classes];
                for p in pairs {
                    let dv = p.svm.weighted_sum(&view) - p.svm.rho;
                    let pa = 1.0 / (1.0 + (-dv).exp());
                    if dv >= 0.0 {
                        votes[p.a] += 1;
                    } else {
                        votes[p.b] += 1;
                    }
                    conf[p.a] += pa;
                    conf[p.b] += 1.0 - pa;
                    seen[p.a] += 1;
                    seen[p.b] += 1;
                }
                let best = pick_vote(&votes, &mut conf, &seen);
                (best, conf)
            }
            Classifier::Tree { tree, classes } => {
                let row = Array2::from_shape_vec((1, x.len()), x.to_vec())
                    .expect("one row of the model's feature count");
                let k = tree.predict(&row)[0];
                let mut s = vec![0.0; *classes];
                if k < s.len() {
                    s[k] = 1.0;
                }
                (k, s)
            }
            Classifier::Nearest {
                points,
                labels,
                classes,
            } => {
                let mut dmin = vec![f64::INFINITY; *classes];
                for (p, &l) in points.iter().zip(labels) {
                    let d: f64 = p.iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum();
                    dmin[l] = dmin[l].min(d);
                }
                let best = (0..*classes)
                    .min_by(|&i, &j| dmin[i].total_cmp(&dmin[j]))
                    .unwrap_or(0);
                let w: Vec<f64> = dmin.iter().map(|d| (-d.sqrt()).exp()).collect();
                let sum: f64 = w.iter().sum::<f64>().max(f64::MIN_POSITIVE);
                (best, w.iter().map(|v| v / sum).collect())
            }
        }
    }
}

/// Classes up to which [`Classifier::predict`] keeps its per-class tallies on the stack.
pub const STACK_CLASSES: usize = 64;

/// One-vs-one voting: most votes, then the higher mean pairwise confidence, then the smaller
/// class. Turns `conf` from sums into means.
fn pick_vote(votes: &[u32], conf: &mut [f64], seen: &[u32]) -> usize {
    for k in 0..conf.len() {
        if seen[k] > 0 {
            conf[k] /= seen[k] as f64;
        }
    }
    (0..votes.len())
        .max_by(|&i, &j| {
            votes[i]
                .cmp(&votes[j])
                .then(conf[i].total_cmp(&conf[j]))
                .then(j.cmp(&i))
        })
        .unwrap_or(0)
}

/// Stratified k-fold assignment: inputs sorted by label, dealt round-robin.
fn folds(y: &[usize], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..y.len()).collect();
    order.sort_by_key(|&i| (y[i], i));
    let mut fold = vec![0; y.len()];
    for (pos, &i) in order.iter().enumerate() {
        fold[i] = pos % k;
    }
    fold
}

fn cv_accuracy(
    kind: ModelKind,
    x: &Array2<f64>,
    y: &[usize],
    classes: usize,
    params: (f64, f64),
    k: usize,
) -> Result<f64> {
    let fold = folds(y, k);
    let mut correct = 0usize;
    for f in 0..k {
        let train: Vec<usize> = (0..y.len()).filter(|&i| fold[i] != f).collect();
        let test: Vec<usize> = (0..y.len()).filter(|&i| fold[i] == f).collect();
        if train.is_empty() || test.is_empty() {
            continue;
        }
        let xt = x.select(ndarray::Axis(0), &train);
        let yt: Vec<usize> = train.iter().map(|&i| y[i]).collect();
        let c = Classifier::fit(kind, &xt, &yt, classes, params)?;
        for &i in &test {
            let row = x.row(i).to_vec();
            if c.scores(&row).0 == y[i] {
                correct += 1;
            }
        }
    }
    Ok(correct as f64 / y.len() as f64)
}

/// The feature count of an SVM's support vectors. linfa keeps them private; their serialized
/// form is public, and this runs once per store load.
fn svm_dim(svm: &Svm<f64, bool>) -> Option<usize> {
    let v = serde_json::to_value(svm).ok()?;
    let h = v.get("sep_hyperplane")?;
    if let Some(w) = h.get("WeightedCombination") {
        return w.get("dim")?.get(1)?.as_u64().map(|x| x as usize);
    }
    let lin = h.get("Linear")?;
    lin.get("dim")?.get(0)?.as_u64().map(|x| x as usize)
}

impl Model {
    /// Trains on raw feature rows `x` labelled with the winning variant ids.
    pub fn train(
        kind: ModelKind,
        feature_names: &[String],
        log: &[bool],
        x: &[Vec<f64>],
        labels: &[String],
        search: &SvmSearch,
    ) -> Result<Model> {
        if x.is_empty() {
            return Err(tune_err(
                "no labelled training input (every variant failed on every input?)",
            ));
        }
        if x.len() != labels.len() || x.iter().any(|r| r.len() != feature_names.len()) {
            return Err(tune_err(format!(
                "training data shape: {} rows, {} labels, {} features expected",
                x.len(),
                labels.len(),
                feature_names.len()
            )));
        }
        let mut classes: Vec<String> = labels.to_vec();
        classes.sort();
        classes.dedup();
        let y: Vec<usize> = labels
            .iter()
            .map(|l| classes.binary_search(l).expect("label is a class"))
            .collect();
        let scaler = Scaler::fit(x, log);
        let d = feature_names.len();
        let mut xs = Array2::zeros((x.len(), d));
        for (i, r) in x.iter().enumerate() {
            let s = scaler.transform(r);
            xs.row_mut(i).assign(&ArrayView1::from(&s[..]));
        }
        let raw_range = (0..d)
            .map(|j| {
                x.iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                        (lo.min(r[j]), hi.max(r[j]))
                    })
            })
            .collect();
        let k = search.folds.max(2).min(x.len());
        let can_cv = x.len() >= 4 && classes.len() > 1;
        let mut params = (
            search.c.get(search.c.len() / 2).copied().unwrap_or(10.0),
            search
                .gamma
                .get(search.gamma.len() / 2)
                .copied()
                .unwrap_or(1.0),
        );
        let mut cv = None;
        if can_cv {
            let grid: Vec<(f64, f64)> = match kind {
                ModelKind::Svm => search
                    .c
                    .iter()
                    .flat_map(|&c| search.gamma.iter().map(move |&g| (c, g)))
                    .collect(),
                _ => vec![params],
            };
            let mut best: Option<((f64, f64), f64)> = None;
            for p in grid {
                let acc = cv_accuracy(kind, &xs, &y, classes.len(), p, k)?;
                // Strictly better only: ties keep the earlier (smaller C, wider kernel), the
                // smoother boundary.
                if best.is_none_or(|(_, a)| acc > a) {
                    best = Some((p, acc));
                }
            }
            if let Some((p, a)) = best {
                params = p;
                cv = Some(a);
            }
        }
        let classifier = Classifier::fit(kind, &xs, &y, classes.len(), params)?;
        Ok(Model {
            kind,
            classes,
            feature_names: feature_names.to_vec(),
            scaler,
            raw_range,
            classifier,
            cv_accuracy: cv,
        })
    }

    /// Checks the internal consistency of a model read from a file, so a hand-edited or
    /// damaged store is refused instead of panicking or answering wrongly at selection time.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let d = self.feature_names.len();
        let n = self.classes.len();
        if n == 0 {
            return Err("the model has no classes".into());
        }
        let s = &self.scaler;
        if s.log.len() != d || s.min.len() != d || s.max.len() != d || self.raw_range.len() != d {
            return Err(format!(
                "the model's scaling does not match its {d} features"
            ));
        }
        let in_range = |k: usize| k < n;
        let ok = match &self.classifier {
            Classifier::Constant { class } => in_range(*class),
            Classifier::Svm { classes, pairs, .. } => {
                *classes == n
                    && pairs
                        .iter()
                        .all(|p| in_range(p.a) && in_range(p.b) && svm_dim(&p.svm) == Some(d))
            }
            Classifier::Tree { tree, classes } => {
                *classes == n
                    && tree.features().iter().all(|&f| f < d)
                    && tree
                        .iter_nodes()
                        .filter_map(|node| node.prediction())
                        .all(in_range)
            }
            Classifier::Nearest {
                points,
                labels,
                classes,
            } => {
                *classes == n
                    && points.len() == labels.len()
                    && points.iter().all(|p| p.len() == d)
                    && labels.iter().all(|&l| in_range(l))
            }
        };
        if ok {
            Ok(())
        } else {
            Err("the model's classifier does not match its classes or features".into())
        }
    }

    /// The predicted variant id for raw features: scaling and the classifier, without
    /// allocating for up to 16 features (and [`STACK_CLASSES`] classes).
    pub fn predict(&self, raw: &[f64]) -> &str {
        const STACK_FEATURES: usize = 16;
        let d = self.scaler.log.len();
        let k = if d <= STACK_FEATURES {
            let mut x = [0.0f64; STACK_FEATURES];
            self.scaler.transform_into(raw, &mut x[..d]);
            self.classifier.predict(&x[..d])
        } else {
            self.classifier.predict(&self.scaler.transform(raw))
        };
        &self.classes[k.min(self.classes.len() - 1)]
    }

    /// Predicted class index and per-class confidence for raw features.
    pub fn scores(&self, raw: &[f64]) -> (usize, Vec<f64>) {
        let x = self.scaler.transform(raw);
        self.classifier.scores(&x)
    }

    /// Best-vs-second-best margin (small = uncertain), Nitro's active-learning criterion.
    pub fn margin(&self, raw: &[f64]) -> f64 {
        let (_, mut s) = self.scores(raw);
        s.sort_by(|a, b| b.total_cmp(a));
        s.first().copied().unwrap_or(1.0) - s.get(1).copied().unwrap_or(0.0)
    }

    /// Whether every feature lies in its training range (no allocation).
    pub fn in_range(&self, raw: &[f64]) -> bool {
        raw.iter()
            .zip(&self.raw_range)
            .all(|(v, (lo, hi))| *v >= *lo && *v <= *hi)
    }

    /// Names of the features outside the training range, with the value and range.
    pub fn out_of_range(&self, raw: &[f64]) -> Vec<String> {
        self.feature_names
            .iter()
            .zip(raw)
            .zip(&self.raw_range)
            .filter(|((_, v), (lo, hi))| **v < *lo || **v > *hi)
            .map(|((n, v), (lo, hi))| format!("{n} = {v} outside the training range [{lo}, {hi}]"))
            .collect()
    }
}
