//! SpMV, Listing 5.1: a `map` over the rows of a nested (CSR) matrix whose function gathers `x`,
//! multiplies element-wise and reduces — `map.reduce`, with `gather` and the inner `map` fused.

use crate::mtx::CsrMatrix;
use crate::prelude::*;

/// `y = A x` for a CSR matrix `A`. `x` must have one entry per column.
pub fn spmv_app(a: &CsrMatrix, x: &[f64]) -> Result<Seq<f64>> {
    if x.len() != a.cols {
        return Err(SurgeError::Input {
            input: "x".into(),
            message: format!(
                "x has {} entries but the matrix has {} columns",
                x.len(),
                a.cols
            ),
        });
    }
    let nonzeros = Seq::input("nonzeros", a.values.clone())?;
    let column_indices = Seq::input("column_indices", a.col_indices.clone())?;
    let row_offsets = Seq::input("row_offsets", a.row_offsets.clone())?;
    let x = Seq::input("x", x.to_vec())?;
    // Create nested sequences s_matrix and s_indices.
    let s_matrix = nest(&nonzeros, &row_offsets)?;
    let s_indices = nest(&column_indices, &row_offsets)?;
    // Apply the dot product across all rows of the matrix.
    map(
        |(row, indices): (Seq<f64>, Seq<u32>)| {
            let mul = |x: Scalar<f64>, y: Scalar<f64>| x * y;
            let plus = |x: Scalar<f64>, y: Scalar<f64>| x + y;
            // Gather elements from vector x.
            let z = gather(&x, &indices)?;
            // Element-wise multiplication of x with the row.
            let vector_mul = map(|(a, b)| mul(a, b), (&row, &z))?;
            // Sum up the elements to obtain the dot product.
            reduce_prefix(plus, &vector_mul, 0.0)
        },
        (&s_matrix, &s_indices),
    )
}
