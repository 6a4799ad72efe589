use super::super::handles::{Item, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `zip(a, b)`: `x[i] = (a[i], b[i])`; inputs of different lengths are an error.
///
/// ```
/// use surge::prelude::*;
/// let a = Seq::input("a", vec![1.0f64, 2.0])?;
/// let b = Seq::input("b", vec![3.0f64, 4.0])?;
/// let z = zip(&a, &b)?;
/// assert_eq!(map(|(x, y)| x * y, &z)?.interpret()?, vec![3.0, 8.0]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn zip<A: Item, B: Item>(a: &Seq<A>, b: &Seq<B>) -> Result<Seq<(A, B)>> {
    super::build(
        Op::Zip {
            inputs: vec![a.id(), b.id()],
        },
        vec![a.node.clone(), b.node.clone()],
    )
}

/// `zip(a, b, c)`.
#[track_caller]
pub fn zip3<A: Item, B: Item, C: Item>(
    a: &Seq<A>,
    b: &Seq<B>,
    c: &Seq<C>,
) -> Result<Seq<(A, B, C)>> {
    super::build(
        Op::Zip {
            inputs: vec![a.id(), b.id(), c.id()],
        },
        vec![a.node.clone(), b.node.clone(), c.node.clone()],
    )
}
