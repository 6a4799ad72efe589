//! `map(f, s1, .., sn)`: `(f(s1[0], .., sn[0]), f(s1[1], .., sn[1]), ..)`. The inputs must have
//! one length (checked statically when known, else at run time).

use super::{Eval, Failure, Typing, ValueInfo, equal_lengths, items, seqs, unexpected};
use crate::ir::value::Value;
use crate::ir::{IrError, NodeId, Op, Type};

pub(super) fn infer(t: &Typing<'_, '_>, op: &Op) -> Result<ValueInfo, IrError> {
    let Op::Map { f, inputs } = op else {
        unexpected("map", op)
    };
    let items = t.input_items(inputs)?;
    let len = t.same_lengths(inputs, "input")?;
    let body = t.lambda(f, &items, "the function")?;
    Ok(ValueInfo {
        ty: Type::seq(body),
        len,
        konst: None,
    })
}

pub(super) fn eval(ev: &mut dyn Eval, n: NodeId, op: &Op) -> Result<Value, Failure> {
    let Op::Map { f, inputs } = op else {
        unexpected("map", op)
    };
    let seqs = seqs(ev, inputs)?;
    let len = equal_lengths(&seqs)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let args = seqs.iter().map(|s| items(s)[i].clone()).collect();
        out.push(ev.call(n, f, args)?);
    }
    Ok(Value::Seq(out))
}
