use super::super::handles::{IndexElement, IntoScalar, Item, Scalar, Seq, Sym};
use super::super::node::Node;
use crate::Result;
use surge_codegen::ir::Op;

/// `s[i]`: one element of a sequence (out of range is an error, when known here or when it runs).
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![5.0f64, 6.0])?;
/// assert_eq!(at(&s, 1u32)?.interpret()?, 6.0);
/// assert!(at(&s, 2u32).unwrap_err().to_string().contains("index 2 out of range"));
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn at<T: Item, I: IndexElement>(s: &Seq<T>, i: impl IntoScalar<I>) -> Result<T::Sym> {
    let i = i.into_scalar();
    super::build(
        Op::Index {
            seq: s.id(),
            index: i.node.id,
        },
        vec![s.node.clone(), i.node],
    )
}

/// The length of a sequence, as a `u64` scalar.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1i64, 2, 3])?;
/// let rows = split(&s, 2u64)?;
/// assert_eq!(map(|row| len(&row), &rows)?.interpret()?, vec![2, 1]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn len<T: Item>(s: &Seq<T>) -> Scalar<u64> {
    Scalar::from_node(Node::typed(
        Op::Length { seq: s.id() },
        vec![s.node.clone()],
    ))
}
