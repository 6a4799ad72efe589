//! The workspace: what one run leaves for the next (each phase's result buffers, written over when
//! their sizes match, and the diagonal layouts of keyed inputs), and the run's output read from it.

use super::diagonal::DiagonalLayout;
use std::sync::Arc;
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cpu::{Packing, Shape};
use surge_codegen::ir::{Elem, Type};

/// A phase's result: its data and its levels of offsets, outermost first (none for a flat
/// phase, one for a nested phase, one per level above the innermost rows for a deep one).
pub(super) type PhaseResult = (Buffer, Vec<Vec<u64>>);

/// Phase results of the last run, reused by the next (see [`super::NativeKernels::run_in`]), and
/// the data layouts of keyed inputs (see [`super::NativeKernels::run_in_keyed`]).
#[derive(Debug, Default)]
pub struct Workspace {
    phases: Vec<Option<PhaseResult>>,
    last: Option<Last>,
    layouts: Vec<Option<(u64, Option<Arc<DiagonalLayout>>)>>,
    /// The SELL-C-σ layouts of keyed inputs (`super::sell`).
    pub(super) sell: super::sell::SellStore,
    /// The BCSR layouts of keyed inputs (`super::bcsr`).
    pub(super) bcsr: super::kept::KeptLayouts<super::bcsr::BcsrShape, super::bcsr::BcsrLayout>,
    /// The validated rows of keyed inputs (`super::lanes`).
    pub(super) lanes: super::kept::KeptLayouts<(), super::lanes::LanesLayout>,
}

impl Workspace {
    /// The diagonal layout kept for phase `phase`, if one was built for a keyed run.
    pub fn diagonal_layout(&self, phase: usize) -> Option<&DiagonalLayout> {
        self.layouts.get(phase)?.as_ref()?.1.as_deref()
    }
    /// The last run's result (a copy; the buffers stay for reuse).
    pub fn output(&self) -> Option<Output> {
        let last = self.last.as_ref()?;
        let n = self.phases.len();
        let part = |k: usize, (whole, shape): (bool, Shape)| {
            let (data, offsets) = self.phases.get(k)?.as_ref()?;
            Some(to_output(whole, shape, data.clone(), offsets.clone()))
        };
        match last {
            Last::One(whole, shape, Some(p)) => {
                let (data, offsets) = self.phases.get(n.checked_sub(1)?)?.as_ref()?;
                Some(p.output(data, |b| to_output(*whole, *shape, b, offsets.clone())))
            }
            Last::One(whole, shape, None) => part(n.checked_sub(1)?, (*whole, *shape)),
            Last::Parts(ty, kinds) => Some(Output::Composite {
                ty: ty.clone(),
                parts: kinds
                    .iter()
                    .enumerate()
                    .map(|(j, k)| part(n - kinds.len() + j, *k))
                    .collect::<Option<Vec<_>>>()?,
            }),
        }
    }
    /// The last run's result when it is a flat `f64` sequence, borrowed (no copy): what a loop
    /// that reads each run's result into its own array uses.
    pub fn output_f64(&self) -> Option<&[f64]> {
        let Some(Last::One(whole, shape, None)) = &self.last else {
            return None;
        };
        match (whole, shape) {
            (true, Shape::Nested) | (false, Shape::Flat) => {}
            _ => return None,
        }
        match &self.phases.last()?.as_ref()?.0 {
            Buffer::F64(v) => Some(v),
            _ => None,
        }
    }
    /// The last run's result, moved out.
    pub fn take_output(&mut self) -> Option<Output> {
        let out = self.output();
        self.last = None;
        out
    }

    /// Starts a run of a program with `phases` phases (the last output is forgotten).
    pub(super) fn begin(&mut self, phases: usize) {
        self.phases.resize_with(phases, || None);
        self.layouts.resize_with(phases, || None);
        self.last = None;
    }

    /// Ends a run whose whole result is one nested f64 sequence written by the host (a GEMM
    /// variant); `fill` writes it into the previous run's buffer when the size matches.
    pub(super) fn set_nested(
        &mut self,
        n: usize,
        offsets: Vec<u64>,
        fill: impl FnOnce(&mut [f64]) -> Result<(), crate::CpuError>,
    ) -> Result<(), crate::CpuError> {
        self.begin(1);
        let old = self.phases[0].take().map(|p| p.0);
        let mut data = reuse(Elem::F64, n, old);
        let Buffer::F64(v) = &mut data else {
            panic!("internal: an f64 buffer of another type");
        };
        fill(v)?;
        self.phases[0] = Some((data, vec![offsets]));
        self.last = Some(Last::One(false, Shape::Nested, None));
        Ok(())
    }

    /// The diagonal layout of phase `phase`: the one kept under `key`, else `build`'s (kept when
    /// there is a key).
    pub(super) fn layout(
        &mut self,
        phase: usize,
        key: Option<u64>,
        build: impl FnOnce() -> Option<DiagonalLayout>,
    ) -> Option<Arc<DiagonalLayout>> {
        match (&self.layouts[phase], key) {
            (Some((k, l)), Some(key)) if *k == key => l.clone(),
            _ => {
                let l = build().map(Arc::new);
                if let Some(key) = key {
                    self.layouts[phase] = Some((key, l.clone()));
                }
                l
            }
        }
    }

    /// Phase `phase`'s result of the previous run, for reuse.
    pub(super) fn take_phase(&mut self, phase: usize) -> Option<PhaseResult> {
        self.phases[phase].take()
    }

    /// Keeps phase `phase`'s result of this run.
    pub(super) fn put_phase(&mut self, phase: usize, r: PhaseResult) {
        self.phases[phase] = Some(r);
    }

    /// Ends a run whose last phase is `whole` and of `shape` (its elements stored as words when
    /// `packed`): its result is the output.
    pub(super) fn finish(&mut self, whole: bool, shape: Shape, packed: Option<Packing>) {
        self.last = Some(Last::One(whole, shape, packed));
    }

    /// Ends a run whose result of type `ty` is the last phases' results (`kinds`, in order).
    pub(super) fn finish_parts(&mut self, ty: Type, kinds: Vec<(bool, Shape)>) {
        self.last = Some(Last::Parts(ty, kinds));
    }
}

/// How the last run's output is read from the phase results.
#[derive(Debug, Clone)]
enum Last {
    /// The last phase's result (`whole`, `shape`, and how its words hold tuples or booleans).
    One(bool, Shape, Option<Packing>),
    /// A composite result of this type from the last phases.
    Parts(Type, Vec<(bool, Shape)>),
}

/// `old` when it holds `n` elements of `elem` (written over), else a new zeroed buffer.
pub(super) fn reuse(elem: Elem, n: usize, old: Option<Buffer>) -> Buffer {
    match old {
        Some(b) if b.elem() == elem && b.len() == n => b,
        _ => Buffer::zeroed(elem, n),
    }
}

fn to_output(whole: bool, shape: Shape, data: Buffer, mut offsets: Vec<Vec<u64>>) -> Output {
    match (whole, shape) {
        (true, Shape::Flat) => Output::Scalar(data.get(0).expect("one scalar")),
        (true, Shape::Nested) => Output::Seq(data),
        (false, Shape::Flat) => Output::Seq(data),
        (false, Shape::Nested) => Output::Nested {
            data,
            offsets: offsets
                .pop()
                .expect("internal: nested phase without offsets"),
        },
        (_, Shape::Deep { .. }) => Output::Deep { data, offsets },
    }
}
