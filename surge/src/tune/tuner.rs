//! One tuning run: features of every input, exhaustive (or incremental) measurement, model.

use super::features::FeatureValues;
use super::incremental;
use super::journal::Journal;
use super::labelling::{label, train_model};
use super::options::{Progress, TuneOptions};
use super::record::InputRecord;
use super::scoring::{self, Scored};
use super::select::Tuned;
use super::store::{SCHEMA_VERSION, StoreKey, TuningStore};
use super::training::TrainingConfig;
use super::{TuneInput, TuningBackend, Workload, tune_err};
use crate::Result;

/// Tunes `workload` on `inputs` with `backend` and returns the store (not yet saved). Every
/// input must belong to the workload and share the first one's structure (one model serves one
/// computation); the error names the input that does not and why.
pub fn tune(
    backend: &dyn TuningBackend,
    workload: &Workload,
    inputs: &[TuneInput],
    opts: &TuneOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<TuningStore> {
    tune_with(backend, workload, inputs, opts, &mut Local, progress)
}

/// Who measures the training inputs of an exhaustive tuning run, and scores a campaign's test
/// inputs: this process ([`Local`]), or the ranks of an MPI job (`surge::mpi::campaign`).
pub trait Labeller {
    /// Measures the inputs `todo` (indices into `inputs`, whose features are `features`) on
    /// `variants`, handing each record to `record` as it is finished, in any order.
    #[allow(clippy::too_many_arguments)]
    fn label_all(
        &mut self,
        backend: &dyn TuningBackend,
        inputs: &[TuneInput],
        features: &[FeatureValues],
        todo: &[usize],
        variants: &[String],
        cfg: &TrainingConfig,
        record: &mut dyn FnMut(usize, InputRecord) -> Result<()>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<()>;

    /// Scores every test input of `inputs` with `tuned` (the model of `store`), returned in
    /// the inputs' order; `step` hears of every (input, variant) timed. The default scores
    /// them here, one after the other.
    fn score_all(
        &mut self,
        tuned: &Tuned<'_>,
        store: &TuningStore,
        backend: &dyn TuningBackend,
        inputs: &[TuneInput],
        cfg: &TrainingConfig,
        step: &mut dyn FnMut(&str, &str),
    ) -> Result<Vec<Scored>> {
        let _ = store;
        scoring::score_each(tuned, backend, inputs, cfg, step)
    }
}

/// Measures every input here, in order.
#[derive(Debug, Default)]
pub struct Local;

impl Labeller for Local {
    fn label_all(
        &mut self,
        backend: &dyn TuningBackend,
        inputs: &[TuneInput],
        features: &[FeatureValues],
        todo: &[usize],
        variants: &[String],
        cfg: &TrainingConfig,
        record: &mut dyn FnMut(usize, InputRecord) -> Result<()>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<()> {
        for &k in todo {
            let t = std::time::Instant::now();
            let r = label(backend, &inputs[k], &features[k], variants, cfg, progress);
            super::trace::stage("campaign", &format!("training input {}", inputs[k].name), t);
            record(k, r)?;
        }
        Ok(())
    }
}

/// [`tune`] with the training inputs measured by `labeller`.
pub fn tune_with(
    backend: &dyn TuningBackend,
    workload: &Workload,
    inputs: &[TuneInput],
    opts: &TuneOptions,
    labeller: &mut dyn Labeller,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<TuningStore> {
    let app = workload.name();
    let first = inputs
        .first()
        .ok_or_else(|| tune_err(format!("no training inputs for `{app}`")))?;
    check_inputs(workload, inputs)?;
    let variants = backend.variants(first)?;
    if variants.is_empty() {
        return Err(tune_err(format!(
            "the backend `{}` has no variants for `{app}`",
            backend.platform()
        )));
    }
    let default_variant = backend.default_variant(first)?;
    let features = workload.features();
    let key = StoreKey::new(
        app,
        &first.structure(),
        &backend.platform(),
        &variants,
        features,
    );
    let t = std::time::Instant::now();
    let fv = features.evaluate_all(inputs)?;
    let t = super::trace::stage("campaign", "training features", t);
    let records = match &opts.incremental {
        None => {
            let mut journal = match &opts.journal {
                Some(j) => Some(Journal::open(j, &key, &opts.training)?),
                None => None,
            };
            let mut slots: Vec<Option<InputRecord>> = vec![None; inputs.len()];
            let mut todo = Vec::new();
            for (k, i) in inputs.iter().enumerate() {
                match journal.as_mut().and_then(|j| j.take(&i.name)) {
                    Some(r) => {
                        for m in &r.measurements {
                            progress(Progress::Measured {
                                input: &i.name,
                                variant: &m.variant,
                            });
                        }
                        slots[k] = Some(r);
                    }
                    None => todo.push(k),
                }
            }
            let mut keep = |k: usize, r: InputRecord| -> Result<()> {
                if let Some(j) = journal.as_mut() {
                    j.append(&r)?;
                }
                slots[k] = Some(r);
                Ok(())
            };
            labeller.label_all(
                backend,
                inputs,
                &fv,
                &todo,
                &variants,
                &opts.training,
                &mut keep,
                progress,
            )?;
            slots
                .into_iter()
                .zip(inputs)
                .map(|(r, i)| {
                    r.ok_or_else(|| tune_err(format!("input `{}` was never measured", i.name)))
                })
                .collect::<Result<Vec<_>>>()?
        }
        Some(_) if opts.journal.is_some() => {
            return Err(tune_err(
                "a journal is kept for exhaustive tuning; incremental tuning cannot be resumed",
            ));
        }
        Some(stop) => incremental::run(
            backend, features, inputs, &fv, &variants, opts, stop, progress,
        )?,
    };
    let t = super::trace::stage("campaign", "measuring the training inputs", t);
    let model = train_model(features, &records, opts)?;
    super::trace::stage("campaign", "model", t);
    let mut labelling = opts.cover(&records);
    labelling.labels.clear();
    Ok(TuningStore {
        labelling: Some(labelling),
        schema_version: SCHEMA_VERSION,
        key,
        variants,
        default_variant,
        inputs: records,
        model,
        written_by: format!("surge {}", env!("CARGO_PKG_VERSION")),
    })
}

/// Every input is the workload's, and of the first input's structure.
fn check_inputs(workload: &Workload, inputs: &[TuneInput]) -> Result<()> {
    let app = workload.name();
    if let Some(i) = inputs.iter().find(|i| i.workload != app) {
        return Err(tune_err(format!(
            "input `{}` is an input of `{}`, not of `{app}`",
            i.name, i.workload
        )));
    }
    let first = &inputs[0];
    let (a, h) = (first.computation.ir(), first.structure());
    for i in &inputs[1..] {
        if i.structure() != h {
            let why = surge_codegen::ir::structure_difference(a, i.computation.ir())
                .unwrap_or_else(|| "its structure hash differs".into());
            return Err(tune_err(format!(
                "input `{}` of `{app}` is another computation than input `{}`: {why}; one \
                 model serves one computation structure, tune them as two workloads",
                i.name, first.name
            )));
        }
    }
    Ok(())
}
