//! Feature scaling: log where a feature is a size, then [-1, 1] over the training range.

use serde::{Deserialize, Serialize};

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
