//! Row and column blocks: which rank owns which rows of `A` and which entries of `x`.
//!
//! Rows go in contiguous blocks (no row is ever split) balanced by cost = nonzeros + rows, so a
//! rank's work is its nonzeros plus one write per row, and empty rows still spread out. With
//! fewer rows than ranks some blocks are empty, which every later step accepts. `x` is owned in
//! the same blocks as the rows when `A` is square (PETSc's default layout); a rectangular
//! matrix's columns go in blocks of equal count.

use std::ops::Range;

/// The owners of `A`'s rows and of `x`'s entries: `ranks + 1` boundaries each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocks {
    /// Rank `r` owns rows `rows[r]..rows[r + 1]`.
    pub rows: Vec<usize>,
    /// Rank `r` owns `x[cols[r]..cols[r + 1]]`.
    pub cols: Vec<usize>,
}

impl Blocks {
    /// Blocks of a `rows × cols` CSR matrix (its `row_offsets`) over `ranks` ranks (at least one).
    pub fn balanced(row_offsets: &[u64], cols: usize, ranks: usize) -> Blocks {
        assert!(ranks > 0, "internal: a partition over zero ranks");
        let rows = row_offsets.len() - 1;
        let cost = |i: usize| row_offsets[i] + i as u64;
        let total = cost(rows) as u128;
        let mut row_bounds = vec![0usize; ranks + 1];
        let mut prev = 0;
        for (r, bound) in row_bounds.iter_mut().enumerate().skip(1) {
            // The first row whose prefix cost reaches r/ranks of the total, or the one before.
            let target = (total * r as u128).div_ceil(ranks as u128) as u64;
            let (mut lo, mut hi) = (0usize, rows);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if cost(mid) < target {
                    lo = mid + 1
                } else {
                    hi = mid
                }
            }
            // The nearer of the rows either side of the target.
            if lo > 0 && target - cost(lo - 1) < cost(lo) - target {
                lo -= 1;
            }
            *bound = lo.max(prev);
            prev = *bound;
        }
        row_bounds[ranks] = rows;
        let col_bounds = if cols == rows {
            row_bounds.clone()
        } else {
            (0..=ranks).map(|r| cols * r / ranks).collect()
        };
        Blocks {
            rows: row_bounds,
            cols: col_bounds,
        }
    }

    pub fn ranks(&self) -> usize {
        self.rows.len() - 1
    }

    pub fn rows_of(&self, rank: usize) -> Range<usize> {
        self.rows[rank]..self.rows[rank + 1]
    }

    pub fn cols_of(&self, rank: usize) -> Range<usize> {
        self.cols[rank]..self.cols[rank + 1]
    }

    /// The rank that owns `x[col]` (the last of several when empty blocks share a boundary).
    pub fn col_owner(&self, col: usize) -> usize {
        self.cols.partition_point(|&b| b <= col) - 1
    }
}
