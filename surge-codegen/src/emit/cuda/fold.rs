//! Reductions that the cooperative schedules cannot run: an operator without an identity this
//! emitter knows (`|a, b| a * b + 1`, a `select`), or elements that are tuples (argmin over
//! `zip(distances, range(0, k))`). Lane 0 of the element's resource folds the row
//! sequentially from its first element (or the prefix), in the interpreter's order, so the bits
//! are the interpreter's; the other lanes of a cooperative variant idle. A tuple accumulator is
//! one local per component (`surge_fa0`, `surge_fa1`, ..), the operator's tuple one expression
//! per component, assigned together after all are computed.

use super::cuda_type;
use super::elements::{Bound, Env, SeqV, Tr, seq_of_tuples};
use super::phase::{Body, Inner, identity, store};
use crate::CodegenError;
use crate::analysis::Level;
use crate::ir::{Lambda, NodeId, Op};

/// Whether reduce level `level` must be folded by one lane: tuple elements, or no identity.
pub(super) fn needs_fold(tr: &Tr<'_>, level: &Level) -> Result<bool, CodegenError> {
    let Op::Reduce { op, input, .. } = &tr.c.node(level.node).op else {
        return Ok(false);
    };
    let ty = &tr.c.node(*input).ty;
    if seq_of_tuples(ty) {
        return Ok(true);
    }
    let elem = match ty {
        crate::ir::Type::Seq(t) => t.as_scalar(),
        _ => None,
    };
    // Not a flat sequence of scalars: the cooperative path refuses it by name.
    Ok(elem.is_some_and(|e| identity(tr.c, &op.params, op.body, e).is_none()))
}

/// The fold of reduce level `level` whose result the phase stores as `body`.
pub(super) fn fold_level(
    tr: &Tr<'_>,
    env: &Env,
    level: &Level,
    body: &Body<'_>,
) -> Result<Inner, CodegenError> {
    let node = level.node;
    let Op::Reduce { op, input, prefix } = &tr.c.node(node).op else {
        unreachable!("internal: a fold of a reduce level")
    };
    let tuple = seq_of_tuples(&tr.c.node(*input).ty);
    let (len, parts) = if tuple {
        let t = tr.tuples(*input, env)?;
        (t.len, t.parts)
    } else {
        let s = tr.seq(*input, env)?;
        (s.len.clone(), vec![s])
    };
    let names =
        |p: &str| -> Vec<String> { (0..parts.len()).map(|c| format!("surge_f{p}{c}")).collect() };
    let (acc, next, new) = (names("a"), names("b"), names("n"));
    let bound = |v: &[String]| match tuple {
        true => Bound::Tuple(v.to_vec()),
        false => Bound::Scalar(v[0].clone()),
    };
    let value = |n: NodeId, env: &Env| match tuple {
        true => tr.parts(n, env),
        false => tr.scalar(n, env).map(|s| vec![s]),
    };
    let items = operator_items(tr, node, op, env, (bound(&acc), bound(&next)), &value)?;
    let init = match prefix {
        Some(p) => value(*p, env)?,
        None => parts.iter().map(|p| p.at("0")).collect(),
    };
    let mut res_env = env.clone();
    res_env.insert(node, bound(&acc));
    let out_elem =
        tr.c.node(body.node())
            .ty
            .as_scalar()
            .ok_or_else(|| tr.unsupported(body.node(), "as a reduction's result (not a scalar)"))?;
    let result = store(out_elem, body.value(tr, &res_env)?);
    let code = FoldCode {
        node,
        len,
        parts: &parts,
        init,
        items,
        from: if prefix.is_some() { "0" } else { "1" },
        result,
        names: (acc, next, new),
    }
    .print(prefix.is_none());
    Ok(Inner::Fold {
        code,
        out_elem: out_elem.stored(),
    })
}

/// The operator's result, one expression per component, with `a` and `b` bound.
fn operator_items(
    tr: &Tr<'_>,
    node: NodeId,
    op: &Lambda,
    env: &Env,
    (a, b): (Bound, Bound),
    value: &dyn Fn(NodeId, &Env) -> Result<Vec<String>, CodegenError>,
) -> Result<Vec<String>, CodegenError> {
    let [pa, pb] = op.params.as_slice() else {
        return Err(tr.unsupported(node, "(its operator does not take two values)"));
    };
    let mut op_env = env.clone();
    op_env.insert(*pa, a);
    op_env.insert(*pb, b);
    value(op.body, &op_env)
}

/// The pieces of one fold, printed as the statements of an element.
struct FoldCode<'a> {
    node: NodeId,
    len: String,
    parts: &'a [SeqV],
    init: Vec<String>,
    items: Vec<String>,
    from: &'static str,
    result: String,
    names: (Vec<String>, Vec<String>, Vec<String>),
}

impl FoldCode<'_> {
    fn print(&self, check_empty: bool) -> String {
        let (acc, next, new) = &self.names;
        let ty = |c: usize| cuda_type(self.parts[c].elem);
        let each = |f: &dyn Fn(usize) -> String| (0..self.parts.len()).map(f).collect::<String>();
        let declare = each(&|c| format!("{} {} = {}; ", ty(c), acc[c], self.init[c]));
        let read = each(&|c| {
            let at = self.parts[c].at("surge_j");
            format!("const {} {} = {at}; ", ty(c), next[c])
        });
        let combine = each(&|c| format!("const {} {} = {}; ", ty(c), new[c], self.items[c]));
        let assign = each(&|c| format!("{} = {}; ", acc[c], new[c]));
        let empty = if check_empty {
            format!(
                "if (surge_len == 0) {{ surge_fail(surge_err, {}, SURGE_EMPTY_REDUCE, 0, 0, 0); }} else ",
                self.node.0
            )
        } else {
            String::new()
        };
        format!(
            "if (lane == 0) {{\n        const u64 surge_len = {len};\n        {empty}{{\n          \
             {declare}\n          for (u64 surge_j = {from}; surge_j < surge_len; ++surge_j) {{ \
             {read}{combine}{assign}}}\n          out[i] = {result};\n        }}\n      }}",
            len = self.len,
            from = self.from,
            result = self.result,
        )
    }
}
