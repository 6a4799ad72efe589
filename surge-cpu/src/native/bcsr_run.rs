//! Running a flat phase over a BCSR r×c layout (`super::bcsr`): the block rows through the
//! emitted `bcsr<r>x<c>`, the rows outside the layout through `elems`, the outer level's schedule
//! applied to block rows of r rows. The layout runs only on a gathered input whose every element
//! is finite (checked before each run: a stored zero times ∞ or NaN is NaN, where the row layout
//! has no product at all). A failure anywhere is not reported from here: the caller runs the
//! phase again through `elems`, so that an error is exactly the row layout's.

use super::Workspace;
use super::abi::{BcsrFn, Buf, PhaseFns};
use super::bcsr::{self, BcsrLayout, BcsrShape};
use super::plan::HostPlan;
use super::run::{PhaseCall, Shared};
use crate::CpuError;
use std::sync::Arc;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cpu::PhaseAbi;

impl PhaseFns {
    /// The phase's `bcsr<r>x<c>` kernel for `shape`, if the library exports it.
    pub(super) fn bcsr_for(&self, shape: BcsrShape) -> Option<BcsrFn> {
        self.bcsr[shape.index()]
    }
}

/// The BCSR layout phase `pi` runs over under `plan` on `buffers`, if any (built, or kept in `ws`
/// under `key`): none unless the phase has the blocked form and the gathered input is finite.
#[allow(clippy::too_many_arguments)]
pub(super) fn layout_for(
    abi: &PhaseAbi,
    plan: &HostPlan,
    fns: &PhaseFns,
    ws: &mut Workspace,
    pi: usize,
    key: Option<u64>,
    buffers: &[Buffer],
) -> Option<Arc<BcsrLayout>> {
    match (&abi.diagonal, &abi.bcsr, plan.bcsr) {
        (Some(pat), Some(blocked), Some(shape)) if fns.bcsr_for(shape).is_some() => {
            let x = &buffers[pat.gathered];
            // The kernel reads `x` unchecked: never one shorter than the layout was validated
            // against; and a stored zero must add ±0.
            ws.bcsr
                .layout(pi, key, shape, || {
                    bcsr::inspect(pat, blocked, buffers, shape)
                })
                .filter(|l| x.len() >= l.gather_len && bcsr::all_finite(x))
        }
        _ => None,
    }
}

impl PhaseCall<'_> {
    /// The phase's `n` rows over `l` into `out`; an error means "run the rows instead".
    pub(super) fn run_bcsr(&self, l: &BcsrLayout, out: Shared<*mut u8>) -> Result<(), CpuError> {
        let f = self
            .f
            .bcsr_for(l.shape)
            .expect("internal: a BCSR layout without its kernel");
        let slots = [
            Buf::of_slice(&l.first),
            Buf::of_slice(&l.starts),
            Buf::of_slice(&l.cols),
            Buf::of(&l.values),
        ];
        let rest = (&l.rest[..], &l.weighed_rest);
        self.run_units(f, &slots, (&l.starts, l.shape.r), rest, out)
    }
}

impl Workspace {
    /// The BCSR layout of `shape` kept for phase `phase`, if one was built for a keyed run.
    pub fn bcsr_layout(&self, phase: usize, shape: BcsrShape) -> Option<&BcsrLayout> {
        self.bcsr.kept(phase, shape)
    }
}
