//! The inspector of the SELL-C-σ layout (`layout1 = sell_<C>_<σ>`; the pattern is
//! `surge_codegen::analysis::DiagonalPattern`, the kernel `sell<C>` of the CPU emitter).
//!
//! A row can go into the layout when it is *valid*: non-empty, inside every nested input's data and
//! every index inside the gathered input. The valid rows, in order, are cut into windows of σ,
//! each sorted by length, longest first (stable: σ = 1 keeps the order), and then into chunks of C
//! slots. A row that would pad its chunk stays out: with σ < C, one longer than
//! [`LONG_ROW_FACTOR`] times the mean valid row plus `2C`; with σ ≥ C, one longer than
//! [`LONG_ROW_FACTOR`] times the shortest row of its chunk plus `2C` (the window's longest rows
//! first). A chunk is as wide as its longest row and stores
//! every nested input column-major, a row's columns past its length repeating its last element
//! (valid values and indices, computed by the kernel and discarded). Slots past the last row hold
//! the chunk's first row with length 0 and are never written. The other rows (empty, invalid,
//! long) are the layout's `rest`, computed through `elems` on the original rows, so they are
//! computed, or reported, exactly as in the row layout.
//!
//! Built once per input set and kept in the [`super::Workspace`] under the caller's key, one per
//! shape, as the diagonal layout is (see `super::diagonal`).

use super::Workspace;
use super::balance::{Weighed, weigh};
use super::diagonal::{data_len, int_at};
use std::time::Instant;
use surge_codegen::analysis::DiagonalPattern;
use surge_codegen::data::Buffer;
use surge_codegen::policy::sell::SellShape;

/// A row longer than this many times the mean valid row (σ < C) or the shortest row of its chunk
/// (σ ≥ C), plus `2C`, is computed as a row.
pub const LONG_ROW_FACTOR: usize = 4;

/// A SELL-C-σ copy of a phase's nested inputs.
#[derive(Debug)]
pub struct SellLayout {
    pub shape: SellShape,
    /// Rows of the map (`offsets` input length − 1).
    pub rows: usize,
    /// Per slot (`chunks() * C`): its row.
    pub perm: Vec<u32>,
    /// Per slot: its row's length; 0 for a padding slot.
    pub lens: Vec<u32>,
    /// Per chunk and one past the last: where its columns start in `values`.
    pub starts: Vec<u64>,
    /// Per nested input, in parameter order: `[starts[q] + k * C + r]`.
    pub values: Vec<Buffer>,
    /// Runs of rows outside the layout, `(first, end)`, increasing.
    pub rest: Vec<(usize, usize)>,
    /// `rest` cut and weighed for the `static` schedule's balanced shares (`super::balance`).
    pub weighed_rest: Weighed,
    /// Elements of the rows in the layout.
    pub nnz: usize,
    /// Length of the gathered input the inspector validated the stored indices against: the
    /// kernel gathers without checks, so the layout runs only on a gathered input at least this
    /// long (`sell_run::layout_for`).
    pub gather_len: usize,
    /// The value every element of the rows has (equal bits), if one does: the kernel's SIMD
    /// path then reads no values (`super::lanes::iso_value`).
    pub iso: Option<f64>,
    /// Seconds the inspector took to build it.
    pub inspect_seconds: f64,
}

impl SellLayout {
    /// Number of chunks.
    pub fn chunks(&self) -> usize {
        self.starts.len() - 1
    }
    /// Stored slots per element of the rows in the layout (1.0: no padding).
    pub fn fill(&self) -> f64 {
        *self.starts.last().unwrap_or(&0) as f64 / self.nnz.max(1) as f64
    }
    /// Rows computed outside the layout.
    pub fn rest_rows(&self) -> usize {
        self.rest.iter().map(|(a, b)| b - a).sum()
    }
}

/// The layout of `buffers` for `pat` in `shape`, or `None` when no row fits it.
pub fn inspect(pat: &DiagonalPattern, buffers: &[Buffer], shape: SellShape) -> Option<SellLayout> {
    let t0 = Instant::now();
    let c = shape.chunk;
    let off = &buffers[pat.offsets];
    let rows = off.len().checked_sub(1)?;
    if rows >= u32::MAX as usize {
        return None;
    }
    let index = &buffers[pat.rows[pat.index].buffer];
    let x_len = i64::try_from(buffers[pat.gathered].len()).ok()?;
    let data_len = data_len(pat, buffers);
    // Each row's start and length when it is non-empty, inside the data and gathers validly.
    let valid: Vec<Option<(usize, u32)>> = (0..rows)
        .map(|i| {
            let (a, b) = (int_at(off, i)?, int_at(off, i + 1)?);
            if !(0 <= a && a < b && b <= data_len) || b - a >= i64::from(u32::MAX) {
                return None;
            }
            let (a, b) = (a as usize, b as usize);
            indices_within(index, a, b, x_len).then_some((a, (b - a) as u32))
        })
        .collect();
    let (count, total) = valid
        .iter()
        .flatten()
        .fold((0usize, 0usize), |(n, s), (_, l)| (n + 1, s + *l as usize));
    if count == 0 {
        return None;
    }
    let len_of = |i: usize| valid[i].map_or(0, |(_, l)| l as usize);
    let mut order: Vec<usize> = (0..rows).filter(|&i| valid[i].is_some()).collect();
    if shape.sigma < c {
        // Unsorted: a row much longer than the mean pads its chunk.
        let cap = LONG_ROW_FACTOR * total.div_ceil(count) + 2 * c;
        order.retain(|&i| len_of(i) <= cap);
    } else {
        // Sorted: the rows of a window, longest first, that are much longer than the shortest
        // row of their chunk, would pad it; each window keeps the rest.
        let mut kept = Vec::with_capacity(order.len());
        for w in order.chunks_mut(shape.sigma) {
            w.sort_by_key(|&i| std::cmp::Reverse(len_of(i)));
            let mut s = 0;
            while s < w.len()
                && len_of(w[s]) > LONG_ROW_FACTOR * len_of(w[(s + c - 1).min(w.len() - 1)]) + 2 * c
            {
                s += 1;
            }
            kept.extend_from_slice(&w[s..]);
        }
        order = kept;
    }
    let in_layout = {
        let mut v = vec![false; rows];
        order.iter().for_each(|&i| v[i] = true);
        v
    };
    let regular = |i: usize| valid[i].filter(|_| in_layout[i]);
    let len_of = |i: usize| regular(i).map_or(0, |(_, l)| l);
    let chunks = order.len().div_ceil(c);
    let mut perm = vec![0u32; chunks * c];
    let mut lens = vec![0u32; chunks * c];
    let mut starts = Vec::with_capacity(chunks + 1);
    starts.push(0u64);
    for q in 0..chunks {
        let first = order[q * c];
        let mut width = 0;
        for r in 0..c {
            let s = q * c + r;
            match order.get(s) {
                Some(&i) => {
                    perm[s] = i as u32;
                    lens[s] = len_of(i);
                    width = width.max(lens[s]);
                }
                None => perm[s] = first as u32,
            }
        }
        starts.push(starts[q] + u64::from(width) * c as u64);
    }
    let source: Vec<(usize, usize)> = perm
        .iter()
        .map(|&i| {
            let (a, l) = regular(i as usize).expect("a regular row in the layout");
            (a, l as usize)
        })
        .collect();
    let values = pat
        .rows
        .iter()
        .map(|r| {
            let src = &buffers[r.buffer];
            let mut dst = Buffer::zeroed(src.elem(), *starts.last().unwrap_or(&0) as usize);
            copy_columns(src, &mut dst, &starts, c, &source);
            dst
        })
        .collect();
    let mut rest: Vec<(usize, usize)> = Vec::new();
    for i in (0..rows).filter(|&i| regular(i).is_none()) {
        match rest.last_mut() {
            Some(run) if run.1 == i => run.1 = i + 1,
            _ => rest.push((i, i + 1)),
        }
    }
    let nnz = order.iter().map(|&i| len_of(i) as usize).sum();
    Some(SellLayout {
        shape,
        rows,
        perm,
        lens,
        starts,
        values,
        weighed_rest: weigh(&rest, off),
        rest,
        nnz,
        gather_len: buffers[pat.gathered].len(),
        iso: match (int_at(off, 0), int_at(off, rows)) {
            (Some(a), Some(e)) if 0 <= a && a <= e => {
                super::lanes::iso_value(pat, buffers, a as usize..e as usize)
            }
            _ => None,
        },
        inspect_seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Whether `index[a..b]` are all positions of an input of `len` elements.
fn indices_within(index: &Buffer, a: usize, b: usize, len: i64) -> bool {
    fn within<T: Copy + Into<i128>>(v: &[T], a: usize, b: usize, len: i64) -> bool {
        v.get(a..b).is_some_and(|s| {
            s.iter()
                .all(|j| (0..i128::from(len)).contains(&(*j).into()))
        })
    }
    match index {
        Buffer::U32(v) => within(v, a, b, len),
        Buffer::U64(v) => within(v, a, b, len),
        Buffer::I32(v) => within(v, a, b, len),
        Buffer::I64(v) => within(v, a, b, len),
        Buffer::F32(_) | Buffer::F64(_) => false,
    }
}

/// `dst[starts[q] + k * c + r] = src[a + min(k, len - 1)]` for every slot `q * c + r` whose
/// source row is `(a, len) = source[slot]`.
fn copy_columns(
    src: &Buffer,
    dst: &mut Buffer,
    starts: &[u64],
    c: usize,
    source: &[(usize, usize)],
) {
    fn copy<T: Copy>(s: &[T], d: &mut [T], starts: &[u64], c: usize, source: &[(usize, usize)]) {
        for q in 0..starts.len() - 1 {
            let (a0, e0) = (starts[q] as usize, starts[q + 1] as usize);
            let width = (e0 - a0) / c;
            for r in 0..c {
                let (a, len) = source[q * c + r];
                for k in 0..width {
                    d[a0 + k * c + r] = s[a + k.min(len - 1)];
                }
            }
        }
    }
    match (src, dst) {
        (Buffer::F32(s), Buffer::F32(d)) => copy(s, d, starts, c, source),
        (Buffer::F64(s), Buffer::F64(d)) => copy(s, d, starts, c, source),
        (Buffer::I32(s), Buffer::I32(d)) => copy(s, d, starts, c, source),
        (Buffer::I64(s), Buffer::I64(d)) => copy(s, d, starts, c, source),
        (Buffer::U32(s), Buffer::U32(d)) => copy(s, d, starts, c, source),
        (Buffer::U64(s), Buffer::U64(d)) => copy(s, d, starts, c, source),
        _ => panic!("internal: a SELL copy of another element type"),
    }
}

/// The SELL layouts of keyed inputs, per phase and shape (see [`super::Workspace`]).
pub(super) type SellStore = super::kept::KeptLayouts<SellShape, SellLayout>;

impl Workspace {
    /// The SELL layout of `shape` kept for phase `phase`, if one was built for a keyed run.
    pub fn sell_layout(&self, phase: usize, shape: SellShape) -> Option<&SellLayout> {
        self.sell.kept(phase, shape)
    }
}
