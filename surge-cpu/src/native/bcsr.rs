//! The inspector of the register-blocked layout (`layout1 = bcsr_<r>_<c>`, BCSR r×c; the form
//! is `surge_codegen::analysis::BlockedPattern`, the kernel `bcsr<r>x<c>` of the CPU emitter).
//!
//! Rows are taken in block rows of `r` (rows `q r .. q r + r`). A block row's blocks are found
//! greedily: the smallest column `j` not yet covered among its rows starts a block of columns
//! `j .. j + c` (moved left to end at the gathered input's end), which takes every element of
//! every row of the block row in that range. A block row can go into the layout when each of its
//! rows is *valid* (inside every nested input's data, every index inside the gathered input and
//! the columns strictly increasing, so that a block's column order is the row's element order)
//! and its blocks store at most [`MAX_FILL`] values per element. The other block rows, and the
//! last `rows mod r` rows, are the layout's `rest`, computed through `elems` on the original
//! rows, so they are computed, or reported, exactly as in the row layout.
//!
//! Before building, the inspector measures the fill on a sample of [`SAMPLE_ROWS`] rows in
//! block rows spread over the matrix (the build, a full pass, costs 15-40 row SpMVs on the
//! large FE matrices; the sample 0.04-0.2 of one on those of 90k-360k nonzeros, less on larger
//! ones: `benchmarks --bin bcsr_probe`); when fewer than [`MIN_SHARE`] of the sampled elements
//! would be held there is no layout and the variant runs as `layout1 = rows`. Built once per
//! input set and kept in the [`super::Workspace`] under the caller's key, one per shape, as the
//! SELL layout is.

use super::balance::{Weighed, weigh};
use super::diagonal::{data_len, int_at};
use std::time::Instant;
use surge_codegen::analysis::{BlockedPattern, DiagonalPattern};
use surge_codegen::data::Buffer;
use surge_codegen::ir::Elem;
pub use surge_codegen::policy::bcsr::BcsrShape;

/// A block row whose blocks store more than this many values per element runs as rows.
pub const MAX_FILL: f64 = 1.5;
/// Below this share of the sampled elements in block rows the layout would hold, no layout.
pub const MIN_SHARE: f64 = 0.5;
/// Rows sampled for the fill, in `SAMPLE_ROWS / r` block rows spread over the matrix...
pub const SAMPLE_ROWS: usize = 64;
/// ... until they hold this share of the elements (at least [`SAMPLE_MIN`]): a sampled element
/// costs about ten of an SpMV's (its columns checked and copied, its blocks found), so the
/// sample stays near a tenth of an SpMV however short the rows.
pub const SAMPLE_SHARE: usize = 128;
/// Elements a sample may always read.
pub const SAMPLE_MIN: usize = 256;

/// A BCSR r×c copy of a phase's values and its block columns.
#[derive(Debug)]
pub struct BcsrLayout {
    pub shape: BcsrShape,
    /// Rows of the map (`offsets` input length − 1).
    pub rows: usize,
    /// Per block row in the layout: its first row (a multiple of `r`).
    pub first: Vec<u32>,
    /// Per block row and one past the last: where its blocks start in `cols`.
    pub starts: Vec<u64>,
    /// Per block: its first column.
    pub cols: Vec<u32>,
    /// Per block, `r × c` values column by column (`[(b * c + k) * r + t]`), zeros where its
    /// row has no element; of the values row's float type.
    pub values: Buffer,
    /// Runs of rows outside the layout, `(first, end)`, increasing.
    pub rest: Vec<(usize, usize)>,
    /// `rest` cut and weighed for the `static` schedule's balanced shares (`super::balance`).
    pub weighed_rest: Weighed,
    /// Elements of the rows in the layout.
    pub nnz: usize,
    /// Length of the gathered input the inspector validated the block columns against: the
    /// kernel reads `x[j .. j + c]` without checks, so the layout runs only on a gathered input
    /// at least this long (`bcsr_run::layout_for`).
    pub gather_len: usize,
    /// What the sample measured before the layout was built.
    pub sample: Sample,
    /// Seconds the inspector took, the sample included.
    pub inspect_seconds: f64,
}

impl BcsrLayout {
    /// Block rows in the layout.
    pub fn block_rows(&self) -> usize {
        self.first.len()
    }
    /// Stored values per element of the rows in the layout (1.0: no zeros stored).
    pub fn fill(&self) -> f64 {
        (self.cols.len() * self.shape.area()) as f64 / self.nnz.max(1) as f64
    }
    /// Rows computed outside the layout.
    pub fn rest_rows(&self) -> usize {
        self.rest.iter().map(|(a, b)| b - a).sum()
    }
}

/// The fill measured on a sample of block rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Block rows sampled.
    pub block_rows: usize,
    /// Share of the sampled elements in block rows the layout would hold.
    pub share: f64,
    /// Stored values per element of those block rows.
    pub fill: f64,
    /// Seconds the sample took.
    pub seconds: f64,
}

/// The sampled fill of `buffers` for `pat` in `shape`, or `None` when the layout cannot apply
/// (no full block row, a gathered input narrower than a block or wider than `u32` columns).
pub fn sample(pat: &DiagonalPattern, buffers: &[Buffer], shape: BcsrShape) -> Option<Sample> {
    let t0 = Instant::now();
    let mut scan = Scan::new(pat, buffers, shape)?;
    let block_rows = scan.block_rows;
    let samples = SAMPLE_ROWS / shape.r;
    let picks: Vec<usize> = if block_rows <= samples {
        (0..block_rows).collect()
    } else {
        // Spread by the golden ratio: evenly spaced samples alias with grid-structured matrices.
        (0..samples as u64)
            .map(|s| {
                ((u128::from(s.wrapping_mul(0x9E37_79B9_7F4A_7C15)) * block_rows as u128) >> 64)
                    as usize
            })
            .collect()
    };
    let budget = (scan.data_len as usize / SAMPLE_SHARE).max(SAMPLE_MIN);
    let (mut all, mut held, mut stored, mut taken) = (0usize, 0usize, 0usize, 0usize);
    for &q in &picks {
        if all >= budget {
            break;
        }
        taken += 1;
        match scan.block_row(q) {
            Some(nnz) if scan.fits(nnz) => {
                all += nnz;
                held += nnz;
                stored += scan.blocks.len() * shape.area();
            }
            Some(nnz) => all += nnz,
            None => all += scan.extent_len(q),
        }
    }
    Some(Sample {
        block_rows: taken,
        share: if all == 0 {
            1.0
        } else {
            held as f64 / all as f64
        },
        fill: stored as f64 / held.max(1) as f64,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The layout of `buffers` for `pat` (of the blocked form `blocked`) in `shape`, or `None` when
/// the sample finds too little of the matrix in blocks that fill well, or the layout cannot apply.
pub fn inspect(
    pat: &DiagonalPattern,
    blocked: &BlockedPattern,
    buffers: &[Buffer],
    shape: BcsrShape,
) -> Option<BcsrLayout> {
    let t0 = Instant::now();
    let sample = sample(pat, buffers, shape)?;
    if sample.share < MIN_SHARE {
        return None;
    }
    let mut scan = Scan::new(pat, buffers, shape)?;
    let src = &buffers[pat.rows[blocked.values].buffer];
    if src.elem() != blocked.elem {
        return None;
    }
    let (r, c) = (shape.r, shape.c);
    // Room for the blocks the sample expects (no copies while the layout grows).
    let expect = (src.len() as f64 * sample.share * sample.fill / shape.area() as f64) as usize;
    let mut values = match blocked.elem {
        Elem::F32 => Buffer::F32(Vec::with_capacity(expect * shape.area())),
        _ => Buffer::F64(Vec::with_capacity(expect * shape.area())),
    };
    let (mut first, mut starts) = (Vec::new(), vec![0u64]);
    let mut cols = Vec::with_capacity(expect);
    let mut rest: Vec<(usize, usize)> = Vec::new();
    let mut nnz = 0;
    let mut push_rest = |a: usize, e: usize| match rest.last_mut() {
        Some(run) if run.1 == a => run.1 = e,
        _ => rest.push((a, e)),
    };
    for q in 0..scan.block_rows {
        match scan.block_row(q) {
            Some(n) if scan.fits(n) => {
                let base = cols.len();
                first.push((q * r) as u32);
                cols.extend_from_slice(&scan.blocks);
                starts.push(cols.len() as u64);
                nnz += n;
                match (&mut values, src) {
                    (Buffer::F64(d), Buffer::F64(s)) => scan.place(d, s, base, c),
                    (Buffer::F32(d), Buffer::F32(s)) => scan.place(d, s, base, c),
                    _ => panic!("internal: BCSR values of a non-float type"),
                }
            }
            _ => push_rest(q * r, q * r + r),
        }
    }
    if scan.block_rows * r < scan.rows {
        push_rest(scan.block_rows * r, scan.rows);
    }
    Some(BcsrLayout {
        shape,
        rows: scan.rows,
        first,
        starts,
        cols,
        values,
        weighed_rest: weigh(&rest, scan.off),
        rest,
        nnz,
        gather_len: scan.x_len,
        sample,
        inspect_seconds: t0.elapsed().as_secs_f64(),
    })
}

/// One block row at a time: its rows' extents and columns, and its blocks.
struct Scan<'a> {
    shape: BcsrShape,
    rows: usize,
    block_rows: usize,
    off: &'a Buffer,
    index: &'a Buffer,
    data_len: i64,
    x_len: usize,
    /// Per row of the block row: its data extent, its columns and how many are covered.
    extents: Vec<(usize, usize)>,
    columns: Vec<Vec<u32>>,
    heads: Vec<usize>,
    /// The block row's blocks' first columns.
    blocks: Vec<u32>,
}

impl<'a> Scan<'a> {
    fn new(pat: &DiagonalPattern, buffers: &'a [Buffer], shape: BcsrShape) -> Option<Scan<'a>> {
        let off = &buffers[pat.offsets];
        let rows = off.len().checked_sub(1)?;
        let x_len = buffers[pat.gathered].len();
        if rows >= u32::MAX as usize || x_len < shape.c || x_len > u32::MAX as usize {
            return None;
        }
        let block_rows = rows / shape.r;
        if block_rows == 0 {
            return None;
        }
        let data_len = data_len(pat, buffers);
        Some(Scan {
            shape,
            rows,
            block_rows,
            off,
            index: &buffers[pat.rows[pat.index].buffer],
            data_len,
            x_len,
            extents: vec![(0, 0); shape.r],
            columns: vec![Vec::new(); shape.r],
            heads: vec![0; shape.r],
            blocks: Vec::new(),
        })
    }

    /// The elements of block row `q` with its blocks in `self.blocks`, or `None` when one of
    /// its rows is invalid.
    fn block_row(&mut self, q: usize) -> Option<usize> {
        let (r, c) = (self.shape.r, self.shape.c);
        let mut nnz = 0;
        for t in 0..r {
            let i = q * r + t;
            let (a, b) = (int_at(self.off, i)?, int_at(self.off, i + 1)?);
            if !(0 <= a && a <= b && b <= self.data_len) {
                return None;
            }
            let (a, b) = (a as usize, b as usize);
            self.extents[t] = (a, b);
            if !increasing_columns(self.index, a, b, self.x_len, &mut self.columns[t]) {
                return None;
            }
            nnz += b - a;
            self.heads[t] = 0;
        }
        self.blocks.clear();
        loop {
            let next = (0..r)
                .filter_map(|t| self.columns[t].get(self.heads[t]))
                .min();
            let Some(&j) = next else {
                break;
            };
            let j0 = (j as usize).min(self.x_len - c);
            self.blocks.push(j0 as u32);
            for t in 0..r {
                let cols = &self.columns[t];
                while self.heads[t] < cols.len() && (cols[self.heads[t]] as usize) < j0 + c {
                    self.heads[t] += 1;
                }
            }
        }
        Some(nnz)
    }

    /// Whether the last block row scanned, of `nnz` elements, fills its blocks well enough.
    fn fits(&self, nnz: usize) -> bool {
        (self.blocks.len() * self.shape.area()) as f64 <= MAX_FILL * nnz as f64
    }

    /// Elements of block row `q` by its offsets, for a sample's share (0 when they are invalid).
    fn extent_len(&self, q: usize) -> usize {
        let r = self.shape.r;
        match (int_at(self.off, q * r), int_at(self.off, q * r + r)) {
            (Some(a), Some(b)) if 0 <= a && a <= b => (b - a) as usize,
            _ => 0,
        }
    }

    /// Appends the last block row's blocks, from block `base` on, with the values `src` of its
    /// rows: each element in the first block whose columns reach past it (where the greedy
    /// pass took it), zeros elsewhere.
    fn place<T: Copy + Default>(&self, dst: &mut Vec<T>, src: &[T], base: usize, c: usize) {
        let (r, area) = (self.shape.r, self.shape.area());
        dst.resize((base + self.blocks.len()) * area, T::default());
        for t in 0..r {
            let (a, _) = self.extents[t];
            let mut p = 0;
            for (k, &j) in self.columns[t].iter().enumerate() {
                while j as usize >= self.blocks[p] as usize + c {
                    p += 1;
                }
                let col = j as usize - self.blocks[p] as usize;
                dst[(base + p) * area + col * r + t] = src[a + k];
            }
        }
    }
}

/// Whether `index[a..b]` are strictly increasing positions of an input of `len` elements, then
/// held in `out` as `u32`.
fn increasing_columns(index: &Buffer, a: usize, b: usize, len: usize, out: &mut Vec<u32>) -> bool {
    fn typed<T: Copy + TryInto<u32>>(
        v: &[T],
        a: usize,
        b: usize,
        len: usize,
        out: &mut Vec<u32>,
    ) -> bool {
        let Some(s) = v.get(a..b) else {
            return false;
        };
        out.clear();
        for &j in s {
            let Ok(j) = j.try_into() else {
                return false;
            };
            if j as usize >= len || out.last().is_some_and(|&p| p >= j) {
                return false;
            }
            out.push(j);
        }
        true
    }
    match index {
        Buffer::U32(v) => typed(v, a, b, len, out),
        Buffer::U64(v) => typed(v, a, b, len, out),
        Buffer::I32(v) => typed(v, a, b, len, out),
        Buffer::I64(v) => typed(v, a, b, len, out),
        Buffer::F32(_) | Buffer::F64(_) => false,
    }
}

/// Whether every element of a float buffer is finite (false for integers). One pass, in blocks
/// of 256 that LLVM vectorizes (an exponent mask and compare per element, no early exit inside
/// a block).
pub fn all_finite(b: &Buffer) -> bool {
    match b {
        Buffer::F64(v) => v.chunks(256).all(|s| {
            s.iter().fold(0u64, |n, x| {
                n | u64::from(x.to_bits() & 0x7ff0_0000_0000_0000 == 0x7ff0_0000_0000_0000)
            }) == 0
        }),
        Buffer::F32(v) => v.chunks(256).all(|s| {
            s.iter().fold(0u32, |n, x| {
                n | u32::from(x.to_bits() & 0x7f80_0000 == 0x7f80_0000)
            }) == 0
        }),
        _ => false,
    }
}
