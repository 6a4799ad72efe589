//! Scoring one held-out test input: every variant timed (the exhaustive rounds), then the
//! exhaustive pick, the tuned pick and the default timed afresh (the confirmation round), and
//! the tuned pick's speed over the best. One input's score does not depend on another's, so
//! the test inputs can be scored anywhere, in any order (the ranks of an MPI job:
//! `surge::mpi::campaign`), and summed up by [`Evaluation::from_scored`] in the inputs' order.
//!
//! [`Evaluation::from_scored`]: super::report::Evaluation::from_scored

use super::report::TestResult;
use super::select::Tuned;
use super::training::{self, TrainingConfig};
use super::{TuneInput, TuningBackend};
use crate::Result;
use serde::{Deserialize, Serialize};

/// One test input's score and what selecting its variant cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scored {
    pub result: TestResult,
    /// The feature pass of the selection, in seconds.
    pub feature_seconds: f64,
    /// The model query of the selection, in seconds.
    pub query_seconds: f64,
}

/// [`score`] on each of `inputs` here, one after the other, in their order (each traced as a
/// stage under `SURGE_TRACE`).
pub fn score_each(
    tuned: &Tuned<'_>,
    backend: &dyn TuningBackend,
    inputs: &[TuneInput],
    cfg: &TrainingConfig,
    step: &mut dyn FnMut(&str, &str),
) -> Result<Vec<Scored>> {
    inputs
        .iter()
        .map(|input| {
            let t = std::time::Instant::now();
            let s = score(tuned, backend, input, cfg, step);
            super::trace::stage("campaign", &format!("test input {}", input.name), t);
            s
        })
        .collect()
}

/// Times every variant on `input` and compares the tuned choice with the best.
/// Exhaustive search's pick, the tuned choice and the default are then timed afresh in a
/// confirmation round (`cfg.confirm_rounds`, see [`training::confirm`]), and the scores use
/// those times, each ratio capped at 1 (a tuned choice that comes out faster than exhaustive
/// search's pick counts as equal). A tuned choice that fails on an input counts with the
/// default variant's time (what a careful run time would fall back to) and is flagged in
/// `warnings`.
pub fn score(
    tuned: &Tuned<'_>,
    backend: &dyn TuningBackend,
    input: &TuneInput,
    cfg: &TrainingConfig,
    step: &mut dyn FnMut(&str, &str),
) -> Result<Scored> {
    let variants = backend.variants(input)?;
    let sel = tuned.select(input)?;
    let features = sel.features.clone();
    let default = backend.default_variant(input)?;
    // The tuned choice and the default are re-timed with the contenders, interleaved, so
    // best and tuned times come from the same round.
    let always = [sel.variant.as_str(), default.as_str()];
    // The exhaustive rounds and the confirmation are one measurement for the steal guard,
    // and the confirmation is guarded once more on its own: it is short (a few dozen
    // samples), so a burst of steal that the whole input's average dilutes can still
    // decide it. Bursts hurt only the multi-threaded variants, whose second thread waits
    // for a vCPU, and one run scored a 2-thread pick at 0.05 of a 1-thread one that way.
    let ((measurements, (confirmation, recheck)), mut disturbance) =
        training::guarded(backend, cfg, || {
            let measurements = training::measure_all(backend, input, &variants, cfg, &always, step);
            let ran = |v: &str| {
                measurements
                    .iter()
                    .any(|m| m.variant == v && m.seconds().is_some())
            };
            let confirmation = match training::best(&measurements) {
                Some(b) if cfg.confirm_rounds > 0 => {
                    let mut names = vec![b];
                    for v in [sel.variant.as_str(), default.as_str()] {
                        if !names.contains(&v) && ran(v) {
                            names.push(v);
                        }
                    }
                    training::guarded(backend, cfg, || {
                        training::confirm(backend, input, &names, cfg, cfg.confirm_rounds)
                    })
                }
                _ => (Vec::new(), Default::default()),
            };
            (measurements, confirmation)
        });
    disturbance.absorb(recheck);
    let round_time = |v: &str| {
        measurements
            .iter()
            .find(|m| m.variant == v)
            .and_then(|m| m.seconds())
    };
    let best = training::best(&measurements).map(String::from);
    let unconfirmed = best
        .as_deref()
        .and_then(round_time)
        .zip(round_time(&sel.variant))
        .map(|(b, t)| (b / t).min(1.0));
    // Confirmed times where the confirmation succeeded (for all three, else none: one
    // failing there, e.g. a timeout under load, leaves the exhaustive rounds' times).
    let confirmed = !confirmation.is_empty() && confirmation.iter().all(|m| m.seconds().is_some());
    let time_of = |v: &str| {
        if confirmed && let Some(m) = confirmation.iter().find(|m| m.variant == v) {
            return m.seconds();
        }
        round_time(v)
    };
    let best_seconds = best.as_deref().and_then(time_of);
    let default_seconds = time_of(&default);
    let mut warnings = sel.warnings.clone();
    let tuned_seconds = match time_of(&sel.variant) {
        Some(t) => Some(t),
        None => {
            warnings.push(format!(
                "the tuned choice `{}` failed or is unknown on this input; counted with the default",
                sel.variant
            ));
            default_seconds
        }
    };
    let reference_seconds = backend
        .reference(input)
        .and_then(|r| r.ok())
        .map(|d| d.as_secs_f64());
    let result = TestResult {
        name: input.name.clone(),
        features,
        work: input.work,
        tuned: sel.variant,
        tuned_vs_best: best_seconds
            .zip(tuned_seconds)
            .map(|(b, t)| (b / t).min(1.0)),
        tuned_vs_best_unconfirmed: unconfirmed,
        best,
        default,
        tuned_seconds,
        best_seconds,
        default_seconds,
        reference_seconds,
        warnings,
        measurements,
        confirmation,
        disturbance,
    };
    Ok(Scored {
        result,
        feature_seconds: sel.feature_seconds,
        query_seconds: sel.query_seconds,
    })
}
