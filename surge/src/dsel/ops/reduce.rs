use super::super::handles::{Item, Seq};
use super::super::lambda::{Combiner, IntoSym};
use crate::Result;
use surge_codegen::ir::Op;

/// `reduce(⊕, s)`: `s[0] ⊕ s[1] ⊕ ..`. An empty `s` is an error (use [`reduce_prefix`]).
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![3.0f64, 1.0, 4.0])?;
/// assert_eq!(reduce(add, &s)?.interpret()?, 8.0);
/// assert_eq!(reduce(max, &s)?.interpret()?, 4.0);
/// assert_eq!(reduce(|a, b| a * b, &s)?.interpret()?, 12.0);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn reduce<T: Item>(op: impl Combiner<T::Sym>, s: &Seq<T>) -> Result<T::Sym> {
    build(op, s, None)
}

/// `reduce(⊕, s, p)`: `p ⊕ s[0] ⊕ s[1] ⊕ ..`; `p` for an empty `s`.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", Vec::<i64>::new())?;
/// assert_eq!(reduce_prefix(add, &s, 7)?.interpret()?, 7);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn reduce_prefix<T: Item>(
    op: impl Combiner<T::Sym>,
    s: &Seq<T>,
    prefix: impl IntoSym<T::Sym>,
) -> Result<T::Sym> {
    build(op, s, Some(prefix.into_sym()))
}

#[track_caller]
fn build<T: Item>(op: impl Combiner<T::Sym>, s: &Seq<T>, prefix: Option<T::Sym>) -> Result<T::Sym> {
    super::fold(op, s, prefix, |op, input, prefix| Op::Reduce {
        op,
        input,
        prefix,
    })
}
