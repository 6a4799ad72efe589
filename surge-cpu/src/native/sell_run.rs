//! Running a flat phase over a SELL-C-σ layout (`super::sell`): the chunks through the emitted
//! `sell<C>`, the rows outside the layout through `elems`, the outer level's schedule applied to
//! chunks of C rows. A failure anywhere is not reported from here: the caller runs the phase
//! again through `elems`, so that an error is exactly the row layout's.

use super::Workspace;
use super::abi::{Buf, PhaseFns, SellFn};
use super::balance::{self, Weighed};
use super::plan::HostPlan;
use super::run::{PhaseCall, Shared};
use super::sell::{self, SellLayout};
use super::skeleton::{LevelPlan, LoopSchedule, for_chunks};
use crate::CpuError;
use std::sync::Arc;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cpu::PhaseAbi;
use surge_codegen::policy::sell::SELL_CHUNKS;

impl PhaseFns {
    /// The phase's `sell<C>` kernel for chunks of `chunk` rows, if the library exports it.
    pub(super) fn sell_for(&self, chunk: usize) -> Option<SellFn> {
        let k = SELL_CHUNKS.iter().position(|&c| c == chunk)?;
        self.sell[k]
    }
}

/// The SELL layout phase `pi` runs over under `plan`, if any (built, or kept in `ws` under `key`).
#[allow(clippy::too_many_arguments)]
pub(super) fn layout_for(
    abi: &PhaseAbi,
    plan: &HostPlan,
    fns: &PhaseFns,
    ws: &mut Workspace,
    pi: usize,
    key: Option<u64>,
    buffers: &[Buffer],
) -> Option<Arc<SellLayout>> {
    match (&abi.diagonal, plan.sell) {
        (Some(pat), Some(shape)) if fns.sell_for(shape.chunk).is_some() => {
            // The kernel gathers unchecked: never over a gathered input shorter than the one
            // the layout's indices were validated against.
            ws.sell
                .layout(pi, key, shape, || sell::inspect(pat, buffers, shape))
                .filter(|l| buffers[pat.gathered].len() >= l.gather_len)
        }
        _ => None,
    }
}

impl PhaseCall<'_> {
    /// The phase's `n` rows over `l` into `out`; an error means "run the rows instead".
    pub(super) fn run_sell(&self, l: &SellLayout, out: Shared<*mut u8>) -> Result<(), CpuError> {
        let c = l.shape.chunk;
        let f = self
            .f
            .sell_for(c)
            .expect("internal: a SELL layout without its kernel");
        let mut slots = vec![
            Buf::of_slice(&l.perm),
            Buf::of_slice(&l.lens),
            Buf::of_slice(&l.starts),
        ];
        slots.extend(l.values.iter().map(Buf::of));
        // After the nested inputs: the one value of every element, if any (`SellLayout::iso`).
        let iso = l.iso.as_slice();
        slots.push(Buf::of_slice(iso));
        let rest = (&l.rest[..], &l.weighed_rest);
        self.run_units(f, &slots, (&l.starts, c), rest, out)
    }

    /// A layout's units of `per` rows each (SELL chunks, BCSR block rows; `prefix[q]` is where
    /// unit `q`'s stored elements start, one past the last at the end) through its kernel `f`
    /// over `slots`, then the runs of rows the layout left out (`rest`, and the same rows
    /// weighed, `super::balance`) through `elems`. A `static` schedule on several threads
    /// gives each worker one nonzero-balanced range of units and of rest runs, in one team
    /// (`super::balance`); the other schedules apply the outer level's plan to units, then
    /// to the rest runs.
    pub(super) fn run_units(
        &self,
        f: SellFn,
        slots: &[Buf],
        (prefix, per): (&[u64], usize),
        (rest, weighed): (&[(usize, usize)], &Weighed),
        out: Shared<*mut u8>,
    ) -> Result<(), CpuError> {
        let elems = self.f.elems.expect("elems of a flat phase");
        let s = Shared(slots.as_ptr());
        let units = prefix.len().saturating_sub(1);
        let threads = self.plan.threads;
        if let LevelPlan::Parallel {
            schedule: LoopSchedule::Static,
            ..
        } = self.plan.outer
            && threads > 1
        {
            let one = LevelPlan::Parallel {
                schedule: LoopSchedule::Static,
                chunk: 1,
            };
            return for_chunks::<CpuError>(self.pool, threads, one, threads, &|t, _| {
                let (b, s, o) = (self.bufs, s, out);
                let (lo, hi) = balance::share(prefix, t, threads);
                if lo < hi {
                    // SAFETY: as below; the shares are disjoint ranges of the units.
                    self.check(unsafe { f(b.0, s.0, lo, hi, o.0) })?;
                }
                let (lo, hi) = balance::share(&weighed.prefix, t, threads);
                for &(a, e) in &weighed.runs[lo..hi] {
                    // SAFETY: the runs are disjoint ranges of the output's rows.
                    self.check(unsafe { elems(b.0, a, e, o.0) })?;
                }
                Ok(())
            });
        }
        let by = match self.plan.outer {
            LevelPlan::Parallel { schedule, chunk } => LevelPlan::Parallel {
                schedule,
                chunk: chunk.div_ceil(per).max(1),
            },
            p => p,
        };
        for_chunks::<CpuError>(self.pool, units, by, threads, &|lo, hi| {
            let (b, s, o) = (self.bufs, s, out);
            // SAFETY: the units' rows are disjoint rows of the output, within its length
            // (`l.rows == n`, checked by the caller); the slots outlive the call.
            self.check(unsafe { f(b.0, s.0, lo, hi, o.0) })
        })?;
        for_chunks::<CpuError>(self.pool, rest.len(), by, threads, &|lo, hi| {
            let (b, o) = (self.bufs, out);
            for &(a, e) in &rest[lo..hi] {
                // SAFETY: the runs are disjoint ranges of the output's rows.
                self.check(unsafe { elems(b.0, a, e, o.0) })?;
            }
            Ok(())
        })
    }
}
