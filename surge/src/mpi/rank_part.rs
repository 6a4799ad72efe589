//! One rank's share of `A` in PETSc MatMult's shape, and the ghost exchange it needs.
//!
//! PETSc keeps a rank's rows as a diagonal block (its own columns) and an off-diagonal block
//! (the ghost columns, renumbered compactly) and adds the two products. Adding them changes the
//! order of each row's sum, so the result would differ from one rank's in the last bits. Here
//! the rows are split the other way: *interior* rows touch only owned columns (the diagonal
//! block's rows with an empty off-diagonal part) and run while the ghosts travel; *boundary*
//! rows run once they arrived, over `[x_own, x_ghost]` with each row's entries still in the
//! original column order. Each row is then the same sequential sum, in the same order, as in the
//! one-rank product: the result is equal bit for bit (see `README.md`). The diagonal and
//! off-diagonal counts are kept for the partition summary.

use super::partition::Blocks;
use crate::mtx::CsrMatrix;
use std::ops::Range;

/// Entries of `x` that travel between this rank and one neighbour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbour {
    pub rank: usize,
    /// Receiving: the neighbour's entries land in `ghosts[at]`, in order. Sending: `indices`
    /// into this rank's own `x` block, in the order the neighbour stores them as its ghosts.
    pub at: Range<usize>,
    pub indices: Vec<u32>,
}

/// What one rank holds: its rows of `A`, split into interior and boundary rows, and the ghost
/// exchange pattern (computed once per matrix).
#[derive(Debug, Clone, PartialEq)]
pub struct RankPart {
    pub rank: usize,
    pub ranks: usize,
    /// The whole matrix's shape.
    pub global_rows: usize,
    pub global_cols: usize,
    /// The global rows this rank owns, and the block of `x` it owns.
    pub rows: Range<usize>,
    pub cols: Range<usize>,
    /// Rows with no ghost column, columns numbered within the owned block.
    pub interior: CsrMatrix,
    /// The local row (within `rows`) of each interior row.
    pub interior_rows: Vec<u32>,
    /// Rows with a ghost column, columns numbered over `[x_own, x_ghost]`, in the original order.
    pub boundary: CsrMatrix,
    pub boundary_rows: Vec<u32>,
    /// Global column of each ghost entry, ascending (so grouped by owner).
    pub ghosts: Vec<u32>,
    /// Where each neighbour's entries land in `ghosts` (ascending ranks).
    pub recv: Vec<Neighbour>,
    /// What this rank sends each neighbour (ascending ranks).
    pub send: Vec<Neighbour>,
    /// Nonzeros in owned columns (PETSc's diagonal block) and in ghost columns (off-diagonal).
    pub diagonal_nnz: usize,
    pub off_diagonal_nnz: usize,
}

/// A CSR matrix being appended row by row.
struct RowsBuilder {
    offsets: Vec<u64>,
    cols: Vec<u32>,
    values: Vec<f64>,
    which: Vec<u32>,
}

impl RowsBuilder {
    fn new() -> Self {
        RowsBuilder {
            offsets: vec![0],
            cols: Vec::new(),
            values: Vec::new(),
            which: Vec::new(),
        }
    }
    fn finish(self, cols: usize) -> (CsrMatrix, Vec<u32>) {
        let m = CsrMatrix {
            rows: self.offsets.len() - 1,
            cols,
            row_offsets: self.offsets,
            col_indices: self.cols,
            values: self.values,
        };
        (m, self.which)
    }
}

impl RankPart {
    /// Every rank's part of `a` under `blocks` (rank 0 computes them all and sends each its own).
    pub fn split(a: &CsrMatrix, blocks: &Blocks) -> Vec<RankPart> {
        let mut parts: Vec<RankPart> = (0..blocks.ranks())
            .map(|r| Self::own(a, blocks, r))
            .collect();
        // Each rank sends its neighbours the entries they receive from it, in their ghost order.
        for q in 0..parts.len() {
            for n in parts[q].recv.clone() {
                let c0 = blocks.cols[n.rank] as u32;
                let indices = parts[q].ghosts[n.at.clone()]
                    .iter()
                    .map(|&g| g - c0)
                    .collect();
                parts[n.rank].send.push(Neighbour {
                    rank: q,
                    at: 0..0,
                    indices,
                });
            }
        }
        parts
    }

    /// Rank `rank`'s rows and its receive pattern (its send pattern is filled by `split`).
    fn own(a: &CsrMatrix, blocks: &Blocks, rank: usize) -> RankPart {
        let rows = blocks.rows_of(rank);
        let cols = blocks.cols_of(rank);
        let (c0, n_own) = (cols.start as u32, cols.len() as u32);
        let owned = |c: u32| c.wrapping_sub(c0) < n_own;
        let span = a.row_offsets[rows.start] as usize..a.row_offsets[rows.end] as usize;
        let mut ghosts: Vec<u32> = a.col_indices[span.clone()]
            .iter()
            .copied()
            .filter(|&c| !owned(c))
            .collect();
        ghosts.sort_unstable();
        ghosts.dedup();
        let off_diagonal_nnz = a.col_indices[span.clone()]
            .iter()
            .filter(|&&c| !owned(c))
            .count();
        let mut interior = RowsBuilder::new();
        let mut boundary = RowsBuilder::new();
        for (local, i) in rows.clone().enumerate() {
            let (lo, hi) = (a.row_offsets[i] as usize, a.row_offsets[i + 1] as usize);
            let row = &a.col_indices[lo..hi];
            let b = if row.iter().all(|&c| owned(c)) {
                &mut interior
            } else {
                &mut boundary
            };
            for (&c, &v) in row.iter().zip(&a.values[lo..hi]) {
                let local_col = if owned(c) {
                    c - c0
                } else {
                    n_own + ghosts.binary_search(&c).expect("a ghost column is listed") as u32
                };
                b.cols.push(local_col);
                b.values.push(v);
            }
            b.offsets.push(b.cols.len() as u64);
            b.which.push(local as u32);
        }
        let mut recv: Vec<Neighbour> = Vec::new();
        for (k, &g) in ghosts.iter().enumerate() {
            let owner = blocks.col_owner(g as usize);
            match recv.last_mut() {
                Some(n) if n.rank == owner => n.at.end = k + 1,
                _ => recv.push(Neighbour {
                    rank: owner,
                    at: k..k + 1,
                    indices: Vec::new(),
                }),
            }
        }
        let (interior, interior_rows) = interior.finish(n_own as usize);
        let (boundary, boundary_rows) = boundary.finish(n_own as usize + ghosts.len());
        RankPart {
            rank,
            ranks: blocks.ranks(),
            global_rows: a.rows,
            global_cols: a.cols,
            rows,
            cols,
            interior,
            interior_rows,
            boundary,
            boundary_rows,
            ghosts,
            recv,
            send: Vec::new(),
            diagonal_nnz: span.len() - off_diagonal_nnz,
            off_diagonal_nnz,
        }
    }

    /// The ranks this one exchanges ghost entries with, either way.
    pub fn neighbours(&self) -> Vec<usize> {
        let mut n: Vec<usize> = self.recv.iter().chain(&self.send).map(|n| n.rank).collect();
        n.sort_unstable();
        n.dedup();
        n
    }

    /// The entries of the owned block `x_own` each neighbour needs, in `send`'s order.
    pub fn pack(&self, x_own: &[f64], out: &mut [Vec<f64>]) {
        for (n, buf) in self.send.iter().zip(out.iter_mut()) {
            buf.clear();
            buf.extend(n.indices.iter().map(|&i| x_own[i as usize]));
        }
    }
}

/// A rank's line of the partition summary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartSummary {
    pub rank: usize,
    pub rows: usize,
    pub nnz: usize,
    pub diagonal_nnz: usize,
    pub off_diagonal_nnz: usize,
    pub interior_rows: usize,
    pub boundary_rows: usize,
    pub ghosts: usize,
    pub neighbours: Vec<usize>,
}

impl RankPart {
    pub fn summary(&self) -> PartSummary {
        PartSummary {
            rank: self.rank,
            rows: self.rows.len(),
            nnz: self.diagonal_nnz + self.off_diagonal_nnz,
            diagonal_nnz: self.diagonal_nnz,
            off_diagonal_nnz: self.off_diagonal_nnz,
            interior_rows: self.interior.rows,
            boundary_rows: self.boundary.rows,
            ghosts: self.ghosts.len(),
            neighbours: self.neighbours(),
        }
    }
}
