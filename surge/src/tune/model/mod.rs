//! The input-adaptive model: a multi-class classifier from scaled features to the best variant.
//!
//! Features are first log-scaled where they are sizes and then mapped to [-1, 1] with the
//! training minimum and maximum, as Nitro does, so no feature dominates the RBF distance.
//! The default classifier is an RBF-kernel SVM trained by linfa-svm (binary), combined
//! one-vs-one, with (C, gamma) chosen by stratified k-fold cross-validation (Nitro's choice).
//! The alternatives: cost-aware k nearest neighbours ([`ModelKind::Neighbours`], the class
//! with the least measured slowdown over the k training inputs nearest to the query), a
//! decision tree (linfa-trees) and a 1-nearest-neighbour classifier.
//!
//! On a shared CPU the labels are noisy near-ties (cross-validated accuracy 0.2-0.7), which
//! the neighbours' measured-cost vote tolerates better on other runs' measurements: retrained
//! offline from ten real-CPU tuning runs (the `retrain` example), they reached 0.786 of
//! exhaustive on the other runs' test measurements against the SVM's 0.756, and a query costs
//! about 1 µs whatever the class count (the SVM's one-vs-one pairs: 1.5 µs at 6 classes, 5-6 µs
//! at 13-15). The SVM stays the default: on each run's own test set the two are level (0.858
//! and 0.864 of exhaustive, each ahead on some runs), and averaging over k ≥ 5 neighbours
//! smooths away a class that wins only on the few largest or smallest training inputs (the
//! simulated reduce thresholds, where the SVM extrapolates correctly).

mod classifier;
mod compiled;
mod neighbours;
mod scaler;
mod scratch;
mod svm;
mod validation;

pub use classifier::{Classifier, ModelKind};
pub use compiled::{CompiledSvm, SvmCache};
pub use scaler::Scaler;
pub use scratch::STACK_CLASSES;
pub use svm::SvmPair;
pub use validation::SvmSearch;

use super::tune_err;
use crate::Result;
use ndarray::{Array2, ArrayView1};
use serde::{Deserialize, Serialize};
use svm::svm_dim;

/// Measurements behind the labels: `(i, v)` → training input `i`'s best time over variant
/// `v`'s time there (1 = fastest, 0 = failed).
pub type Performance<'a> = &'a dyn Fn(usize, &str) -> f64;

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
    /// Cross-validated performance of the chosen parameters: the geometric mean over held-out
    /// training inputs of best time / the predicted class's time there (None without
    /// measurements or with too few inputs). When known, it is what the parameters were chosen by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_performance: Option<f64>,
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
        Model::train_measured(kind, feature_names, log, x, labels, search, None)
    }

    /// [`train`](Self::train), with the measurements behind the labels: `performance(i, v)` is
    /// training input `i`'s best time over variant `v`'s time there (1 = fastest, 0 = failed).
    /// The neighbours model votes with them and chooses its neighbour count by the
    /// cross-validated performance of its picks (the quantity `tuned_vs_exhaustive` measures);
    /// every model reports that performance. The SVM still chooses its parameters by accuracy
    /// (see the comment in the body for the measurement).
    pub fn train_measured(
        kind: ModelKind,
        feature_names: &[String],
        log: &[bool],
        x: &[Vec<f64>],
        labels: &[String],
        search: &SvmSearch,
        performance: Option<Performance<'_>>,
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
        let perf: Option<Vec<Vec<f64>>> = performance.map(|f| {
            (0..x.len())
                .map(|i| classes.iter().map(|c| f(i, c)).collect())
                .collect()
        });
        let validation::Chosen {
            params,
            cv_accuracy: cv,
            cv_performance: cv_perf,
        } = validation::choose_params(kind, search, &xs, &y, classes.len(), perf.as_deref())?;
        let classifier = Classifier::fit(kind, &xs, &y, classes.len(), params, perf.as_deref())?;
        Ok(Model {
            kind,
            classes,
            feature_names: feature_names.to_vec(),
            scaler,
            raw_range,
            classifier,
            cv_accuracy: cv,
            cv_performance: cv_perf,
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
            Classifier::Neighbours {
                k,
                points,
                log_performance,
                classes,
            } => {
                *classes == n
                    && *k >= 1
                    && !points.is_empty()
                    && points.len() == log_performance.len()
                    && points.iter().all(|p| p.len() == d)
                    && log_performance
                        .iter()
                        .all(|l| l.len() == n && l.iter().all(|v| v.is_finite()))
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

    /// Builds what queries use (the flattened SVM), so the first query is as cheap as the
    /// others. Idempotent; queries build it themselves when it was not called.
    pub fn prepare(&self) {
        if let Classifier::Svm {
            pairs, compiled, ..
        } = &self.classifier
        {
            compiled.get(pairs);
        }
    }

    /// For an SVM: the binary classifiers and the distinct support vectors a query evaluates
    /// (its cost), if the flattened form applies.
    pub fn svm_cost(&self) -> Option<(usize, usize)> {
        match &self.classifier {
            Classifier::Svm {
                pairs, compiled, ..
            } => compiled
                .get(pairs)
                .map(|c| (pairs.len(), c.support_vectors())),
            _ => None,
        }
    }

    /// The predicted class by linfa's own evaluation of every pair (no flattened SVM): what
    /// [`predict`](Self::predict) must agree with.
    pub fn predict_unflattened(&self, raw: &[f64]) -> usize {
        self.classifier.scores(&self.scaler.transform(raw)).0
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
