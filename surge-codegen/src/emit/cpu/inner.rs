//! The inner reduce or scan level of a phase (`templates/cpu/phase.rs.tera`'s cooperative
//! level): its operator, accumulator slots and the chunk body the skeleton runs.

use super::code::{Env, Gen, R, bind, lines};
use super::packed::Packing;
use super::phase::{PhaseCtx, element};
use super::values::{from_value, rust_type};
use super::{ACC_SLOT_WORDS, Inner};
use crate::ir::{NodeId, Op, Type};

/// Fills the template variables of a cooperative reduce or scan level `l` (element environment
/// `env_i`); `body` is the enclosing map's body for a reduce (`finish` binds the level to the
/// reduced value and evaluates it).
pub(super) fn inner_reduce_scan<'a>(
    g: &Gen<'a>,
    l: NodeId,
    env_i: &Env<'a>,
    body: Option<NodeId>,
    st: &mut PhaseCtx,
) -> R<()> {
    let c = g.c;
    let ctx = &mut st.ctx;
    let (op, input, prefix, is_scan) = match &c.node(l).op {
        Op::Reduce { op, input, prefix } => (op, *input, *prefix, false),
        Op::Scan { op, input, prefix } => (op, *input, *prefix, true),
        _ => panic!("internal: {l} is neither a reduce nor a scan"),
    };
    let t = c
        .node(input)
        .ty
        .item()
        .expect("a validated fold input")
        .clone();
    let s = g.seq(input, env_i)?;
    let ty = rust_type(&t);
    ctx.insert("acc", &ty);
    ctx.insert("inner_checks", &lines(&s.checks));
    ctx.insert("inner_len", &s.len);
    ctx.insert("inner_at_lo", &g.to_value(s.at("lo")?, &t)?);
    ctx.insert("inner_at_k", &g.to_value(s.at("k")?, &t)?);
    let args = vec![from_value("acc".into(), &t), from_value("x".into(), &t)];
    let op_acc_x = g.to_value(g.apply(op, args, env_i)?, &t)?;
    ctx.insert("op_acc_x", &op_acc_x);
    let pfx = match prefix {
        Some(p) => Some(g.to_value(g.eval(p, env_i)?, &t)?),
        None => None,
    };
    if is_scan {
        let n = &s.len;
        let x_k = g.to_value(s.at("k")?, &t)?;
        let store = |v: &str| -> R<String> {
            Ok(match &st.packed {
                None => format!("unsafe {{ *row.add(k) = {v} }};"),
                Some(p) => format!(
                    "let w: [u64; {n}] = {};\n            unsafe {{ std::ptr::copy_nonoverlapping(w.as_ptr(), row.add(k * {n}), {n}) }};",
                    g.pack(from_value(v.into(), &t), p)?,
                    n = p.width()
                ),
            })
        };
        let (store_acc, store_v) = (store("acc")?, store("v")?);
        let chunk = match &pfx {
            Some(p) => format!(
                "        let n: usize = {n};\n        let pfx: {ty} = {p};\n        let mut acc: {ty} = if has_carry != 0 {{\n            let x: {ty} = unsafe {{ *carry }};\n            let acc: {ty} = pfx;\n            {op_acc_x}\n        }} else {{\n            pfx\n        }};\n        for k in lo..hi {{\n            {store_acc}\n            if k + 1 < n {{\n                let x: {ty} = {x_k};\n                acc = {op_acc_x};\n            }}\n        }}\n"
            ),
            None => format!(
                "        let mut prev: Option<{ty}> = if has_carry != 0 {{ Some(unsafe {{ *carry }}) }} else {{ None }};\n        for k in lo..hi {{\n            let x: {ty} = {x_k};\n            let v: {ty} = match prev {{\n                Some(acc) => {op_acc_x},\n                None => x,\n            }};\n            {store_v}\n            prev = Some(v);\n        }}\n"
            ),
        };
        ctx.insert("chunk_body", &chunk);
        st.inner = Some(Inner::Scan);
    } else {
        let reduced = match &pfx {
            Some(p) => format!("{{ let acc: {ty} = {p}; let x: {ty} = r; {op_acc_x} }}"),
            None => "r".to_string(),
        };
        ctx.insert("finish_reduced", &reduced);
        let value = match (body, &st.packed) {
            (Some(b), packed) => {
                let env = bind(env_i, [(l, from_value("reduced".into(), &t))]);
                element(g, b, &env, packed)?
            }
            (None, Some(p)) => g.pack(from_value("reduced".into(), &t), p)?,
            (None, None) => "reduced".to_string(),
        };
        ctx.insert("finish_value", &value);
        st.inner = Some(Inner::Reduce);
    }
    st.acc = t.as_scalar();
    Ok(())
}

/// Whether a scan over items of type `t` writes the rows of a phase result (`depth` levels
/// deep; `packed`: its packing) with its own loop, cooperatively where long: numbers stored as
/// they are, or tuples of scalars and booleans (the accumulator slot's) stored as words.
pub(super) fn scan_rows(t: Option<&Type>, packed: &Option<Packing>, depth: usize) -> bool {
    match packed {
        None => t.is_some_and(|t| t.as_scalar().is_some()),
        Some(p) => p.depth == depth && slot_acc(t) && t == Some(&p.item),
    }
}

/// Whether a fold's accumulator of type `t` fits the host's accumulator slot (a scalar, or a
/// tuple of at most `ACC_SLOT_WORDS` scalars), so the fold can run cooperatively.
pub(super) fn slot_acc(t: Option<&Type>) -> bool {
    match t {
        Some(Type::Scalar(_)) => true,
        Some(Type::Tuple(items)) => {
            items.len() <= ACC_SLOT_WORDS && items.iter().all(|i| i.as_scalar().is_some())
        }
        _ => false,
    }
}
