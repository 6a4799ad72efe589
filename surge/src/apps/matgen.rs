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

/// A small deterministic xorshift generator: the generators must give the same matrix for the
/// same seed on every machine, so tuning inputs (and the models trained on them) are reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [0, n); `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    fn value(&mut self) -> f64 {
        (self.next_u64() % 2048) as f64 / 1024.0 - 1.0
    }
}

/// Builds a CSR matrix from per-row sorted, distinct column lists.
fn from_rows(
    rows: usize,
    cols: usize,
    mut row: impl FnMut(usize, &mut Vec<u32>),
    seed: u64,
) -> CsrMatrix {
    let mut rng = Rng::new(seed ^ 0x5151);
    let mut row_offsets = Vec::with_capacity(rows + 1);
    row_offsets.push(0u64);
    let mut col_indices = Vec::new();
    let mut values = Vec::new();
    let mut buf = Vec::new();
    for i in 0..rows {
        buf.clear();
        row(i, &mut buf);
        buf.sort_unstable();
        buf.dedup();
        for &c in &buf {
            col_indices.push(c);
            values.push(rng.value());
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

/// The 9-point stencil of an `n × n` grid: `n²` rows, about 9 nonzeros each.
pub fn stencil_2d_9pt(n: usize) -> CsrMatrix {
    let rows = n * n;
    from_rows(
        rows,
        rows,
        |r, out| {
            let (i, j) = ((r / n) as isize, (r % n) as isize);
            for di in -1..=1 {
                for dj in -1..=1 {
                    let (a, b) = (i + di, j + dj);
                    if a >= 0 && b >= 0 && (a as usize) < n && (b as usize) < n {
                        out.push((a as usize * n + b as usize) as u32);
                    }
                }
            }
        },
        9,
    )
}

/// The 7-point stencil of an `n × n × n` grid: `n³` rows, about 7 nonzeros each.
pub fn stencil_3d_7pt(n: usize) -> CsrMatrix {
    let rows = n * n * n;
    from_rows(
        rows,
        rows,
        |r, out| {
            let (i, j, k) = (r / (n * n), (r / n) % n, r % n);
            out.push(r as u32);
            if i > 0 {
                out.push((r - n * n) as u32);
            }
            if i + 1 < n {
                out.push((r + n * n) as u32);
            }
            if j > 0 {
                out.push((r - n) as u32);
            }
            if j + 1 < n {
                out.push((r + n) as u32);
            }
            if k > 0 {
                out.push((r - 1) as u32);
            }
            if k + 1 < n {
                out.push((r + 1) as u32);
            }
        },
        7,
    )
}

/// A square banded matrix: row `i` holds columns `i - half_width ..= i + half_width` (clipped).
pub fn banded(rows: usize, half_width: usize, seed: u64) -> CsrMatrix {
    from_rows(
        rows,
        rows,
        |i, out| out.extend(band(i, half_width, rows).map(|c| c as u32)),
        seed,
    )
}

/// The columns within `half_width` of row `i`'s diagonal, clipped to `0..rows`.
fn band(i: usize, half_width: usize, rows: usize) -> std::ops::RangeInclusive<usize> {
    i.saturating_sub(half_width)..=(i + half_width).min(rows.saturating_sub(1))
}

/// A square matrix whose row lengths follow a power law (Pareto with exponent `alpha`, at least
/// `min_len` entries), at random columns: the irregular rows of graphs and circuit matrices.
pub fn power_law(rows: usize, min_len: usize, alpha: f64, seed: u64) -> CsrMatrix {
    let mut rng = Rng::new(seed);
    let cols = rows.max(1);
    from_rows(
        rows,
        cols,
        |_, out| {
            let u = 1.0 - rng.unit();
            let len = ((min_len.max(1) as f64) * u.powf(-1.0 / alpha.max(0.1))) as usize;
            for _ in 0..len.min(cols) {
                out.push(rng.below(cols as u64) as u32);
            }
        },
        seed,
    )
}

/// `blocks` dense `block × block` blocks along the diagonal.
pub fn block_diagonal(blocks: usize, block: usize, seed: u64) -> CsrMatrix {
    let rows = blocks * block;
    from_rows(
        rows,
        rows,
        |i, out| {
            let b0 = (i / block.max(1)) * block;
            out.extend((b0..b0 + block).map(|c| c as u32));
        },
        seed,
    )
}

/// An arrowhead-like matrix: a diagonal plus `dense` rows and columns spread evenly that are
/// nonzero everywhere: the extreme load imbalance of optimal-control and circuit matrices.
pub fn arrowhead(rows: usize, dense: usize, seed: u64) -> CsrMatrix {
    let dense = dense.clamp(1, rows.max(1));
    let stride = (rows / dense).max(1);
    let is_dense = |i: usize| i.is_multiple_of(stride) && i / stride < dense;
    from_rows(
        rows,
        rows,
        |i, out| {
            if is_dense(i) {
                out.extend((0..rows).map(|c| c as u32));
            } else {
                out.push(i as u32);
                out.extend((0..dense).map(|k| (k * stride) as u32));
            }
        },
        seed,
    )
}

/// A square variable-band (skyline) matrix: row `i` holds the full band `i - w ..= i + w` for
/// its own half-width `w`, drawn uniformly from `half_width / 3 ..= half_width`: the profile of
/// structural and finite-element matrices in a bandwidth-reducing order. Every diagonal of the
/// widest band is occupied somewhere but most rows are narrower, so a diagonal layout pays a
/// moderate fill-in (about 1.5) where `banded` pays none.
pub fn variable_band(rows: usize, half_width: usize, seed: u64) -> CsrMatrix {
    let mut rng = Rng::new(seed);
    let narrow = half_width / 3;
    from_rows(
        rows,
        rows,
        |i, out| {
            let w = narrow + rng.below((half_width - narrow + 1) as u64) as usize;
            out.extend(band(i, w, rows).map(|c| c as u32));
        },
        seed,
    )
}

/// A square matrix whose rows hold the diagonal and about `per_row - 1` more entries at random
/// columns within `half_width` of it (row lengths vary uniformly between half and one and a half
/// times `per_row`): the shape of finite-element, circuit and chemical-process matrices after a
/// bandwidth-reducing ordering. Unlike `banded`, its diagonals are sparsely filled, so a
/// diagonal layout pays a fill-in of about `(2 · half_width + 1) / per_row`; unlike `random`,
/// its accesses to `x` stay local.
pub fn scattered_band(rows: usize, half_width: usize, per_row: usize, seed: u64) -> CsrMatrix {
    let mut rng = Rng::new(seed);
    let per_row = per_row.max(1);
    from_rows(
        rows,
        rows,
        |i, out| {
            let cols = band(i, half_width, rows);
            let (lo, span) = (*cols.start(), cols.count() as u64);
            let len = per_row / 2 + rng.below(per_row as u64 + 1) as usize;
            out.push(i as u32);
            for _ in 1..len.min(span as usize) {
                out.push((lo as u64 + rng.below(span)) as u32);
            }
        },
        seed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scattered_band_stays_in_its_band_holds_its_diagonal_and_is_reproducible() {
        let (rows, w, k) = (500, 20, 8);
        let m = scattered_band(rows, w, k, 3);
        assert_eq!((m.rows, m.cols), (rows, rows));
        for i in 0..rows {
            let cols = &m.col_indices[m.row_offsets[i] as usize..m.row_offsets[i + 1] as usize];
            assert!(cols.contains(&(i as u32)), "row {i} lacks its diagonal");
            assert!(
                cols.windows(2).all(|p| p[0] < p[1]),
                "row {i} is not sorted"
            );
            assert!(cols.iter().all(|&c| (c as usize).abs_diff(i) <= w));
            assert!(cols.len() <= k + k / 2);
        }
        let avg = m.col_indices.len() as f64 / rows as f64;
        assert!((k as f64 * 0.6..=k as f64 * 1.1).contains(&avg), "{avg}");
        // Sparse diagonals: many more diagonals are touched than a row holds entries.
        let mut diagonals: Vec<i64> = (0..rows)
            .flat_map(|i| {
                let r = m.row_offsets[i] as usize..m.row_offsets[i + 1] as usize;
                m.col_indices[r].iter().map(move |&c| c as i64 - i as i64)
            })
            .collect();
        diagonals.sort_unstable();
        diagonals.dedup();
        assert_eq!(diagonals.len(), 2 * w + 1);
        let again = scattered_band(rows, w, k, 3);
        assert_eq!(again.col_indices, m.col_indices);
        assert_eq!(again.values, m.values);
        assert_ne!(scattered_band(rows, w, k, 4).col_indices, m.col_indices);
    }

    #[test]
    fn a_variable_band_holds_contiguous_bands_of_varying_width() {
        let (rows, w) = (400, 9);
        let m = variable_band(rows, w, 5);
        let mut widths = std::collections::BTreeSet::new();
        for i in w..rows - w {
            let cols = &m.col_indices[m.row_offsets[i] as usize..m.row_offsets[i + 1] as usize];
            let (lo, hi) = (cols[0] as usize, *cols.last().unwrap() as usize);
            // Contiguous and centred on the diagonal.
            assert_eq!(cols.len(), hi - lo + 1, "row {i}");
            assert_eq!(i - lo, hi - i, "row {i}");
            widths.insert(i - lo);
        }
        assert_eq!(widths.first(), Some(&3));
        assert_eq!(widths.last(), Some(&w));
        assert_eq!(variable_band(rows, w, 5).col_indices, m.col_indices);
    }
}
