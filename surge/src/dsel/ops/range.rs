use super::super::handles::{IndexElement, IntoScalar, Seq};
use crate::Result;
use surge_codegen::ir::Op;

/// `range(start, end)`: `start, start + 1, .., end - 1`.
///
/// ```
/// use surge::prelude::*;
/// assert_eq!(range(2i64, 5i64)?.interpret()?, vec![2, 3, 4]);
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn range<I: IndexElement>(
    start: impl IntoScalar<I>,
    end: impl IntoScalar<I>,
) -> Result<Seq<I>> {
    let (a, b) = (start.into_scalar(), end.into_scalar());
    super::build(
        Op::Range {
            start: a.node.id,
            end: b.node.id,
            stride: None,
        },
        vec![a.node, b.node],
    )
}

/// `range(start, end, stride)`: `start, start + stride, ..` up to but excluding `end`; a negative
/// stride counts down; a zero stride is an error.
///
/// ```
/// use surge::prelude::*;
/// assert_eq!(range_step(10i32, 0, -3)?.interpret()?, vec![10, 7, 4, 1]);
/// assert!(range_step(0i32, 5, 0).unwrap_err().to_string().contains("stride is 0"));
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn range_step<I: IndexElement>(
    start: impl IntoScalar<I>,
    end: impl IntoScalar<I>,
    stride: impl IntoScalar<I>,
) -> Result<Seq<I>> {
    let (a, b, s) = (start.into_scalar(), end.into_scalar(), stride.into_scalar());
    super::build(
        Op::Range {
            start: a.node.id,
            end: b.node.id,
            stride: Some(s.node.id),
        },
        vec![a.node, b.node, s.node],
    )
}
