use super::super::handles::{IntoScalar, Item, Seq, Sym};
use super::super::lambda::IntoSym;
use crate::Result;
use surge_codegen::ir::Op;

/// `replicate(v, len)`: `len` copies of `v`.
///
/// ```
/// use surge::prelude::*;
/// assert_eq!(replicate::<f64>(1.5, 3u64)?.interpret()?, vec![1.5, 1.5, 1.5]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn replicate<T: Item>(v: impl IntoSym<T::Sym>, len: impl IntoScalar<u64>) -> Result<Seq<T>> {
    let (v, n) = (v.into_sym().to_node(), len.into_scalar());
    super::build(
        Op::Replicate {
            value: v.id,
            len: n.node.id,
        },
        vec![v, n.node],
    )
}
