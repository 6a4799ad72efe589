use super::super::handles::{IntoScalar, Item, Nested, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `split(s, tile)`: the rows `s[0..tile], s[tile..2 tile], ..`; the last row may be shorter.
/// A zero tile size is an error.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1i64, 2, 3, 4, 5])?;
/// assert_eq!(split(&s, 2u64)?.interpret()?, vec![vec![1, 2], vec![3, 4], vec![5]]);
/// assert!(split(&s, 0u64).unwrap_err().to_string().contains("tile size must be positive"));
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn split<T: Item>(s: &Seq<T>, tile: impl IntoScalar<u64>) -> Result<Nested<T>> {
    let t = tile.into_scalar();
    super::build(
        Op::Split {
            input: s.id(),
            tile: t.node.id,
        },
        vec![s.node.clone(), t.node],
    )
}
