//! Tuning campaigns fanned out over the ranks of an MPI job (`mpirun -np R surge tune APP`):
//! every rank builds the same training inputs (generated, seeded; or read from the same files);
//! rank 0 hands their indices out one at a time, largest first, to whichever rank asks; each
//! other rank measures its input with the usual protocol (interleaved rounds, steal guard) on
//! its own node and sends the record back; rank 0 appends every record to the campaign's
//! journal as it arrives, then trains the model, writes the store once, and evaluates it.
//! Whenever no rank is waiting for work, rank 0 measures the input with the least work left
//! itself, so a rank that finishes meanwhile waits at most for that short input. (Measuring
//! nothing itself, as it first did, 2 ranks were one worker: a campaign over 8 matrices of
//! `matrices-large` took as long on 2 ranks as on one, 2026-11-27.)
//!
//! A model is keyed by the device it was measured on, so every rank reports its platform
//! (`TuningBackend::platform`: CPU model and threads, or the GPU) and a job whose ranks differ
//! is refused unless `--allow-mixed-machines` says otherwise.

use super::world::World;
use crate::tune::record::InputRecord;
use crate::tune::{FeatureValues, Labeller, Progress, TrainingConfig, TuneInput, TuningBackend};
use crate::{Result, SurgeError};
use ::mpi::traits::*;
use std::collections::VecDeque;

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
        let comm = self.world.comm();
        let mut queue = plan(inputs, todo);
        let mut working = self.world.size() - 1;
        let mut recorded = 0;
        while working > 0 {
            if self.stop_after.is_some_and(|n| recorded >= n) {
                return Err(SurgeError::Tune(format!(
                    "stopped after {recorded} records (--stop-after): the journal keeps them"
                )));
            }
            // A rank waiting is served first; with none waiting, rank 0 measures the least
            // work left itself (a short wait for a rank that finishes meanwhile).
            if !queue.is_empty() && comm.any_process().immediate_probe().is_none() {
                let k = queue.pop_back().expect("not empty");
                let r =
                    crate::tune::label(backend, &inputs[k], &features[k], variants, cfg, progress);
                record(k, r)?;
                recorded += 1;
                continue;
            }
            let (msg, status) = comm.any_process().receive_vec::<u8>();
            let from = comm.process_at_rank(status.source_rank());
            if !msg.is_empty() {
                let (k, mut r): (usize, InputRecord) =
                    serde_json::from_slice(&msg).map_err(|e| wire_err("a rank's record", e))?;
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
                recorded += 1;
            }
            let next = queue.pop_front().map_or(-1, |k| k as i64);
            from.send(&next);
            if next < 0 {
                working -= 1;
            }
        }
        Ok(())
    }
}

/// Another rank's side: measures the inputs rank 0 hands out until it says there are no more.
pub fn serve(
    world: &World,
    backend: &dyn TuningBackend,
    inputs: &[TuneInput],
    variants: &[String],
    cfg: &TrainingConfig,
) -> Result<usize> {
    let root = world.comm().process_at_rank(0);
    let none = FeatureValues {
        values: Vec::new(),
        group_seconds: Vec::new(),
        seconds: 0.0,
    };
    let mut msg: Vec<u8> = Vec::new();
    let mut measured = 0;
    loop {
        root.send(&msg[..]);
        let (k, _) = root.receive::<i64>();
        let Ok(k) = usize::try_from(k) else {
            return Ok(measured);
        };
        let input = inputs
            .get(k)
            .ok_or_else(|| wire_err("an input index from rank 0", k))?;
        let r = crate::tune::label(backend, input, &none, variants, cfg, &mut |_| {});
        msg = serde_json::to_vec(&(k, r)).map_err(|e| wire_err("a record", e))?;
        measured += 1;
    }
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
