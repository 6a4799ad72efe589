use super::super::handles::{Item, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `join(a, b)` (Table 5.1): the Cartesian product, `(x, y)` for `x ∈ a, y ∈ b`, `b` varying fastest.
///
/// ```
/// use surge::prelude::*;
/// let a = Seq::input("a", vec![1i64, 2])?;
/// let b = Seq::input("b", vec![10i64, 20, 30])?;
/// assert_eq!(map(|(x, y)| x + y, &join(&a, &b)?)?.interpret()?, vec![11, 21, 31, 12, 22, 32]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn join<A: Item, B: Item>(a: &Seq<A>, b: &Seq<B>) -> Result<Seq<(A, B)>> {
    super::build(
        Op::Join {
            inputs: vec![a.id(), b.id()],
        },
        vec![a.node.clone(), b.node.clone()],
    )
}

/// `join(a, b, c)`.
#[track_caller]
pub fn join3<A: Item, B: Item, C: Item>(
    a: &Seq<A>,
    b: &Seq<B>,
    c: &Seq<C>,
) -> Result<Seq<(A, B, C)>> {
    super::build(
        Op::Join {
            inputs: vec![a.id(), b.id(), c.id()],
        },
        vec![a.node.clone(), b.node.clone(), c.node.clone()],
    )
}
