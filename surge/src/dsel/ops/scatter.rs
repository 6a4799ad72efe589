use super::super::handles::{IndexElement, Item, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `scatter(s, idx, d)`: a copy of `d` with `d[idx[i]] = s[i]` (later `i` win on repeated indices).
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1.0f64, 2.0])?;
/// let idx = Seq::input("idx", vec![3u64, 0])?;
/// let d = Seq::input("d", vec![0.0f64; 4])?;
/// assert_eq!(scatter(&s, &idx, &d)?.interpret()?, vec![2.0, 0.0, 0.0, 1.0]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn scatter<T: Item, I: IndexElement>(s: &Seq<T>, idx: &Seq<I>, d: &Seq<T>) -> Result<Seq<T>> {
    super::build(
        Op::Scatter {
            source: s.id(),
            indices: idx.id(),
            dest: d.id(),
        },
        vec![s.node.clone(), idx.node.clone(), d.node.clone()],
    )
}
