use super::super::handles::{Item, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `reverse(s)`: the reversed sequence.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1.0f64, 2.0, 3.0])?;
/// assert_eq!(reverse(&s)?.interpret()?, vec![3.0, 2.0, 1.0]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn reverse<T: Item>(s: &Seq<T>) -> Result<Seq<T>> {
    super::build(Op::Reverse { input: s.id() }, vec![s.node.clone()])
}
