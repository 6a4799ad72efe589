//! Reductions and scans that the cooperative schedules cannot run: an operator without an
//! identity this emitter knows (`|a, b| a * 0.5 + b`, a `select`), or elements that are tuples
//! (argmin over `zip(distances, range(0, k))`). Lane 0 of the element's resource folds the row
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

/// Whether reduce or scan level `level` must be folded by one lane: tuple elements, or no
/// identity.
pub(super) fn needs_fold(tr: &Tr<'_>, level: &Level) -> Result<bool, CodegenError> {
    let (Op::Reduce { op, input, .. } | Op::Scan { op, input, .. }) = &tr.c.node(level.node).op
    else {
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
    let f = Fold::of(tr, env, level)?;
    let mut res_env = env.clone();
    res_env.insert(f.node, f.bound(&f.acc));
    if body.is_tuple(tr) {
        // A tuple of scalars for a later phase: stored packed, a u64 word per component.
        let (width, write) = packed_write(tr, body, &res_env)?;
        return Ok(Inner::Packed {
            code: f.print_fold(&write),
            width,
        });
    }
    let out_elem =
        tr.c.node(body.node())
            .ty
            .as_scalar()
            .ok_or_else(|| tr.unsupported(body.node(), "as a reduction's result (not a scalar)"))?;
    let result = store(out_elem, body.value(tr, &res_env)?);
    Ok(Inner::Fold {
        code: f.print_fold(&format!("out[i] = {result};")),
        out_elem: out_elem.stored(),
    })
}

/// The fold of scan level `level`, each running value stored as it is or, for one part of a
/// scan of tuples, projected by `post`.
pub(super) fn fold_scan(
    tr: &Tr<'_>,
    env: &Env,
    level: &Level,
    post: Option<&Lambda>,
) -> Result<Inner, CodegenError> {
    let f = Fold::of(tr, env, level)?;
    let (value, out) = match post {
        Some(p) => {
            let mut env = env.clone();
            env.insert(p.params[0], f.bound(&f.acc));
            (tr.scalar(p.body, &env)?, p.body)
        }
        None if !f.tuple => (f.acc[0].clone(), level.node),
        None => {
            // A scan of tuples for a later phase: each running value stored packed.
            let width = f.acc.len();
            let elems: Vec<_> = f.parts.iter().map(|p| p.elem).collect();
            let write =
                |at: &str| pack_stores(&format!("surge_fold_o + ({at}) * {width}"), &f.acc, &elems);
            return Ok(Inner::FoldScan {
                len: format!("(({}) * {width}ULL)", f.len),
                code: f.print_scan(&write),
                out_elem: crate::ir::Elem::U64,
            });
        }
    };
    let out_elem = match &tr.c.node(out).ty {
        crate::ir::Type::Seq(t) => t.as_scalar(),
        t => t.as_scalar(),
    }
    .ok_or_else(|| tr.unsupported(out, "as a scan's result (not scalars)"))?;
    let value = store(out_elem, value);
    Ok(Inner::FoldScan {
        len: f.len.clone(),
        code: f.print_scan(&|at: &str| format!("out[surge_fold_o + {at}] = {value}; ")),
        out_elem: out_elem.stored(),
    })
}

/// One fold: the row, the operator's result per component over the accumulator (`a`) and the
/// next element (`b`), the initial value and the locals' names.
pub(super) struct Fold {
    node: NodeId,
    tuple: bool,
    pub(super) len: String,
    pub(super) parts: Vec<SeqV>,
    items: Vec<String>,
    init: Vec<String>,
    prefix: bool,
    pub(super) acc: Vec<String>,
    next: Vec<String>,
    new: Vec<String>,
}

impl Fold {
    fn of(tr: &Tr<'_>, env: &Env, level: &Level) -> Result<Fold, CodegenError> {
        let node = level.node;
        let (Op::Reduce { op, input, prefix } | Op::Scan { op, input, prefix }) =
            &tr.c.node(node).op
        else {
            unreachable!("internal: a fold of a reduce or scan level")
        };
        Fold::over(tr, env, node, (op, *input, *prefix))
    }

    /// The fold of `input` (a flat sequence of scalars or of tuples of scalars) by `op` from
    /// `prefix` (else from the first element), for node `node` (a reduce, scan or
    /// `reduce_by_key`, `keyed_tuples.rs`).
    pub(super) fn over(
        tr: &Tr<'_>,
        env: &Env,
        node: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
    ) -> Result<Fold, CodegenError> {
        let tuple = seq_of_tuples(&tr.c.node(input).ty);
        let (len, parts) = if tuple {
            let t = tr.tuples(input, env)?;
            (t.len, t.parts)
        } else {
            let s = tr.seq(input, env)?;
            (s.len.clone(), vec![s])
        };
        let names = |p: &str| -> Vec<String> {
            (0..parts.len()).map(|c| format!("surge_f{p}{c}")).collect()
        };
        let mut f = Fold {
            node,
            tuple,
            len,
            items: Vec::new(),
            init: Vec::new(),
            prefix: prefix.is_some(),
            acc: names("a"),
            next: names("b"),
            new: names("n"),
            parts,
        };
        let [pa, pb] = op.params.as_slice() else {
            return Err(tr.unsupported(node, "(its operator does not take two values)"));
        };
        let mut op_env = env.clone();
        op_env.insert(*pa, f.bound(&f.acc));
        op_env.insert(*pb, f.bound(&f.next));
        f.items = f.value(tr, op.body, &op_env)?;
        f.init = match prefix {
            Some(p) => f.value(tr, p, env)?,
            None => f.parts.iter().map(|p| p.at("0")).collect(),
        };
        Ok(f)
    }

    /// `names` (one local per component) bound as a value of the element type.
    pub(super) fn bound(&self, names: &[String]) -> Bound {
        match self.tuple {
            true => Bound::Tuple(names.to_vec()),
            false => Bound::Scalar(names[0].clone()),
        }
    }

    /// A value of the element type, one expression per component.
    fn value(&self, tr: &Tr<'_>, n: NodeId, env: &Env) -> Result<Vec<String>, CodegenError> {
        match self.tuple {
            true => tr.parts(n, env),
            false => tr.scalar(n, env).map(|s| vec![s]),
        }
    }

    fn each(&self, f: &dyn Fn(usize) -> String) -> String {
        (0..self.parts.len()).map(f).collect()
    }

    /// The locals' declarations, and one step's statements at `surge_fold_j`.
    pub(super) fn declare_and_step(&self) -> (String, String) {
        let ty = |c: usize| cuda_type(self.parts[c].elem);
        let declare = self.each(&|c| format!("{} {} = {}; ", ty(c), self.acc[c], self.init[c]));
        let ats: Vec<String> = self.parts.iter().map(|p| p.at("surge_fold_j")).collect();
        // An element that is a fold of tuples (`tuple_fold.rs`) is computed once, whole.
        let read = match super::tuple_fold::whole_of(&ats) {
            Some(x) => {
                let e = format!("surge_fe{}", self.node.0);
                let parts =
                    self.each(&|c| format!("const {} {} = {e}.c{c}; ", ty(c), self.next[c]));
                format!("const auto {e} = {x}; {parts}")
            }
            None => self.each(&|c| format!("const {} {} = {}; ", ty(c), self.next[c], ats[c])),
        };
        let combine =
            self.each(&|c| format!("const {} {} = {}; ", ty(c), self.new[c], self.items[c]));
        let assign = self.each(&|c| format!("{} = {}; ", self.acc[c], self.new[c]));
        (declare, format!("{read}{combine}{assign}"))
    }

    /// Lane 0 folds the row and runs `write` (statements over the accumulator that store the
    /// result); an empty row without a prefix records the node's error.
    fn print_fold(&self, write: &str) -> String {
        let (declare, step) = self.declare_and_step();
        let empty = match self.prefix {
            true => String::new(),
            false => format!(
                "if (surge_fold_len == 0) {{ surge_fail(surge_err, {}, SURGE_EMPTY_REDUCE, 0, 0, 0); }} else ",
                self.node.0
            ),
        };
        let from = if self.prefix { "0" } else { "1" };
        format!(
            "if (lane == 0) {{\n        const u64 surge_fold_len = {len};\n        {empty}{{\n          \
             {declare}\n          for (u64 surge_fold_j = {from}; surge_fold_j < surge_fold_len; ++surge_fold_j) {{ \
             {step}}}\n          {write}\n        }}\n      }}",
            len = self.len,
        )
    }

    /// Lane 0 writes row `i`'s running values (`write(k)`: the statements that store the
    /// accumulator as value `k` of the row, which starts at `surge_fold_o`): inclusive from the
    /// first element, or exclusive after the prefix, as the interpreter's scan.
    fn print_scan(&self, write: &dyn Fn(&str) -> String) -> String {
        let (declare, step) = self.declare_and_step();
        let at_j = write("surge_fold_j");
        let body = match self.prefix {
            true => format!(
                "for (u64 surge_fold_j = 0; surge_fold_j < surge_fold_len; ++surge_fold_j) {{ {at_j}{step}}}"
            ),
            false => format!(
                "{}\n          for (u64 surge_fold_j = 1; surge_fold_j < surge_fold_len; \
                 ++surge_fold_j) {{ {step}{at_j}}}",
                write("0")
            ),
        };
        format!(
            "if (lane == 0) {{\n        const u64 surge_fold_len = {len};\n        const u64 surge_fold_o = \
             out_off[i];\n        if (surge_fold_len > 0) {{\n          {declare}\n          {body}\n        \
             }}\n      }}",
            len = self.len,
        )
    }
}

/// The statements that store `body`'s tuple of scalars packed at row `i` of the result (one u64
/// word per component, `surge_pack`), and the tuple's width.
pub(super) fn packed_write(
    tr: &Tr<'_>,
    body: &Body<'_>,
    env: &Env,
) -> Result<(usize, String), CodegenError> {
    let node = body.node();
    let Some(elems) = packed_tuple(&tr.c.node(node).ty) else {
        return Err(tr.unsupported(node, "as a stored tuple (not a tuple of scalars)"));
    };
    let parts = tr.parts(node, env)?;
    Ok((elems.len(), pack_stores("out_off[i]", &parts, &elems)))
}

/// The statements that store the tuple `values` (of component types `elems`) packed at word
/// `base` of `out`: component c at `base + c`, its bits in a u64 (`surge_pack`).
pub(super) fn pack_stores(base: &str, values: &[String], elems: &[crate::ir::Elem]) -> String {
    values
        .iter()
        .zip(elems)
        .enumerate()
        .map(|(c, (x, e))| format!("out[{base} + {c}] = surge_pack(({})({x})); ", cuda_type(*e)))
        .collect()
}

/// The component types of a tuple of scalars.
pub(super) fn packed_tuple(ty: &crate::ir::Type) -> Option<Vec<crate::ir::Elem>> {
    match ty {
        crate::ir::Type::Tuple(items) => items.iter().map(|i| i.as_scalar()).collect(),
        _ => None,
    }
}
