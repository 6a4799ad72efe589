//! The host plan: how a variant's parameters run on the host (threads, nesting, layout, one
//! [`LevelPlan`] per schedule level), and what that means for one phase (its outer and inner
//! level, whether long inner sequences run cooperatively).

use super::skeleton::LevelPlan;
use crate::CpuError;
use surge_codegen::emit::cpu::PhaseAbi;
use surge_codegen::params::CpuParams;
use surge_codegen::policy::bcsr::BcsrShape;
use surge_codegen::policy::sell::SellShape;
use surge_codegen::variant::Variant;

/// The host-side reading of a CPU variant's parameters.
#[derive(Debug, Clone)]
pub(super) struct HostPlan {
    pub(super) threads: usize,
    pub(super) nesting: bool,
    /// `layout1 = diagonals`.
    pub(super) diagonals: bool,
    /// `layout1 = sell_<C>_<σ>`.
    pub(super) sell: Option<SellShape>,
    /// `layout1 = bcsr_<r>_<c>`.
    pub(super) bcsr: Option<BcsrShape>,
    /// `layout1 = lanes`.
    pub(super) lanes: bool,
    pub(super) levels: Vec<LevelPlan>,
}

impl HostPlan {
    pub(super) fn of(v: &Variant) -> Result<HostPlan, CpuError> {
        let p = CpuParams::of(v)?;
        let levels = p
            .levels
            .iter()
            .map(|l| match l.parallel {
                None => LevelPlan::Sequential,
                Some((schedule, chunk)) => LevelPlan::Parallel { schedule, chunk },
            })
            .collect();
        Ok(HostPlan {
            threads: p.threads,
            nesting: p.nesting,
            diagonals: p.diagonals,
            sell: p.sell,
            bcsr: p.bcsr,
            lanes: p.lanes,
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
