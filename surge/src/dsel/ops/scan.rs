use super::super::handles::{Item, Seq};
use super::super::lambda::{Combiner, IntoSym};
use crate::Result;
use surge_codegen::ir::Op;

/// `scan(f, s)`: the inclusive scan `y[0] = s[0], y[i] = f(y[i-1], s[i])`.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1i64, 2, 3, 4])?;
/// assert_eq!(scan(add, &s)?.interpret()?, vec![1, 3, 6, 10]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn scan<T: Item>(op: impl Combiner<T::Sym>, s: &Seq<T>) -> Result<Seq<T>> {
    build(op, s, None)
}

/// `scan(f, s, p)`, the dissertation's definition: `y[0] = p, y[i] = f(y[i-1], s[i-1])`
/// (an exclusive scan, as long as `s`).
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1i64, 2, 3, 4])?;
/// assert_eq!(scan_prefix(add, &s, 100)?.interpret()?, vec![100, 101, 103, 106]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn scan_prefix<T: Item>(
    op: impl Combiner<T::Sym>,
    s: &Seq<T>,
    prefix: impl IntoSym<T::Sym>,
) -> Result<Seq<T>> {
    build(op, s, Some(prefix.into_sym()))
}

#[track_caller]
fn build<T: Item>(op: impl Combiner<T::Sym>, s: &Seq<T>, prefix: Option<T::Sym>) -> Result<Seq<T>> {
    super::fold(op, s, prefix, |op, input, prefix| Op::Scan {
        op,
        input,
        prefix,
    })
}
