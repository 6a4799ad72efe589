//! The CUSP features of a sparse matrix (dissertation Table 2.3), computed at a small fraction
//! of one SpMV of the same matrix: a tuned SpMV pays for its selection.
//!
//! The row-length statistics (average, standard deviation, largest deviation, ELL fill-in) are
//! exact, from the row offsets alone: one sequential pass of integer arithmetic that LLVM
//! vectorizes, about 8 bytes read per row against the SpMV's 12 or more per nonzero. The DIA
//! fill-in needs the number of occupied diagonals, which is a property of every nonzero; it is
//! estimated from the rows of two nested samples (every `s`-th row, and every `2s`-th), sized so
//! that the larger reads about [`SAMPLE_FRACTION`] of the nonzeros (between [`MIN_SAMPLE`] and
//! [`MAX_SAMPLE`]). If halving the sample
//! barely changes the count, the diagonals are shared by all rows (a banded matrix) and the
//! count stands; if it halves the count, each sampled row brings its own diagonals (scattered
//! columns) and the count scales with the rows; between the two, the growth between the samples
//! is extrapolated ([`estimate_diagonals`]). A matrix small enough for the sample to hold every
//! row gets the exact count. Before, one exact parallel pass over every nonzero cost 1-5 SpMVs
//! of the same matrix; now 0.1-0.35 of a plain rayon CSR SpMV on `matrices-large`
//! (`benchmarks --bin feature_cost`). The estimate is a feature, not a count: training and
//! selection see the same estimator. Measured against the exact count on `matrices-large`:
//! 0.85-1.3× on 9 of 20 matrices, up to 5.1× on the census-block graphs (ct2010, nh2010), whose
//! rows keep bringing new diagonals in the sample and then saturate.

use crate::mtx::CsrMatrix;

/// Share of the nonzeros the diagonal sample reads.
pub const SAMPLE_FRACTION: f64 = 0.02;
/// Sampled nonzeros never fewer than this (small matrices are then counted exactly).
pub const MIN_SAMPLE: usize = 4096;
/// Sampled nonzeros never more than this: enough to tell shared diagonals from scattered ones.
pub const MAX_SAMPLE: usize = 32768;

/// The sparse-matrix features CUSP's format selection uses (dissertation Table 2.3).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CuspFeatures {
    pub avg_nnz_per_row: f64,
    pub row_length_std_dev: f64,
    /// max over rows of |row length − average|.
    pub max_deviation: f64,
    /// DIA storage (occupied diagonals × rows) over nnz: how much padding DIA would add
    /// (estimated from a sample of rows on large matrices, see the module notes).
    pub dia_fill_in: f64,
    /// ELL storage (longest row × rows) over nnz.
    pub ell_fill_in: f64,
}

impl CuspFeatures {
    /// The features of `m` (see the module notes for what is exact and what is sampled).
    pub fn of(m: &CsrMatrix) -> CuspFeatures {
        CuspFeatures::with_diagonals(m, sampled_diagonals(m))
    }

    /// The features with the occupied diagonals counted over every nonzero (for tests and
    /// studies of the estimate).
    pub fn exact(m: &CsrMatrix) -> CuspFeatures {
        CuspFeatures::with_diagonals(m, all_diagonals(m))
    }

    fn with_diagonals(m: &CsrMatrix, ndiag: f64) -> CuspFeatures {
        let s = row_stats(&m.row_offsets);
        let rows = m.rows.max(1) as f64;
        let nnzf = m.nnz().max(1) as f64;
        let avg = m.nnz() as f64 / rows;
        let var = (s.sum_sq / rows - avg * avg).max(0.0);
        CuspFeatures {
            avg_nnz_per_row: avg,
            row_length_std_dev: var.sqrt(),
            max_deviation: f64::max(s.max as f64 - avg, avg - s.min as f64).max(0.0),
            dia_fill_in: ndiag * m.rows as f64 / nnzf,
            ell_fill_in: s.max as f64 * m.rows as f64 / nnzf,
        }
    }
}

struct RowStats {
    min: u64,
    max: u64,
    /// Σ length², in f64 (exact while it stays below 2^53).
    sum_sq: f64,
}

/// Shortest and longest row and the sum of squared lengths, from the offsets alone. Lengths are
/// at most the column count, below 2^32 (column indices are u32), so they are taken as u32:
/// min, max and 32 × 32 → 64-bit squares all vectorize on AVX2. Squares are summed in u64 per
/// block of rows, then in f64; a block whose longest row could overflow the u64 sum is summed
/// in f64 instead.
fn row_stats(offsets: &[u64]) -> RowStats {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { row_stats_avx2(offsets) };
    }
    row_stats_portable(offsets)
}

/// [`row_stats`] compiled for AVX2 (Surge's own crates are built for the baseline x86-64,
/// whose SSE2 has no unsigned 32-bit min and max: the pass ran at 2.8 ms on a 1M-row matrix).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn row_stats_avx2(offsets: &[u64]) -> RowStats {
    row_stats_portable(offsets)
}

#[inline(always)]
fn row_stats_portable(offsets: &[u64]) -> RowStats {
    const BLOCK: usize = 1024;
    let rows = offsets.len().saturating_sub(1);
    if rows == 0 {
        return RowStats {
            min: 0,
            max: 0,
            sum_sq: 0.0,
        };
    }
    let (mut min, mut max, mut sum_sq) = (u32::MAX, 0u32, 0.0f64);
    for start in (0..rows).step_by(BLOCK) {
        let end = (start + BLOCK).min(rows);
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
        // Σ l² ≤ BLOCK · hi² must fit in u64: hi < 2^27 with BLOCK = 2^10.
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
        min: u64::from(min),
        max: u64::from(max),
        sum_sq,
    }
}

/// Occupied diagonals (`col − row`) of every row.
fn all_diagonals(m: &CsrMatrix) -> f64 {
    let (all, _) = diagonal_counts(m, 1, false);
    all
}

/// Occupied diagonals of every `step`-th row (the fine sample) and, with `coarse`, of every other
/// one of those (the coarse sample, nested in it; 0 without), in one pass: a bitmap over the
/// `rows + cols` possible diagonals per sample, counted as bits are first set (a sort of the
/// sampled diagonals cost about as much as the rest of the features together).
fn diagonal_counts(m: &CsrMatrix, step: usize, coarse: bool) -> (f64, f64) {
    let words = (m.rows + m.cols).div_ceil(64).max(1);
    let mut fine = vec![0u64; words];
    let mut half = if coarse {
        vec![0u64; words]
    } else {
        Vec::new()
    };
    let (mut nf, mut nc) = (0usize, 0usize);
    let step = step.max(1);
    for (k, r) in (0..m.rows).step_by(step).enumerate() {
        if step > 1 {
            prefetch_row(m, r, step);
        }
        let (a, b) = (m.row_offsets[r] as usize, m.row_offsets[r + 1] as usize);
        for &c in &m.col_indices[a..b] {
            // col − row + rows, in 0..rows + cols.
            let d = c as usize + m.rows - r;
            let (w, bit) = (d / 64, 1u64 << (d % 64));
            nf += usize::from(fine[w] & bit == 0);
            fine[w] |= bit;
            if coarse && k % 2 == 0 {
                nc += usize::from(half[w] & bit == 0);
                half[w] |= bit;
            }
        }
    }
    (nf as f64, nc as f64)
}

/// Sampled rows ahead of `r` (every `step`-th), for [`prefetch_row`].
const AHEAD: usize = 8;

/// Prefetches the sampled rows' data the loop will read: the offsets `2·AHEAD` sampled rows
/// ahead, the column indices of the row `AHEAD` ahead (its offset prefetched `AHEAD` rows ago).
/// Why: the sampled rows are far apart, so each is a cache miss, and without prefetching the
/// pass waits for them one at a time: on a freshly loaded cage11 (560k nonzeros, 32k sampled)
/// the CUSP features took 143 µs against 25 µs when the sample was cached.
#[inline(always)]
fn prefetch_row(m: &CsrMatrix, r: usize, step: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let far = r + 2 * AHEAD * step;
        if far < m.row_offsets.len() {
            // SAFETY: a prefetch never faults; the address is inside the slice anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(m.row_offsets.as_ptr().add(far) as *const i8) };
        }
        if let Some(&a) = m.row_offsets.get(r + AHEAD * step)
            && (a as usize) < m.col_indices.len()
        {
            let p = m.col_indices.as_ptr().wrapping_add(a as usize) as *const i8;
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (m, r, step);
}

/// The occupied diagonals: exact when the sample would hold every row, else estimated from two
/// nested samples of rows.
fn sampled_diagonals(m: &CsrMatrix) -> f64 {
    let nnz = m.nnz();
    let budget = ((nnz as f64 * SAMPLE_FRACTION) as usize).clamp(MIN_SAMPLE, MAX_SAMPLE);
    let step = ((nnz as f64 / budget as f64).ceil() as usize).max(1);
    if step <= 2 || m.rows < 64 {
        return all_diagonals(m);
    }
    let (fine, coarse) = diagonal_counts(m, step, true);
    let possible = (m.rows + m.cols).saturating_sub(1) as f64;
    estimate_diagonals(fine, coarse, step as f64).min(possible)
}

/// Extrapolates the occupied diagonals from `fine` (counted on every `step`-th row) and
/// `coarse` (every `2·step`-th row): the count grows by `fine / coarse` (1: saturated, 2:
/// linear) per doubling of the sample, and `log2(step)` doublings separate `fine` from all rows.
pub fn estimate_diagonals(fine: f64, coarse: f64, step: f64) -> f64 {
    if fine <= 0.0 || coarse <= 0.0 {
        return fine.max(0.0);
    }
    let growth = (fine / coarse).clamp(1.0, 2.0);
    fine * growth.powf(step.log2())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::matgen;

    #[test]
    fn row_statistics_are_exact_and_the_laplacian_has_five_diagonals() {
        for m in [
            matgen::laplacian_2d(10),
            matgen::laplacian_2d(300),
            matgen::power_law(5000, 2, 1.5, 3),
            matgen::random(3000, 3000, 7, 1),
        ] {
            let (a, e) = (CuspFeatures::of(&m), CuspFeatures::exact(&m));
            assert_eq!(a.avg_nnz_per_row, e.avg_nnz_per_row);
            assert_eq!(a.ell_fill_in, e.ell_fill_in);
            assert_eq!(a.max_deviation, e.max_deviation);
            let lens: Vec<f64> = m
                .row_offsets
                .windows(2)
                .map(|w| (w[1] - w[0]) as f64)
                .collect();
            let avg = lens.iter().sum::<f64>() / lens.len() as f64;
            let sd =
                (lens.iter().map(|l| (l - avg).powi(2)).sum::<f64>() / lens.len() as f64).sqrt();
            assert!(
                (a.row_length_std_dev - sd).abs() < 1e-9 * (1.0 + sd),
                "{a:?} {sd}"
            );
        }
        let l = CuspFeatures::of(&matgen::laplacian_2d(300));
        let nnz = 5.0 * 300.0 * 300.0 - 4.0 * 300.0;
        // Five diagonals of a 300x300 grid: 0, ±1, ±300 (sampled: each sample sees all five).
        assert!((l.dia_fill_in - 5.0 * 90000.0 / nnz).abs() < 1e-12, "{l:?}");
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
}
