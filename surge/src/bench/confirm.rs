//! Interleaved confirmation: a benchmark's headline ratio measured so that load and the
//! machine's drift fall on both sides alike.
//!
//! The screening times each variant one after another, then the reference; it takes tens of
//! seconds per input, and a busy spell, a clock change or another cache state during one part
//! of it moved one matrix's ratio between 0.52 and 1.8 from one run to the next. Here the few
//! fastest variants and the reference's settings (MKL on one thread and on all) are timed in
//! alternation, round after round: a round is one batch of calls of each contender, each batch
//! lasting at least [`BATCH`] seconds after [`WARM`] seconds of untimed calls, in the order given (a multi-threaded MKL last, since it
//! needs a pause after it). The round's ratio is the fastest reference batch over the fastest
//! own batch: the two were measured within milliseconds of each other. On this project's
//! 2-core VMs every contender's speed, MKL's on one thread included, moved by up to 1.5× from one
//! 0.3 s round to the next, together; ratios of batches a few milliseconds apart moved far less.
//! A round during which others (the hypervisor, other processes) took more than 10% of the
//! machine's CPU time is measured again, as the tuner's are ([`guarded`]).
//!
//! Each contender's time is a low quantile of its batches ([`QUANTILE`], the 7th fastest of
//! 30): load, a descheduled vCPU or a cold cache only ever slow a batch down, so the fast end of
//! the batches is the steadiest estimate of what a contender can do, and one batch that had
//! both vCPUs to itself while the rest did not does not decide it alone (as the fastest would).
//! The reported ratio is the reference side's best such time over the own side's; the median,
//! lowest and highest of the rounds' own ratios are reported beside it as its spread. Measured
//! on matrices of 75k-950k nonzeros, two consecutive runs: with the median of the rounds'
//! ratios, per-matrix figures differed by up to 69% and the median over matrices by 9%; with
//! the fastest batches, by up to 56% and 1% (MKL on two threads ran one batch at 45 µs and its
//! median at 71 µs on one matrix); with this quantile, 30 rounds and a warm-up before each
//! batch ([`WARM`]), by up to 37% (15 of 20 matrices within 15%) and 3%.

use super::timing::calls_per_sample;
use crate::Result;
use crate::stats::{median, quantile};
use crate::tune::TuningBackend;
use crate::tune::training::{Disturbance, TrainingConfig, guarded};
use serde::Serialize;
use std::time::Instant;

/// Rounds per confirmation.
pub const ROUNDS: usize = 30;
/// The quantile of a contender's batch times that stands for it (0: the fastest).
pub const QUANTILE: f64 = 0.2;
/// The least length of one batch, in seconds.
pub const BATCH: f64 = 3e-3;
/// Untimed calls before each batch, in seconds: the steady state of a loop of calls. After the
/// pause that follows MKL's multi-threaded batch, a 2-thread SpMV on EX5 ran its first 3 ms at
/// 140 µs per call against 93 µs in a loop (the idle vCPU wakes slowly); after 2 ms of untimed
/// calls, at 95 µs.
pub const WARM: f64 = 3e-3;

/// One side of the comparison: a variant, or a setting of the reference.
pub struct Contender<'a> {
    pub name: String,
    /// On the reference's side of the ratio.
    pub reference: bool,
    /// One call of the computation.
    pub call: Box<dyn FnMut() -> Result<()> + 'a>,
    /// Run after each of this contender's samples (MKL on several threads: wait until its
    /// OpenMP workers stop spinning, so that they do not share the cores with the next sample).
    pub after: Option<Box<dyn Fn() + 'a>>,
}

impl std::fmt::Debug for Contender<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contender")
            .field("name", &self.name)
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

/// The confirmed comparison of one input.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Confirmation {
    pub rounds: usize,
    /// The reference side's time over the own side's (each the lowest [`QUANTILE`] of its
    /// contenders' batch times).
    pub ratio: f64,
    /// The median, lowest and highest of the rounds' ratios (each round's fastest reference
    /// batch over its fastest own batch).
    pub ratio_median: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// Each round's ratio, in the order measured.
    pub round_ratios: Vec<f64>,
    /// The own contender with the lowest [`QUANTILE`] of its batch times, and that time per
    /// call.
    pub own: String,
    pub own_seconds: f64,
    pub reference: String,
    pub reference_seconds: f64,
    /// Every contender's batch times.
    pub contenders: Vec<ContenderTimes>,
    /// The batch times of the limit with the fastest batch, when limits were timed in the same rounds
    /// ([`confirm_with_limit`]).
    pub limit: Option<ContenderTimes>,
    /// Each round's fastest limit batch over the [`Confirmation::own`] contender's batch in that
    /// round (its fraction of the limit in that round; empty without limits). Why per round: the
    /// machine's bandwidth moves between states minutes apart (45 and 85 GB/s on the 2026-11-28
    /// VM), and where the rounds straddle a change the fastest probe batch comes from the fast
    /// state while the kernel's lower quantile comes from the slow one (2026-11-29, a banded
    /// SpMV at 0.63 of such a limit in one run, 0.86-0.95 in three without a change).
    pub limit_fractions: Vec<f64>,
    /// Rounds measured again because others took the machine during them.
    pub discarded: usize,
    /// The largest fraction of the machine's CPU time others took during a kept round.
    pub steal: Option<f64>,
}

/// One contender's batches, seconds per call.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ContenderTimes {
    pub name: String,
    pub reference: bool,
    pub min_seconds: f64,
    /// The [`QUANTILE`] of its batch times.
    pub low_seconds: f64,
    pub median_seconds: f64,
}

/// Times `contenders` in interleaved rounds (see the module's notes); `backend` reads how much
/// of the machine others took. At least one own and one reference contender are needed.
pub fn confirm(
    contenders: &mut [Contender<'_>],
    backend: &dyn TuningBackend,
) -> Result<Confirmation> {
    confirm_with_limit(contenders, Vec::new(), backend)
}

/// [`confirm`] with the machine's limit for this work timed in the same rounds, after the
/// contenders (bandwidth probes moving the kernel's bytes in several ways): load and the
/// machine's drift then hit the limit as they hit the kernels, and [`Confirmation::limit`]
/// holds the times of the one of `limits` with the fastest batch (a limit is the best the
/// machine did), on neither side of the ratio.
pub fn confirm_with_limit<'a>(
    contenders: &mut [Contender<'a>],
    mut limits: Vec<Contender<'a>>,
    backend: &dyn TuningBackend,
) -> Result<Confirmation> {
    let own = contenders.len();
    let mut all: Vec<&mut Contender<'a>> = contenders.iter_mut().collect();
    all.extend(limits.iter_mut());
    let (times, disturbance) = rounds(&mut all, backend)?;
    let mut conf = summarize(contenders, &times[..own], disturbance);
    conf.limit = limits
        .iter()
        .zip(&times[own..])
        .map(|(l, t)| times_of(l, t))
        .min_by(|a, b| a.min_seconds.total_cmp(&b.min_seconds));
    if !limits.is_empty() {
        let mine = contenders
            .iter()
            .position(|c| c.name == conf.own)
            .expect("the confirmed own contender is one of the contenders");
        conf.limit_fractions = (0..conf.rounds)
            .map(|r| {
                let limit = times[own..]
                    .iter()
                    .map(|t| t[r])
                    .fold(f64::INFINITY, f64::min);
                limit / times[mine][r]
            })
            .collect();
    }
    Ok(conf)
}

/// The interleaved rounds: every contender's batch times, and the disturbance of the kept rounds.
fn rounds(
    contenders: &mut [&mut Contender<'_>],
    backend: &dyn TuningBackend,
) -> Result<(Vec<Vec<f64>>, Disturbance)> {
    assert!(
        contenders.iter().any(|c| c.reference) && contenders.iter().any(|c| !c.reference),
        "a confirmation compares own contenders with reference ones"
    );
    let reps = contenders
        .iter_mut()
        .map(|c| calibrate(c))
        .collect::<Result<Vec<_>>>()?;
    let cfg = TrainingConfig::default();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    let mut disturbance = Disturbance::default();
    for _ in 0..ROUNDS {
        let (sample, d) = guarded(backend, &cfg, || one_round(contenders, &reps));
        for (t, s) in times.iter_mut().zip(sample?) {
            t.push(s);
        }
        disturbance.absorb(d);
    }
    Ok((times, disturbance))
}

/// Calls per batch of one contender, after two warm calls.
fn calibrate(c: &mut Contender<'_>) -> Result<usize> {
    (c.call)()?;
    let t = Instant::now();
    (c.call)()?;
    let one = t.elapsed().as_secs_f64();
    if let Some(after) = &c.after {
        after();
    }
    Ok(calls_per_sample(one, BATCH))
}

/// One batch of every contender, in order, each after [`WARM`] of untimed calls, in seconds
/// per call.
fn one_round(contenders: &mut [&mut Contender<'_>], reps: &[usize]) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(contenders.len());
    for (c, &n) in contenders.iter_mut().zip(reps) {
        let w = Instant::now();
        while w.elapsed().as_secs_f64() < WARM {
            (c.call)()?;
        }
        let t = Instant::now();
        for _ in 0..n {
            (c.call)()?;
        }
        out.push(t.elapsed().as_secs_f64() / n as f64);
        if let Some(after) = &c.after {
            after();
        }
    }
    Ok(out)
}

/// One contender's batch times summarized.
fn times_of(c: &Contender<'_>, t: &[f64]) -> ContenderTimes {
    ContenderTimes {
        name: c.name.clone(),
        reference: c.reference,
        min_seconds: quantile(t, 0.0),
        low_seconds: quantile(t, QUANTILE),
        median_seconds: median(t),
    }
}

fn summarize(contenders: &[Contender<'_>], times: &[Vec<f64>], d: Disturbance) -> Confirmation {
    let each: Vec<ContenderTimes> = contenders
        .iter()
        .zip(times)
        .map(|(c, t)| times_of(c, t))
        .collect();
    let fastest_in = |reference: bool, r: usize| {
        contenders
            .iter()
            .zip(times)
            .filter(|(c, _)| c.reference == reference)
            .map(|(_, t)| t[r])
            .fold(f64::INFINITY, f64::min)
    };
    let ratios: Vec<f64> = (0..times[0].len())
        .map(|r| fastest_in(true, r) / fastest_in(false, r))
        .collect();
    let best = |reference: bool| {
        each.iter()
            .filter(|t| t.reference == reference)
            .min_by(|a, b| a.low_seconds.total_cmp(&b.low_seconds))
            .map(|t| (t.name.clone(), t.low_seconds))
            .expect("a contender on each side")
    };
    let (own, own_seconds) = best(false);
    let (reference, reference_seconds) = best(true);
    Confirmation {
        rounds: ratios.len(),
        ratio: reference_seconds / own_seconds,
        ratio_median: median(&ratios),
        ratio_low: quantile(&ratios, 0.0),
        ratio_high: quantile(&ratios, 1.0),
        round_ratios: ratios,
        own,
        own_seconds,
        reference,
        reference_seconds,
        contenders: each,
        limit: None,
        limit_fractions: Vec::new(),
        discarded: d.discarded,
        steal: d.steal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::simulated::SimulatedBackend;
    use std::time::Duration;

    fn sleeper<'a>(name: &str, reference: bool, micros: u64) -> Contender<'a> {
        Contender {
            name: name.into(),
            reference,
            call: Box::new(move || {
                std::thread::sleep(Duration::from_micros(micros));
                Ok(())
            }),
            after: None,
        }
    }

    #[test]
    fn the_ratio_is_the_reference_sides_time_over_the_own_sides() {
        let mut c = vec![
            sleeper("slow variant", false, 3000),
            sleeper("fast variant", false, 1000),
            sleeper("mkl, 1 thread", true, 2000),
            sleeper("mkl, 2 threads", true, 4000),
        ];
        let backend = SimulatedBackend::sparse("bench");
        let r = confirm(&mut c, &backend).unwrap();
        assert_eq!(r.rounds, ROUNDS);
        assert_eq!(r.own, "fast variant");
        assert_eq!(r.reference, "mkl, 1 thread");
        // Sleeps overshoot by tens of microseconds, more on a loaded machine.
        assert!((1.5..2.2).contains(&r.ratio), "{r:?}");
        assert!(
            r.ratio_low <= r.ratio_median && r.ratio_median <= r.ratio_high,
            "{r:?}"
        );
        assert_eq!(r.round_ratios.len(), ROUNDS);
        assert_eq!(r.contenders.len(), 4);
        assert!(
            r.own_seconds >= 1e-3 && r.reference_seconds >= 2e-3,
            "{r:?}"
        );
    }

    #[test]
    fn a_limit_is_timed_in_the_same_rounds_on_neither_side() {
        let mut c = vec![sleeper("variant", false, 1000), sleeper("mkl", true, 2000)];
        // The limit is the fastest contender: were it on the own side, the ratio would be ~4.
        let limits = vec![
            sleeper("slow probe", false, 800),
            sleeper("bandwidth probe", false, 500),
        ];
        let backend = SimulatedBackend::sparse("bench");
        let r = confirm_with_limit(&mut c, limits, &backend).unwrap();
        assert_eq!(r.own, "variant");
        assert!((1.5..2.2).contains(&r.ratio), "{r:?}");
        assert_eq!(r.contenders.len(), 2);
        let l = r.limit.expect("the limit's times");
        assert_eq!(l.name, "bandwidth probe");
        assert!(
            l.low_seconds >= 5e-4 && l.low_seconds < r.own_seconds,
            "{l:?}"
        );
        // Each round's fastest probe (~0.5 ms) over the variant's batch (~1 ms).
        assert_eq!(r.limit_fractions.len(), r.rounds);
        let f = median(&r.limit_fractions);
        assert!((0.3..0.7).contains(&f), "{:?}", r.limit_fractions);
        let plain = confirm(&mut c, &backend).unwrap();
        assert_eq!(plain.limit, None);
        assert!(plain.limit_fractions.is_empty());
    }

    #[test]
    fn an_error_of_a_contender_is_returned() {
        let mut c = vec![
            Contender {
                name: "failing".into(),
                reference: false,
                call: Box::new(|| Err(crate::SurgeError::Usage("broken".into()))),
                after: None,
            },
            sleeper("reference", true, 10),
        ];
        let e = confirm(&mut c, &SimulatedBackend::sparse("bench")).unwrap_err();
        assert!(e.to_string().contains("broken"), "{e}");
    }
}
