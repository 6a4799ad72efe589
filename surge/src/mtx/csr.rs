//! The CSR result: [`CsrMatrix`], built from triplets or parsed entries (rows sorted by column,
//! duplicates summed).

use super::MtxError;

/// A matrix in CSR form with f64 values, rows sorted by column, duplicates summed,
/// symmetric storage expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    pub rows: usize,
    pub cols: usize,
    /// `rows + 1` offsets into `col_indices`/`values`; u64 so nnz is not capped at 4G.
    pub row_offsets: Vec<u64>,
    pub col_indices: Vec<u32>,
    pub values: Vec<f64>,
}

/// Name used in errors from [`CsrMatrix::from_triplets`], which has no file.
const TRIPLETS: &str = "<triplets>";

impl CsrMatrix {
    /// Number of stored entries (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Entries stored in row `i`; panics if `i >= rows`.
    pub fn row_len(&self, i: usize) -> usize {
        (self.row_offsets[i + 1] - self.row_offsets[i]) as usize
    }

    /// Builds a CSR matrix from 0-based `(row, col, value)` triplets: validates indices,
    /// sorts each row by column and sums duplicates.
    pub fn from_triplets(
        rows: usize,
        cols: usize,
        triplets: &[(usize, usize, f64)],
    ) -> Result<CsrMatrix, MtxError> {
        check_cols(cols).map_err(|m| MtxError::whole(TRIPLETS, m))?;
        let mut entries = Vec::with_capacity(triplets.len());
        for (k, &(i, j, v)) in triplets.iter().enumerate() {
            if i >= rows {
                return Err(MtxError::whole(
                    TRIPLETS,
                    format!("triplet {k}: row index {i} out of range (matrix has {rows} rows)"),
                ));
            }
            if j >= cols {
                return Err(MtxError::whole(
                    TRIPLETS,
                    format!(
                        "triplet {k}: column index {j} out of range (matrix has {cols} columns)"
                    ),
                ));
            }
            entries.push((i, j as u32, v));
        }
        build_csr(TRIPLETS, rows, cols, entries)
    }

    /// All entries as 0-based `(row, col, value)` in row-major, column-sorted order.
    pub fn to_triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::with_capacity(self.nnz());
        for r in 0..self.rows {
            let (s, e) = (
                self.row_offsets[r] as usize,
                self.row_offsets[r + 1] as usize,
            );
            for k in s..e {
                out.push((r, self.col_indices[k] as usize, self.values[k]));
            }
        }
        out
    }
}

/// Column indices are u32 in Surge's CSR.
pub(super) fn check_cols(cols: usize) -> Result<(), String> {
    if cols as u64 > u32::MAX as u64 {
        return Err(format!(
            "matrix has {cols} columns; at most {} are supported (u32 column indices)",
            u32::MAX
        ));
    }
    Ok(())
}

/// Counting sort by row (stable, so duplicates are summed in input order), then a
/// per-row sort by column with duplicate merging.
pub(super) fn build_csr(
    name: &str,
    rows: usize,
    cols: usize,
    entries: Vec<(usize, u32, f64)>,
) -> Result<CsrMatrix, MtxError> {
    // Fail with an error rather than abort on absurd row counts from a size line.
    let too_big = || MtxError::whole(name, format!("cannot allocate row offsets for {rows} rows"));
    let len = rows.checked_add(1).ok_or_else(too_big)?;
    let mut start: Vec<usize> = Vec::new();
    start.try_reserve_exact(len).map_err(|_| too_big())?;
    start.resize(len, 0);
    let mut row_offsets: Vec<u64> = Vec::new();
    row_offsets.try_reserve_exact(len).map_err(|_| too_big())?;

    for &(r, _, _) in &entries {
        start[r + 1] += 1;
    }
    for r in 0..rows {
        start[r + 1] += start[r];
    }
    let n = entries.len();
    let mut col_indices = vec![0u32; n];
    let mut values = vec![0f64; n];
    {
        let mut next = start[..rows].to_vec();
        for (r, c, v) in entries {
            let p = next[r];
            col_indices[p] = c;
            values[p] = v;
            next[r] = p + 1;
        }
    }

    row_offsets.push(0);
    let mut w = 0usize;
    let mut scratch: Vec<(u32, f64)> = Vec::new();
    for r in 0..rows {
        let (s, e) = (start[r], start[r + 1]);
        if col_indices[s..e].windows(2).all(|p| p[0] < p[1]) {
            if w != s {
                col_indices.copy_within(s..e, w);
                values.copy_within(s..e, w);
            }
            w += e - s;
        } else {
            scratch.clear();
            scratch.extend(
                col_indices[s..e]
                    .iter()
                    .copied()
                    .zip(values[s..e].iter().copied()),
            );
            scratch.sort_by_key(|&(c, _)| c);
            let row_w = w;
            for &(c, v) in &scratch {
                if w > row_w && col_indices[w - 1] == c {
                    values[w - 1] += v;
                } else {
                    col_indices[w] = c;
                    values[w] = v;
                    w += 1;
                }
            }
        }
        row_offsets.push(w as u64);
    }
    col_indices.truncate(w);
    values.truncate(w);
    Ok(CsrMatrix {
        rows,
        cols,
        row_offsets,
        col_indices,
        values,
    })
}
