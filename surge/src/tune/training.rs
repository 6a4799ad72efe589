//! Exhaustive measurement: every variant on one input, warm-up first, the median of several
//! repetitions (robust to the odd slow run), a per-variant time limit, and failures recorded with
//! their reason so one broken variant never aborts a tuning run.

use super::{TuneInput, TuningBackend};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How each (input, variant) pair is timed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrainingConfig {
    /// Untimed runs before the timed ones (first-touch, caches, lazy compilation).
    pub warmup: usize,
    /// Timed runs; the median is kept.
    pub repetitions: usize,
    /// A variant whose single run exceeds this is recorded as timed out and not run again on
    /// this input. A run in progress cannot be preempted in-process, so the limit bounds the
    /// total cost per variant at about one over-long run.
    pub timeout: Duration,
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig {
            warmup: 1,
            repetitions: 5,
            timeout: Duration::from_secs(10),
        }
    }
}

/// The result of timing one variant on one input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Ok {
        median_seconds: f64,
        samples_seconds: Vec<f64>,
    },
    Failed {
        reason: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    pub variant: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Measurement {
    pub fn seconds(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Ok { median_seconds, .. } => Some(median_seconds),
            Outcome::Failed { .. } => None,
        }
    }
}

/// Times one variant on one input.
pub fn measure(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    variant: &str,
    cfg: &TrainingConfig,
) -> Measurement {
    let fail = |reason: String| Measurement {
        variant: variant.to_string(),
        outcome: Outcome::Failed { reason },
    };
    let limit = cfg.timeout;
    let check = |d: Duration| {
        if d > limit {
            Err(format!(
                "timed out: one run took {:.3} s, over the {:.3} s limit",
                d.as_secs_f64(),
                limit.as_secs_f64()
            ))
        } else {
            Ok(d)
        }
    };
    for _ in 0..cfg.warmup {
        if let Err(e) = backend.run_once(input, variant).and_then(check) {
            return fail(e);
        }
    }
    let mut samples = Vec::with_capacity(cfg.repetitions.max(1));
    for _ in 0..cfg.repetitions.max(1) {
        match backend.run_once(input, variant).and_then(check) {
            Ok(d) => samples.push(d.as_secs_f64()),
            Err(e) => return fail(e),
        }
    }
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2]
    } else {
        (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
    };
    Measurement {
        variant: variant.to_string(),
        outcome: Outcome::Ok {
            median_seconds: median,
            samples_seconds: samples,
        },
    }
}

/// Times every variant on one input, calling `step` after each.
pub fn measure_all(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    variants: &[String],
    cfg: &TrainingConfig,
    step: &mut dyn FnMut(&str, &str),
) -> Vec<Measurement> {
    variants
        .iter()
        .map(|v| {
            let m = measure(backend, input, v, cfg);
            step(&input.name, v);
            m
        })
        .collect()
}

/// The fastest successful variant, and the second fastest (for margins), if any succeeded.
pub fn ranking(ms: &[Measurement]) -> Vec<(&str, f64)> {
    let mut ok: Vec<(&str, f64)> = ms
        .iter()
        .filter_map(|m| m.seconds().map(|s| (m.variant.as_str(), s)))
        .collect();
    ok.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    ok
}

pub fn best(ms: &[Measurement]) -> Option<&str> {
    ranking(ms).first().map(|(v, _)| *v)
}
