//! The one-vs-one SVM ensemble: one binary linfa SVM per pair of classes, and the voting that
//! combines their decision values into a class.

use linfa_svm::Svm;
use serde::{Deserialize, Serialize};

/// One binary SVM of the one-vs-one ensemble: `true` (decision ≥ 0) means class `a`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SvmPair {
    pub a: usize,
    pub b: usize,
    pub svm: Svm<f64, bool>,
}

/// One-vs-one voting: each pair `(a, b)`'s decision value gives a vote and a logistic
/// confidence to each of its two classes.
pub(super) fn tally(
    decisions: impl Iterator<Item = (usize, usize, f64)>,
    votes: &mut [u32],
    conf: &mut [f64],
    seen: &mut [u32],
) {
    for (a, b, dv) in decisions {
        let pa = 1.0 / (1.0 + (-dv).exp());
        if dv >= 0.0 {
            votes[a] += 1;
        } else {
            votes[b] += 1;
        }
        conf[a] += pa;
        conf[b] += 1.0 - pa;
        seen[a] += 1;
        seen[b] += 1;
    }
}

pub(super) fn pick_vote(votes: &[u32], conf: &mut [f64], seen: &[u32]) -> usize {
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

/// The feature count of an SVM's support vectors. linfa keeps them private; their serialized
/// form is public, and this runs once per store load.
pub(super) fn svm_dim(svm: &Svm<f64, bool>) -> Option<usize> {
    let v = serde_json::to_value(svm).ok()?;
    let h = v.get("sep_hyperplane")?;
    if let Some(w) = h.get("WeightedCombination") {
        return w.get("dim")?.get(1)?.as_u64().map(|x| x as usize);
    }
    let lin = h.get("Linear")?;
    lin.get("dim")?.get(0)?.as_u64().map(|x| x as usize)
}
