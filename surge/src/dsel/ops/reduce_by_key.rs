use super::super::handles::{IndexElement, Item, Seq, Sym};
use super::super::lambda::{Combiner, IntoSym};
use crate::Result;
use surge_codegen::ir::Op;

/// `reduce_by_key(⊕, s, keys, p)`: a segmented reduction, one `p ⊕ s[i] ⊕ ..` per run of equal
/// consecutive keys (sort by key first to get one result per key).
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1.0f64, 2.0, 3.0, 4.0, 5.0])?;
/// let k = Seq::input("k", vec![0u32, 0, 1, 1, 1])?;
/// assert_eq!(reduce_by_key(add, &s, &k, 0.0)?.interpret()?, vec![3.0, 12.0]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn reduce_by_key<T: Item, K: IndexElement>(
    op: impl Combiner<T::Sym>,
    s: &Seq<T>,
    keys: &Seq<K>,
    prefix: impl IntoSym<T::Sym>,
) -> Result<Seq<T>> {
    let l = op.trace()?.0;
    let p = prefix.into_sym().to_node();
    let ir = Op::ReduceByKey {
        op: l.ir(),
        input: s.id(),
        keys: keys.id(),
        prefix: p.id,
    };
    super::build(
        ir,
        [s.node.clone(), keys.node.clone(), p]
            .into_iter()
            .chain(l.deps())
            .collect(),
    )
}
