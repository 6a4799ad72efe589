//! Tuning campaigns fanned out over the ranks of an MPI job (`mpirun -np R surge tune APP`):
//! every rank builds the same training and test inputs (generated, seeded; or read from the
//! same files); rank 0 hands their indices out one at a time, largest first, to whichever rank
//! asks ([`fan_out`]); each other rank measures its input with the usual protocol (interleaved
//! rounds, steal guard) on its own node and sends the record back; rank 0 appends every record
//! to the campaign's journal as it arrives, then trains the model and writes the store once.
//! It then sends the store to every rank and hands the test inputs out the same way: each rank
//! scores its test inputs with the model (`tune::scoring`) and sends the scores back, which
//! rank 0 sums up in the inputs' order, as one process would. Whenever no rank is waiting for
//! work, rank 0 measures the input with the least work left itself, answering the ranks that
//! ask meanwhile between its samples ([`Answering`]). (Measuring nothing itself, as it first
//! did, 2 ranks were one worker: a campaign over 8 matrices of `matrices-large` took as long on
//! 2 ranks as on one, 2026-11-27. Answering only between its own inputs and scoring the test
//! inputs alone, 2 ranks were 1.33× one over 40 inputs.)
//!
//! A model is keyed by the device it was measured on, so every rank reports its platform
//! (`TuningBackend::platform`: CPU model and threads, or the GPU) and a job whose ranks differ
//! is refused unless `--allow-mixed-machines` says otherwise.

use super::answering::Answering;
use super::fan_out::{self, Job};
use super::world::World;
use crate::tune::record::InputRecord;
use crate::tune::scoring::{self, Scored};
use crate::tune::trace;
use crate::tune::{
    FeatureValues, Labeller, Progress, TrainingConfig, TuneInput, Tuned, TuningBackend,
    TuningStore, Workload,
};
use crate::{Result, SurgeError};
use ::mpi::traits::*;
use std::collections::VecDeque;
use std::time::Instant;

/// Rank 0's side of the fan-out: a [`Labeller`] that gives the inputs to the other ranks.
pub struct Ranks<'w> {
    pub world: &'w World,
    /// Fail after this many records, as if the job died (for testing `--resume`).
    pub stop_after: Option<usize>,
}

impl std::fmt::Debug for Ranks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks({:?})", self.world)
    }
}

fn wire_err(what: &str, e: impl std::fmt::Display) -> SurgeError {
    SurgeError::Tune(format!("internal: {what}: {e}"))
}

/// The order rank 0 hands inputs out in: the most work first, so the last to finish are short.
pub fn plan(inputs: &[TuneInput], todo: &[usize]) -> VecDeque<usize> {
    let mut order = todo.to_vec();
    order.sort_by(|a, b| inputs[*b].work.total_cmp(&inputs[*a].work).then(a.cmp(b)));
    order.into()
}

impl Labeller for Ranks<'_> {
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
        if self.world.size() == 1 {
            return crate::tune::Local.label_all(
                backend, inputs, features, todo, variants, cfg, record, progress,
            );
        }
        let mut recorded = 0;
        let stop_after = self.stop_after;
        fan_out::hand_out(self.world, plan(inputs, todo), &mut |job| {
            match job {
                Job::Own { index: k, answer } => {
                    let t = Instant::now();
                    let r = crate::tune::label(
                        &Answering::new(backend, answer),
                        &inputs[k],
                        &features[k],
                        variants,
                        cfg,
                        progress,
                    );
                    trace::stage("rank 0", &format!("training input {}", inputs[k].name), t);
                    record(k, r)?;
                }
                Job::Received { message, .. } => {
                    let (k, mut r): (usize, InputRecord) = serde_json::from_slice(&message)
                        .map_err(|e| wire_err("a rank's record", e))?;
                    let f = features
                        .get(k)
                        .ok_or_else(|| wire_err("a record's input", k))?;
                    (r.features, r.feature_seconds) = (f.values.clone(), f.seconds);
                    for m in &r.measurements {
                        progress(Progress::Measured {
                            input: &inputs[k].name,
                            variant: &m.variant,
                        });
                    }
                    record(k, r)?;
                }
            }
            recorded += 1;
            match stop_after {
                Some(n) if recorded >= n => Err(SurgeError::Tune(format!(
                    "stopped after {recorded} records (--stop-after): the journal keeps them"
                ))),
                _ => Ok(()),
            }
        })
    }

    fn score_all(
        &mut self,
        tuned: &Tuned<'_>,
        store: &TuningStore,
        backend: &dyn TuningBackend,
        inputs: &[TuneInput],
        cfg: &TrainingConfig,
        step: &mut dyn FnMut(&str, &str),
    ) -> Result<Vec<Scored>> {
        if self.world.size() == 1 {
            return crate::tune::Local.score_all(tuned, store, backend, inputs, cfg, step);
        }
        let bytes = serde_json::to_vec(store).map_err(|e| wire_err("the store", e))?;
        fan_out::broadcast_bytes(self.world, Some(bytes));
        let all: Vec<usize> = (0..inputs.len()).collect();
        let mut slots: Vec<Option<Scored>> = vec![None; inputs.len()];
        fan_out::hand_out(self.world, plan(inputs, &all), &mut |job| {
            let (k, s) = match job {
                Job::Own { index: k, answer } => {
                    let t = Instant::now();
                    let answering = Answering::new(backend, answer);
                    let s = scoring::score(tuned, &answering, &inputs[k], cfg, step)?;
                    trace::stage("rank 0", &format!("test input {}", inputs[k].name), t);
                    (k, s)
                }
                Job::Received { from, message } => {
                    let (k, s): (usize, std::result::Result<Scored, String>) =
                        serde_json::from_slice(&message)
                            .map_err(|e| wire_err("a rank's test score", e))?;
                    let input = inputs
                        .get(k)
                        .ok_or_else(|| wire_err("a test score's input", k))?;
                    let s = s.map_err(|e| {
                        SurgeError::Tune(format!(
                            "rank {from} scoring the test input `{}`: {e}",
                            input.name
                        ))
                    })?;
                    for m in &s.result.measurements {
                        step(&input.name, &m.variant);
                    }
                    (k, s)
                }
            };
            slots[k] = Some(s);
            Ok(())
        })?;
        slots
            .into_iter()
            .zip(inputs)
            .map(|(s, i)| {
                s.ok_or_else(|| {
                    SurgeError::Tune(format!("the test input `{}` was never scored", i.name))
                })
            })
            .collect()
    }
}

/// Another rank's side of the training: measures the inputs rank 0 hands out until it says
/// there are no more; returns how many it measured.
pub fn serve(
    world: &World,
    backend: &dyn TuningBackend,
    inputs: &[TuneInput],
    variants: &[String],
    cfg: &TrainingConfig,
) -> Result<usize> {
    let none = FeatureValues {
        values: Vec::new(),
        group_seconds: Vec::new(),
        seconds: 0.0,
    };
    let who = format!("rank {}", world.rank());
    fan_out::serve(world, &mut |k| {
        let input = inputs
            .get(k)
            .ok_or_else(|| wire_err("an input index from rank 0", k))?;
        let t = Instant::now();
        let r = crate::tune::label(backend, input, &none, variants, cfg, &mut |_| {});
        trace::stage(&who, &format!("training input {}", input.name), t);
        serde_json::to_vec(&(k, r)).map_err(|e| wire_err("a record", e))
    })
}

/// Another rank's side of the testing: takes the trained store from rank 0, then scores the
/// test inputs rank 0 hands out (a failure travels back as the score's error, for rank 0 to
/// say); returns how many it scored.
pub fn serve_tests(
    world: &World,
    workload: &Workload,
    backend: &dyn TuningBackend,
    inputs: &[TuneInput],
    cfg: &TrainingConfig,
) -> Result<usize> {
    let bytes = fan_out::broadcast_bytes(world, None);
    let store: TuningStore =
        serde_json::from_slice(&bytes).map_err(|e| wire_err("the store from rank 0", e))?;
    let mut tuned = Tuned::from_store(workload, store, backend);
    tuned.print_warnings = false;
    let who = format!("rank {}", world.rank());
    fan_out::serve(world, &mut |k| {
        let input = inputs
            .get(k)
            .ok_or_else(|| wire_err("a test input index from rank 0", k))?;
        let t = Instant::now();
        let s =
            scoring::score(&tuned, backend, input, cfg, &mut |_, _| {}).map_err(|e| e.to_string());
        trace::stage(&who, &format!("test input {}", input.name), t);
        serde_json::to_vec(&(k, s)).map_err(|e| wire_err("a test score", e))
    })
}

/// Every rank's platform, checked on rank 0: `Ok` on every rank when they are one machine kind
/// (or `allow_mixed`), else rank 0's error naming the first rank that differs and a `stopped`
/// error on the others.
pub fn check_platforms(world: &World, platform: &str, allow_mixed: bool) -> Result<()> {
    let comm = world.comm();
    let root = comm.process_at_rank(0);
    let mut ok = 1u8;
    let mut why = String::new();
    if world.is_root() {
        let mut all = vec![platform.to_string()];
        for r in 1..world.size() {
            let (theirs, _) = comm.process_at_rank(r as i32).receive_vec::<u8>();
            all.push(String::from_utf8_lossy(&theirs).into_owned());
        }
        if let Some(w) = super::machines::mixed_machines(&all, allow_mixed) {
            (ok, why) = (0, w);
        }
    } else {
        root.send(platform.as_bytes());
    }
    root.broadcast_into(&mut ok);
    match (ok, world.is_root()) {
        (1, _) => Ok(()),
        (_, true) => Err(SurgeError::Usage(why)),
        (_, false) => Err(SurgeError::Usage(
            "stopped: rank 0 refused the campaign".into(),
        )),
    }
}
