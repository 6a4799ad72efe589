//! The inspector of the diagonal layout (`layout1 = diagonals`; the pattern and its kernel are
//! described in `surge_codegen::analysis::DiagonalPattern`).
//!
//! Rows are taken in blocks of [`BLOCK`]. A row `i` is *regular* when it has `d` elements, with
//! index row exactly `i + o_0 < .. < i + o_{d-1}` for the matrix's band `o` (the most common index
//! signature among sampled rows), every index inside the gathered input and the row inside its
//! data. A block is *diagonal* when each diagonal's window of the gathered input is inside it and
//! at least [`MIN_REGULAR_ROWS`] of its rows are regular. Diagonal blocks run through the emitted
//! `diag` function on a diagonal-major copy of the other nested inputs (zeros for irregular rows);
//! their irregular rows (grid boundaries of a stencil, the ends of a band) are then recomputed
//! through `elems` on the original rows, as are all rows of the other blocks. So any row the band
//! does not describe, and any invalid row, is computed, or reported, exactly as in the row layout.
//! When fewer than half of the blocks are diagonal there is no layout and the variant runs as
//! `layout1 = rows`.
//!
//! **Zero-filled bands.** Where the phase is the blocked SpMV form (`reduce(+, map(*, ..), +0.0)`
//! over floats, `analysis::BlockedPattern`; `inspect`'s `fill`), the band is instead every offset
//! that at least [`FILL_MIN_SAMPLES`] sampled rows have, and a row is regular when its columns are
//! any increasing subset of the band: the missing slots hold zeros. A stored zero adds `±0` to a
//! row's sum, which never changes it while `x` is finite (the sum starts at `+0.0` and is never
//! `-0.0`), so the runner uses such a layout only then, as BCSR's (`DiagonalLayout::filled`). Why:
//! a 3-D 27-point stencil's boundary rows lack some neighbours, so few of its blocks have
//! [`MIN_REGULAR_ROWS`] rows of the full band (crystm01: 27 diagonals, 21.6 elements per row,
//! no diagonal layout at all) while MKL's inspector stores it by diagonals (on the Intel Xeon
//! here, 2026-11-29: 6.3 µs on two threads against 15.9 for the best CSR-based variant). A
//! filled band that stores more than [`MAX_FILL`] slots per element of its regular rows is not
//! kept, and an exact band that already computes [`EXACT_COVER`] of the rows diagonally is
//! preferred (a filled band costs a pass over `x` per run, for the finiteness check).
//!
//! The copy is built once per input set: [`super::NativeKernels::run_in_keyed`] keeps it in the
//! [`super::Workspace`] under the caller's key for immutable inputs (what MKL's
//! `mkl_sparse_optimize` is to its handle); without a key it is rebuilt for every run.

use surge_codegen::analysis::DiagonalPattern;
use surge_codegen::data::Buffer;

/// Rows per block; the `DIAG_BLOCK` of the generated runtime.
pub const BLOCK: usize = 64;
/// More diagonals than this and the band is not stored diagonally.
const MAX_DIAGONALS: usize = 64;
/// Rows sampled to find the band.
const SAMPLES: usize = 257;
/// Regular rows a block needs to be computed diagonally (the rest are recomputed as rows).
pub const MIN_REGULAR_ROWS: usize = 48;
/// An exact band that computes this fraction of the rows diagonally is kept (see `inspect`).
const EXACT_COVER: f64 = 0.9;
/// A zero-filled band's offsets: those at least this many sampled rows have.
const FILL_MIN_SAMPLES: usize = 8;
/// A zero-filled band stores at most this many slots per element of its regular rows.
const MAX_FILL: f64 = 1.6;

/// A diagonal-major copy of a phase's nested inputs.
#[derive(Debug)]
pub struct DiagonalLayout {
    /// The band `o`, increasing.
    pub offsets: Vec<i64>,
    /// Rows of the map (`offsets` input length − 1).
    pub rows: usize,
    /// Per block (`rows / BLOCK` full blocks): whether it is a diagonal block, computed from
    /// the copy.
    pub diagonal: Vec<bool>,
    /// The irregular rows of those blocks, increasing: recomputed as rows after their block.
    pub fixups: Vec<usize>,
    /// Per nested input other than the index row, in parameter order: `[block][k][r]`.
    pub values: Vec<Buffer>,
    /// Whether some regular row lacks part of the band (zeros stored): the layout then computes
    /// the rows' sums only while the gathered input is finite.
    pub filled: bool,
}

impl DiagonalLayout {
    /// Number of diagonal blocks.
    pub fn diagonal_blocks(&self) -> usize {
        self.diagonal.iter().filter(|r| **r).count()
    }
}

/// Element `i` of an integer buffer as `i64` (`None` past its end, for floats, or above `i64`).
pub(super) fn int_at(b: &Buffer, i: usize) -> Option<i64> {
    Some(match b {
        Buffer::U32(v) => i64::from(*v.get(i)?),
        Buffer::U64(v) => i64::try_from(*v.get(i)?).ok()?,
        Buffer::I32(v) => i64::from(*v.get(i)?),
        Buffer::I64(v) => *v.get(i)?,
        Buffer::F32(_) | Buffer::F64(_) => return None,
    })
}

/// The length of the shortest nested input's data (values, indices) of `pat`: the bound every
/// row's extent must stay within (shared by the diagonal, SELL and BCSR inspectors).
pub(super) fn data_len(pat: &DiagonalPattern, buffers: &[Buffer]) -> i64 {
    pat.rows
        .iter()
        .map(|r| buffers[r.buffer].len())
        .min()
        .unwrap_or(0) as i64
}

/// The layout of `buffers` for `pat`, or `None` when it does not pay (or does not apply); with
/// `fill` (the phase is the blocked SpMV form) a zero-filled band first (see the module's notes).
pub fn inspect(pat: &DiagonalPattern, buffers: &[Buffer], fill: bool) -> Option<DiagonalLayout> {
    let exact = inspect_band(pat, buffers, false);
    if !fill || exact.as_ref().is_some_and(covers_most) {
        return exact;
    }
    inspect_band(pat, buffers, true).or(exact)
}

/// Whether an exact band computes at least [`EXACT_COVER`] of the rows diagonally: then it is
/// kept rather than a zero-filled one, whose runs each check that the whole gathered input is
/// finite, one more pass over it on the calling thread (the 2048² Laplacian, 4.2M rows, 5
/// diagonals, in DRAM: 10.25 ms per call with the filled band against 7.87 with the exact one,
/// whose only recomputed rows are the grid's boundaries; Intel Xeon here, 2026-11-29).
fn covers_most(l: &DiagonalLayout) -> bool {
    let diagonal_rows = l.diagonal_blocks() * BLOCK - l.fixups.len();
    diagonal_rows as f64 >= EXACT_COVER * l.rows as f64
}

/// [`inspect`] with the zero-filled band (`fill`) or the exact one.
fn inspect_band(pat: &DiagonalPattern, buffers: &[Buffer], fill: bool) -> Option<DiagonalLayout> {
    let off = &buffers[pat.offsets];
    let rows = off.len().checked_sub(1)?;
    let blocks = rows / BLOCK;
    if blocks == 0 {
        return None;
    }
    let index = &buffers[pat.rows[pat.index].buffer];
    let x_len = i64::try_from(buffers[pat.gathered].len()).ok()?;
    let data_len = data_len(pat, buffers);
    // The row's extent when it is inside every nested input's data.
    let extent = |i: usize| -> Option<(usize, usize)> {
        let (a, b) = (int_at(off, i)?, int_at(off, i + 1)?);
        (0 <= a && a <= b && b <= data_len).then_some((a as usize, b as usize))
    };
    let signature = |i: usize| -> Option<Vec<i64>> {
        let (a, b) = extent(i)?;
        if b - a == 0 || b - a > MAX_DIAGONALS {
            return None;
        }
        (a..b).map(|k| Some(int_at(index, k)? - i as i64)).collect()
    };
    // The band: the most common signature among sampled rows, spread by the golden ratio (evenly
    // spaced samples alias with grid-structured matrices: 2048² rows sampled every rows/256 all
    // land on a grid boundary).
    let mut seen: Vec<(Vec<i64>, usize)> = Vec::new();
    for s in 0..SAMPLES as u64 {
        let i = ((u128::from(s.wrapping_mul(0x9E37_79B9_7F4A_7C15)) * rows as u128) >> 64) as usize;
        if let Some(sig) = signature(i) {
            match seen.iter_mut().find(|e| e.0 == sig) {
                Some(e) => e.1 += 1,
                None => seen.push((sig, 1)),
            }
        }
    }
    let band = if fill {
        union_band(&seen)?
    } else {
        seen.into_iter().max_by_key(|e| e.1)?.0
    };
    if band.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    let nd = band.len();
    // Whether row `i` is regular, `put(j, k)` called for its `j`-th element and that element's
    // slot `k` in the band (increasing) up to the first that is not.
    let slots = |i: usize, put: &mut dyn FnMut(usize, usize)| -> bool {
        let Some((a, b)) = extent(i) else {
            return false;
        };
        if b - a > nd || (!fill && b - a != nd) {
            return false;
        }
        let mut k = 0;
        (a..b).all(|j| {
            let Some(c) = int_at(index, j) else {
                return false;
            };
            let Some(d) = band[k..].iter().position(|o| i as i64 + o == c) else {
                return false;
            };
            k += d + 1;
            put(j - a, k - 1);
            (0..x_len).contains(&c)
        })
    };
    let regular: Vec<bool> = (0..blocks * BLOCK)
        .map(|i| slots(i, &mut |_, _| {}))
        .collect();
    let windows_inside = |q: usize| {
        band.iter().all(|o| {
            let start = (q * BLOCK) as i64 + o;
            start >= 0 && start + BLOCK as i64 <= x_len
        })
    };
    // A filled band's block may reach past the ends of the gathered input: the kernel reads zeros
    // there (`diag_x_window`), which its rows' stored zeros or recomputation make harmless; other
    // bodies could fail on such placeholders, so theirs stay inside.
    let diagonal: Vec<bool> = (0..blocks)
        .map(|q| {
            (fill || windows_inside(q))
                && regular[q * BLOCK..(q + 1) * BLOCK]
                    .iter()
                    .filter(|r| **r)
                    .count()
                    >= MIN_REGULAR_ROWS
        })
        .collect();
    let fixups: Vec<usize> = (0..blocks * BLOCK)
        .filter(|&i| diagonal[i / BLOCK] && !regular[i])
        .collect();
    let count = diagonal.iter().filter(|r| **r).count();
    if 2 * count < blocks {
        return None;
    }
    // The slots of the regular rows of diagonal blocks, and the elements they hold: a filled
    // band that stores no zero needs no finiteness check.
    let (mut slots_kept, mut elements) = (0usize, 0usize);
    for i in (0..blocks * BLOCK).filter(|&i| fill && diagonal[i / BLOCK] && regular[i]) {
        let (a, b) = extent(i).expect("a regular row's extent");
        slots_kept += nd;
        elements += b - a;
    }
    if slots_kept as f64 > MAX_FILL * elements as f64 {
        return None;
    }
    let values = pat
        .rows
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != pat.index)
        .map(|(_, r)| {
            let src = &buffers[r.buffer];
            let mut dst = Buffer::zeroed(src.elem(), blocks * nd * BLOCK);
            copy_diagonals(src, &mut dst, off, (&diagonal, &regular), &slots, nd);
            dst
        })
        .collect();
    Some(DiagonalLayout {
        offsets: band,
        rows,
        diagonal,
        fixups,
        values,
        filled: slots_kept > elements,
    })
}

/// The band of a zero-filled layout: every offset at least [`FILL_MIN_SAMPLES`] of the sampled
/// rows (`seen`: signatures and how many rows had each) have, increasing; `None` past
/// [`MAX_DIAGONALS`].
fn union_band(seen: &[(Vec<i64>, usize)]) -> Option<Vec<i64>> {
    let mut count: std::collections::BTreeMap<i64, usize> = Default::default();
    for (sig, n) in seen {
        for o in sig {
            *count.entry(*o).or_default() += n;
        }
    }
    let band: Vec<i64> = count
        .into_iter()
        .filter(|&(_, n)| n >= FILL_MIN_SAMPLES)
        .map(|(o, _)| o)
        .collect();
    (!band.is_empty() && band.len() <= MAX_DIAGONALS).then_some(band)
}

/// The slots of a regular row's elements in the band (`inspect_band`'s `slots`).
type Slots<'a> = dyn Fn(usize, &mut dyn FnMut(usize, usize)) -> bool + 'a;

/// `dst[(q * nd + k) * BLOCK + r] = src[off[q * BLOCK + r] + j]` for the `j`-th element of each
/// regular row of the diagonal blocks `q` (`(diagonal, regular)`), `k` its slot in the band
/// (`slots`); the other slots keep their zeros.
fn copy_diagonals(
    src: &Buffer,
    dst: &mut Buffer,
    off: &Buffer,
    (diagonal, regular): (&[bool], &[bool]),
    slots: &Slots<'_>,
    nd: usize,
) {
    fn copy<T: Copy>(
        s: &[T],
        d: &mut [T],
        off: &Buffer,
        (diagonal, regular): (&[bool], &[bool]),
        slots: &Slots<'_>,
        nd: usize,
    ) {
        for (q, _) in diagonal.iter().enumerate().filter(|(_, r)| **r) {
            for r in (0..BLOCK).filter(|r| regular[q * BLOCK + r]) {
                let a = int_at(off, q * BLOCK + r).expect("a regular row's offset") as usize;
                slots(q * BLOCK + r, &mut |j, k| {
                    d[(q * nd + k) * BLOCK + r] = s[a + j]
                });
            }
        }
    }
    let m = (diagonal, regular);
    match (src, dst) {
        (Buffer::F32(s), Buffer::F32(d)) => copy(s, d, off, m, slots, nd),
        (Buffer::F64(s), Buffer::F64(d)) => copy(s, d, off, m, slots, nd),
        (Buffer::I32(s), Buffer::I32(d)) => copy(s, d, off, m, slots, nd),
        (Buffer::I64(s), Buffer::I64(d)) => copy(s, d, off, m, slots, nd),
        (Buffer::U32(s), Buffer::U32(d)) => copy(s, d, off, m, slots, nd),
        (Buffer::U64(s), Buffer::U64(d)) => copy(s, d, off, m, slots, nd),
        _ => panic!("internal: a diagonal copy of another element type"),
    }
}
