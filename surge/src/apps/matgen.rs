//! Deterministic sparse matrix generators, so the apps run without input files.

use crate::mtx::CsrMatrix;

/// The 5-point Laplacian of an `n × n` grid: `n²` rows, about 5 nonzeros each.
pub fn laplacian_2d(n: usize) -> CsrMatrix {
    let rows = n * n;
    let mut row_offsets = Vec::with_capacity(rows + 1);
    let mut col_indices = Vec::with_capacity(rows * 5);
    let mut values = Vec::with_capacity(rows * 5);
    row_offsets.push(0u64);
    for i in 0..n {
        for j in 0..n {
            let r = i * n + j;
            let mut push = |c: usize, v: f64| {
                col_indices.push(c as u32);
                values.push(v);
            };
            if i > 0 {
                push(r - n, -1.0);
            }
            if j > 0 {
                push(r - 1, -1.0);
            }
            push(r, 4.0);
            if j + 1 < n {
                push(r + 1, -1.0);
            }
            if i + 1 < n {
                push(r + n, -1.0);
            }
            row_offsets.push(col_indices.len() as u64);
        }
    }
    CsrMatrix {
        rows,
        cols: rows,
        row_offsets,
        col_indices,
        values,
    }
}

/// A `rows × cols` matrix with `per_row` nonzeros per row at pseudo-random columns (sorted,
/// distinct) and values in [-1, 1), reproducible from `seed`.
pub fn random(rows: usize, cols: usize, per_row: usize, seed: u64) -> CsrMatrix {
    let per_row = per_row.min(cols);
    let mut state = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut row_offsets = vec![0u64];
    let mut col_indices = Vec::with_capacity(rows * per_row);
    let mut values = Vec::with_capacity(rows * per_row);
    let mut cols_of_row: Vec<u32> = Vec::with_capacity(per_row);
    for _ in 0..rows {
        cols_of_row.clear();
        while cols_of_row.len() < per_row {
            let c = (next() % cols as u64) as u32;
            if !cols_of_row.contains(&c) {
                cols_of_row.push(c);
            }
        }
        cols_of_row.sort_unstable();
        for c in &cols_of_row {
            col_indices.push(*c);
            values.push((next() % 2048) as f64 / 1024.0 - 1.0);
        }
        row_offsets.push(col_indices.len() as u64);
    }
    CsrMatrix {
        rows,
        cols,
        row_offsets,
        col_indices,
        values,
    }
}
