//! Writing: `coordinate real general` that reads back exactly.

use super::{CsrMatrix, MtxError};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes `coordinate real general` with shortest round-trip value formatting, so
/// `read_mtx(write_mtx(m)) == m` exactly.
pub fn write_mtx(path: &Path, m: &CsrMatrix) -> Result<(), MtxError> {
    let name = path.display().to_string();
    let nnz = m.values.len();
    if m.row_offsets.len() != m.rows + 1
        || m.col_indices.len() != nnz
        || m.row_offsets.first() != Some(&0)
        || m.row_offsets.last() != Some(&(nnz as u64))
        || m.row_offsets.windows(2).any(|w| w[0] > w[1])
    {
        return Err(MtxError::whole(
            &name,
            "refusing to write an inconsistent CSR matrix",
        ));
    }
    for r in 0..m.rows {
        for k in m.row_offsets[r] as usize..m.row_offsets[r + 1] as usize {
            let (c, v) = (m.col_indices[k] as usize, m.values[k]);
            if c >= m.cols {
                return Err(MtxError::whole(
                    &name,
                    format!("column index {c} out of range in row {r}"),
                ));
            }
            if !v.is_finite() {
                return Err(MtxError::whole(
                    &name,
                    format!("value {v} at ({r}, {c}) is not finite"),
                ));
            }
        }
    }
    let io = |e: std::io::Error| MtxError::whole(&name, format!("cannot write: {e}"));
    let file = fs::File::create(path).map_err(io)?;
    let mut w = BufWriter::new(file);
    writeln!(w, "%%MatrixMarket matrix coordinate real general").map_err(io)?;
    writeln!(w, "{} {} {}", m.rows, m.cols, nnz).map_err(io)?;
    for r in 0..m.rows {
        for k in m.row_offsets[r] as usize..m.row_offsets[r + 1] as usize {
            let v = m.values[k];
            let a = v.abs();
            // Both `{}` and `{:e}` print the shortest string that parses back exactly;
            // `{:e}` avoids 300-digit output for huge/tiny magnitudes.
            if v == 0.0 || (1e-5..1e16).contains(&a) {
                writeln!(w, "{} {} {v}", r + 1, m.col_indices[k] as u64 + 1).map_err(io)?;
            } else {
                writeln!(w, "{} {} {v:e}", r + 1, m.col_indices[k] as u64 + 1).map_err(io)?;
            }
        }
    }
    w.flush().map_err(io)
}
