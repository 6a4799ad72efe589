//! Dense mat-mat as a user writes it with the DSEL: each row of A against each column of B
//! (`transpose(split(B, n))`), a sum of products. The analysis recognizes it as a dense
//! contraction, so its CPU variants include the generated GEMM family
//! (`surge_codegen::gemm`) beside the phase's own.

use crate::prelude::*;

/// `C = A·B` for row-major `A` (m×k, `a.len() = m·k`) and `B` (k×n).
///
/// ```
/// let c = surge::apps::mat_mat(vec![1.0; 6], vec![1.0; 12], 3, 4)?; // 2x3 times 3x4
/// let set = c.variants(&surge::Target::cpu().platform()?)?;
/// assert!(set.variants().iter().any(surge::codegen::gemm::is_gemm));
/// # Ok::<(), surge::SurgeError>(())
/// ```
pub fn mat_mat(a: Vec<f64>, b: Vec<f64>, k: u64, n: u64) -> Result<Computation> {
    let a = Seq::input("a", a)?;
    let b = Seq::input("b", b)?;
    let bcols = transpose(&split(&b, n)?)?;
    let c = map(
        |arow: Seq<f64>| {
            map(
                |bcol: Seq<f64>| reduce(add, &map(|(u, v)| &u * &v, (&arow, &bcol))?),
                &bcols,
            )
        },
        &split(&a, k)?,
    )?;
    Computation::new(&c)
}

/// `C = A·Btᵀ` as a user writes it: the rows of A (m×k, row-major) against the rows of `bt`
/// (n×k, row-major), no `transpose`. The same GEMM family runs it, B's panels packed from `bt`.
pub fn mat_mat_bt(a: Vec<f64>, bt: Vec<f64>, k: u64) -> Result<Computation> {
    let a = Seq::input("a", a)?;
    let bt = Seq::input("bt", bt)?;
    let brows = split(&bt, k)?;
    let c = map(
        |arow: Seq<f64>| {
            map(
                |brow: Seq<f64>| reduce(add, &map(|(u, v)| &u * &v, (&arow, &brow))?),
                &brows,
            )
        },
        &split(&a, k)?,
    )?;
    Computation::new(&c)
}
