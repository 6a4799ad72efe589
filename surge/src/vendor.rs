//! Matrices handed to the vendor libraries the variants are compared with: MKL's CSR handle
//! and cuSPARSE's 32-bit indices (used by `surge bench` and the tuning backends).

use crate::mtx::CsrMatrix;
use crate::{Result, SurgeError};
use surge_cpu::baseline::mkl::{MklCsr, MklError};

/// `m` handed to MKL (`mkl_sparse_d_create_csr`, then optimized for `expected_calls` products).
pub fn mkl_csr(m: &CsrMatrix, expected_calls: usize) -> std::result::Result<MklCsr, MklError> {
    MklCsr::new(
        m.rows,
        m.cols,
        &m.row_offsets,
        &m.col_indices,
        &m.values,
        expected_calls,
    )
}

/// `m`'s row offsets and column indices as cuSPARSE takes them (32-bit); a usage error when
/// they do not fit.
pub fn csr_i32(m: &CsrMatrix) -> Result<(Vec<i32>, Vec<i32>)> {
    let big = |what: &str| {
        SurgeError::Usage(format!(
            "cuSPARSE takes 32-bit indices; this matrix's {what} do not fit"
        ))
    };
    let off = m
        .row_offsets
        .iter()
        .map(|o| i32::try_from(*o).map_err(|_| big("row offsets")))
        .collect::<Result<Vec<_>>>()?;
    let col = m
        .col_indices
        .iter()
        .map(|c| i32::try_from(*c).map_err(|_| big("column indices")))
        .collect::<Result<Vec<_>>>()?;
    Ok((off, col))
}
