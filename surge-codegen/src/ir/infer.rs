//! Type and static-shape inference for one operator, shared by the validator and the DSEL
//! (which runs it as each operator is built, so errors surface at the call that caused them).

use super::{Elem, IrError, Lambda, Literal, NodeId, Op, ScalarExpr, Type, UnaryOp};

/// What is known about a value before anything runs: its type, its length when it is a sequence
/// of statically known length, and its value when it is a constant scalar.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueInfo {
    pub ty: Type,
    pub len: Option<u64>,
    pub konst: Option<Literal>,
}

impl ValueInfo {
    pub fn of_type(ty: Type) -> Self {
        ValueInfo {
            ty,
            len: None,
            konst: None,
        }
    }
    pub fn input(elem: Elem, len: u64) -> Self {
        ValueInfo {
            ty: Type::scalar_seq(elem),
            len: Some(len),
            konst: None,
        }
    }
}

/// Infers the [`ValueInfo`] of `op` given the infos of the nodes it refers to.
/// `Input` and `Param` are leaves whose info the caller knows; asking for them is an error.
pub fn infer<'a>(op: &Op, info: &dyn Fn(NodeId) -> &'a ValueInfo) -> Result<ValueInfo, IrError> {
    let kind = op.kind();
    let err = |msg: String| IrError::new(kind.name(), msg);
    let seq_item = |n: NodeId, what: &str| -> Result<Type, IrError> {
        match &info(n).ty {
            Type::Seq(t) => Ok((**t).clone()),
            other => Err(err(format!("{what} must be a sequence, got {other}"))),
        }
    };
    let int_scalar = |n: NodeId, what: &str| -> Result<Elem, IrError> {
        match &info(n).ty {
            Type::Scalar(e) if e.is_integer() => Ok(*e),
            other => Err(err(format!(
                "{what} must be an integer scalar, got {other}"
            ))),
        }
    };
    let int_seq = |n: NodeId, what: &str| -> Result<Elem, IrError> {
        match &info(n).ty {
            Type::Seq(t) => match **t {
                Type::Scalar(e) if e.is_integer() => Ok(e),
                ref other => Err(err(format!(
                    "{what} must have an integer element type, got {other}"
                ))),
            },
            other => Err(err(format!(
                "{what} must be a sequence of integers, got {other}"
            ))),
        }
    };
    let konst_int = |n: NodeId| info(n).konst.and_then(Literal::as_integer);
    let check_lambda = |l: &Lambda, params: &[Type], what: &str| -> Result<Type, IrError> {
        if l.params.len() != params.len() {
            return Err(err(format!(
                "{what} takes {} parameter(s), got {}",
                params.len(),
                l.params.len()
            )));
        }
        for (i, (p, want)) in l.params.iter().zip(params).enumerate() {
            let got = &info(*p).ty;
            if got != want {
                return Err(err(format!(
                    "{what} parameter {i} has type {got}, expected {want}"
                )));
            }
        }
        Ok(info(l.body).ty.clone())
    };
    let same_lengths = |ns: &[NodeId], what: &str| -> Result<Option<u64>, IrError> {
        let mut known: Option<(usize, u64)> = None;
        for (i, n) in ns.iter().enumerate() {
            if let Some(len) = info(*n).len {
                match known {
                    Some((j, l)) if l != len => {
                        return Err(err(format!(
                            "{what} lengths differ: {what} {j} has length {l}, {what} {i} has length {len}"
                        )));
                    }
                    None => known = Some((i, len)),
                    _ => {}
                }
            }
        }
        Ok(known.map(|(_, l)| l))
    };

    let out = match op {
        Op::Input { .. } | Op::Param => {
            return Err(err(
                "leaf nodes carry their own type; nothing to infer".into()
            ));
        }
        Op::Scalar { expr } => {
            let e = infer_scalar(expr, &|n| info(n).ty.clone()).map_err(err)?;
            let konst = match expr {
                ScalarExpr::Const(l) => Some(*l),
                _ => None,
            };
            ValueInfo {
                ty: Type::Scalar(e),
                len: None,
                konst,
            }
        }
        Op::Tuple { items } => ValueInfo::of_type(Type::Tuple(
            items.iter().map(|n| info(*n).ty.clone()).collect(),
        )),
        Op::Project { tuple, index } => match &info(*tuple).ty {
            Type::Tuple(ts) if *index < ts.len() => ValueInfo::of_type(ts[*index].clone()),
            Type::Tuple(ts) => return Err(err(format!("field {index} of a {}-tuple", ts.len()))),
            other => return Err(err(format!("operand must be a tuple, got {other}"))),
        },
        Op::Index { seq, index } => {
            let t = seq_item(*seq, "indexed value")?;
            int_scalar(*index, "index")?;
            if let (Some(len), Some(i)) = (info(*seq).len, konst_int(*index))
                && (i < 0 || i >= len as i128)
            {
                return Err(err(format!(
                    "index {i} out of range for a sequence of length {len}"
                )));
            }
            ValueInfo::of_type(t)
        }
        Op::Length { seq } => {
            seq_item(*seq, "operand")?;
            let konst = info(*seq).len.map(Literal::U64);
            ValueInfo {
                ty: Type::Scalar(Elem::U64),
                len: None,
                konst,
            }
        }
        Op::Map { f, inputs } => {
            if inputs.is_empty() {
                return Err(err("needs at least one input sequence".into()));
            }
            let items = inputs
                .iter()
                .enumerate()
                .map(|(i, n)| seq_item(*n, &format!("input {i}")))
                .collect::<Result<Vec<_>, _>>()?;
            let len = same_lengths(inputs, "input")?;
            let body = check_lambda(f, &items, "the function")?;
            ValueInfo {
                ty: Type::seq(body),
                len,
                konst: None,
            }
        }
        Op::Reduce {
            op: l,
            input,
            prefix,
        }
        | Op::Scan {
            op: l,
            input,
            prefix,
        } => {
            let t = seq_item(*input, "input")?;
            let body = check_lambda(l, &[t.clone(), t.clone()], "the operator")?;
            if body != t {
                return Err(err(format!(
                    "the operator returns {body}, expected the element type {t}"
                )));
            }
            if let Some(p) = prefix {
                let pt = &info(*p).ty;
                if *pt != t {
                    return Err(err(format!(
                        "prefix has type {pt}, expected the element type {t}"
                    )));
                }
            }
            match kind {
                crate::ir::OpKind::Reduce => {
                    if prefix.is_none() && info(*input).len == Some(0) {
                        return Err(err("reduction of an empty sequence without a prefix".into()));
                    }
                    ValueInfo::of_type(t)
                }
                _ => ValueInfo {
                    ty: Type::seq(t),
                    len: info(*input).len,
                    konst: None,
                },
            }
        }
        Op::ReduceByKey {
            op: l,
            input,
            keys,
            prefix,
        } => {
            let t = seq_item(*input, "input")?;
            int_seq(*keys, "keys")?;
            same_lengths(&[*input, *keys], "input and keys")?;
            let body = check_lambda(l, &[t.clone(), t.clone()], "the operator")?;
            if body != t {
                return Err(err(format!(
                    "the operator returns {body}, expected the element type {t}"
                )));
            }
            let pt = &info(*prefix).ty;
            if *pt != t {
                return Err(err(format!(
                    "prefix has type {pt}, expected the element type {t}"
                )));
            }
            ValueInfo::of_type(Type::seq(t))
        }
        Op::Gather { source, indices } => {
            let t = seq_item(*source, "source")?;
            int_seq(*indices, "indices")?;
            ValueInfo {
                ty: Type::seq(t),
                len: info(*indices).len,
                konst: None,
            }
        }
        Op::Scatter {
            source,
            indices,
            dest,
        } => {
            let t = seq_item(*source, "source")?;
            int_seq(*indices, "indices")?;
            let d = seq_item(*dest, "destination")?;
            if d != t {
                return Err(err(format!(
                    "source elements are {t} but destination elements are {d}"
                )));
            }
            same_lengths(&[*source, *indices], "source and indices")?;
            ValueInfo {
                ty: Type::seq(t),
                len: info(*dest).len,
                konst: None,
            }
        }
        Op::Range { start, end, stride } => {
            let e = int_scalar(*start, "start")?;
            let e2 = int_scalar(*end, "end")?;
            if e != e2 {
                return Err(err(format!("start is {e} but end is {e2}")));
            }
            let mut step = Some(1i128);
            if let Some(s) = stride {
                let e3 = int_scalar(*s, "stride")?;
                if e3 != e {
                    return Err(err(format!("start is {e} but stride is {e3}")));
                }
                step = konst_int(*s);
                if step == Some(0) {
                    return Err(err("stride is 0".into()));
                }
            }
            let len = match (konst_int(*start), konst_int(*end), step) {
                (Some(a), Some(b), Some(s)) => Some(range_len(a, b, s)),
                _ => None,
            };
            ValueInfo {
                ty: Type::scalar_seq(e),
                len,
                konst: None,
            }
        }
        Op::Replicate { value, len } => {
            int_scalar(*len, "length")?;
            let n = konst_int(*len);
            if let Some(n) = n
                && n < 0
            {
                return Err(err(format!("length {n} is negative")));
            }
            ValueInfo {
                ty: Type::seq(info(*value).ty.clone()),
                len: n.map(|n| n as u64),
                konst: None,
            }
        }
        Op::Zip { inputs } | Op::Join { inputs } => {
            if inputs.is_empty() {
                return Err(err("needs at least one input sequence".into()));
            }
            let items = inputs
                .iter()
                .enumerate()
                .map(|(i, n)| seq_item(*n, &format!("input {i}")))
                .collect::<Result<Vec<_>, _>>()?;
            let len = if kind == crate::ir::OpKind::Zip {
                same_lengths(inputs, "input")?
            } else {
                inputs
                    .iter()
                    .try_fold(1u64, |acc, n| info(*n).len.map(|l| acc.saturating_mul(l)))
            };
            ValueInfo {
                ty: Type::seq(Type::Tuple(items)),
                len,
                konst: None,
            }
        }
        Op::Split { input, tile: step }
        | Op::Striding {
            input,
            stride: step,
        } => {
            let t = seq_item(*input, "input")?;
            let what = if kind == crate::ir::OpKind::Split {
                "tile size"
            } else {
                "stride"
            };
            int_scalar(*step, what)?;
            let k = konst_int(*step);
            if let Some(k) = k
                && k <= 0
            {
                return Err(err(format!("{what} must be positive, got {k}")));
            }
            let len = match (info(*input).len, k) {
                (Some(n), Some(k)) => Some((n as u128).div_ceil(k as u128) as u64),
                _ => None,
            };
            let ty = if kind == crate::ir::OpKind::Split {
                Type::seq(Type::seq(t))
            } else {
                Type::seq(t)
            };
            ValueInfo {
                ty,
                len,
                konst: None,
            }
        }
        Op::Reverse { input } => {
            let t = seq_item(*input, "input")?;
            ValueInfo {
                ty: Type::seq(t),
                len: info(*input).len,
                konst: None,
            }
        }
        Op::Nest { input, offsets } => {
            let t = seq_item(*input, "input")?;
            int_seq(*offsets, "offsets")?;
            let len = match info(*offsets).len {
                Some(0) => {
                    return Err(err(
                        "offsets are empty; a nested sequence of n rows needs n + 1 offsets".into(),
                    ));
                }
                l => l.map(|l| l - 1),
            };
            ValueInfo {
                ty: Type::seq(Type::seq(t)),
                len,
                konst: None,
            }
        }
        Op::Transpose { input } => {
            let t = seq_item(*input, "input")?;
            if !t.is_seq() {
                return Err(err(format!(
                    "input must be a nested sequence, got {}",
                    info(*input).ty
                )));
            }
            ValueInfo::of_type(Type::seq(t))
        }
    };
    Ok(out)
}

/// Number of elements of `range(a, b, s)` (Python semantics).
pub fn range_len(a: i128, b: i128, s: i128) -> u64 {
    if s > 0 && a < b {
        ((b - a + s - 1) / s) as u64
    } else if s < 0 && a > b {
        ((a - b + (-s) - 1) / (-s)) as u64
    } else {
        0
    }
}

/// The element type of a scalar expression, or a message saying which part is ill-typed.
pub fn infer_scalar(e: &ScalarExpr, ty: &dyn Fn(NodeId) -> Type) -> Result<Elem, String> {
    Ok(match e {
        ScalarExpr::Const(l) => l.elem(),
        ScalarExpr::Value(n) => match ty(*n) {
            Type::Scalar(e) => e,
            other => return Err(format!("{n} is used as a scalar but has type {other}")),
        },
        ScalarExpr::Unary(op, a) => {
            let t = infer_scalar(a, ty)?;
            let ok = match op {
                UnaryOp::Neg => t.is_signed(),
                UnaryOp::Not => t == Elem::Bool,
                UnaryOp::Abs => t != Elem::Bool,
                UnaryOp::Sqrt | UnaryOp::Exp | UnaryOp::Log => t.is_float(),
            };
            if !ok {
                return Err(format!("`{}` is not defined on {t}", op.name()));
            }
            t
        }
        ScalarExpr::Binary(op, a, b) => {
            let (ta, tb) = (infer_scalar(a, ty)?, infer_scalar(b, ty)?);
            if ta != tb {
                return Err(format!(
                    "`{}` on {ta} and {tb}; convert one side with a cast",
                    op.symbol()
                ));
            }
            if op.is_comparison() {
                Elem::Bool
            } else if op.is_logical() {
                if ta != Elem::Bool {
                    return Err(format!("`{}` needs bool operands, got {ta}", op.symbol()));
                }
                Elem::Bool
            } else {
                if ta == Elem::Bool {
                    return Err(format!("`{}` is not defined on bool", op.symbol()));
                }
                ta
            }
        }
        ScalarExpr::Fma(a, b, c) => {
            let ts = [
                infer_scalar(a, ty)?,
                infer_scalar(b, ty)?,
                infer_scalar(c, ty)?,
            ];
            if !(ts[0] == ts[1] && ts[1] == ts[2] && ts[0].is_float()) {
                return Err(format!(
                    "fma needs three operands of one float type, got {}, {}, {}",
                    ts[0], ts[1], ts[2]
                ));
            }
            ts[0]
        }
        ScalarExpr::Select(c, a, b) => {
            let tc = infer_scalar(c, ty)?;
            if tc != Elem::Bool {
                return Err(format!("select condition must be bool, got {tc}"));
            }
            let (ta, tb) = (infer_scalar(a, ty)?, infer_scalar(b, ty)?);
            if ta != tb {
                return Err(format!("select branches differ: {ta} and {tb}"));
            }
            ta
        }
        ScalarExpr::Cast(to, a) => {
            infer_scalar(a, ty)?;
            if *to == Elem::Bool {
                return Err("cast to bool; compare with zero instead".into());
            }
            *to
        }
    })
}
