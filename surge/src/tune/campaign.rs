//! A `surge tune` campaign: tune on the training inputs, save the store, evaluate the model on
//! the held-out test inputs, measure the selection cost, and gather it all in the summary that
//! `--json` prints and `report.json` holds. The CLI parses its arguments into a [`Campaign`],
//! shows the [`Step`]s as a progress bar, and prints the [`CampaignResult`].

use super::journal::{self, JournalOptions};
use super::model::{Classifier, Model};
use super::options::{Progress, TuneOptions};
use super::report::{self, Evaluation};
use super::select::Tuned;
use super::store::{self, TuningStore};
use super::trace;
use super::training::{Disturbance, Outcome};
use super::{Cover, TuneInput, TuningBackend, Workload};
use crate::Result;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What one `surge tune` run does.
pub struct Campaign<'a> {
    pub workload: &'a Workload,
    pub backend: &'a dyn TuningBackend,
    pub train: &'a [TuneInput],
    pub test: &'a [TuneInput],
    pub options: &'a TuneOptions,
    /// Where the store is written (None: the default path of the workload and platform).
    pub out: Option<&'a Path>,
    /// Where `report.json` and the SVG plots are written (None: no report).
    pub report: Option<&'a Path>,
    /// The input the selection cost is measured on (None: not measured).
    pub selection: Option<&'a TuneInput>,
    /// When the run started (`tuning_seconds` counts from it, loading the inputs included).
    pub started: Instant,
}

impl std::fmt::Debug for Campaign<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Campaign")
            .field("workload", &self.workload.name())
            .field("platform", &self.backend.platform())
            .field("train", &self.train.len())
            .field("test", &self.test.len())
            .field("options", self.options)
            .field("out", &self.out)
            .field("report", &self.report)
            .field("selection", &self.selection.map(|i| &i.name))
            .finish_non_exhaustive()
    }
}

/// What a campaign reports while it works.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// One (input, variant) pair was timed, in training or in testing.
    Measured { input: &'a str, variant: &'a str },
    /// The store is saved; testing begins.
    Testing,
    /// Measuring is over, or it failed: a progress display can go.
    Finished,
}

/// What a campaign produced.
#[derive(Debug, Clone)]
pub struct CampaignResult {
    pub store: TuningStore,
    pub eval: Evaluation,
    /// Where the store was written.
    pub out: PathBuf,
    /// Failed (input, variant) runs of the training measurements.
    pub failures: usize,
    /// Seconds from the start to the trained model (the training part of the run).
    pub train_seconds: f64,
    /// The selection cost (when a selection input was given).
    pub selection: Option<Value>,
    /// Everything above as the JSON summary (with `report`: the files written).
    pub summary: Value,
}

impl Campaign<'_> {
    /// Runs the campaign; errors leave no store half-written.
    pub fn run(&self, progress: &mut dyn FnMut(Step<'_>)) -> Result<CampaignResult> {
        self.run_with(&mut super::Local, progress)
    }

    /// [`run`](Self::run) with the training inputs measured by `labeller` (the ranks of an MPI
    /// job: `surge::mpi::campaign`).
    pub fn run_with(
        &self,
        labeller: &mut dyn super::Labeller,
        progress: &mut dyn FnMut(Step<'_>),
    ) -> Result<CampaignResult> {
        let mut iterations = Vec::new();
        let out = match self.out {
            Some(p) => p.to_path_buf(),
            None => store::default_path(self.workload.name(), &self.backend.platform())?,
        };
        // Exhaustive campaigns journal their records beside the store (`--resume`).
        let mut options = self.options.clone();
        if options.journal.is_none() && options.incremental.is_none() {
            options.journal = Some(JournalOptions {
                path: journal::path_beside(&out),
                resume: options.resume,
            });
        }
        let store = super::tune_with(
            self.backend,
            self.workload,
            self.train,
            &options,
            labeller,
            &mut |p| match p {
                Progress::Measured { input, variant } => {
                    progress(Step::Measured { input, variant })
                }
                Progress::Iteration {
                    labelled,
                    cv_accuracy,
                } => iterations.push(json!({"labelled": labelled, "cv_accuracy": cv_accuracy})),
            },
        )
        .inspect_err(|_| progress(Step::Finished))?;
        let train_seconds = self.started.elapsed().as_secs_f64();
        let t = Instant::now();
        store.save(&out)?;
        if let Some(j) = &options.journal {
            // The store holds every record now; a journal left would block the next campaign.
            std::fs::remove_file(&j.path).map_err(|e| {
                crate::SurgeError::Tune(format!("removing the journal {}: {e}", j.path.display()))
            })?;
        }

        let t = trace::stage("campaign", "store", t);
        // Evaluation on the held-out inputs.
        progress(Step::Testing);
        let mut tuned = Tuned::from_store(self.workload, store.clone(), self.backend);
        tuned.print_warnings = false;
        let eval = labeller
            .score_all(
                &tuned,
                &store,
                self.backend,
                self.test,
                &self.options.training,
                &mut |i, v| {
                    progress(Step::Measured {
                        input: i,
                        variant: v,
                    })
                },
            )
            .and_then(Evaluation::from_scored)
            .inspect_err(|_| progress(Step::Finished))?;
        progress(Step::Finished);
        let t = trace::stage("campaign", "testing", t);
        let selection = match self.selection {
            Some(input) => Some(selection_cost(&tuned, input)?),
            None => None,
        };
        let t = trace::stage("campaign", "selection cost", t);
        let failures = failures(&store);
        let mut done = CampaignResult {
            store,
            eval,
            out,
            failures: failures.len(),
            train_seconds,
            selection,
            summary: Value::Null,
        };
        done.summary = self.summary(&done, iterations, failures);
        if let Some(dir) = self.report {
            let files = report::write_report(dir, &done.summary, &done.eval, self.workload.unit())?;
            done.summary["report"] = json!(
                files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
            );
        }
        trace::stage("campaign", "summary and report", t);
        Ok(done)
    }

    /// The JSON summary of a finished campaign.
    fn summary(&self, r: &CampaignResult, iterations: Vec<Value>, failures: Vec<Value>) -> Value {
        let (store, eval) = (&r.store, &r.eval);
        json!({
            "app": self.workload.name(),
            "structure": store.key.structure,
            "platform": self.backend.platform(),
            "store": r.out.display().to_string(),
            "variants": store.variants,
            "default_variant": store.default_variant,
            "training_inputs": self.train.len(),
            "labelled_inputs": store.inputs.len(),
            "incremental": iterations,
            "failures": failures,
            "training": self.options.training,
            "labelling": store.labelling.as_ref().map(labelling_summary),
            "model": model_summary(&store.model),
            "feature_seconds_total": store.inputs.iter().map(|r| r.feature_seconds).sum::<f64>(),
            "test_inputs": self.test.len(),
            "tuned_vs_exhaustive": eval.tuned_vs_exhaustive,
            "tuned_vs_exhaustive_unconfirmed": eval.tuned_vs_exhaustive_unconfirmed,
            "disturbance": {
                "training": disturbance_summary(store.inputs.iter().map(|r| r.disturbance)),
                "test": disturbance_summary(eval.results.iter().map(|r| r.disturbance)),
            },
            "default_vs_exhaustive": eval.default_vs_exhaustive,
            "exact_accuracy": eval.exact_accuracy,
            "mean_feature_us": eval.mean_feature_us,
            "mean_query_us": eval.mean_query_us,
            "selection": r.selection,
            "tuning_seconds": r.train_seconds,
        })
    }
}

/// Every failed (input, variant) run of the training measurements.
fn failures(store: &TuningStore) -> Vec<Value> {
    store
        .inputs
        .iter()
        .flat_map(|r| {
            r.measurements.iter().filter_map(move |m| match &m.outcome {
                Outcome::Failed { reason } => {
                    Some(json!({"input": r.name, "variant": m.variant, "reason": reason}))
                }
                Outcome::Ok { .. } => None,
            })
        })
        .collect()
}

/// The class-pruning cover of the summary.
fn labelling_summary(c: &Cover) -> Value {
    json!({
        "method": "near-tie greedy set cover",
        "tolerance": c.tolerance,
        "min_class_inputs": c.min_inputs,
        "max_classes": c.max_classes,
        "classes": c.variants.len(),
        "uncovered_inputs": c.uncovered,
        "cover": c.variants,
        "cover_bound": c.bound,
        "cover_worst": c.worst,
    })
}

/// The model of the summary (with the SVM's chosen C and gamma).
fn model_summary(m: &Model) -> Value {
    let (c, gamma) = match &m.classifier {
        Classifier::Svm { c, gamma, .. } => (Some(*c), Some(*gamma)),
        _ => (None, None),
    };
    json!({
        "kind": m.kind,
        "class_count": m.classes.len(),
        "classes": m.classes,
        "features": m.feature_names,
        "cv_accuracy": m.cv_accuracy,
        "cv_performance": m.cv_performance,
        "c": c,
        "gamma": gamma,
    })
}

/// Inputs re-measured for steal, the largest steal kept, and the inputs kept over the limit.
fn disturbance_summary(d: impl Iterator<Item = Disturbance>) -> Value {
    let d: Vec<Disturbance> = d.collect();
    json!({
        "inputs_remeasured": d.iter().filter(|x| x.discarded > 0).count(),
        "attempts_discarded": d.iter().map(|x| x.discarded).sum::<usize>(),
        "max_steal_kept": d.iter().filter_map(|x| x.steal).reduce(f64::max),
    })
}

/// Per batch of `per` calls of `f`, the mean per call in microseconds; returned: the median over
/// `batches` batches (robust to a preemption), the mean of everything, and the least batch (the
/// call's own cost: on a shared VM a burst of steal lasting the whole measurement inflates even
/// the median, and only adds time).
fn time_batches(batches: usize, per: usize, f: &mut dyn FnMut()) -> (f64, f64, f64) {
    let mut means: Vec<f64> = (0..batches)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / per as f64
        })
        .collect();
    let mean = means.iter().sum::<f64>() / batches as f64;
    means.sort_by(f64::total_cmp);
    (crate::stats::median_of_sorted(&means), mean, means[0])
}

/// Selection cost on `input`: the feature pass, then the model query alone (mean of many
/// queries, since one is a few microseconds).
pub fn selection_cost(tuned: &Tuned<'_>, input: &TuneInput) -> Result<Value> {
    let fs = tuned.workload().features();
    let t = Instant::now();
    let f = fs.evaluate(input)?;
    let feature_us = t.elapsed().as_secs_f64() * 1e6;
    let (batches, per) = (21, 100);
    let model = tuned.store().map(|s| &s.model);
    // The model query alone: scaling plus the classifier.
    let (query_us, query_mean_us, query_min_us) = time_batches(batches, per, &mut || {
        if let Some(m) = model {
            std::hint::black_box(m.predict(std::hint::black_box(&f.values)));
        }
    });
    // Everything `select` adds to the feature pass: the query, the training-range check (and
    // its warnings, formatted only when a feature is out of range), the `Selection`.
    let mut last = String::new();
    let (select_us, select_mean_us, select_min_us) = time_batches(batches, per, &mut || {
        last = std::hint::black_box(tuned.select_from_features(std::hint::black_box(&f.values)))
            .variant;
    });
    // The same without the out-of-range warnings: the bare choice.
    let (choose_us, _, _) = time_batches(batches, per, &mut || {
        std::hint::black_box(tuned.choose(std::hint::black_box(&f.values)));
    });
    Ok(json!({
        "input": input.name,
        "rows": input.matrix.as_ref().map_or(input.work as usize, |m| m.rows),
        "nnz": input.matrix.as_ref().map(|m| m.nnz()),
        "feature_pass_us": feature_us,
        "feature_group_us": f.group_seconds.iter().map(|s| s * 1e6).collect::<Vec<_>>(),
        "feature_groups": fs.group_names(),
        "model_query_us": query_us,
        "model_query_mean_us": query_mean_us,
        "model_query_min_us": query_min_us,
        "select_beyond_features_us": select_us,
        "select_beyond_features_mean_us": select_mean_us,
        "select_beyond_features_min_us": select_min_us,
        "choose_us": choose_us,
        "classes": tuned.store().map(|s| s.model.classes.len()),
        "out_of_training_range": tuned.select_from_features(&f.values).warnings,
        "variant": last,
    }))
}
