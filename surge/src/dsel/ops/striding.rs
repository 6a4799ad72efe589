use super::super::handles::{IntoScalar, Item, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `striding(s, stride)`: `s[0], s[stride], s[2 stride], ..`. A zero stride is an error.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![0i64, 1, 2, 3, 4, 5, 6])?;
/// assert_eq!(striding(&s, 3u64)?.interpret()?, vec![0, 3, 6]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn striding<T: Item>(s: &Seq<T>, stride: impl IntoScalar<u64>) -> Result<Seq<T>> {
    let k = stride.into_scalar();
    super::build(
        Op::Striding {
            input: s.id(),
            stride: k.node.id,
        },
        vec![s.node.clone(), k.node],
    )
}
