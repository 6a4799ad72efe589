//! Differential testing with random programs (issue 19, item 4): a type-directed generator of
//! well-typed programs over every IR operator, a printer of them as DSEL source, and the check of
//! the reference interpreter against every CPU variant and NVRTC. `tests/tests/random_programs.rs`
//! runs it.
//!
//! - [`program`]: the representation (an expression tree of DSEL operators and its inputs).
//! - [`generate`]: the generator, decoding a choice sequence type-directed (its `scalars` and
//!   `seqs` produce values of each kind).
//! - [`strategy`]: the proptest strategy over choice sequences (shrinks with them).
//! - [`build`]: lowering to IR as the DSEL does; [`types`]: an expression's type.
//! - [`dsel`]: the program as `surge::prelude` source.
//! - [`check`]: interpreter vs every CPU variant, CUDA emission and NVRTC; refusal counts.

pub mod build;
pub mod check;
pub mod dsel;
pub mod generate;
pub mod program;
pub mod strategy;
pub mod types;
