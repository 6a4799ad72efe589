//! Phases that can also run over a *register-blocked* layout of their nested inputs (BCSR r×c,
//! `layout1 = bcsr_<r>_<c>` on the CPU; the host inspector is `surge-cpu/src/native/bcsr.rs`).
//!
//! A block stores `r × c` values, explicit zeros where the matrix has no element, and the kernel
//! folds every stored value of a row, zeros included. That is the row layout's result bit for bit
//! only for one exact form of the SpMV pattern ([`DiagonalPattern`]): each row is
//! `reduce(+, map(*, values, gather(x, indices)), +0.0)` over floats, the `+` and `*` of two
//! lambda parameters, the values, `x` and the accumulator of one float type, and no other nested
//! input. Why then: a fill entry adds `0 · x[j]`, which is `±0` for a finite `x[j]`; the
//! accumulator starts at `+0.0` and under round-to-nearest a sum is `-0.0` only when both
//! operands are, so it is never `-0.0`, and adding `±0` to anything that is not `-0.0` leaves it
//! unchanged (NaN and ∞ included). The host therefore runs the layout only when every element of
//! `x` is finite (`0 · ∞` is NaN), checked per run; any other reduction runs as rows.

use super::DiagonalPattern;
use crate::ir::{BinaryOp, Computation, Elem, Lambda, Literal, NodeId, Op, ScalarExpr, Type};
use serde::{Deserialize, Serialize};

/// The blocked form of an SpMV pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedPattern {
    /// Position in the pattern's `rows` of the values row (the other is the index row).
    pub values: usize,
    /// The float type of the values, `x` and the accumulator.
    pub elem: Elem,
    /// The products' `map` and whether its first input is the values row (else the gather).
    pub products: NodeId,
    pub values_first: bool,
}

/// The blocked form of `pat` in `c`, when the phase has exactly that form (see the module).
pub fn blocked_pattern(c: &Computation, pat: &DiagonalPattern) -> Option<BlockedPattern> {
    let [_, _] = pat.rows.as_slice() else {
        return None;
    };
    let values = 1 - pat.index;
    let Type::Scalar(elem) = c.node(pat.reduce).ty else {
        return None;
    };
    if !elem.is_float()
        || pat.rows[values].elem != elem
        || c.inputs.get(pat.gathered).map(|d| d.elem) != Some(elem)
    {
        return None;
    }
    let Op::Reduce {
        op,
        input,
        prefix: Some(prefix),
    } = &c.node(pat.reduce).op
    else {
        return None;
    };
    let zero = match elem {
        Elem::F32 => Literal::F32(0),
        _ => Literal::F64(0),
    };
    match &c.node(*prefix).op {
        Op::Scalar {
            expr: ScalarExpr::Const(l),
        } if *l == zero => {}
        _ => return None,
    }
    if !is_binary(c, op, BinaryOp::Add) {
        return None;
    }
    let Op::Map { f, inputs } = &c.node(*input).op else {
        return None;
    };
    if !is_binary(c, f, BinaryOp::Mul) {
        return None;
    }
    let v = pat.rows[values].param;
    let values_first = match inputs.as_slice() {
        [a, b] if *a == v && *b == pat.gather => true,
        [a, b] if *a == pat.gather && *b == v => false,
        _ => return None,
    };
    Some(BlockedPattern {
        values,
        elem,
        products: *input,
        values_first,
    })
}

/// Whether `f` is `|a, b| a op b` or `|a, b| b op a` over its own two parameters.
fn is_binary(c: &Computation, f: &Lambda, op: BinaryOp) -> bool {
    let [p, q] = f.params.as_slice() else {
        return false;
    };
    let Op::Scalar {
        expr: ScalarExpr::Binary(o, a, b),
    } = &c.node(f.body).op
    else {
        return false;
    };
    let (ScalarExpr::Value(a), ScalarExpr::Value(b)) = (a.as_ref(), b.as_ref()) else {
        return false;
    };
    *o == op && ((a, b) == (p, q) || (a, b) == (q, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diagonal_pattern;
    use crate::data::Buffer;
    use crate::ir::testing::B;

    /// SpMV over f64 with the reduce's `op`, `prefix` and products' `mul` chosen by the caller.
    fn spmv(op: BinaryOp, prefix: Option<Literal>, mul: BinaryOp, swap: bool) -> Computation {
        let mut b = B::default();
        let v = b.input("v", Buffer::F64(vec![1.0; 4]));
        let c = b.input("c", Buffer::U32(vec![0, 1, 1, 0]));
        let off = b.input("off", Buffer::U32(vec![0, 2, 4]));
        let x = b.input("x", Buffer::F64(vec![1.0; 2]));
        let rows = b.op(Op::Nest {
            input: v,
            offsets: off,
        });
        let idx = b.op(Op::Nest {
            input: c,
            offsets: off,
        });
        let (row, irow) = (
            b.param(Type::scalar_seq(Elem::F64)),
            b.param(Type::scalar_seq(Elem::U32)),
        );
        let g = b.op(Op::Gather {
            source: x,
            indices: irow,
        });
        let f = b.binop(mul, Elem::F64);
        let inputs = if swap { vec![g, row] } else { vec![row, g] };
        let prods = b.op(Op::Map { f, inputs });
        let add = b.binop(op, Elem::F64);
        let prefix = prefix.map(|l| b.konst(l));
        let sum = b.op(Op::Reduce {
            op: add,
            input: prods,
            prefix,
        });
        let f = Lambda {
            params: vec![row, irow],
            body: sum,
        };
        let m = b.op(Op::Map {
            f,
            inputs: vec![rows, idx],
        });
        b.with_root(m)
    }

    fn blocked(c: &Computation) -> Option<BlockedPattern> {
        blocked_pattern(c, &diagonal_pattern(c, c.root)?)
    }

    #[test]
    fn only_a_sum_of_products_from_plus_zero_is_blocked() {
        let zero = Some(Literal::f64(0.0));
        let p = blocked(&spmv(BinaryOp::Add, zero, BinaryOp::Mul, false)).expect("blocked");
        assert_eq!((p.values, p.elem, p.values_first), (0, Elem::F64, true));
        let p = blocked(&spmv(BinaryOp::Add, zero, BinaryOp::Mul, true)).expect("swapped");
        assert!(!p.values_first);
        // Without a prefix the first product starts the fold (a row of -0.0 stays -0.0); from
        // -0.0 or 1.0 a fill zero is not neutral either; max and division are other folds.
        let no = [
            spmv(BinaryOp::Add, None, BinaryOp::Mul, false),
            spmv(
                BinaryOp::Add,
                Some(Literal::f64(-0.0)),
                BinaryOp::Mul,
                false,
            ),
            spmv(BinaryOp::Add, Some(Literal::f64(1.0)), BinaryOp::Mul, false),
            spmv(BinaryOp::Max, zero, BinaryOp::Mul, false),
            spmv(BinaryOp::Add, zero, BinaryOp::Div, false),
        ];
        for c in &no {
            assert!(diagonal_pattern(c, c.root).is_some());
            assert_eq!(blocked(c), None);
        }
    }
}
