//! One tuning run: features of every input, exhaustive (or incremental) measurement, model.

use super::features::{FeatureSet, FeatureValues};
use super::incremental::{self, IncrementalStop};
use super::model::{Model, ModelKind, SvmSearch};
use super::store::{InputRecord, SCHEMA_VERSION, StoreKey, TuningStore};
use super::training::{self, TrainingConfig};
use super::{TuneInput, TuningBackend, tune_err};
use crate::Result;
use crate::apps::App;

/// How to tune.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneOptions {
    pub model: ModelKind,
    pub training: TrainingConfig,
    pub search: SvmSearch,
    /// Label only some inputs, chosen by active learning (None: exhaustive over every input).
    pub incremental: Option<IncrementalStop>,
    /// Variants within this fraction of an input's best time cover it in the class-pruning set
    /// cover (see [`cover`](super::cover)); 0 keeps every strict winner as a class.
    pub label_tolerance: f64,
    /// A variant becomes a class only if it newly covers at least this many training inputs
    /// (1: every input is covered within `label_tolerance`).
    pub min_class_inputs: usize,
    /// At most this many classes (0: no cap): the first the cover takes, which are near-best
    /// on the most training inputs. Bounds the SVM's query cost (its one-vs-one pairs).
    pub max_classes: usize,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            model: ModelKind::default(),
            training: TrainingConfig::default(),
            search: SvmSearch::default(),
            incremental: None,
            label_tolerance: 0.03,
            min_class_inputs: 2,
            max_classes: 10,
        }
    }
}

impl TuneOptions {
    /// The classes and labels of `records` under these options.
    pub fn cover(&self, records: &[InputRecord]) -> super::cover::Cover {
        super::cover::cover_capped(
            records,
            self.label_tolerance,
            self.min_class_inputs,
            self.max_classes,
        )
    }
}

/// The class each labelled input is trained with: the fastest variant of the near-tie set
/// cover (see [`cover`](super::cover)) on it.
pub fn labels(records: &[InputRecord], tolerance: f64, min_inputs: usize) -> Vec<Option<String>> {
    super::cover::cover(records, tolerance, min_inputs).labels
}

/// What a tuning run reports while it works.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// One (input, variant) pair was timed.
    Measured { input: &'a str, variant: &'a str },
    /// Incremental tuning finished an iteration.
    Iteration {
        labelled: usize,
        cv_accuracy: Option<f64>,
    },
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

/// Tunes `app` on `inputs` with `backend` and returns the store (not yet saved).
pub fn tune(
    backend: &dyn TuningBackend,
    app: App,
    features: &FeatureSet,
    inputs: &[TuneInput],
    opts: &TuneOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<TuningStore> {
    let first = inputs
        .first()
        .ok_or_else(|| tune_err(format!("no training inputs for {app}")))?;
    if let Some(i) = inputs.iter().find(|i| i.app() != app) {
        return Err(tune_err(format!(
            "input `{}` is a {} input, not {app}",
            i.name,
            i.app()
        )));
    }
    let variants = backend.variants(first)?;
    if variants.is_empty() {
        return Err(tune_err(format!(
            "the backend `{}` has no variants for {app}",
            backend.platform()
        )));
    }
    let default_variant = backend.default_variant(first)?;
    let fv = features.evaluate_all(inputs)?;
    let records = match &opts.incremental {
        None => inputs
            .iter()
            .zip(&fv)
            .map(|(i, f)| label(backend, i, f, &variants, &opts.training, progress))
            .collect(),
        Some(stop) => incremental::run(
            backend, features, inputs, &fv, &variants, opts, stop, progress,
        )?,
    };
    let model = train_model(features, &records, opts)?;
    let mut labelling = opts.cover(&records);
    labelling.labels.clear();
    Ok(TuningStore {
        labelling: Some(labelling),
        schema_version: SCHEMA_VERSION,
        key: StoreKey::new(app.name(), &backend.platform(), &variants),
        variants,
        default_variant,
        inputs: records,
        model,
        written_by: format!("surge {}", env!("CARGO_PKG_VERSION")),
    })
}
