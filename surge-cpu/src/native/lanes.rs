//! The four-partial-sum row layout (`layout1 = lanes`; the kernel is the CPU emitter's `lanes`,
//! `surge-codegen/templates/cpu/lanes_simd.rs`): the original rows, each row's products summed
//! in four partial sums. The inspector validates every row once per input set (increasing
//! offsets within the nested inputs, every index within `x`), so the kernel reads the values,
//! indices and `x` without checks. It keeps the offsets as `u64` and a weight prefix (elements
//! plus one per row) for the `static` schedule's shares (`super::balance`), copies the indices
//! as `u16` where `x` has at most 65,536 elements, and notes the one value of a matrix whose
//! elements all have it (a graph's pattern of ones), whose values the kernel then does not read.
//! An input set with any invalid row has no layout: the phase runs as rows, which report the
//! error exactly.
//!
//! Why a layout of its own: on the graph matrices of `matrices-large` (power-law rows of 4-44
//! elements) the row sum's chain of dependent adds, not memory, bounds a row kernel; four sums
//! in one AVX2 vector took web-spam from 29.5 to 25.5 µs and facebook from 59 to 48 µs on one
//! thread against SELL-8 (best of 30 batches, this 2-core EPYC), with no padding, no permuted
//! writes and an inspector that copies at most the offsets and the narrowed indices.

use super::Workspace;
use super::abi::{Buf, PhaseFns};
use super::balance::Weighed;
use super::diagonal::{data_len, int_at};
use super::plan::HostPlan;
use super::run::{PhaseCall, Shared};
use crate::CpuError;
use std::sync::Arc;
use std::time::Instant;
use surge_codegen::analysis::DiagonalPattern;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cpu::PhaseAbi;

/// The validated rows of a phase's nested inputs.
#[derive(Debug)]
pub struct LanesLayout {
    /// Rows of the map (`offsets` input length − 1).
    pub rows: usize,
    /// The offsets as `u64` (`rows + 1`), increasing, the last within every nested input.
    pub starts: Vec<u64>,
    /// `weights[i]`: elements plus one per row of rows `0..i` (`rows + 1` entries).
    pub weights: Vec<u64>,
    /// Length of the gathered input the indices were validated against: the kernel gathers
    /// without checks, so the layout runs only on a gathered input at least this long.
    pub gather_len: usize,
    /// The column indices as `u16` (positions as in the index input, the rows' own filled) where
    /// the gathered input has at most 65,536 elements; empty otherwise.
    pub narrow: Vec<u16>,
    /// The value every element of the rows has (equal bits: a graph's pattern matrix of ones),
    /// if one does: the kernel then reads no values.
    pub iso: Option<f64>,
    /// Seconds the inspector took.
    pub inspect_seconds: f64,
}

/// The layout of `buffers` for `pat`, or `None` when a row is invalid (or there are none).
pub fn inspect(pat: &DiagonalPattern, buffers: &[Buffer]) -> Option<LanesLayout> {
    let t0 = Instant::now();
    let off = &buffers[pat.offsets];
    let rows = off.len().checked_sub(1)?;
    let data_len = data_len(pat, buffers);
    let mut starts = Vec::with_capacity(rows + 1);
    for i in 0..=rows {
        let a = int_at(off, i)?;
        if a < starts.last().map_or(0, |&p| p as i64) || a > data_len {
            return None;
        }
        starts.push(a as u64);
    }
    let (first, last) = (starts[0] as usize, starts[rows] as usize);
    let x_len = buffers[pat.gathered].len();
    let Buffer::U32(index) = &buffers[pat.rows[pat.index].buffer] else {
        return None;
    };
    if !index[first..last].iter().all(|&j| (j as usize) < x_len) {
        return None;
    }
    let narrow = if x_len <= 1 << 16 {
        let mut n = vec![0u16; index.len()];
        for (to, &j) in n[first..last].iter_mut().zip(&index[first..last]) {
            *to = j as u16;
        }
        n
    } else {
        Vec::new()
    };
    let weights = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| s - starts[0] + i as u64)
        .collect();
    Some(LanesLayout {
        rows,
        starts,
        weights,
        gather_len: x_len,
        narrow,
        iso: iso_value(pat, buffers, first..last),
        inspect_seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The one value (equal bits) of the elements `range` of the pattern's values, if they have one
/// and the pattern has exactly one `f64` nested input besides the indices. Stops at the first
/// other value, so a matrix of many values costs a few reads.
pub(super) fn iso_value(
    pat: &DiagonalPattern,
    buffers: &[Buffer],
    range: std::ops::Range<usize>,
) -> Option<f64> {
    let mut values = (pat.rows.iter().enumerate())
        .filter(|(j, _)| *j != pat.index)
        .filter_map(|(_, r)| match &buffers[r.buffer] {
            Buffer::F64(v) => Some(v),
            _ => None,
        });
    let (Some(v), None) = (values.next(), values.next()) else {
        return None;
    };
    let v = v.get(range)?;
    let first = v.first()?.to_bits();
    v.iter()
        .all(|e| e.to_bits() == first)
        .then(|| f64::from_bits(first))
}

/// The lanes layout phase `pi` runs over under `plan`, if any (built, or kept in `ws` under
/// `key`): none unless the phase's library exports `lanes` and every row is valid.
pub(super) fn layout_for(
    abi: &PhaseAbi,
    plan: &HostPlan,
    fns: &PhaseFns,
    ws: &mut Workspace,
    pi: usize,
    key: Option<u64>,
    buffers: &[Buffer],
) -> Option<Arc<LanesLayout>> {
    match &abi.diagonal {
        Some(pat) if plan.lanes && fns.lanes.is_some() => ws
            .lanes
            .layout(pi, key, (), || inspect(pat, buffers))
            .filter(|l| buffers[pat.gathered].len() >= l.gather_len),
        _ => None,
    }
}

impl PhaseCall<'_> {
    /// The phase's `n` rows over `l` into `out`; an error means "run the rows instead".
    pub(super) fn run_lanes(&self, l: &LanesLayout, out: Shared<*mut u8>) -> Result<(), CpuError> {
        let f = self
            .f
            .lanes
            .expect("internal: a lanes layout without its kernel");
        let iso = l.iso.as_slice();
        let slots = [
            Buf::of_slice(&l.starts),
            Buf::of_slice(&l.narrow),
            Buf::of_slice(iso),
        ];
        self.run_units(f, &slots, (&l.weights, 1), (&[], &Weighed::default()), out)
    }
}

impl Workspace {
    /// The lanes layout kept for phase `phase`, if one was built for a keyed run.
    pub fn lanes_layout(&self, phase: usize) -> Option<&LanesLayout> {
        self.lanes.kept(phase, ())
    }
}
