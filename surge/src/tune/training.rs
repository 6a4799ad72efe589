//! Exhaustive measurement: every variant on one input, warm-up first, the median of several
//! repetitions (robust to the odd slow run), a per-variant time limit, and failures recorded with
//! their reason so one broken variant never aborts a tuning run.

use super::{TuneInput, TuningBackend};
use crate::stats::median;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How each (input, variant) pair is timed.
///
/// A *sample* is the mean time of a batch of back-to-back runs lasting at least
/// [`min_sample_time`](Self::min_sample_time) (one run when a run is longer), so microsecond
/// kernels are not timed at the resolution and jitter of a single call. A variant's time is the
/// median of [`repetitions`](Self::repetitions) samples. Then a second, interleaved round
/// re-times only the contenders (variants within [`retime_within`](Self::retime_within) of the
/// input's best): round-robin over the contenders, so a load burst from another process hits
/// them all alike, and their times come from this round alone, so the first round's lucky
/// sample (the minimum of many noisy medians is biased low) does not decide the winner. The
/// second round's level is scaled to the first's (see [`Measurement::round_scale`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrainingConfig {
    /// Untimed runs before the timed ones (first-touch, caches, lazy compilation).
    pub warmup: usize,
    /// Timed samples; the median is kept.
    pub repetitions: usize,
    /// A variant whose single run exceeds this is recorded as timed out and not run again on
    /// this input. A run in progress cannot be preempted in-process, so the limit bounds the
    /// total cost per variant at about one over-long run.
    pub timeout: Duration,
    /// Minimum duration of one sample (a batch of runs); zero times single runs.
    #[serde(default)]
    pub min_sample_time: Duration,
    /// Variants within this fraction of the first round's best are re-timed in the interleaved
    /// second round; negative disables the second round.
    #[serde(default = "no_retime")]
    pub retime_within: f64,
    /// Interleaved rounds (samples per contender) of the second round.
    #[serde(default)]
    pub retime_rounds: usize,
    /// At most this many contenders (the fastest first) are re-timed.
    #[serde(default)]
    pub retime_max: usize,
    /// First round interleaved: every variant is warmed up, then the samples are taken in
    /// passes over all variants (one sample of each per pass), instead of all of one
    /// variant's samples back to back. A burst of load from another process then costs many
    /// variants one sample each, which their medians discard, instead of costing one variant
    /// all of its samples (on a shared 2-core machine, runs of a few milliseconds at half
    /// speed were common). Off in stores written before it existed.
    #[serde(default)]
    pub interleaved: bool,
    /// Evaluation only: interleaved samples per variant of the confirmation round, which times
    /// the exhaustive search's pick, the tuned pick and the default afresh (see
    /// [`confirm`]); 0 skips it. Unused in training.
    #[serde(default)]
    pub confirm_rounds: usize,
    /// An input's measurement during which more than this fraction of the machine's CPU time
    /// was taken by others ([`TuningBackend::stolen`]: a hypervisor running another guest on
    /// our cores, or on the CPU backend another process) is discarded and repeated after a
    /// pause; negative disables. On the shared 2-core VMs this was built on, steal runs at
    /// 0-10% for minutes with bursts of 30-45% lasting seconds, and during one a 2-thread
    /// variant measured 4× slower than it is; a limit of 2% re-measured most inputs there,
    /// 10% only the bursts. Before other processes were counted, a cargo build beside a
    /// tuning run took the score on real matrices from 0.97 to 0.90 and 0.92 (two runs).
    #[serde(default = "no_guard")]
    pub max_steal: f64,
    /// Attempts per input under `max_steal`; the last is kept whatever its steal (and the
    /// steal is recorded with it).
    #[serde(default)]
    pub steal_attempts: usize,
}

fn no_guard() -> f64 {
    -1.0
}

fn no_retime() -> f64 {
    -1.0
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig {
            warmup: 1,
            repetitions: 5,
            timeout: Duration::from_secs(10),
            min_sample_time: Duration::from_millis(1),
            retime_within: 0.10,
            retime_rounds: 7,
            retime_max: 16,
            interleaved: true,
            confirm_rounds: 9,
            max_steal: 0.10,
            steal_attempts: 3,
        }
    }
}

impl TrainingConfig {
    /// Single runs, no second round: the plain median of `repetitions` runs.
    pub fn single_runs(warmup: usize, repetitions: usize, timeout: Duration) -> TrainingConfig {
        TrainingConfig {
            warmup,
            repetitions,
            timeout,
            min_sample_time: Duration::ZERO,
            retime_within: no_retime(),
            retime_rounds: 0,
            retime_max: 0,
            interleaved: false,
            confirm_rounds: 0,
            max_steal: no_guard(),
            steal_attempts: 1,
        }
    }

    fn retimes(&self) -> bool {
        self.retime_within >= 0.0 && self.retime_rounds > 0 && self.retime_max > 0
    }
}

/// How disturbed the kept measurement of one input was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Fraction of the machine's CPU time taken by others (steal, other processes) while it
    /// was measured (for a test input, the larger of the whole measurement's and its
    /// confirmation's; None: unknown on this backend, or a store written before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<f64>,
    /// Earlier attempts discarded for a steal over [`TrainingConfig::max_steal`].
    #[serde(default)]
    pub discarded: usize,
}

impl Disturbance {
    /// Adds a guarded part's disturbance (e.g. the confirmation's, guarded on its own): its
    /// discarded attempts count too, and the steal is the larger of the two windows'.
    pub fn absorb(&mut self, part: Disturbance) {
        self.discarded += part.discarded;
        self.steal = match (self.steal, part.steal) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

/// Runs `work` (the measurement of one input) and repeats it, after a pause of a second per
/// discarded attempt, while the CPU time others took during it exceeds `cfg.max_steal` of the
/// machine's (and [`MIN_TAKEN`]), up to `cfg.steal_attempts` attempts; returns the kept
/// result and its [`Disturbance`].
pub fn guarded<T>(
    backend: &dyn TuningBackend,
    cfg: &TrainingConfig,
    mut work: impl FnMut() -> T,
) -> (T, Disturbance) {
    let guard = cfg.max_steal >= 0.0;
    let attempts = if guard { cfg.steal_attempts.max(1) } else { 1 };
    let mut discarded = 0;
    loop {
        let before = backend.stolen();
        let t = std::time::Instant::now();
        let out = work();
        let taken = taken_by_others(before, backend.stolen(), t.elapsed());
        let steal = taken.map(|(f, _)| f);
        let over = guard && taken.is_some_and(|(f, d)| f > cfg.max_steal && d >= MIN_TAKEN);
        if !over || discarded + 1 >= attempts {
            return (out, Disturbance { steal, discarded });
        }
        discarded += 1;
        // Steal only accrues while we want the CPU, so a quiet spell cannot be watched for
        // while idle; the next attempt is the check.
        std::thread::sleep(Duration::from_secs(discarded as u64));
    }
}

/// The least CPU time taken by others that marks a measurement as disturbed, whatever its
/// length. Linux counts CPU time in ticks of 10 ms, and the machine's count (`/proc/stat`) and
/// a process's own are sampled apart, so a window of a few ticks (a confirmation round of a few
/// tens of milliseconds) can read a tick or two taken that nobody took. With the CPU backend
/// counting other processes and no such floor, 9 of 24 test inputs were measured again on a
/// quiet machine, keeping fractions of 0-1.5%.
pub const MIN_TAKEN: Duration = Duration::from_millis(30);

/// CPU time taken by others between two readings: its fraction of the CPU time the machine
/// had in `wall`, and the time itself.
fn taken_by_others(
    before: Option<(Duration, usize)>,
    after: Option<(Duration, usize)>,
    wall: Duration,
) -> Option<(f64, Duration)> {
    let ((a, cpus), (b, _)) = (before?, after?);
    let total = wall.as_secs_f64() * cpus as f64;
    let taken = b.saturating_sub(a);
    (total > 0.0).then(|| (taken.as_secs_f64() / total, taken))
}

/// The result of timing one variant on one input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Ok {
        /// The median of the samples (for a re-timed contender: of the second round's, scaled
        /// by [`Measurement::round_scale`]).
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
    /// For a contender re-timed in the second round: its first-round median (the outcome holds
    /// the second round's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_round_seconds: Option<f64>,
    /// For a re-timed contender: the factor its second-round median was scaled by to the first
    /// round's level (the contenders' median ratio of the two rounds); its samples are kept
    /// unscaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_scale: Option<f64>,
}

impl Measurement {
    pub fn ok(variant: impl Into<String>, seconds: f64) -> Measurement {
        Measurement::from_samples(variant, vec![seconds])
    }

    /// A success timed by `samples` (seconds), summarized by their median.
    pub fn from_samples(variant: impl Into<String>, samples: Vec<f64>) -> Measurement {
        Measurement {
            variant: variant.into(),
            outcome: Outcome::Ok {
                median_seconds: median(&samples),
                samples_seconds: samples,
            },
            first_round_seconds: None,
            round_scale: None,
        }
    }

    pub fn failed(variant: impl Into<String>, reason: impl Into<String>) -> Measurement {
        Measurement {
            variant: variant.into(),
            outcome: Outcome::Failed {
                reason: reason.into(),
            },
            first_round_seconds: None,
            round_scale: None,
        }
    }

    pub fn seconds(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Ok { median_seconds, .. } => Some(median_seconds),
            Outcome::Failed { .. } => None,
        }
    }
}

/// Times batches of one variant on one input: the batch size is fixed once (from the warm-up,
/// or a probe run) so that a batch lasts at least `min_sample_time`.
struct Sampler<'a> {
    backend: &'a dyn TuningBackend,
    input: &'a TuneInput,
    variant: &'a str,
    limit: Duration,
    batch: u32,
}

impl Sampler<'_> {
    fn check(&self, d: Duration) -> std::result::Result<Duration, String> {
        if d > self.limit {
            Err(format!(
                "timed out: one run took {:.3} s, over the {:.3} s limit",
                d.as_secs_f64(),
                self.limit.as_secs_f64()
            ))
        } else {
            Ok(d)
        }
    }

    /// Warms up and sizes the batch.
    fn start<'a>(
        backend: &'a dyn TuningBackend,
        input: &'a TuneInput,
        variant: &'a str,
        cfg: &TrainingConfig,
    ) -> std::result::Result<Sampler<'a>, String> {
        let mut s = Sampler {
            backend,
            input,
            variant,
            limit: cfg.timeout,
            batch: 1,
        };
        let mut shortest = None::<Duration>;
        for _ in 0..cfg.warmup {
            let d = backend.run_once(input, variant).and_then(|d| s.check(d))?;
            shortest = Some(shortest.map_or(d, |m| m.min(d)));
        }
        if !cfg.min_sample_time.is_zero() {
            let one = match shortest {
                Some(d) => d,
                None => backend.run_once(input, variant).and_then(|d| s.check(d))?,
            };
            let per = one.as_secs_f64().max(1e-9);
            // Capped so a mis-measured (near-zero) probe cannot make a batch run for minutes.
            s.batch = (cfg.min_sample_time.as_secs_f64() / per)
                .ceil()
                .clamp(1.0, 1e6) as u32;
        }
        Ok(s)
    }

    /// One sample: the mean seconds per run of one batch.
    fn sample(&self) -> std::result::Result<f64, String> {
        let d = self
            .backend
            .run_batch(self.input, self.variant, self.batch)?;
        self.check(d / self.batch)?;
        Ok(d.as_secs_f64() / self.batch as f64)
    }
}

/// Times one variant on one input (first round only).
pub fn measure(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    variant: &str,
    cfg: &TrainingConfig,
) -> Measurement {
    let run = || -> std::result::Result<Vec<f64>, String> {
        let s = Sampler::start(backend, input, variant, cfg)?;
        (0..cfg.repetitions.max(1)).map(|_| s.sample()).collect()
    };
    match run() {
        Ok(samples) => Measurement::from_samples(variant, samples),
        Err(e) => Measurement::failed(variant, e),
    }
}

/// Times every variant on one input, calling `step` after each; then re-times the contenders
/// (see [`TrainingConfig`]) together with the variants in `always` (e.g. the tuned choice and
/// the default, when evaluating), interleaved.
pub fn measure_all(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    variants: &[String],
    cfg: &TrainingConfig,
    always: &[&str],
    step: &mut dyn FnMut(&str, &str),
) -> Vec<Measurement> {
    let mut ms: Vec<Measurement> = if cfg.interleaved {
        measure_interleaved(backend, input, variants, cfg, step)
    } else {
        variants
            .iter()
            .map(|v| {
                let m = measure(backend, input, v, cfg);
                step(&input.name, v);
                m
            })
            .collect()
    };
    if cfg.retimes() {
        retime(backend, input, &mut ms, cfg, always);
    }
    ms
}

/// The first round, interleaved (see [`TrainingConfig::interleaved`]): every variant warmed up
/// and its batch sized, then `repetitions` passes of one sample per variant, each pass starting
/// one variant further on. A variant that fails (or times out) is recorded with the reason and
/// not run again. `step` is called per variant once its last sample is taken.
fn measure_interleaved(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    variants: &[String],
    cfg: &TrainingConfig,
    step: &mut dyn FnMut(&str, &str),
) -> Vec<Measurement> {
    let names: Vec<&str> = variants.iter().map(String::as_str).collect();
    let reps = cfg.repetitions.max(1);
    let samples = interleave(backend, input, &names, cfg, reps, &mut |j| {
        step(&input.name, names[j])
    });
    names
        .iter()
        .zip(samples)
        .map(|(v, s)| match s {
            Ok(samples) => Measurement::from_samples(*v, samples),
            Err(e) => Measurement::failed(*v, e),
        })
        .collect()
}

/// The second round: contenders re-timed round-robin, their times replaced by this round's.
fn retime(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    ms: &mut [Measurement],
    cfg: &TrainingConfig,
    always: &[&str],
) {
    let rank = ranking(ms);
    let Some(&(_, best)) = rank.first() else {
        return;
    };
    let mut picked: Vec<&str> = rank
        .iter()
        .filter(|(_, t)| *t <= best * (1.0 + cfg.retime_within))
        .take(cfg.retime_max)
        .map(|(v, _)| *v)
        .collect();
    for a in always {
        if !picked.contains(a) && rank.iter().any(|(v, _)| v == a) {
            picked.push(a);
        }
    }
    if picked.len() < 2 {
        return;
    }
    let idx: Vec<usize> = picked
        .iter()
        .map(|p| {
            ms.iter()
                .position(|m| m.variant == *p)
                .expect("ranked from ms")
        })
        .collect();
    let names: Vec<&str> = idx.iter().map(|&i| ms[i].variant.as_str()).collect();
    let mut samples = interleave(backend, input, &names, cfg, cfg.retime_rounds, &mut |_| {});
    // The second round decides the contenders' order; its level is brought back to the first
    // round's (the median ratio over the contenders), so load drifting between the rounds
    // neither promotes nor buries the variants that were not re-timed. A contender that fails
    // now but not before (e.g. a timeout under load) keeps its round-one time.
    let done: Vec<(usize, usize, f64)> = idx
        .iter()
        .enumerate()
        .filter_map(|(j, &i)| match &samples[j] {
            Ok(s) if !s.is_empty() => Some((j, i, median(s))),
            _ => None,
        })
        .collect();
    let ratios: Vec<f64> = done
        .iter()
        .filter_map(|&(_, i, m)| ms[i].seconds().map(|f| f / m))
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    let level = if ratios.is_empty() {
        1.0
    } else {
        median(&ratios)
    };
    for (j, i, m) in done {
        let first = ms[i].seconds();
        ms[i].outcome = Outcome::Ok {
            median_seconds: m * level,
            samples_seconds: samples[j].as_mut().map(std::mem::take).unwrap_or_default(),
        };
        ms[i].first_round_seconds = first;
        ms[i].round_scale = Some(level);
    }
}

/// `rounds` interleaved samples of each of `names` on `input`, after a warm-up of each:
/// round-robin, rotated each round so no variant always runs first (or right after another),
/// so a burst of load hits them alike. A variant that fails is not run again; its reason is
/// kept. `done(j)` is called once per variant, in the last round, after its turn.
fn interleave(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    names: &[&str],
    cfg: &TrainingConfig,
    rounds: usize,
    done: &mut dyn FnMut(usize),
) -> Vec<std::result::Result<Vec<f64>, String>> {
    let mut samplers: Vec<std::result::Result<Sampler<'_>, String>> = names
        .iter()
        .map(|v| Sampler::start(backend, input, v, cfg))
        .collect();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let n = names.len();
    for round in 0..rounds {
        for k in 0..n {
            let j = (k + round) % n;
            if let Ok(s) = &samplers[j] {
                match s.sample() {
                    Ok(t) => samples[j].push(t),
                    Err(e) => samplers[j] = Err(e),
                }
            }
            if round + 1 == rounds {
                done(j);
            }
        }
    }
    samplers
        .into_iter()
        .zip(samples)
        .map(|(s, v)| s.map(|_| v))
        .collect()
}

/// The confirmation round of an evaluation: `names` (the exhaustive search's pick, the tuned
/// pick, the default) timed afresh, interleaved, for `rounds` samples each.
///
/// Why: the exhaustive search's best time is the minimum over many noisy times, so it is
/// biased low (the winner's curse: with a few percent of noise per median, the least of 16
/// equally fast contenders comes out several percent faster than any one of them re-timed),
/// and a tuned pick that is just as fast would score below 1. Fresh samples of the pick
/// itself are not selected on, so they carry no such bias.
pub fn confirm(
    backend: &dyn TuningBackend,
    input: &TuneInput,
    names: &[&str],
    cfg: &TrainingConfig,
    rounds: usize,
) -> Vec<Measurement> {
    names
        .iter()
        .zip(interleave(
            backend,
            input,
            names,
            cfg,
            rounds.max(1),
            &mut |_| {},
        ))
        .map(|(v, r)| match r {
            Ok(s) if !s.is_empty() => Measurement::from_samples(*v, s),
            Ok(_) => Measurement::failed(*v, "no sample"),
            Err(e) => Measurement::failed(*v, e),
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
