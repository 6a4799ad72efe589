//! The CPU emitter: Rust source for the variants of a computation (compiled by rustc in `surge-cpu`).
