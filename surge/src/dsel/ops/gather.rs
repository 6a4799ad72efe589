use super::super::handles::{IndexElement, Item, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `gather(s, idx)`: `y[i] = s[idx[i]]`. An index out of range is an error when the computation runs.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![10.0f64, 20.0, 30.0])?;
/// let idx = Seq::input("idx", vec![2u32, 0, 2])?;
/// assert_eq!(gather(&s, &idx)?.interpret()?, vec![30.0, 10.0, 30.0]);
/// let bad = Seq::input("bad", vec![3u32])?;
/// assert!(gather(&s, &bad)?.interpret().unwrap_err().to_string().contains("index 3 at position 0 is out of range"));
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn gather<T: Item, I: IndexElement>(s: &Seq<T>, idx: &Seq<I>) -> Result<Seq<T>> {
    super::build(
        Op::Gather {
            source: s.id(),
            indices: idx.id(),
        },
        vec![s.node.clone(), idx.node.clone()],
    )
}
