//! The fitted classifiers over scaled features (SVM, decision tree, 1-NN, cost-aware k-NN, or
//! a constant), their training and their queries.

use super::compiled::SvmCache;
use super::neighbours::{MAX_NEIGHBOURS, neighbours_predict, performance_floor};
use super::scratch::STACK_CLASSES;
use super::svm::{SvmPair, pick_vote, tally};
use crate::Result;
use crate::tune::tune_err;
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
    /// Least expected slowdown over the k nearest training inputs: the class whose measured
    /// performance (best time / its time) has the highest geometric mean over them, k
    /// cross-validated. It decides by what a choice costs, not by labels.
    Neighbours,
}

impl FromStr for ModelKind {
    type Err = crate::SurgeError;
    fn from_str(s: &str) -> Result<ModelKind> {
        match s {
            "svm" => Ok(ModelKind::Svm),
            "tree" => Ok(ModelKind::Tree),
            "nearest" | "nn" => Ok(ModelKind::Nearest),
            "knn" | "neighbours" | "neighbors" => Ok(ModelKind::Neighbours),
            _ => Err(crate::SurgeError::Usage(format!(
                "unknown model `{s}`; choose svm, tree, nearest or knn"
            ))),
        }
    }
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
        /// The pairs flattened for queries (derived from `pairs` on first use, not stored).
        #[serde(skip)]
        compiled: SvmCache,
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
    /// Per training point, the natural log of each class's measured performance there (floored
    /// at 1e-3, so a failure counts as a 1000× slowdown).
    Neighbours {
        k: usize,
        points: Vec<Vec<f64>>,
        log_performance: Vec<Vec<f64>>,
        classes: usize,
    },
}

fn catch<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    // linfa asserts on some degenerate data; a tuning run must report that, not abort.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(tune_err(format!("{what}: the trainer panicked"))))
}

impl Classifier {
    /// `perf`: per row of `x`, per class, best time / the class's time (for
    /// [`ModelKind::Neighbours`]; without it, each row's label counts as its only good class).
    pub(super) fn fit(
        kind: ModelKind,
        x: &Array2<f64>,
        y: &[usize],
        classes: usize,
        params: (f64, f64),
        perf: Option<&[Vec<f64>]>,
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
                    compiled: SvmCache::default(),
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
            ModelKind::Neighbours => Ok(Classifier::Neighbours {
                // The neighbour count rides in the first parameter of the grid.
                k: (params.0.round() as usize).clamp(1, MAX_NEIGHBOURS),
                points: x.outer_iter().map(|r| r.to_vec()).collect(),
                log_performance: (0..y.len())
                    .map(|i| {
                        (0..classes)
                            .map(|c| match perf {
                                Some(p) => p[i].get(c).copied().unwrap_or(0.0),
                                None if c == y[i] => 1.0,
                                None => 0.5,
                            })
                            .map(|q| performance_floor(q).ln())
                            .collect()
                    })
                    .collect(),
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
            Classifier::Svm {
                classes,
                pairs,
                compiled,
                ..
            } if *classes <= STACK_CLASSES => {
                if let Some(k) = compiled.get(pairs).and_then(|f| f.predict(x, *classes)) {
                    return k;
                }
                let view = ArrayView1::from(x);
                let mut votes = [0u32; STACK_CLASSES];
                let mut conf = [0.0f64; STACK_CLASSES];
                let mut seen = [0u32; STACK_CLASSES];
                let decisions = pairs
                    .iter()
                    .map(|p| (p.a, p.b, p.svm.weighted_sum(&view) - p.svm.rho));
                tally(decisions, &mut votes, &mut conf, &mut seen);
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
            Classifier::Neighbours {
                k,
                points,
                log_performance,
                classes,
            } => neighbours_predict(*k, points, log_performance, *classes, x),
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
                let decisions = pairs
                    .iter()
                    .map(|p| (p.a, p.b, p.svm.weighted_sum(&view) - p.svm.rho));
                tally(decisions, &mut votes, &mut conf, &mut seen);
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
            Classifier::Neighbours {
                k,
                points,
                log_performance,
                classes,
            } => {
                let best = neighbours_predict(*k, points, log_performance, *classes, x);
                // Confidence: each class's geometric-mean performance over the k nearest,
                // normalised to sum to 1.
                let mut d: Vec<(f64, usize)> = points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum(), i))
                    .collect();
                d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let near = &d[..(*k).clamp(1, MAX_NEIGHBOURS).min(d.len())];
                let w: Vec<f64> = (0..*classes)
                    .map(|c| {
                        let s: f64 = near.iter().map(|&(_, i)| log_performance[i][c]).sum();
                        (s / near.len().max(1) as f64).exp()
                    })
                    .collect();
                let sum: f64 = w.iter().sum::<f64>().max(f64::MIN_POSITIVE);
                (best, w.iter().map(|v| v / sum).collect())
            }
        }
    }
}
