//! Surge code generation: the IR, its analysis, and (in later layers) schedules, policies, the
//! BEAST search-space engine and the emitters. Pure: nothing here runs a kernel or times anything.

pub mod analysis;
pub mod data;
pub mod error;
pub mod ir;

pub use error::CodegenError;
