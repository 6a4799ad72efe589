//! SpMV through the DSEL equals a plain CSR loop on every real matrix in ../shared/matrices.

use surge::Interpret;
use surge::apps::{matgen, spmv_app};
use surge::mtx::{CsrMatrix, read_mtx};
use tests::shared_matrix_files;

fn csr_loop(m: &CsrMatrix, x: &[f64]) -> Vec<f64> {
    (0..m.rows)
        .map(|i| {
            let (a, b) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
            (a..b)
                .map(|k| m.values[k] * x[m.col_indices[k] as usize])
                .sum()
        })
        .collect()
}

fn check(name: &str, m: &CsrMatrix) {
    let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.25).collect();
    let got = spmv_app(m, &x)
        .unwrap()
        .interpret()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = csr_loop(m, &x);
    assert_eq!(got.len(), m.rows, "{name}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        // Same summation order (prefix 0, then left to right) as the loop: exact equality.
        assert_eq!(g, w, "{name}: row {i}");
    }
}

#[test]
fn spmv_equals_csr_loop_on_every_shared_matrix() {
    let mut checked = 0;
    for path in shared_matrix_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        match read_mtx(&path) {
            Ok(m) => {
                check(&name, &m);
                checked += 1;
            }
            Err(e) => assert!(
                name == "young1c.mtx" && e.to_string().contains("complex"),
                "{name}: {e}"
            ),
        }
    }
    if checked > 0 {
        assert!(checked >= 24, "only {checked} matrices checked");
    }
}

#[test]
fn spmv_on_generated_matrices() {
    check("laplacian 12x12", &matgen::laplacian_2d(12));
    check("random 50x70", &matgen::random(50, 70, 6, 3));
    check("empty", &matgen::random(0, 5, 2, 1));
}

#[test]
fn spmv_rejects_wrong_x_length() {
    let m = matgen::laplacian_2d(3);
    let e = spmv_app(&m, &[1.0; 8]).unwrap_err().to_string();
    assert!(
        e.contains("x has 8 entries but the matrix has 9 columns"),
        "{e}"
    );
}
