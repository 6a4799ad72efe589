//! Emitters: source text for the variants of a computation, one module per backend.
//! Templates live in `surge-codegen/templates/<backend>/`.

pub mod cpu;
pub mod cuda;
pub mod lower;
pub mod sharing;
#[cfg(test)]
mod tests;
