//! The dense contraction pattern: a user's obvious mat-mat,
//!
//! ```text
//! map(|arow| map(|bcol| reduce(add, map(*, arow, bcol)), transpose(split(B, n))), split(A, k))
//! ```
//!
//! (`reduce` with or without a `0.0` prefix, the product and the sum in either operand order,
//! f64 throughout), which is `C = A·B` for row-major `A` (m×k) and `B` (k×n); and the same
//! without the `transpose`, over `split(Bt, k)`: `C = A·Btᵀ`, B given by its columns (the rows of
//! an n×k `Bt`: a Gram matrix, distances' cross terms). A phase with it also gets the GEMM
//! variant family (`crate::gemm`): packed, register-blocked, cache-blocked kernels instead of
//! one dot product per element (B's panels packed from `Bt` directly when it is given by
//! columns).

use crate::ir::{BinaryOp, Computation, Elem, Literal, NodeId, Op, ScalarExpr, Type};
use serde::{Deserialize, Serialize};

/// Where the operands of a recognized contraction are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contraction {
    /// Input buffers of A and B.
    pub a: usize,
    pub b: usize,
    /// The integer literal nodes of the split tiles: A's row length k and B's row length (n;
    /// k when B is given by its columns).
    pub k_tile: NodeId,
    pub n_tile: NodeId,
    /// Whether B is given by its columns (`split(Bt, k)`, no `transpose`): `C = A·Btᵀ`.
    #[serde(default)]
    pub b_by_columns: bool,
    /// Whether the reduce starts from a `0.0` prefix (without one, k = 0 is an error).
    pub prefix: bool,
}

/// The contraction rooted at `root`, if the phase is one.
pub fn contraction_pattern(c: &Computation, root: NodeId) -> Option<Contraction> {
    let (arow, body, rows) = map1(c, root)?;
    let (a, k_tile) = split_of_input(c, rows)?;
    let (bcol, body2, cols) = map1(c, body)?;
    let (b, n_tile, b_by_columns) = match &c.node(cols).op {
        Op::Transpose { input } => {
            let (b, t) = split_of_input(c, *input)?;
            (b, t, false)
        }
        _ => {
            let (b, t) = split_of_input(c, cols)?;
            (b, t, true)
        }
    };
    let Op::Reduce { op, input, prefix } = &c.node(body2).op else {
        return None;
    };
    if !binary_of_params(c, op.body, &op.params, BinaryOp::Add) || !f64_scalar(c, body2) {
        return None;
    }
    if let Some(p) = prefix
        && !matches!(&c.node(*p).op, Op::Scalar { expr: ScalarExpr::Const(Literal::F64(bits)) } if f64::from_bits(*bits) == 0.0)
    {
        return None;
    }
    let Op::Map { f, inputs } = &c.node(*input).op else {
        return None;
    };
    let operands_ok =
        inputs.len() == 2 && (inputs[..] == [arow, bcol] || inputs[..] == [bcol, arow]);
    if !operands_ok || !binary_of_params(c, f.body, &f.params, BinaryOp::Mul) {
        return None;
    }
    Some(Contraction {
        a,
        b,
        k_tile,
        n_tile,
        b_by_columns,
        prefix: prefix.is_some(),
    })
}

/// A one-input `map`: (its parameter, its body, its input).
fn map1(c: &Computation, n: NodeId) -> Option<(NodeId, NodeId, NodeId)> {
    match &c.node(n).op {
        Op::Map { f, inputs } if f.params.len() == 1 && inputs.len() == 1 => {
            Some((f.params[0], f.body, inputs[0]))
        }
        _ => None,
    }
}

/// `split(input b, literal tile)` over an f64 input: (b, the tile node).
fn split_of_input(c: &Computation, n: NodeId) -> Option<(usize, NodeId)> {
    let Op::Split { input, tile } = &c.node(n).op else {
        return None;
    };
    let Op::Input { buffer } = &c.node(*input).op else {
        return None;
    };
    let literal = matches!(
        &c.node(*tile).op,
        Op::Scalar {
            expr: ScalarExpr::Const(_)
        }
    );
    (literal && c.inputs[*buffer].elem == Elem::F64).then_some((*buffer, *tile))
}

/// Whether `body` is `p0 ∘ p1` or `p1 ∘ p0` for the two parameters.
fn binary_of_params(c: &Computation, body: NodeId, params: &[NodeId], op: BinaryOp) -> bool {
    let [p0, p1] = params else {
        return false;
    };
    let Op::Scalar {
        expr: ScalarExpr::Binary(o, x, y),
    } = &c.node(body).op
    else {
        return false;
    };
    let (ScalarExpr::Value(x), ScalarExpr::Value(y)) = (x.as_ref(), y.as_ref()) else {
        return false;
    };
    *o == op && ((x, y) == (p0, p1) || (x, y) == (p1, p0)) && f64_scalar(c, body)
}

fn f64_scalar(c: &Computation, n: NodeId) -> bool {
    c.node(n).ty == Type::Scalar(Elem::F64)
}

/// The run-time value of a tile literal (`None` if it is not an unsigned integer literal).
pub fn tile_value(c: &Computation, tile: NodeId) -> Option<u64> {
    match &c.node(tile).op {
        Op::Scalar {
            expr: ScalarExpr::Const(l),
        } => match *l {
            Literal::U64(v) => Some(v),
            Literal::U32(v) => Some(v as u64),
            Literal::I64(v) => u64::try_from(v).ok(),
            Literal::I32(v) => u64::try_from(v).ok(),
            _ => None,
        },
        _ => None,
    }
}
