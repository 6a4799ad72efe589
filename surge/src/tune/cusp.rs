//! The CUSP features of a sparse matrix (dissertation Table 2.3) and two that predict layouts
//! (BCSR 2×2 fill, column spread), computed at a small fraction of one SpMV of the same matrix:
//! a tuned SpMV pays for its selection, as Nitro's did.
//!
//! Two passes, both sized by the matrix ([`Plan::of`]):
//!
//! * The row-length statistics (standard deviation, largest deviation, ELL fill-in) come from
//!   the row offsets alone: a sequential pass of integer arithmetic that LLVM vectorizes, 8
//!   bytes per row against the SpMV's 12 or more per nonzero. While rows average at least
//!   [`STAT_NNZ_PER_ROW`] nonzeros it reads every row (exact); on sparser matrices it reads
//!   every `k`-th chunk of [`STAT_CHUNK`] rows, so that it reads at most one offset per
//!   [`STAT_NNZ_PER_ROW`] nonzeros (the road and census graphs average 2.5 per row). The
//!   average is always exact (nnz / rows); the rest are then statistics of the chunks read.
//! * The occupied diagonals (DIA fill-in), the BCSR 2×2 blocks and the column spread are
//!   properties of every nonzero; they are measured on [`RUNS`] runs of consecutive rows, one
//!   in each equal segment of the matrix, holding about [`SAMPLE_FRACTION`] of the nonzeros
//!   (between [`MIN_SAMPLE`] and [`MAX_SAMPLE`]). Runs rather than rows spread evenly, so
//!   that the sample reads a few contiguous stretches that the prefetchers follow, not a cache
//!   and TLB miss per row: the spread sample was what a fresh input paid most for (below). The
//!   diagonals are counted on every row of the runs and on the first half of each run; if
//!   halving the runs barely changes the count, neighbouring rows share their diagonals (a
//!   banded matrix) and the count stands; if it halves the count, each row brings its own
//!   diagonals (scattered columns) and the count scales with the rows; between the two, the
//!   growth is extrapolated ([`estimate_diagonals`]). (Halving the number of runs instead, as
//!   the first version did, read a band that moves along the matrix as new diagonals: 0.17-10×
//!   the exact count, within 0.5-2× on 9 of 20.) A matrix small enough for the runs to
//!   hold every row gets the exact counts.
//!
//! The estimates are features, not counts: training and selection see the same estimator.
//!
//! Measured with `benchmarks --bin feature_cost` on the 20 matrices of `matrices-large`
//! (75k-950k nonzeros), on a fresh input (a `TuneInput` just built, as a tuned call on a new
//! matrix pays it), against one plain rayon CSR SpMV, on a 2-core AMD EPYC VM shared with
//! other builds (load 7-10: SpMV times varied up to 2× between runs, so the figures are
//! rough): the selection's feature cost (the inferred and the CUSP groups) had a median of
//! 0.055-0.063 of one SpMV over four runs, a maximum of 0.096-0.105 (web-spam, EX5 or cage11),
//! 19-20 of the 20 matrices at most 0.10. The passes before, timed in the same rounds as these
//! (a copy of the old code, interleaved, five runs): median 0.12-0.18, maximum 0.19-0.27
//! (cage11, cs4 or msc04515; cage11's evenly spread DIA sample read 2% of the nonzeros, and its CUSP
//! pass took 99 µs on a fresh input against 23 µs warm); these passes in the same runs
//! 0.052-0.078, maximum 0.087-0.122. The
//! inferred features are computed once per computation (`Computation::features`), when the
//! input is built; selection reuses them (uncached they took 5-38 µs in `feature_cost`, up to
//! 0.14 of an SpMV on the smallest). The sampled features against the exact ones on the same
//! set: the standard deviation 0.91-1.20×, the ELL fill-in 0.54-1× (exact on 14; the longest
//! row of a sparse graph is often outside the chunks read: ct2010, nh2010, web-spam, road,
//! Slashdot, cage11), the BCSR fill 0.94-1.05×, the column spread 0.44-1.26× (within
//! 0.9-1.15× on 15 of 20), the DIA fill-in 0.47-6.0× (within 0.5-2× on 13 of 20; over 2× on
//! the census and road graphs, ct2010 4.9×, nh2010 6.0×, road 4.5×, whose rows keep bringing
//! new diagonals in a run and then saturate, on bcsstk16 2.5×, nasa2910 2.9× and facebook
//! 2.01×; orani678 0.47×). The previous evenly spread 2% sample was within 0.85-5.1×.
//! (Those figures are of the samples before the halving below.)
//!
//! Against the picked variant (issue 24, 2026-11-27). The figures above weigh the pass against
//! a plain rayon CSR SpMV; `surge bench spmv --tuned` weighs the selection (features and query
//! on a fresh copy of the matrix) against one call of the variant the model picks, SELL or
//! lanes on two threads, 13-320 µs on `matrices-large`: there it cost a median of 0.28 calls
//! (0.12-0.60, none of the 20 at most 0.10; load 2-3 from other builds). Where it went
//! (`surge --example selection_cost`, fresh inputs, medians of 15 rounds, the same load): the
//! CUSP pass 0.07-0.35 of a call, its row pass and its layout sample about alike (the FE
//! matrices' row pass read every row: 8-11 µs on EX5); the model query 0.7-4.9 µs on a fresh
//! input (0.34 µs warm, as `surge tune` reports it: building the input evicts the support
//! vectors); the inferred group 0.1-0.7 µs (cached per computation). So both samples were
//! halved: one row offset per 128 nonzeros on every matrix (was 32, and every row on rows of
//! 32 or more), the layout sample 0.25% of the nonzeros (was 0.5%) up to 8192 (was 16384),
//! still at least 512 (256 made the planted-rule test's nearest-neighbour model miss on a
//! 1500-row matrix: small matrices stay exact). Store schema 3 refuses models trained on the
//! old features. Retrained on `../shared/matrices` and scored on `matrices-large`: tuned/
//! exhaustive 91.4% before; after, 92.5% with a minimum of 256 and 95.0% with 512 (load 2-5,
//! test inputs re-measured for steal up to 92%: noisy; the picks' classes changed, as between
//! any two tuning runs here).
//!
//! After, by `selection_cost` in the same way (load 4): the CUSP pass of EX5 18 → 9 µs,
//! bcsstk38 17 → 11, cage11 26-38 → 24, ct2010 20-26 → 14, nh2010 14-18 → 7, road-usroads
//! 29-39 → 21, soc-Slashdot 70-80 → 34; the small matrices 3-5 µs → 3-4.5 µs. Against a
//! rayon CSR SpMV (`feature_cost`, one run, load 4): median 0.041, max 0.089 (nasa4704), 20 of
//! 20 at most 0.10 (before: 0.055-0.063, max 0.096-0.105). Sampled against exact after (before
//! in brackets, from the list above): standard deviation 0.75-1.65 (0.91-1.20), ELL fill-in
//! 0.18-1 (0.54-1; orani678's longest rows now outside the chunks read), BCSR fill
//! 0.94-1.07 (0.94-1.05), column spread 0.44-1.32 (0.44-1.26), DIA fill-in 0.36-6.0
//! (0.47-6.0). What remains:
//! there the pass does not shrink with what it reads. Its layout half alone (one chunk of row
//! lengths and 8 runs of 2-4 rows) took 2.5-7.7 µs on a fresh input, a whole pass 2-5 µs warm
//! (about 3.6 ns per sampled nonzero on EX5: the 2×2 blocks' branchy merge and the bitmap
//! updates; gathering a row's diagonal bits per 64-bit word before merging them did not show
//! in a noisy run and was left out), and the query 0.7-4.9 µs on a fresh input. A tenth of a
//! 13-30 µs call is 1.3-3 µs for everything: it would take fewer runs (each a cold region
//! with its TLB miss), a branch-free block count, and a query whose support vectors stay in
//! the cache (or fewer of them).
//!
//! The bitmap and block work (2026-11-29). `perf` on the pass of nasa2910 (warm) put 60% of it
//! on the bitmap updates, each a read-modify-write chained to the last through memory (a row's
//! nonzeros mostly fall in one 64-bit word), and a fifth on the 2×2 merge. Now a row's diagonal
//! bits are gathered per word in a register and merged when the word changes, counted with
//! POPCNT (the pass is compiled for it when the CPU has it: the baseline x86-64 counts bits in a
//! dozen instructions, which made the gathering slower than before), and a block row whose two
//! rows hold the same columns is walked as one row. Tried and not kept: a branch-free two-row
//! merge (a chain of loads through the indices: slower on every matrix), the bitmaps cleared
//! after a pass by walking its columns again instead of filled before it, and every run's
//! offsets and columns prefetched around the row-length pass instead of one and two runs
//! ahead (together 10-40% slower fresh). Same features bit for bit (sampled and exact, all 44
//! real matrices). `cargo run --release -p surge --example cusp_pass -- FILE [fresh]`, the
//! old and new builds alternated, two runs each, µs (quiet 2-core Zen 5 VM):
//!
//! | matrix | warm before | warm after | fresh before | fresh after |
//! |---|---|---|---|---|
//! | cs4 | 2.01-2.07 | 2.14-2.15 | 2.27-2.33 | 2.54-2.56 |
//! | cti | 1.65 | 1.52 | 1.97-1.99 | 1.82 |
//! | crystm01 | 1.56-1.61 | 1.28-1.29 | 1.93-2.00 | 1.59-1.60 |
//! | nasa2910 | 2.66 | 1.52-1.53 | 2.96-3.01 | 1.86-1.97 |
//! | web-spam | 2.11-2.13 | 2.02-2.04 | 2.35-2.53 | 2.29-2.36 |
//! | bcsstk38 | 3.65-3.71 | 2.19-2.24 | 4.09-4.36 | 2.76-2.98 |
//! | EX5 | 3.74 | 3.15-3.16 | 4.11-4.41 | 3.57-3.71 |
//! | cage11 | 4.56 | 4.24-4.25 | 5.60-6.21 | 5.40-5.53 |
//!
//! cs4 (short rows of scattered columns: a new word at almost every nonzero) lost 5-10%. A
//! prefetch of the model's support vectors before the feature pass (so that the query finds
//! them in cache) gave 0.293 and 0.352 calls against 0.382 and 0.305 without it
//! (`selection_cost`, median of 5 matrices, alternated): not shown, so not kept. The
//! selection as a whole is still far above a tenth of a call on the small matrices: the
//! bench's figures moved more between runs than these savings.

use super::cusp_sample::layout_sample;
#[cfg(test)]
use super::cusp_sample::runs;
use crate::mtx::CsrMatrix;

/// Share of the nonzeros the layout sample reads.
pub const SAMPLE_FRACTION: f64 = 0.0025;
/// Sampled nonzeros never fewer than this (small matrices are then read whole).
pub const MIN_SAMPLE: usize = 512;
/// Sampled nonzeros never more than this: enough to tell shared diagonals from scattered ones.
pub const MAX_SAMPLE: usize = 8192;
/// Runs of consecutive rows in the layout sample, one per equal segment of the matrix.
pub const RUNS: usize = 8;
/// Rows per chunk of the row-length pass (512 offsets: one 4 KiB page).
pub const STAT_CHUNK: usize = 512;
/// The row-length pass reads every row while the average row holds at least this many
/// nonzeros; below, every `k`-th chunk with `k = ⌈STAT_NNZ_PER_ROW / average⌉`, so that it
/// reads at most one row offset per `STAT_NNZ_PER_ROW` nonzeros. On a matrix just built the
/// offsets came from memory at about 1.4 ns per row on the 2-core EPYC VM (a fresh cage11's
/// every other chunk took 26-30 µs, 4.6 µs when cached). It was 32 (every row of the FE
/// matrices, one in 64 lost the longest rows of five matrices, ELL fill-in 0.18-0.53×) while
/// the selection was weighed against a rayon CSR SpMV; against the picked variant (SELL on
/// two threads, 2-4× faster on `matrices-large`) the row pass alone was 0.1-0.3 of a call on
/// the FE matrices, so it now reads one offset per 128 nonzeros there too (module notes).
pub const STAT_NNZ_PER_ROW: usize = 128;

/// The sparse-matrix features CUSP's format selection uses (dissertation Table 2.3), and two
/// that predict the blocked and the locality-sensitive layouts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CuspFeatures {
    pub avg_nnz_per_row: f64,
    /// Standard deviation of the row lengths (of the chunks read, see [`Plan`]).
    pub row_length_std_dev: f64,
    /// max over rows (read) of |row length − average|.
    pub max_deviation: f64,
    /// DIA storage (occupied diagonals × rows) over nnz: how much padding DIA would add
    /// (estimated from the layout sample on large matrices, see the module notes).
    pub dia_fill_in: f64,
    /// ELL storage (longest row read × rows) over nnz.
    pub ell_fill_in: f64,
    /// BCSR 2×2 storage over nnz, in the sampled block rows (rows `2q, 2q + 1`): stored values
    /// (4 per block) per nonzero, the blocks found as the BCSR inspector
    /// (`surge_cpu::native::bcsr`) finds them: the smallest column `j` not yet covered starts
    /// the block of columns `j .. j + 2` (moved left to end at the last column). 1: every
    /// block full; 4: one nonzero per block. 0 without a full block row.
    pub bcsr_fill_in: f64,
    /// Mean distance of a sampled nonzero's column from the row's diagonal position
    /// (`⌊row · cols / rows⌋`), over the columns: 0 for a diagonal matrix, about 1/3 for
    /// uniformly scattered columns. How far SpMV's reads of x stray from the row's own
    /// neighbourhood.
    pub col_spread: f64,
}

/// What the features read: every `stat_every`-th chunk of [`STAT_CHUNK`] rows for the row
/// lengths, and [`RUNS`] runs of `run_rows` consecutive rows for the rest (every row when
/// `run_rows · RUNS ≥ rows`). `Plan::of` sizes both for a matrix; `Plan::all` reads every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub stat_every: usize,
    pub run_rows: usize,
}

impl Plan {
    /// Every row: the exact features.
    pub fn all(m: &CsrMatrix) -> Plan {
        Plan {
            stat_every: 1,
            run_rows: m.rows,
        }
    }

    /// The sample for `m`: row lengths of every chunk while rows average at least
    /// [`STAT_NNZ_PER_ROW`] nonzeros (one chunk in `k` below), and runs holding about
    /// [`SAMPLE_FRACTION`] of the nonzeros (between [`MIN_SAMPLE`] and [`MAX_SAMPLE`]).
    pub fn of(m: &CsrMatrix) -> Plan {
        let nnz = m.nnz().max(1);
        let stat_every = match m.rows <= STAT_CHUNK {
            true => 1,
            false => (STAT_NNZ_PER_ROW * m.rows).div_ceil(nnz).max(1),
        };
        let budget = ((nnz as f64 * SAMPLE_FRACTION) as usize).clamp(MIN_SAMPLE, MAX_SAMPLE);
        // Rows holding `budget` nonzeros on average, in RUNS runs of an even count.
        let rows = (m.rows as f64 * budget as f64 / nnz as f64).ceil() as usize;
        let run_rows = rows.div_ceil(RUNS).next_multiple_of(2).max(2);
        Plan {
            stat_every,
            run_rows,
        }
    }

    pub(super) fn whole(&self, m: &CsrMatrix) -> bool {
        self.run_rows.saturating_mul(RUNS) >= m.rows
    }
}

impl CuspFeatures {
    /// The values in `cusp_group`'s order (the model's columns).
    pub fn values(&self) -> [f64; 7] {
        [
            self.avg_nnz_per_row,
            self.row_length_std_dev,
            self.max_deviation,
            self.dia_fill_in,
            self.ell_fill_in,
            self.bcsr_fill_in,
            self.col_spread,
        ]
    }

    /// The features of `m` from its sample ([`Plan::of`]; see the module notes).
    pub fn of(m: &CsrMatrix) -> CuspFeatures {
        CuspFeatures::sampled(m, Plan::of(m))
    }

    /// The features with every row read (for tests and studies of the estimates).
    pub fn exact(m: &CsrMatrix) -> CuspFeatures {
        CuspFeatures::sampled(m, Plan::all(m))
    }

    /// The features of `m` read as `plan` says.
    pub fn sampled(m: &CsrMatrix, plan: Plan) -> CuspFeatures {
        let s = row_stats(&m.row_offsets, plan.stat_every.max(1));
        let l = layout_sample(m, plan);
        let rows = m.rows.max(1) as f64;
        let nnzf = m.nnz().max(1) as f64;
        let avg = m.nnz() as f64 / rows;
        let seen = s.rows.max(1) as f64;
        let seen_avg = s.sum as f64 / seen;
        let var = (s.sum_sq / seen - seen_avg * seen_avg).max(0.0);
        let ndiag = if plan.whole(m) || l.rows == 0 {
            l.fine as f64
        } else {
            let possible = (m.rows + m.cols).saturating_sub(1) as f64;
            let step = m.rows as f64 / l.rows as f64;
            estimate_diagonals(l.fine as f64, l.coarse as f64, step).min(possible)
        };
        CuspFeatures {
            avg_nnz_per_row: avg,
            row_length_std_dev: var.sqrt(),
            max_deviation: f64::max(s.max as f64 - avg, avg - s.min as f64).max(0.0),
            dia_fill_in: ndiag * m.rows as f64 / nnzf,
            ell_fill_in: s.max as f64 * m.rows as f64 / nnzf,
            bcsr_fill_in: (4 * l.blocks) as f64 / l.block_nnz.max(1) as f64,
            col_spread: if l.nnz == 0 || m.cols == 0 {
                0.0
            } else {
                (l.spread as f64 / l.nnz as f64) / m.cols as f64
            },
        }
    }
}

struct RowStats {
    /// Rows read.
    rows: usize,
    /// Their nonzeros.
    sum: u64,
    min: u64,
    max: u64,
    /// Σ length², in f64 (exact while it stays below 2^53).
    sum_sq: f64,
}

/// Shortest and longest row, their count, nonzeros and sum of squared lengths, from the
/// offsets alone, of every `every`-th chunk of [`STAT_CHUNK`] rows. Lengths are at most the
/// column count, below 2^32 (column indices are u32), so they are taken as u32: min, max and
/// 32 × 32 → 64-bit squares all vectorize on AVX2. Squares are summed in u64 per chunk, then in
/// f64; a chunk whose longest row could overflow the u64 sum is summed in f64 instead.
fn row_stats(offsets: &[u64], every: usize) -> RowStats {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { row_stats_avx2(offsets, every) };
    }
    row_stats_portable(offsets, every)
}

/// [`row_stats`] compiled for AVX2 (Surge's own crates are built for the baseline x86-64,
/// whose SSE2 has no unsigned 32-bit min and max: the pass ran at 2.8 ms on a 1M-row matrix).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn row_stats_avx2(offsets: &[u64], every: usize) -> RowStats {
    row_stats_portable(offsets, every)
}

#[inline(always)]
fn row_stats_portable(offsets: &[u64], every: usize) -> RowStats {
    let rows = offsets.len().saturating_sub(1);
    let (mut min, mut max, mut sum_sq) = (u32::MAX, 0u32, 0.0f64);
    let (mut seen, mut sum) = (0usize, 0u64);
    for start in (0..rows).step_by(STAT_CHUNK * every) {
        prefetch_lines(offsets, start + STAT_CHUNK * every, STAT_CHUNK + 1);
        let end = (start + STAT_CHUNK).min(rows);
        let (lo_o, hi_o) = (&offsets[start..end], &offsets[start + 1..end + 1]);
        let (mut lo, mut hi, mut sq) = (u32::MAX, 0u32, 0u64);
        for (a, b) in lo_o.iter().zip(hi_o) {
            let l = b.wrapping_sub(*a) as u32;
            lo = lo.min(l);
            hi = hi.max(l);
            sq = sq.wrapping_add(u64::from(l) * u64::from(l));
        }
        min = min.min(lo);
        max = max.max(hi);
        seen += end - start;
        sum += offsets[end].wrapping_sub(offsets[start]);
        // Σ l² ≤ STAT_CHUNK · hi² must fit in u64: hi < 2^27 with STAT_CHUNK = 2^9.
        sum_sq += if hi < 1 << 27 {
            sq as f64
        } else {
            lo_o.iter()
                .zip(hi_o)
                .map(|(a, b)| ((b - a) as f64).powi(2))
                .sum()
        };
    }
    RowStats {
        rows: seen,
        sum,
        min: if seen == 0 { 0 } else { u64::from(min) },
        max: u64::from(max),
        sum_sq,
    }
}

/// Prefetches the cache lines of `v[start .. start + len]` (clipped to `v`). Why: the chunks
/// and runs the features read are far apart, and on a matrix just built each one waited for
/// its first lines (a TLB and cache miss) before the hardware prefetcher followed; asking for
/// the next chunk's lines while reading this one overlaps the waits.
#[inline(always)]
pub(super) fn prefetch_lines<T>(v: &[T], start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let end = (start + len).min(v.len());
        let step = (64 / std::mem::size_of::<T>().max(1)).max(1);
        let mut i = start;
        while i < end {
            // SAFETY: a prefetch never faults, and the address is inside the slice.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(v.as_ptr().add(i) as *const i8) };
            i += step;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, start, len);
}

/// Extrapolates the occupied diagonals from `fine` (counted on one row in `step`) and `coarse`
/// (on half of those rows): the count grows by `fine / coarse` (1: saturated, 2: linear) per
/// doubling of the sample, and `log2(step)` doublings separate `fine` from all rows.
pub fn estimate_diagonals(fine: f64, coarse: f64, step: f64) -> f64 {
    if fine <= 0.0 || coarse <= 0.0 {
        return fine.max(0.0);
    }
    let growth = (fine / coarse).clamp(1.0, 2.0);
    fine * growth.powf(step.max(1.0).log2())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::matgen;
    use std::collections::BTreeSet;

    fn csr(rows: usize, cols: usize, pattern: &[&[u32]]) -> CsrMatrix {
        let mut row_offsets = vec![0u64];
        let mut col_indices = Vec::new();
        for r in pattern {
            col_indices.extend_from_slice(r);
            row_offsets.push(col_indices.len() as u64);
        }
        assert_eq!(row_offsets.len(), rows + 1);
        let values = vec![1.0; col_indices.len()];
        CsrMatrix {
            rows,
            cols,
            row_offsets,
            col_indices,
            values,
        }
    }

    /// The features by definition, over every row, the slow way.
    fn by_definition(m: &CsrMatrix) -> CuspFeatures {
        let rows: Vec<&[u32]> = (0..m.rows)
            .map(|r| &m.col_indices[m.row_offsets[r] as usize..m.row_offsets[r + 1] as usize])
            .collect();
        let lens: Vec<f64> = rows.iter().map(|r| r.len() as f64).collect();
        let nnz = lens.iter().sum::<f64>();
        let avg = nnz / m.rows as f64;
        let var = lens.iter().map(|l| (l - avg).powi(2)).sum::<f64>() / m.rows as f64;
        let max = lens.iter().copied().fold(0.0, f64::max);
        let min = lens.iter().copied().fold(f64::INFINITY, f64::min);
        let diagonals: BTreeSet<i64> = rows
            .iter()
            .enumerate()
            .flat_map(|(r, cs)| cs.iter().map(move |&c| c as i64 - r as i64))
            .collect();
        let spread: f64 = rows
            .iter()
            .enumerate()
            .flat_map(|(r, cs)| {
                let d = (r * m.cols / m.rows) as f64;
                cs.iter().map(move |&c| (c as f64 - d).abs())
            })
            .sum();
        // The inspector's greedy blocks, by a set of columns not yet covered.
        let (mut blocks, mut block_nnz) = (0, 0);
        for q in 0..m.rows / 2 {
            let mut left: BTreeSet<u32> =
                rows[2 * q].iter().chain(rows[2 * q + 1]).copied().collect();
            block_nnz += rows[2 * q].len() + rows[2 * q + 1].len();
            while let Some(&j) = left.first() {
                let j0 = (j as usize).min(m.cols - 2) as u32;
                left.retain(|&c| c >= j0 + 2);
                blocks += 1;
            }
        }
        CuspFeatures {
            avg_nnz_per_row: avg,
            row_length_std_dev: var.sqrt(),
            max_deviation: f64::max(max - avg, avg - min),
            dia_fill_in: diagonals.len() as f64 * m.rows as f64 / nnz,
            ell_fill_in: max * m.rows as f64 / nnz,
            bcsr_fill_in: (4 * blocks) as f64 / block_nnz as f64,
            col_spread: spread / nnz / m.cols as f64,
        }
    }

    fn close(a: &CuspFeatures, b: &CuspFeatures) -> bool {
        a.values()
            .iter()
            .zip(b.values())
            .all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + y.abs()))
    }

    #[test]
    fn block_fill_and_column_spread_of_small_matrices() {
        // Block row 0: one full block; block row 1: [0, 2) holds (2, 0), [2, 4) holds (2, 3)
        // and (3, 2). 3 blocks for 7 nonzeros. |col − row|: 0 1 | 1 0 | 2 1 | 1 = 6.
        // Diagonals −2, −1, 0, 1.
        let m = csr(4, 4, &[&[0, 1], &[0, 1], &[0, 3], &[2]]);
        let f = CuspFeatures::of(&m);
        assert_eq!(f.bcsr_fill_in, 12.0 / 7.0);
        assert_eq!(f.col_spread, 6.0 / 7.0 / 4.0);
        assert_eq!(f.dia_fill_in, 4.0 * 4.0 / 7.0);
        assert_eq!(f.ell_fill_in, 2.0 * 4.0 / 7.0);
        assert!(close(&f, &by_definition(&m)), "{f:?}");
        // A block starting at the last column moves left to end there (columns 1 .. 3), and so
        // holds row 1's column 1 too. Diagonal positions of a 2×3 matrix: 0 and 1.5 → 1.
        let m = csr(2, 3, &[&[2], &[1]]);
        let f = CuspFeatures::of(&m);
        assert_eq!(f.bcsr_fill_in, 2.0);
        assert_eq!(f.col_spread, (2.0 + 0.0) / 2.0 / 3.0);
        // The last row of an odd count is no block row; a diagonal matrix has no spread.
        let m = csr(3, 3, &[&[0], &[1], &[2]]);
        let f = CuspFeatures::of(&m);
        assert_eq!(f.bcsr_fill_in, 2.0);
        assert_eq!(f.col_spread, 0.0);
        assert_eq!(f.dia_fill_in, 1.0);
    }

    #[test]
    fn a_sample_of_every_row_gives_the_exact_features() {
        for m in [
            matgen::laplacian_2d(10),
            matgen::laplacian_2d(300),
            matgen::power_law(5000, 2, 1.5, 3),
            matgen::random(3000, 2000, 7, 1),
            matgen::banded(20_000, 3, 2),
        ] {
            let (e, d) = (CuspFeatures::exact(&m), by_definition(&m));
            assert!(close(&e, &d), "{e:?} against {d:?}");
            // Runs long enough to hold every row are every row.
            let plan = Plan {
                stat_every: 1,
                run_rows: m.rows.div_ceil(RUNS),
            };
            assert_eq!(CuspFeatures::sampled(&m, plan), e);
        }
        // A matrix smaller than the sample is read whole.
        let m = matgen::laplacian_2d(10);
        assert!(m.nnz() < MIN_SAMPLE);
        assert!(Plan::of(&m).stat_every == 1 && Plan::of(&m).whole(&m));
        assert_eq!(CuspFeatures::of(&m), CuspFeatures::exact(&m));
    }

    #[test]
    fn sampled_rows_keep_the_average_exact_and_the_spread_close() {
        let l = CuspFeatures::of(&matgen::laplacian_2d(300));
        let nnz = 5.0 * 300.0 * 300.0 - 4.0 * 300.0;
        // Five diagonals of a 300x300 grid: 0, ±1, ±300 (each run sees all five).
        assert!((l.dia_fill_in - 5.0 * 90000.0 / nnz).abs() < 1e-12, "{l:?}");
        for (m, rows_vary) in [
            (matgen::power_law(200_000, 2, 2.5, 3), true),
            (matgen::random(100_000, 100_000, 3, 1), false),
        ] {
            let plan = Plan::of(&m);
            assert!(plan.stat_every > 1 && !plan.whole(&m), "{plan:?}");
            let (a, e) = (CuspFeatures::of(&m), CuspFeatures::exact(&m));
            assert_eq!(a.avg_nnz_per_row, e.avg_nnz_per_row);
            let mut pairs = vec![
                (a.col_spread, e.col_spread),
                (a.bcsr_fill_in, e.bcsr_fill_in),
            ];
            if rows_vary {
                pairs.push((a.row_length_std_dev, e.row_length_std_dev));
            }
            for (x, y) in pairs {
                assert!((0.7..=1.3).contains(&(x / y)), "{a:?} against {e:?}");
            }
        }
    }

    #[test]
    fn the_diagonal_estimate_is_within_a_factor_of_two_of_the_count() {
        for (name, m) in [
            ("banded", matgen::banded(200_000, 5, 7)),
            ("random", matgen::random(100_000, 100_000, 10, 4)),
            ("power law", matgen::power_law(100_000, 3, 1.6, 2)),
            ("laplacian", matgen::laplacian_2d(400)),
        ] {
            let (a, e) = (CuspFeatures::of(&m), CuspFeatures::exact(&m));
            let r = a.dia_fill_in / e.dia_fill_in;
            assert!((0.5..=2.0).contains(&r), "{name}: {a:?} against {e:?}");
        }
        assert_eq!(estimate_diagonals(10.0, 10.0, 64.0), 10.0);
        assert_eq!(estimate_diagonals(10.0, 5.0, 64.0), 640.0);
        assert_eq!(estimate_diagonals(0.0, 0.0, 8.0), 0.0);
    }

    /// What a plan reads: row offsets of the row-length pass, nonzeros of the layout sample.
    fn read_by(m: &CsrMatrix, plan: Plan) -> (usize, usize) {
        let offsets = row_stats(&m.row_offsets, plan.stat_every).rows;
        (offsets, layout_sample(m, plan).nnz)
    }

    #[test]
    fn the_sample_is_deterministic_and_small_on_large_matrices() {
        // Training and selection must see the same features: no randomness, no state kept
        // between calls (the thread's bitmaps are cleared), the same runs every time.
        let m = matgen::power_law(300_000, 3, 1.8, 5);
        let plan = Plan::of(&m);
        let runs_of = |m: &CsrMatrix| runs(m, plan).collect::<Vec<_>>();
        assert_eq!(runs_of(&m), runs_of(&m.clone()));
        let first = CuspFeatures::of(&m);
        let _ = CuspFeatures::of(&matgen::banded(50_000, 4, 3));
        assert_eq!(CuspFeatures::of(&m), first);
        assert_eq!(CuspFeatures::of(&m.clone()), first);
        // Bounded reads: one offset per STAT_NNZ_PER_ROW nonzeros (plus a chunk), and at most
        // MAX_SAMPLE nonzeros (plus the rows that round the runs up) in the layout sample.
        for m in [
            m,
            matgen::random(400_000, 400_000, 3, 2),
            matgen::banded(300_000, 30, 1),
        ] {
            let plan = Plan::of(&m);
            let (offsets, nnz) = read_by(&m, plan);
            assert!(
                offsets <= m.nnz() / STAT_NNZ_PER_ROW + STAT_CHUNK,
                "{offsets} offsets of {} rows, {} nonzeros",
                m.rows,
                m.nnz()
            );
            let budget =
                ((m.nnz() as f64 * SAMPLE_FRACTION) as usize).clamp(MIN_SAMPLE, MAX_SAMPLE);
            assert!(nnz <= 2 * budget + 64 * RUNS, "{nnz} sampled of {budget}");
            assert!(nnz >= budget / 2, "{nnz} sampled of {budget}");
        }
    }
}
