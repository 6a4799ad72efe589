//! The embedded language: typed handles, traced lambdas and the data-parallel operators.

pub(crate) mod handles;
pub(crate) mod lambda;
pub(crate) mod node;
pub(crate) mod ops;
mod scalar_ops;

pub use handles::{
    Element, Float, IndexElement, IntoScalar, Item, Nested, Numeric, Scalar, Seq, Sym, Traced, lit,
};
pub use lambda::{Combiner, IntoSym, MapInputs, add, max, min, mul};
#[doc(hidden)]
pub use node::Node;
pub use ops::*;
pub use scalar_ops::select;
