//! Surge code generation: the IR, its analysis, and (in later layers) schedules, policies, the
//! pruned variant space (enumerated by the BEAST engine, crate `surge-beast`) and the emitters.
//! Pure: nothing here runs a kernel or times anything.

pub mod analysis;
pub mod cache;
pub use ir::data;
pub mod emit;
pub mod error;
pub mod gemm;
pub mod ir;
pub mod oracle;
pub mod params;
pub mod passes;
pub mod policy;
pub mod schedule;
pub mod space;
pub mod target;
pub mod variant;
pub mod variant_set;

pub use error::CodegenError;
