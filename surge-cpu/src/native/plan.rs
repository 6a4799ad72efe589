//! The host plan: how a variant's parameters run on the host (threads, nesting, layout, one
//! [`LevelPlan`] per schedule level), and what that means for one phase (its outer and inner
//! level, whether long inner sequences run cooperatively).

use super::skeleton::{LevelPlan, LoopSchedule};
use crate::CpuError;
use surge_codegen::emit::cpu::PhaseAbi;
use surge_codegen::policy::PValue;
use surge_codegen::schedule::ScheduleElem;
use surge_codegen::variant::Variant;

/// The host-side reading of a CPU variant's parameters.
#[derive(Debug, Clone)]
pub(super) struct HostPlan {
    pub(super) threads: usize,
    pub(super) nesting: bool,
    /// `layout1 = diagonals`.
    pub(super) diagonals: bool,
    pub(super) levels: Vec<LevelPlan>,
}

impl HostPlan {
    pub(super) fn of(v: &Variant) -> Result<HostPlan, CpuError> {
        let bad = |m: String| CpuError::UnknownVariant {
            id: format!("{v} ({m})"),
            known: 0,
        };
        let int = |k: &str| match v.get(k) {
            Some(PValue::Int(i)) if *i > 0 => Ok(*i as usize),
            Some(other) => Err(bad(format!("`{k}` = {other} is not a positive integer"))),
            None => Err(bad(format!("missing `{k}`"))),
        };
        let threads = int("threads")?;
        let nesting = v.get("nesting") == Some(&PValue::Int(1));
        let mut levels = Vec::new();
        for (d, e) in v.schedule.elems().iter().enumerate() {
            let d = d + 1;
            levels.push(match e {
                ScheduleElem::Sequential => LevelPlan::Sequential,
                _ => {
                    let schedule = match v.get(&format!("sched{d}")) {
                        Some(PValue::Str(s)) if s == "static" => LoopSchedule::Static,
                        Some(PValue::Str(s)) if s == "dynamic" => LoopSchedule::Dynamic,
                        Some(PValue::Str(s)) if s == "guided" => LoopSchedule::Guided,
                        other => {
                            return Err(bad(format!(
                                "`sched{d}` = {other:?} is not static, dynamic or guided"
                            )));
                        }
                    };
                    LevelPlan::Parallel {
                        schedule,
                        chunk: int(&format!("chunk{d}"))?,
                    }
                }
            });
        }
        let diagonals = match v.get("layout1") {
            None => false,
            Some(PValue::Str(s)) if s == "rows" => false,
            Some(PValue::Str(s)) if s == "diagonals" => true,
            Some(other) => {
                return Err(bad(format!("`layout1` = {other} is not rows or diagonals")));
            }
        };
        Ok(HostPlan {
            threads,
            nesting,
            diagonals,
            levels,
        })
    }

    /// How the phase `abi` runs under this plan.
    pub(super) fn phase(&self, abi: &PhaseAbi) -> PhasePlan {
        // Level plans: a whole reduce/scan has one element and its level 1 is the inner level.
        let (outer, inner) = if abi.whole {
            (LevelPlan::Sequential, self.levels[0])
        } else {
            (
                self.levels[0],
                self.levels.get(1).copied().unwrap_or(LevelPlan::Sequential),
            )
        };
        let outer_parallel = matches!(outer, LevelPlan::Parallel { .. });
        let coop = abi.inner.is_some()
            && matches!(inner, LevelPlan::Parallel { .. })
            && (!outer_parallel || self.nesting);
        PhasePlan {
            outer,
            inner,
            coop,
            threads: self.threads,
        }
    }
}

/// The levels of one phase under a [`HostPlan`].
#[derive(Debug, Clone, Copy)]
pub(super) struct PhasePlan {
    /// The level of the phase's elements.
    pub(super) outer: LevelPlan,
    /// The level of each element's inner sequence (a reduce or scan over it).
    pub(super) inner: LevelPlan,
    /// Whether long inner sequences are split across the inner level's chunks.
    pub(super) coop: bool,
    pub(super) threads: usize,
}

/// The plan of an inner level restated over chunk indices (one index per `chunk` elements).
pub(super) fn by_chunk(inner: LevelPlan) -> LevelPlan {
    match inner {
        LevelPlan::Parallel { schedule, .. } => LevelPlan::Parallel { schedule, chunk: 1 },
        s => s,
    }
}
