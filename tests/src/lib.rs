//! Shared helpers for Surge's cross-crate integration and differential tests.

use std::path::PathBuf;

/// `../shared/matrices` beside the workspace: a test requirement (CI puts `../shared` beside
/// the checkout), so its absence fails the tests that read it instead of passing them.
pub fn shared_matrices() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/matrices");
    assert!(
        dir.is_dir(),
        "the shared matrices are required: {} not found",
        dir.display()
    );
    dir
}

/// Every `.mtx` file under `../shared/matrices`, sorted.
pub fn shared_matrix_files() -> Vec<PathBuf> {
    let dir = shared_matrices();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("readable matrices directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
        .collect();
    files.sort();
    files
}

pub mod conformance;
pub mod cuda_checks;
pub mod layouts;
pub mod operator_table;
pub mod random;
