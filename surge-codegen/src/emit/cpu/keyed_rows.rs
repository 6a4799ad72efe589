//! A `reduce_by_key` of rows at a phase's root (Listing 5.5's vector sums), one output row per
//! run of equal keys: the phase's `outer` finds where each run starts (a pass over the keys
//! only, memoized for the run with the prefix), and `rows(lo, hi)` folds runs `lo..hi`, so the
//! host spreads the runs over threads like the rows of any nested phase. Before, the whole
//! fold ran sequentially inside `outer` (`folds.rs`'s `reduce_by_key_value`, memoized): the
//! k-means recalculation took 3× a plain serial pass over the points.
//!
//! Only where it is exact: the combiner updates its accumulator row in place (an element-wise
//! `map` over both operands, `step_in_place`), so every row is as long as the prefix and `lens`
//! needs no fold; the keys are an input buffer, so finding the runs cannot fail before a fold
//! that the sequential order would run first.

use super::code::{Env, Gen, R, lines};
use super::phase::PhaseCtx;
use super::values::rust_type;
use crate::ir::{Elem, NodeId, Op, Type};

/// Fills the template variables of root `reduce_by_key` `root` run by rows of runs, or returns
/// false (nothing filled) where the pattern does not apply.
pub(super) fn root_keyed_rows<'a>(
    g: &Gen<'a>,
    root: NodeId,
    e: Elem,
    env0: &Env<'a>,
    st: &mut PhaseCtx,
) -> R<bool> {
    let Op::ReduceByKey {
        op,
        input,
        keys,
        prefix,
    } = &g.c.node(root).op
    else {
        return Ok(false);
    };
    let t = g.c.node(*input).ty.item().cloned();
    let (Some(t @ Type::Seq(_)), Op::Input { .. }, None) = (t, &g.c.node(*keys).op, &st.packed)
    else {
        return Ok(false);
    };
    let (s, ks) = (g.seq(*input, env0)?, g.seq(*keys, env0)?);
    let [len, k, key, acc, starts, runs] =
        ["n", "k", "key", "acc", "st", "runs"].map(|b| g.name(b));
    let Some(step) = g.step_in_place(op, &acc, &s.at(&k)?, &t, env0)? else {
        return Ok(false);
    };
    let key_at = |i: &str| -> R<String> {
        let (x, _) = g.scalar_of_code(root, ks.at(i)?)?;
        Ok(format!("(({x}) as i128)"))
    };
    let ty = rust_type(&t);
    let value = format!(
        "{{\nlet {len}: usize = {};\n{}\nlet p: {ty} = {};\nlet mut {starts}: Vec<usize> = vec![0];\nlet mut {k} = 0usize;\nwhile {k} < {len} {{\nlet {key} = {};\nwhile {k} < {len} && {} == {key} {{ {k} += 1; }}\n{starts}.push({k});\n}}\n({starts}, p)\n}}",
        s.len,
        g.pair_len_check(root, (&len, "input"), (&ks.len, "keys")),
        g.to_value(g.eval(*prefix, env0)?, &t)?,
        key_at(&k)?,
        key_at(&k)?,
    );
    let Some(memo) = g.memoized(root, &value, &format!("(Vec<usize>, {ty})")) else {
        return Ok(false);
    };
    let prefetch = g.prefetch_gathered(*input, &k, env0)?.unwrap_or_default();
    let mut pre = s.checks.clone();
    pre.extend(ks.checks.iter().cloned());
    pre.push(format!("let {runs}: (Vec<usize>, {ty}) = {memo};"));
    st.pre = pre;
    let ctx = &mut st.ctx;
    ctx.insert("outer_len", &format!("({runs}.0.len() - 1)"));
    ctx.insert("env_i", "");
    ctx.insert("row_len", &format!("{runs}.1.len()"));
    ctx.insert(
        "row_write",
        &lines(&[
            format!("let mut {acc}: {ty} = {runs}.1.clone();"),
            format!("for {k} in {runs}.0[i]..{runs}.0[i + 1] {{\n{prefetch}\n{step}\n}}"),
            format!(
                "for k in 0..{acc}.len() {{ let v: {} = {acc}[k]; unsafe {{ *row.add(k) = v }}; }}",
                super::code::rust_ty(e)
            ),
        ]),
    );
    Ok(true)
}
