//! The backend-neutral element lowering: how each element-wise sequence operator's length and
//! element `i` follow from its operands, written once as index algebra ([`X`]). Each emitter
//! prints a [`Flat`] in its own syntax (`cpu/lowered.rs`: Rust over lazy sequences and `chk_*`
//! checks that fail with the interpreter's message; `cuda/lowered.rs`: C++ templates over `@I@`
//! and `surge_*` checks that record the error and return a safe value).
//!
//! Operators whose elements need more than index algebra (a `map`'s body, `zip` and `join`
//! tuples, the rows of `nest` and `split`, which the CPU turns into subslices and CUDA into row
//! bounds) are still lowered by each emitter; `emit/README.md` lists them.

use crate::ir::{NodeId, Op};

/// An operand of a lowered operator, by position in [`Flat::operands`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// A sequence: its length and elements are read.
    Seq(NodeId),
    /// A value (a scalar, or on the CPU any element) used as it is.
    Value(NodeId),
    /// An integer scalar (a bound, a length, a stride).
    Int(NodeId),
}

/// What a checked step is called in its message (`{what} must be positive, got {k}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Tile,
    Stride,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Tile => "tile size",
            Step::Stride => "stride",
        }
    }
}

/// A run-time check of the operator's node: its value, or the node's error with the
/// interpreter's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Integer operand `value` as a positive count.
    Positive { value: usize, what: Step },
    /// Integer operand `value` as a non-negative length.
    Length { value: usize },
    /// An index into sequence operand `source`, read at position [`X::Index`] of the result.
    Gather { index: Box<X>, source: usize },
}

/// An index expression of the lowering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum X {
    /// The index of the element being read.
    Index,
    /// The length of sequence operand `k`.
    Len(usize),
    /// Element of sequence operand `k` at an index.
    At(usize, Box<X>),
    /// Value operand `k`.
    Value(usize),
    /// `len - 1 - i`.
    Mirror {
        len: Box<X>,
        i: Box<X>,
    },
    /// `i * k`.
    Scale {
        i: Box<X>,
        k: Box<X>,
    },
    /// `⌈a / b⌉`.
    DivCeil(Box<X>, Box<X>),
    Checked(Check),
    /// The element count of `range(start, end, stride)` (integer operands; stride 1 when absent;
    /// a zero stride is the node's error).
    RangeLen {
        start: usize,
        end: usize,
        stride: Option<usize>,
    },
    /// `start + i * stride` in the range's element type.
    RangeAt {
        start: usize,
        stride: Option<usize>,
    },
}

impl X {
    fn at(k: usize, i: X) -> X {
        X::At(k, Box::new(i))
    }
}

/// An element-wise sequence operator, lowered: its operands, its length and its element
/// [`X::Index`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flat {
    pub operands: Vec<Operand>,
    pub len: X,
    pub at: X,
}

/// The lowering of `op`, when it is an element-wise sequence operator lowered here.
pub fn flat(op: &Op) -> Option<Flat> {
    use Operand::{Int, Seq, Value};
    Some(match op {
        Op::Reverse { input } => Flat {
            operands: vec![Seq(*input)],
            len: X::Len(0),
            at: X::at(
                0,
                X::Mirror {
                    len: Box::new(X::Len(0)),
                    i: Box::new(X::Index),
                },
            ),
        },
        Op::Striding { input, stride } => {
            let k = || {
                Box::new(X::Checked(Check::Positive {
                    value: 1,
                    what: Step::Stride,
                }))
            };
            Flat {
                operands: vec![Seq(*input), Int(*stride)],
                len: X::DivCeil(Box::new(X::Len(0)), k()),
                at: X::at(
                    0,
                    X::Scale {
                        i: Box::new(X::Index),
                        k: k(),
                    },
                ),
            }
        }
        Op::Gather { source, indices } => Flat {
            operands: vec![Seq(*source), Seq(*indices)],
            len: X::Len(1),
            at: X::at(
                0,
                X::Checked(Check::Gather {
                    index: Box::new(X::at(1, X::Index)),
                    source: 0,
                }),
            ),
        },
        Op::Replicate { value, len } => Flat {
            operands: vec![Value(*value), Int(*len)],
            len: X::Checked(Check::Length { value: 1 }),
            at: X::Value(0),
        },
        Op::Range { start, end, stride } => {
            let mut operands = vec![Int(*start), Int(*end)];
            operands.extend(stride.map(Int));
            let stride = stride.map(|_| 2);
            Flat {
                operands,
                len: X::RangeLen {
                    start: 0,
                    end: 1,
                    stride,
                },
                at: X::RangeAt { start: 0, stride },
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_wise_operators_are_lowered_and_others_are_not() {
        let n = NodeId;
        let rev = flat(&Op::Reverse { input: n(0) }).unwrap();
        assert_eq!(rev.operands, [Operand::Seq(n(0))]);
        let g = flat(&Op::Gather {
            source: n(0),
            indices: n(1),
        })
        .unwrap();
        assert_eq!(g.len, X::Len(1));
        let r = flat(&Op::Range {
            start: n(0),
            end: n(1),
            stride: Some(n(2)),
        })
        .unwrap();
        assert_eq!(r.operands.len(), 3);
        assert!(
            flat(&Op::Nest {
                input: n(0),
                offsets: n(1)
            })
            .is_none()
        );
    }
}
