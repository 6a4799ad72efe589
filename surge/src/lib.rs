//! Surge: write a nested data-parallel computation once, as lazy combinators over typed
//! sequences, and get it analyzed, enumerated into variants and run.
//!
//! ```
//! use surge::prelude::*;
//! // SpMV, as the dissertation's Listing 5.1 writes it.
//! let values = Seq::input("values", vec![1.0f64, 2.0, 3.0])?;
//! let cols = Seq::input("cols", vec![0u32, 1, 1])?;
//! let offsets = Seq::input("offsets", vec![0u32, 2, 3])?;
//! let x = Seq::input("x", vec![10.0f64, 100.0])?;
//! let matrix = nest(&values, &offsets)?;
//! let indices = nest(&cols, &offsets)?;
//! let y = map(|(row, idx)| {
//!     let z = gather(&x, &idx)?;
//!     let products = map(|(a, b)| a * b, (&row, &z))?;
//!     reduce(add, &products)
//! }, (&matrix, &indices))?;
//! assert_eq!(y.interpret()?, vec![210.0, 300.0]);
//! assert_eq!(Computation::new(&y)?.analyze()?.expression_sequence(), "map.reduce");
//! # Ok::<(), surge::SurgeError>(())
//! ```

pub mod apps;
pub mod bench;
mod check;
mod computation;
pub mod dsel;
mod error;
mod execute;
pub mod mpi;
pub mod mtx;
pub mod stats;
pub mod tune;
mod vendor;

pub use computation::{Computation, Interpret};
pub use dsel::*;
pub use error::{Result, SurgeError};
pub use execute::{Kernels, Target, Workspace, execute, execute_into, execute_variant};
pub use surge_codegen as codegen;
pub use surge_codegen::data::{Buffer, Output};
pub use surge_codegen::ir::Value;
/// The oracle comparison (one tolerance rule) that run, bench, tune and the tests check results with.
pub use surge_codegen::oracle;
pub use tune::execute_tuned;

/// Everything a user of the combinators needs.
pub mod prelude {
    pub use crate::dsel::*;
    pub use crate::{Computation, Interpret, Result, SurgeError};
}
