//! The layout sample of the CUSP pass (`cusp.rs`, whose module notes say what it counts and
//! why): one pass over the rows of a [`Plan`]'s runs counting occupied diagonals in per-thread
//! bitmaps, the column spread and the 2×2 blocks of each full block row.

use super::cusp::{Plan, RUNS, prefetch_lines};
use crate::mtx::CsrMatrix;
use std::cell::RefCell;

/// What the layout sample counted.
#[derive(Debug, Default)]
pub(super) struct LayoutCounts {
    /// Rows read.
    pub(super) rows: usize,
    /// Their nonzeros.
    pub(super) nnz: usize,
    /// Occupied diagonals of every row of the runs (`fine`) and of each run's first half
    /// (`coarse`).
    pub(super) fine: usize,
    pub(super) coarse: usize,
    /// Σ |col − diagonal position| over the nonzeros read.
    pub(super) spread: u128,
    /// 2×2 blocks of the full block rows read, and their nonzeros.
    pub(super) blocks: usize,
    pub(super) block_nnz: usize,
}

thread_local! {
    /// The diagonal bitmaps, kept per thread: a fresh allocation of the `rows + cols` bits
    /// page-faults on every call of a large matrix.
    static BITMAPS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The runs of consecutive rows `plan` reads: all rows, or [`RUNS`] runs of `run_rows` rows
/// (even starts, so that they hold whole block rows), one in each equal segment of the
/// matrix, placed in it by the golden ratio (evenly spaced runs alias with grid-structured
/// matrices).
pub(super) fn runs(m: &CsrMatrix, plan: Plan) -> impl Iterator<Item = (usize, usize)> {
    let (rows, whole, len) = (m.rows, plan.whole(m), plan.run_rows);
    let count = if whole { 1 } else { RUNS };
    (0..count).map(move |i| {
        if whole {
            return (0, rows);
        }
        let (seg, seg_end) = (i * rows / RUNS, (i + 1) * rows / RUNS);
        let room = (seg_end - seg).saturating_sub(len + 1);
        let phi = ((i + 1) as f64 * 0.618_033_988_749_895).fract();
        let start = seg.next_multiple_of(2) + (((phi * room as f64) as usize) & !1);
        (start.min(seg_end), (start + len).min(seg_end))
    })
}

/// One pass over the rows of `plan`'s runs: occupied diagonals (`col − row`, a bitmap over the
/// `rows + cols` possible ones per sample, counted as bits are first set: a sort of the
/// sampled diagonals cost about as much as the rest of the features together), column spread
/// and the 2×2 blocks of each full block row.
pub(super) fn layout_sample(m: &CsrMatrix, plan: Plan) -> LayoutCounts {
    BITMAPS.with(|b| {
        let mut b = b.borrow_mut();
        let words = (m.rows + m.cols).div_ceil(64).max(1);
        let need = if plan.whole(m) { words } else { 2 * words };
        if b.len() < need {
            b.resize(need, 0);
        }
        b[..need].fill(0);
        let (fine, coarse) = b[..need].split_at_mut(words);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the CPU has POPCNT and AVX2.
            return unsafe { layout_counts_native(m, plan, fine, coarse) };
        }
        layout_counts(m, plan, fine, coarse)
    })
}

/// [`layout_counts`] compiled with POPCNT (the baseline x86-64 counts a word's bits in a
/// dozen instructions) and AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
unsafe fn layout_counts_native(
    m: &CsrMatrix,
    plan: Plan,
    fine: &mut [u64],
    coarse: &mut [u64],
) -> LayoutCounts {
    layout_counts(m, plan, fine, coarse)
}

/// [`layout_sample`] on the thread's bitmaps (zeroed: `coarse` is empty when the sample is
/// the whole matrix).
#[inline(always)]
fn layout_counts(m: &CsrMatrix, plan: Plan, fine: &mut [u64], coarse: &mut [u64]) -> LayoutCounts {
    let whole = plan.whole(m);
    let mut n = LayoutCounts::default();
    let square = m.rows == m.cols;
    let cols = &m.col_indices;
    let mut all = [(0, 0); RUNS];
    let count = runs(m, plan)
        .zip(&mut all)
        .map(|(r, slot)| *slot = r)
        .count();
    let all = &all[..count];
    for (k, &(start, end)) in all.iter().enumerate() {
        // The coarse sample: the first half of each run.
        let half = start + (end - start) / 2;
        // The next run's offsets, and the columns of the one after it (whose offsets
        // were asked for one run ago).
        if let Some(&(a, b)) = all.get(k + 1) {
            prefetch_lines(&m.row_offsets, a, b - a + 2);
        }
        if let Some(&(a, b)) = all.get(k + 2) {
            let (a, b) = (m.row_offsets[a] as usize, m.row_offsets[b] as usize);
            prefetch_lines(cols, a, b - a);
        }
        for r in start..end {
            let nested = !whole && r < half;
            let (a, e) = (m.row_offsets[r] as usize, m.row_offsets[r + 1] as usize);
            // ⌊r · cols / rows⌋ (r, cols < 2^32: the product fits).
            let diag = if square {
                r as u64
            } else {
                (r as u64 * m.cols as u64) / m.rows as u64
            };
            let mut spread = 0u64;
            // A row's diagonals rise with its columns: their bits are gathered per 64-bit
            // word in a register and merged into the bitmaps when the word changes (a
            // read-modify-write of the bitmap per nonzero chained each nonzero to the last
            // through memory: 60% of the pass).
            let (mut word, mut acc) = (usize::MAX, 0u64);
            for &c in &cols[a..e] {
                // col − row + rows, in 0..rows + cols.
                let d = c as usize + m.rows - r;
                if d / 64 != word {
                    merge(fine, coarse, nested, word, acc, &mut n);
                    (word, acc) = (d / 64, 0);
                }
                acc |= 1u64 << (d % 64);
                spread += u64::from(c).abs_diff(diag);
            }
            merge(fine, coarse, nested, word, acc, &mut n);
            n.spread += u128::from(spread);
            n.nnz += e - a;
            if r % 2 == 0 && r + 1 < end {
                let below = m.row_offsets[r + 2] as usize;
                n.blocks += blocks_2x2(&cols[a..e], &cols[e..below], m.cols);
                n.block_nnz += below - a;
            }
        }
        n.rows += end - start;
    }
    n
}

/// Merges one word of a row's diagonal bits into the bitmaps, counting the bits it sets
/// first (`word` is `usize::MAX` before the row's first nonzero: nothing to merge).
#[inline(always)]
fn merge(
    fine: &mut [u64],
    coarse: &mut [u64],
    nested: bool,
    word: usize,
    acc: u64,
    n: &mut LayoutCounts,
) {
    if word == usize::MAX {
        return;
    }
    n.fine += (acc & !fine[word]).count_ones() as usize;
    fine[word] |= acc;
    if nested {
        n.coarse += (acc & !coarse[word]).count_ones() as usize;
        coarse[word] |= acc;
    }
}

/// The 2×2 blocks of the block row of rows `top` and `bottom` (their columns, increasing),
/// found as the BCSR inspector finds them (see [`CuspFeatures::bcsr_fill_in`]).
fn blocks_2x2(top: &[u32], bottom: &[u32], cols: usize) -> usize {
    let last = cols.saturating_sub(2);
    // The lengths and first columns before the slices (a call to `bcmp` per block row cost
    // cs4, whose short rows differ, a tenth of the pass).
    if top.len() == bottom.len() && top.first() == bottom.first() && top == bottom {
        return blocks_of_one(top, last);
    }
    let (mut i, mut j, mut blocks) = (0, 0, 0);
    while i < top.len() || j < bottom.len() {
        let t = top.get(i).copied().unwrap_or(u32::MAX);
        let u = bottom.get(j).copied().unwrap_or(u32::MAX);
        let first = t.min(u) as usize;
        // `first + 1` at least, so that a column past the last (invalid) still moves on.
        let end = (first.min(last) + 2).max(first + 1);
        blocks += 1;
        while i < top.len() && (top[i] as usize) < end {
            i += 1;
        }
        while j < bottom.len() && (bottom[j] as usize) < end {
            j += 1;
        }
    }
    blocks
}

/// [`blocks_2x2`] of two rows with the same columns (the node blocks of finite-element
/// matrices: most block rows of the FE set): a walk of one row, whose only jump is the loop's
/// (the two-row merge mispredicts where the rows interleave: a fifth of the pass on nasa2910).
fn blocks_of_one(cols: &[u32], last: usize) -> usize {
    // The end of the current block (exclusive): 0 before the first, which any column passes.
    let (mut end, mut blocks) = (0usize, 0usize);
    for &c in cols {
        let c = c as usize;
        let new = c >= end;
        blocks += usize::from(new);
        // `c + 1` at least, so that a column past the last (invalid) still moves on.
        let next = (c.min(last) + 2).max(c + 1);
        end = if new { next } else { end };
    }
    blocks
}
