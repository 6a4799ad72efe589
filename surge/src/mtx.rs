//! Matrix Market reader (being written).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct MtxError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}
