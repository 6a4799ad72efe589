//! Reference implementations that Surge's variants are measured against: MKL (loaded at run
//! time, so nothing here needs MKL to build), plain rayon code as a careful Rust programmer would
//! write it, memory-bandwidth probes (the physical limit of the memory-bound apps: a read, copy and triad probe,
//! and one with a kernel's own mix of reads and streaming writes, `traffic`).

pub mod bandwidth;
pub mod blas;
pub mod mkl;
pub mod peak;
pub mod rayon_ref;
pub mod traffic;
