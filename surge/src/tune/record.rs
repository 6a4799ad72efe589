//! What one training input's measurement produced: the record the tuning store keeps and the
//! class-pruning cover reads.

use super::training::{Disturbance, Measurement};
use serde::{Deserialize, Serialize};

/// Everything measured on one training input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRecord {
    pub name: String,
    pub features: Vec<f64>,
    pub feature_seconds: f64,
    pub measurements: Vec<Measurement>,
    /// The fastest successful variant (None if every variant failed; then not trained on).
    pub best: Option<String>,
    /// How disturbed the measurement was (steal by other guests, attempts discarded for it).
    #[serde(default)]
    pub disturbance: Disturbance,
}
