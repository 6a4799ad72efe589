//! The value family: `scalar` (a scalar expression tree), `tuple`, `project` (a tuple's field) and
//! `length` (a sequence's length as `u64`). None of them can fail at run time.

use super::{Eval, Failure, Typing, ValueInfo, items, unexpected};
use crate::data::ScalarValue;
use crate::ir::value::Value;
use crate::ir::{Elem, IrError, NodeId, Op, ScalarExpr, Type, infer_scalar};

pub(super) fn infer(t: &Typing<'_, '_>, op: &Op) -> Result<ValueInfo, IrError> {
    Ok(match op {
        Op::Scalar { expr } => {
            let e = infer_scalar(expr, &|n| t.info(n).ty.clone()).map_err(|m| t.err(m))?;
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
            items.iter().map(|n| t.info(*n).ty.clone()).collect(),
        )),
        Op::Project { tuple, index } => match &t.info(*tuple).ty {
            Type::Tuple(ts) if *index < ts.len() => ValueInfo::of_type(ts[*index].clone()),
            Type::Tuple(ts) => return Err(t.err(format!("field {index} of a {}-tuple", ts.len()))),
            other => return Err(t.err(format!("operand must be a tuple, got {other}"))),
        },
        Op::Length { seq } => {
            t.seq_item(*seq, "operand")?;
            ValueInfo {
                ty: Type::Scalar(Elem::U64),
                len: None,
                konst: t.info(*seq).len.map(crate::ir::Literal::U64),
            }
        }
        op => unexpected("value", op),
    })
}

pub(super) fn eval(ev: &mut dyn Eval, _n: NodeId, op: &Op) -> Result<Value, Failure> {
    Ok(match op {
        Op::Scalar { expr } => Value::Scalar(ev.scalar(expr)?),
        Op::Tuple { items } => Value::Tuple(
            items
                .iter()
                .map(|i| ev.value(*i).map(|v| (*v).clone()))
                .collect::<Result<_, _>>()?,
        ),
        Op::Project { tuple, index } => match &*ev.value(*tuple)? {
            Value::Tuple(items) => items[*index].clone(),
            _ => panic!("internal: validated tuple {tuple} is not a tuple"),
        },
        Op::Length { seq } => {
            let s = ev.seq(*seq)?;
            Value::Scalar(ScalarValue::U64(items(&s).len() as u64))
        }
        op => unexpected("value", op),
    })
}
