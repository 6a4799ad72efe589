//! Reference implementations that Surge's variants are measured against: MKL (loaded at run
//! time, so nothing here needs MKL to build), plain rayon code as a careful Rust programmer would
//! write it, and a memory-bandwidth probe (the physical limit of the memory-bound apps).

pub mod bandwidth;
pub mod blas;
pub mod mkl;
pub mod peak;
pub mod rayon_ref;
