//! Shared helpers for Surge's cross-crate integration and differential tests.

use std::path::PathBuf;

/// `../shared/matrices` beside the workspace, if it is there.
pub fn shared_matrices() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/matrices");
    dir.is_dir().then_some(dir)
}

/// Every `.mtx` file under `../shared/matrices`, sorted; empty (with a message) when absent.
pub fn shared_matrix_files() -> Vec<PathBuf> {
    let Some(dir) = shared_matrices() else {
        eprintln!("skipping: ../shared/matrices is not present beside the workspace");
        return vec![];
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("readable matrices directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
        .collect();
    files.sort();
    files
}

pub mod conformance;
pub mod operator_table;
