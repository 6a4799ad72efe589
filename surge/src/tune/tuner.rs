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
    /// Variants within this fraction of an input's best time count as winners too (see
    /// [`labels`]); 0 labels every input with its strict winner.
    pub label_tolerance: f64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            model: ModelKind::default(),
            training: TrainingConfig::default(),
            search: SvmSearch::default(),
            incremental: None,
            label_tolerance: 0.03,
        }
    }
}

/// The class each labelled input is trained with. On real hardware many variants tie within
/// timing noise, and labelling each input with its strict winner gives the classifier dozens of
/// noisy classes (and a one-vs-one SVM a query cost quadratic in them). So every variant within
/// `tolerance` of an input's best time is a winner there, and each input is labelled with the
/// winner that wins on the most inputs overall (ties: the lower id): few classes, each choice
/// costing at most `tolerance` on the inputs it was trained on.
pub fn labels(records: &[InputRecord], tolerance: f64) -> Vec<Option<String>> {
    use std::collections::BTreeMap;
    let near: Vec<Vec<&str>> = records
        .iter()
        .map(|r| {
            let rank = training::ranking(&r.measurements);
            let best = rank.first().map_or(0.0, |b| b.1);
            rank.iter()
                .filter(|(_, t)| *t <= best * (1.0 + tolerance.max(0.0)))
                .map(|(v, _)| *v)
                .collect()
        })
        .collect();
    let mut wins: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &near {
        for v in n {
            *wins.entry(v).or_default() += 1;
        }
    }
    near.iter()
        .map(|n| {
            n.iter()
                .max_by(|a, b| wins[**a].cmp(&wins[**b]).then(b.cmp(a)))
                .map(|v| v.to_string())
        })
        .collect()
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
    let measurements = training::measure_all(backend, input, variants, cfg, &mut |i, v| {
        progress(Progress::Measured {
            input: i,
            variant: v,
        })
    });
    let best = training::best(&measurements).map(String::from);
    InputRecord {
        name: input.name.clone(),
        features: features.values.clone(),
        feature_seconds: features.seconds,
        measurements,
        best,
    }
}

/// Trains a model from labelled records (inputs where every variant failed are skipped).
pub(crate) fn train_model(
    features: &FeatureSet,
    records: &[InputRecord],
    opts: &TuneOptions,
) -> Result<Model> {
    let (x, y): (Vec<Vec<f64>>, Vec<String>) = records
        .iter()
        .zip(labels(records, opts.label_tolerance))
        .filter_map(|(r, l)| l.map(|l| (r.features.clone(), l)))
        .unzip();
    Model::train(
        opts.model,
        &features.names(),
        &features.log_scaled(),
        &x,
        &y,
        &opts.search,
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
    Ok(TuningStore {
        schema_version: SCHEMA_VERSION,
        key: StoreKey::new(app.name(), &backend.platform(), &variants),
        variants,
        default_variant,
        inputs: records,
        model,
        written_by: format!("surge {}", env!("CARGO_PKG_VERSION")),
    })
}
