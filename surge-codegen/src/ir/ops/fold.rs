//! The fold family: `reduce` (`p ⊕ s[0] ⊕ s[1] ⊕ ..`, or `s[0] ⊕ ..` without a prefix),
//! `reduce_by_key` (one such fold per run of equal consecutive keys, each starting at the prefix)
//! and `scan` (exclusive with a prefix, inclusive without). The operator maps two elements to
//! an element; backends may reassociate it (the interpreter folds left to right).

use super::{Eval, Failure, Typing, ValueInfo, items, to_index, unexpected};
use crate::ir::infer::lengths_differ;
use crate::ir::value::Value;
use crate::ir::{IrError, Lambda, NodeId, Op, OpKind, Type};

/// A reduction of an empty sequence without a prefix.
pub const EMPTY_REDUCE: &str = "reduction of an empty sequence without a prefix";

pub(super) fn infer(t: &Typing<'_, '_>, op: &Op) -> Result<ValueInfo, IrError> {
    match op {
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
            let e = operator(t, l, *input, *prefix)?;
            if t.kind == OpKind::Scan {
                return Ok(ValueInfo {
                    ty: Type::seq(e),
                    len: t.info(*input).len,
                    konst: None,
                });
            }
            if prefix.is_none() && t.info(*input).len == Some(0) {
                return Err(t.err(EMPTY_REDUCE));
            }
            Ok(ValueInfo::of_type(e))
        }
        Op::ReduceByKey {
            op: l,
            input,
            keys,
            prefix,
        } => {
            t.seq_item(*input, "input")?;
            t.int_seq(*keys, "keys")?;
            t.pair_lengths((*input, "input"), (*keys, "keys"))?;
            let e = operator(t, l, *input, Some(*prefix))?;
            Ok(ValueInfo::of_type(Type::seq(e)))
        }
        op => unexpected("fold", op),
    }
}

/// Checks the operator `l` and the prefix against the input's element type, which it returns.
fn operator(
    t: &Typing<'_, '_>,
    l: &Lambda,
    input: NodeId,
    prefix: Option<NodeId>,
) -> Result<Type, IrError> {
    let e = t.seq_item(input, "input")?;
    let body = t.lambda(l, &[e.clone(), e.clone()], "the operator")?;
    if body != e {
        return Err(t.err(format!(
            "the operator returns {body}, expected the element type {e}"
        )));
    }
    if let Some(p) = prefix {
        let pt = &t.info(p).ty;
        if *pt != e {
            return Err(t.err(format!(
                "prefix has type {pt}, expected the element type {e}"
            )));
        }
    }
    Ok(e)
}

pub(super) fn eval(ev: &mut dyn Eval, n: NodeId, op: &Op) -> Result<Value, Failure> {
    match op {
        Op::Reduce { op, input, prefix } => reduce(ev, n, op, *input, *prefix),
        Op::ReduceByKey {
            op,
            input,
            keys,
            prefix,
        } => reduce_by_key(ev, n, op, *input, *keys, *prefix),
        Op::Scan { op, input, prefix } => scan(ev, n, op, *input, *prefix),
        op => unexpected("fold", op),
    }
}

fn reduce(
    ev: &mut dyn Eval,
    n: NodeId,
    l: &Lambda,
    input: NodeId,
    prefix: Option<NodeId>,
) -> Result<Value, Failure> {
    let s = ev.seq(input)?;
    let s = items(&s);
    let (mut acc, rest) = match prefix {
        Some(p) => ((*ev.value(p)?).clone(), s),
        None => match s.split_first() {
            Some((first, rest)) => (first.clone(), rest),
            None => return Err(EMPTY_REDUCE.into()),
        },
    };
    for x in rest {
        acc = ev.call(n, l, vec![acc, x.clone()])?;
    }
    Ok(acc)
}

fn reduce_by_key(
    ev: &mut dyn Eval,
    n: NodeId,
    l: &Lambda,
    input: NodeId,
    keys: NodeId,
    prefix: NodeId,
) -> Result<Value, Failure> {
    let (s, k) = (ev.seq(input)?, ev.seq(keys)?);
    let (s, k) = (items(&s), items(&k));
    if s.len() != k.len() {
        return Err(lengths_differ("input", s.len(), "keys", k.len()).into());
    }
    let p = (*ev.value(prefix)?).clone();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let key = to_index(&k[i], "key")?;
        let mut acc = p.clone();
        while i < s.len() && to_index(&k[i], "key")? == key {
            acc = ev.call(n, l, vec![acc, s[i].clone()])?;
            i += 1;
        }
        out.push(acc);
    }
    Ok(Value::Seq(out))
}

fn scan(
    ev: &mut dyn Eval,
    n: NodeId,
    l: &Lambda,
    input: NodeId,
    prefix: Option<NodeId>,
) -> Result<Value, Failure> {
    let s = ev.seq(input)?;
    let s = items(&s);
    let mut out = Vec::with_capacity(s.len());
    match prefix {
        Some(p) => {
            let mut acc = (*ev.value(p)?).clone();
            for (i, x) in s.iter().enumerate() {
                out.push(acc.clone());
                if i + 1 < s.len() {
                    acc = ev.call(n, l, vec![acc, x.clone()])?;
                }
            }
        }
        None => {
            let mut acc: Option<Value> = None;
            for x in s {
                let next = match acc {
                    None => x.clone(),
                    Some(a) => ev.call(n, l, vec![a, x.clone()])?,
                };
                out.push(next.clone());
                acc = Some(next);
            }
        }
    }
    Ok(Value::Seq(out))
}
