//! The embedded language: typed handles, traced lambdas and the data-parallel operators.

pub(crate) mod handles;
pub(crate) mod lambda;
pub(crate) mod node;
pub(crate) mod ops;
mod scalar_ops;

pub use handles::{lit, Element, Float, IndexElement, IntoScalar, Item, Nested, Numeric, Scalar, Seq, Sym, Traced};
pub use lambda::{add, max, min, mul, Combiner, IntoSym, MapInputs};
pub use ops::*;
pub use scalar_ops::select;
#[doc(hidden)]
pub use node::Node;
