//! One tuning run: features of every input, exhaustive (or incremental) measurement, model.

use super::features::FeatureSet;
use super::incremental;
use super::labelling::{label, train_model};
use super::options::{Progress, TuneOptions};
use super::store::{SCHEMA_VERSION, StoreKey, TuningStore};
use super::{TuneInput, TuningBackend, tune_err};
use crate::Result;
use crate::apps::App;

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
