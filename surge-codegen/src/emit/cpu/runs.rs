//! A `reduce_by_key` at a phase's root, cooperatively (`Inner::Runs`): the host splits the input
//! into chunks and calls `runs` on each in parallel; a chunk folds the runs of equal keys that
//! start in it, and a chunk whose first key continues the previous chunk's last run folds that
//! continuation without the prefix, so the host joins the two with `combine` (associativity, as
//! every reduction operator promises). One pass over the keys and values, like the rayon code a
//! user would write; the sequential `lens`/`rows` path stays for sequential variants.

use super::Inner;
use super::code::{Code, Env, Gen, R, quote};
use super::phase::PhaseCtx;
use super::values::{from_value, rust_type};
use crate::ir::{NodeId, Op};

impl<'a> Gen<'a> {
    /// The key at position `i` of `keys` as an `i128` expression.
    fn key_at(&self, n: NodeId, keys: &super::code::SeqCode<'a>, i: &str) -> R<String> {
        match keys.at(i)? {
            Code::Scalar(k, _) => Ok(format!("(({k}) as i128)")),
            _ => Err(self.unsupported(n, "keys that are not integers")),
        }
    }
}

/// Fills the template variables of a root `reduce_by_key` of numbers (`root`) run by runs.
pub(super) fn root_runs<'a>(g: &Gen<'a>, root: NodeId, env0: &Env<'a>, st: &mut PhaseCtx) -> R<()> {
    let Op::ReduceByKey {
        op,
        input,
        keys,
        prefix,
    } = &g.c.node(root).op
    else {
        panic!("internal: {root} is not a reduce_by_key")
    };
    let t =
        g.c.node(*input)
            .ty
            .item()
            .expect("a validated input")
            .clone();
    let (s, ks) = (g.seq(*input, env0)?, g.seq(*keys, env0)?);
    let mut checks = s.checks.clone();
    checks.extend(ks.checks.iter().cloned());
    checks.push(format!(
        "chk_pair_len({}, {}, \"input\", \"keys\", {}, {});",
        s.len,
        ks.len,
        quote(g.op_name(root)),
        root.0
    ));
    let ty = rust_type(&t);
    let op_with = |a: &str, x: Code<'a>| -> R<String> {
        g.to_value(g.apply(op, vec![from_value(a.into(), &t), x], env0)?, &t)
    };
    let pfx = g.to_value(g.eval(*prefix, env0)?, &t)?;
    let x_lo = g.to_value(s.at("lo")?, &t)?;
    let body = format!(
        "        let pfx: {ty} = {pfx};\n        let first_cont = lo > 0 && {} == {};\n        let mut cur = {};\n        let mut acc: {ty} = if first_cont {{ {x_lo} }} else {{ {} }};\n        let mut j = 0usize;\n        for k in (lo + 1)..hi {{\n            let key = {};\n            if key != cur {{\n                unsafe {{ *out.add(j) = acc }};\n                j += 1;\n                cur = key;\n                acc = {};\n            }} else {{\n                acc = {};\n            }}\n        }}\n        unsafe {{ *out.add(j) = acc }};\n        unsafe {{ *count = j + 1; *cont = u8::from(first_cont) }};\n",
        g.key_at(root, &ks, "(lo - 1)")?,
        g.key_at(root, &ks, "lo")?,
        g.key_at(root, &ks, "lo")?,
        op_with("pfx", s.at("lo")?)?,
        g.key_at(root, &ks, "k")?,
        op_with("pfx", s.at("k")?)?,
        op_with("acc", s.at("k")?)?,
    );
    let ctx = &mut st.ctx;
    ctx.insert("acc", &ty);
    ctx.insert("inner_checks", &super::code::lines(&checks));
    ctx.insert("inner_len", &s.len);
    ctx.insert("inner_at_lo", &x_lo);
    ctx.insert("inner_at_k", &g.to_value(s.at("k")?, &t)?);
    ctx.insert("op_acc_x", &op_with("acc", from_value("x".into(), &t))?);
    ctx.insert("runs_body", &body);
    st.inner = Some(Inner::Runs);
    Ok(())
}
