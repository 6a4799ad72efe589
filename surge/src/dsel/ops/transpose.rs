use super::super::handles::{Item, Nested};
use crate::Result;
use surge_codegen::ir::Op;

/// `transpose(s)`: the transpose of a uniformly nested sequence; ragged rows are an error when it runs.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1i64, 2, 3, 4, 5, 6])?;
/// let m = split(&s, 3u64)?;
/// assert_eq!(transpose(&m)?.interpret()?, vec![vec![1, 4], vec![2, 5], vec![3, 6]]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn transpose<T: Item>(s: &Nested<T>) -> Result<Nested<T>> {
    super::build(Op::Transpose { input: s.id() }, vec![s.node.clone()])
}
