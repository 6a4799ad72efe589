//! Benchmark support: repeated timing with warm-up and medians (shared with `surge bench`),
//! and JSON reports.
//! The comparisons against references (MKL, cuSPARSE, BEAST's baseline) build on this.

pub mod beast_baseline;
pub mod pipelines;
mod pipelines_more;

pub use surge::bench::{Timing, measure};
