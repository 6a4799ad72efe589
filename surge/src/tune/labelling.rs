//! Labelling training inputs (every variant timed, the winner named, the near-tie cover's
//! class) and training the model on the labelled records.

use super::features::{FeatureSet, FeatureValues};
use super::model::Model;
use super::options::{Progress, TuneOptions};
use super::record::InputRecord;
use super::training::{self, TrainingConfig};
use super::{TuneInput, TuningBackend};
use crate::Result;

/// The class each labelled input is trained with: the fastest variant of the near-tie set
/// cover (see [`cover`](super::cover)) on it.
pub fn labels(records: &[InputRecord], tolerance: f64, min_inputs: usize) -> Vec<Option<String>> {
    super::cover::cover(records, tolerance, min_inputs).labels
}

/// Times every variant on an input and names the winner.
pub(crate) fn label(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    features: &FeatureValues,
    variants: &[String],
    cfg: &TrainingConfig,
    progress: &mut dyn FnMut(Progress<'_>),
) -> InputRecord {
    let (measurements, disturbance) = training::guarded(backend, cfg, || {
        training::measure_all(backend, input, variants, cfg, &[], &mut |i, v| {
            progress(Progress::Measured {
                input: i,
                variant: v,
            })
        })
    });
    let best = training::best(&measurements).map(String::from);
    InputRecord {
        name: input.name.clone(),
        features: features.values.clone(),
        feature_seconds: features.seconds,
        measurements,
        best,
        disturbance,
    }
}

/// Trains a model from labelled records (inputs where every variant failed are skipped).
pub(crate) fn train_model(
    features: &FeatureSet,
    records: &[InputRecord],
    opts: &TuneOptions,
) -> Result<Model> {
    let (used, y): (Vec<&InputRecord>, Vec<String>) = records
        .iter()
        .zip(opts.cover(records).labels)
        .filter_map(|(r, l)| l.map(|l| (r, l)))
        .unzip();
    let x: Vec<Vec<f64>> = used.iter().map(|r| r.features.clone()).collect();
    // best time / variant time per labelled input, for the cost-aware parameter search.
    let performance = |i: usize, v: &str| {
        let r = used[i];
        let best = r
            .measurements
            .iter()
            .filter_map(|m| m.seconds())
            .fold(f64::INFINITY, f64::min);
        r.measurements
            .iter()
            .find(|m| m.variant == v)
            .and_then(|m| m.seconds())
            .map_or(0.0, |t| best / t)
    };
    Model::train_measured(
        opts.model,
        &features.names(),
        &features.log_scaled(),
        &x,
        &y,
        &opts.search,
        Some(&performance),
    )
}
