//! One phase translated once (its kernels differ only in schedule and policy): the outer map's
//! parameters bound to element `i` of its inputs, the element count, and the inner level (the
//! map body, or a reduce/scan with its operator, identity and prefix).

use super::checks::equal_lengths;
use super::elements::{
    Bound, Env, I, R, RowForm, RowsV, SeqV, Slices, Tr, row_of_tuples, rows_of_tuples,
    seq_of_tuples,
};
pub(super) use super::inner::Inner;
use super::roots::{
    flat_root, is_flat_producer, is_lazy_root, is_nested_producer, is_row_over_map,
    is_scalar_over_map, is_scalar_over_producer, is_scalar_over_result, nested_root,
    scalar_over_producer, scalar_root, single_row_root,
};
use super::{ArgSlot, OutputShape, PhasePlan, SUPPORTED, cuda_type};
use crate::CodegenError;
use crate::analysis::{Level, Phase};
use crate::ir::{
    BinaryOp, Computation, Elem, Lambda, LiteralTable, NodeId, Op, OpKind, ScalarExpr,
};
use std::collections::BTreeMap;

/// A phase translated once; its kernels differ only in schedule and policy.
#[derive(Debug, Clone)]
pub(super) struct PhaseCode {
    pub(super) phase: usize,
    pub(super) sequence: String,
    pub(super) args: Vec<ArgSlot>,
    pub(super) n_expr: String,
    pub(super) bind: Vec<String>,
    pub(super) inner: Inner,
}

/// The identity of a binary operator lambda `|a, b| a ⊕ b` for ⊕ in + * min max && ||.
pub(super) fn identity(
    c: &Computation,
    params: &[NodeId],
    body: NodeId,
    elem: Elem,
) -> Option<String> {
    let Op::Scalar {
        expr: ScalarExpr::Binary(op, x, y),
    } = &c.node(body).op
    else {
        return None;
    };
    let (ScalarExpr::Value(x), ScalarExpr::Value(y)) = (&**x, &**y) else {
        return None;
    };
    let [a, b] = params else { return None };
    if !((x == a && y == b) || (x == b && y == a)) {
        return None;
    }
    let t = cuda_type(elem);
    // Float `fmin`/`fmax` ignore a NaN operand (as Rust's `min`/`max` and the interpreter do), so
    // NaN is their exact identity; ±∞ would turn a row of NaNs into ±∞.
    let (lo, hi) = match elem {
        Elem::F32 => ("__int_as_float(0x7fc00000)", "__int_as_float(0x7fc00000)"),
        Elem::F64 => (
            "__longlong_as_double(0x7ff8000000000000LL)",
            "__longlong_as_double(0x7ff8000000000000LL)",
        ),
        Elem::I32 => ("((i32)0x80000000)", "((i32)0x7fffffff)"),
        Elem::I64 => (
            "((i64)0x8000000000000000ULL)",
            "((i64)0x7fffffffffffffffLL)",
        ),
        Elem::U32 => ("0u", "0xffffffffu"),
        Elem::U64 => ("0ULL", "0xffffffffffffffffULL"),
        Elem::Bool => ("false", "true"),
    };
    Some(match op {
        BinaryOp::Add | BinaryOp::Or => format!("(({t})0)"),
        BinaryOp::Mul | BinaryOp::And => format!("(({t})1)"),
        BinaryOp::Min => hi.to_string(),
        BinaryOp::Max => lo.to_string(),
        _ => return None,
    })
}

/// The outer level's bindings: the environment of element `i`, its C++ statements, and the
/// length of every input (checked equal).
struct Outer {
    env: Env,
    bind: Vec<String>,
    lens: Vec<String>,
}

/// A reduce/scan level's operator: the level's input sequence, the operator's body over `a` and
/// `b`, its identity and the translated prefix.
struct Operator {
    seq: SeqV,
    op_body: String,
    ident: String,
    prefix: Option<String>,
}

/// The error for a phase whose expression sequence this emitter does not support.
fn unsupported_sequence(p: usize, sequence: &str) -> CodegenError {
    CodegenError::EmitVariant {
        what: format!("phase {p} ({sequence})"),
        message: format!(
            "the CUDA emitter cannot generate `{sequence}` (it emits the expression sequences {})",
            SUPPORTED.join(", ")
        ),
    }
}

impl PhaseCode {
    /// A phase of `tr`'s computation with the arguments `tr` has collected.
    pub(super) fn of(tr: &Tr<'_>, n_expr: String, bind: Vec<String>, inner: Inner) -> PhaseCode {
        PhaseCode {
            phase: tr.phase,
            sequence: tr.sequence.clone(),
            args: tr.args.borrow().clone(),
            n_expr,
            bind,
            inner,
        }
    }

    pub(super) fn translate(
        c: &Computation,
        roots: &BTreeMap<NodeId, usize>,
        lits: &LiteralTable,
        p: usize,
        phase: &Phase,
    ) -> Result<PhaseCode, CodegenError> {
        let tr = Tr::new(c, roots, lits, p, phase);
        let sequence = tr.sequence.clone();
        if is_flat_producer(c, phase) {
            return flat_root(tr, phase);
        }
        if super::roots::is_flat_tuple_producer(c, phase) {
            return super::roots::flat_tuple_root(tr, phase);
        }
        if super::roots::reads_stored_levels(roots, p, phase) {
            return super::roots::over_stored(tr, phase);
        }
        if is_nested_producer(c, phase) {
            return nested_root(tr, phase);
        }
        if is_scalar_over_map(c, phase) || is_scalar_over_result(c, roots, p, phase) {
            return scalar_root(tr, phase);
        }
        if is_scalar_over_producer(c, phase) {
            return scalar_over_producer(tr, phase);
        }
        if is_row_over_map(c, phase) {
            return match c.node(phase.root).ty.depth() {
                1 => single_row_root(tr, phase),
                _ => nested_root(tr, phase),
            };
        }
        if is_lazy_root(c, phase) {
            let level_depth = c.node(phase.levels[0].node).ty.depth();
            return match c.node(phase.root).ty.depth() {
                1 if level_depth == 2 => single_row_root(tr, phase),
                1 => flat_root(tr, phase),
                _ => nested_root(tr, phase),
            };
        }
        if sequence == "reduce_by_key.map" && phase.levels[0].node == phase.root {
            // A reduce_by_key of rows whose combiner is a map (Listing 5.5).
            return super::keyed::runs(tr, phase);
        }
        if matches!(sequence.as_str(), "reduce.map" | "scan.map")
            && phase.levels[0].node == phase.root
        {
            // A reduce or scan of rows whose combiner is a map.
            return super::keyed::row_reduce(tr, phase);
        }
        if !SUPPORTED.contains(&sequence.as_str()) && !is_map_of_rows(c, phase) {
            return Err(unsupported_sequence(p, &sequence));
        }
        match sequence.as_str() {
            "reduce" | "scan" => return root_level(tr, phase),
            "reduce_by_key" => return super::keyed::runs(tr, phase),
            "scatter" => return super::keyed::scatter(tr, phase),
            _ => {}
        }
        let Some((f, inputs, post)) = top_map(c, phase) else {
            return Err(unsupported_sequence(p, &sequence));
        };
        let mut outer = bind_outer(&tr, f, inputs)?;
        super::scan_bodies::bind_stored(&tr, f, inputs, &mut outer.env, &mut outer.bind)?;
        if outer.lens.is_empty() {
            return Err(unsupported_sequence(p, &sequence));
        }
        let n_expr = equal_lengths(&outer.lens, phase.root);
        let body = Body {
            value: f.body,
            post,
        };
        let inner = match phase.levels.get(1) {
            None => map_body(&tr, &body, &outer.env)?,
            Some(_) if is_map_of_rows(c, phase) => map_body(&tr, &body, &outer.env)?,
            Some(level) => reduce_or_scan(&tr, &body, &outer.env, level)?,
        };
        Ok(PhaseCode::of(&tr, n_expr, outer.bind, inner))
    }

    pub(super) fn output(&self) -> OutputShape {
        self.inner.shape()
    }

    pub(super) fn plan(&self, c: &Computation, p: usize, phase: &Phase) -> PhasePlan {
        let output = self.output();
        PhasePlan {
            phase: p,
            root: phase.root,
            ty: c.node(phase.root).ty.clone(),
            sequence: self.sequence.clone(),
            args: self.args.clone(),
            output,
            shape_kernel: format!("surge_p{p}_shape"),
            rows_kernel: output.nested.then(|| format!("surge_p{p}_rows")),
            deep: None,
        }
    }
}

/// Outer level: binds the map's parameters to row (or element) `i` of each input.
fn bind_outer(tr: &Tr<'_>, f: &Lambda, inputs: &[NodeId]) -> Result<Outer, CodegenError> {
    let mut env = Env::new();
    let mut bind = Vec::new();
    let mut lens = Vec::new();
    for (k, (param, input)) in f.params.iter().zip(inputs).enumerate() {
        match tr.c.node(*input).ty.depth() {
            2 if rows_of_tuples(&tr.c.node(*input).ty) => {
                let parts = tr.tuple_rows(*input, &env)?;
                env.insert(*param, Bound::Tuples(row_of_tuples(&parts, "i")));
                lens.push(parts[0].rows.clone());
            }
            2 => {
                let rows = tr.rows(*input, &env)?;
                env.insert(*param, Bound::Seq(bind_row(&rows, k, &mut bind)));
                lens.push(rows.rows);
            }
            3 => {
                let (count, b) = tr.deep_element(*input, &env, "i")?;
                env.insert(*param, b);
                lens.push(count);
            }
            1 if seq_of_tuples(&tr.c.node(*input).ty) => {
                let t = tr.tuples(*input, &env)?;
                let mut names = Vec::new();
                for (c, part) in t.parts.iter().enumerate() {
                    let t = cuda_type(part.elem);
                    bind.push(format!("const {t} v{k}_{c} = {};", part.at("i")));
                    names.push(format!("v{k}_{c}"));
                }
                env.insert(*param, Bound::Tuple(names));
                lens.push(t.len);
            }
            1 => {
                let s = tr.seq(*input, &env)?;
                bind.push(format!("const {} v{k} = {};", cuda_type(s.elem), s.at("i")));
                env.insert(*param, Bound::Scalar(format!("v{k}")));
                lens.push(s.len);
            }
            _ => return Err(tr.unsupported(*input, "as a map input")),
        }
    }
    Ok(Outer { env, bind, lens })
}

/// Row `i` of nested input `k` as a flat sequence: a slice's begin and length are bound once
/// (`b{k}`, `l{k}`; a row that fails its check is read as empty), a column is read in place.
pub(super) fn bind_row(rows: &RowsV, k: usize, bind: &mut Vec<String>) -> SeqV {
    match &rows.form {
        RowForm::Slices(s) => bind_slice(s, k, bind),
        _ => rows.row("i", None),
    }
}

fn bind_slice(rows: &Slices, k: usize, bind: &mut Vec<String>) -> SeqV {
    let b = rows.begin.replace(R, "i");
    let l = rows.len.replace(R, "i");
    if let Some(ok) = &rows.ok {
        bind.push(format!("const bool ok{k} = {};", ok.replace(R, "i")));
        bind.push(format!("const u64 b{k} = ok{k} ? {b} : 0ULL;"));
        bind.push(format!("const u64 l{k} = ok{k} ? {l} : 0ULL;"));
    } else {
        bind.push(format!("const u64 b{k} = {b};"));
        bind.push(format!("const u64 l{k} = {l};"));
    }
    SeqV {
        len: format!("l{k}"),
        at: rows.flat.at(&format!("b{k} + {I}")),
        elem: rows.flat.elem,
    }
}

/// A reduction or scan at the root: one element (`n = 1`), whose one group reduces or scans
/// the whole input with the variant's one level (a sequential outer level of one element
/// around it). A root scan's result is that element's one row, returned flat by the host.
fn root_level(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let level = &phase.levels[0];
    let inner = if level.op == OpKind::Scan {
        match scan_part(tr.c, phase) {
            Some(post) => super::fold::fold_scan(&tr, &Env::new(), level, Some(post))?,
            None if level.node != phase.root => {
                return Err(tr.unsupported(
                    phase.root,
                    "over a scan (a root scan is the phase's result)",
                ));
            }
            None => scan(&tr, &Env::new(), level)?,
        }
    } else {
        // The phase's root is the reduction, or scalar code over it (`reduce(..)? + 1.0`).
        reduce(&tr, &Env::new(), level, &Body::root(phase.root))?
    };
    Ok(PhaseCode::of(&tr, "(u64)1".into(), Vec::new(), inner))
}

/// One part of a root scan of tuples (`map(|t| t.j, scan(..))`, from `split_parts`): the
/// projection.
fn scan_part<'c>(c: &'c Computation, phase: &Phase) -> Option<&'c Lambda> {
    match &c.node(phase.root).op {
        Op::Map { f, inputs } if inputs.as_slice() == [phase.levels[0].node] => Some(f),
        _ => None,
    }
}

/// The map a phase's levels start at: its root, or for one part of a result stored in parts
/// (`map(|t| t.j, m)` over the phase's top map `m`, from `split_parts`) `m` with the
/// projection to apply to its body's value.
fn top_map<'c>(
    c: &'c Computation,
    phase: &Phase,
) -> Option<(&'c Lambda, &'c [NodeId], Option<&'c Lambda>)> {
    let Op::Map { f, inputs } = &c.node(phase.root).op else {
        return None;
    };
    let top = phase.levels.first()?.node;
    if phase.root != top
        && inputs.as_slice() == [top]
        && let Op::Map { f: g, inputs: gi } = &c.node(top).op
    {
        return Some((g, gi, Some(f)));
    }
    Some((f, inputs, None))
}

/// A map's body as the phase stores it: the body's value, or its projection `post` (a
/// lambda over the body's tuple) for one part of a tuple result.
pub(super) struct Body<'c> {
    /// The body (or the phase's root, for scalar code at the root).
    value: NodeId,
    post: Option<&'c Lambda>,
}

impl Body<'_> {
    fn root(value: NodeId) -> Body<'static> {
        Body { value, post: None }
    }

    /// The node whose type the stored value has.
    pub(super) fn node(&self) -> NodeId {
        self.post.map_or(self.value, |p| p.body)
    }

    /// Whether the stored value is a tuple (of a phase that a later one reads).
    pub(super) fn is_tuple(&self, tr: &Tr<'_>) -> bool {
        self.post.is_none() && matches!(tr.c.node(self.value).ty, crate::ir::Type::Tuple(_))
    }

    /// The value in `env`: the body, or the projection of the body's tuple (its items bound
    /// as a tuple of scalars).
    pub(super) fn value(&self, tr: &Tr<'_>, env: &Env) -> Result<String, CodegenError> {
        let Some(post) = self.post else {
            return tr.scalar(self.value, env);
        };
        let parts = tr.parts(self.value, env)?;
        let mut env = env.clone();
        env.insert(post.params[0], Bound::Tuple(parts));
        tr.scalar(post.body, &env)
    }
}

/// A `map` whose body is a sequence producer (`map.reverse`, `map.gather`, `map.map`, ..):
/// each element's row is the body, read lazily as any element-wise producer is.
fn is_map_of_rows(c: &Computation, phase: &Phase) -> bool {
    let Op::Map { f, .. } = &c.node(phase.root).op else {
        return false;
    };
    let body_row = c.node(f.body).ty.depth() == 1;
    // The inner level is the body's row, or a map or `reduce_by_key` inside the body that it
    // reads lazily (`map(|v| len(map(g, rows)), x)`, `map(|v| at(reduce_by_key(..), 2), x)`);
    // a body that is a map may hold further levels, read lazily in its elements
    // (`map(|g| map(|r| reduce(r), g), groups)`).
    match phase.levels.as_slice() {
        // A scan that the body reads but is not (`map(|v| at(scan(g, rows, v), 1), x)`, random
        // seed 31's class), with the levels of its combiner: read lazily in the element
        // (`lazy_scan.rs`, `lazy_rows.rs`).
        [top, l, ..] if top.node == phase.root && l.op == OpKind::Scan && l.node != f.body => true,
        [_, l] => {
            (l.node == f.body && !matches!(l.op, OpKind::Reduce | OpKind::Scan) && body_row)
                || (l.node != f.body && matches!(l.op, OpKind::Map | OpKind::ReduceByKey))
        }
        [_, l, _, ..] => l.node == f.body && l.op == OpKind::Map && body_row,
        _ => false,
    }
}

/// A `map` without an inner level: its scalar body is the output element, or its flat
/// sequence body the output row (copied out as a nested producer's rows are).
fn map_body(tr: &Tr<'_>, body: &Body<'_>, env: &Env) -> Result<Inner, CodegenError> {
    let ty = &tr.c.node(body.node()).ty;
    if let Some(elem) = ty.as_scalar() {
        return Ok(Inner::None {
            result: store(elem, body.value(tr, env)?),
            elem: elem.stored(),
        });
    }
    if ty.depth() == 1 && !seq_of_tuples(ty) && body.post.is_none() {
        return Ok(Inner::Copy {
            seq: tr.seq(body.value, env)?,
        });
    }
    if body.is_tuple(tr) {
        let (width, write) = super::fold::packed_write(tr, body, env)?;
        return Ok(Inner::Packed {
            code: format!("if (lane == 0) {{ {write}}}"),
            width,
        });
    }
    Err(tr.unsupported(
        body.node(),
        "as a map body (not a scalar or a flat sequence of scalars)",
    ))
}

/// The expression `x` of element type `e` as it is stored.
pub(super) fn store(e: Elem, x: String) -> String {
    if e == Elem::Bool {
        format!("(u32)({x})")
    } else {
        x
    }
}

/// A reduce or scan inner level: for a reduce, the map body's glue around the reduced value
/// (bound to `acc`); a scan must be the map's body itself.
fn reduce_or_scan(
    tr: &Tr<'_>,
    body: &Body<'_>,
    env: &Env,
    level: &Level,
) -> Result<Inner, CodegenError> {
    if level.op != OpKind::Scan {
        return reduce(tr, env, level, body);
    }
    if body.value != level.node {
        // The body reads the scan (`at(scan(..), k).1`, `map(g, scan(..))`, random seed 31):
        // computed in place, the scan read lazily (`lazy_scan.rs`).
        return map_body(tr, body, env);
    }
    if super::fold::needs_fold(tr, level)? {
        return super::fold::fold_scan(tr, env, level, body.post);
    }
    scan(tr, env, level)
}

/// A scan level: its input, operator, identity and prefix.
fn scan(tr: &Tr<'_>, env: &Env, level: &Level) -> Result<Inner, CodegenError> {
    if super::fold::needs_fold(tr, level)? {
        return super::fold::fold_scan(tr, env, level, None);
    }
    let Operator {
        seq,
        op_body,
        ident,
        prefix,
    } = operator(tr, env, level)?;
    Ok(Inner::Scan {
        seq,
        op_body,
        ident,
        prefix,
    })
}

/// A reduce level whose result is `body`: the reduction itself, or scalar code around the
/// reduced value (bound to `acc`), applied once per element by lane 0.
fn reduce(tr: &Tr<'_>, env: &Env, level: &Level, body: &Body<'_>) -> Result<Inner, CodegenError> {
    let node = level.node;
    if super::fold::needs_fold(tr, level)? {
        return super::fold::fold_level(tr, env, level, body);
    }
    let Operator {
        seq,
        op_body,
        ident,
        prefix,
    } = operator(tr, env, level)?;
    let mut res_env = env.clone();
    res_env.insert(node, Bound::Scalar("acc".into()));
    if body.is_tuple(tr) {
        // A tuple of scalars over the reduced value for a later phase (CoMD's (F, F′) of ρ̄):
        // lane 0 stores it packed.
        let (width, write) = super::fold::packed_write(tr, body, &res_env)?;
        return Ok(Inner::Reduce {
            node,
            result: write,
            seq,
            op_body,
            ident,
            prefix,
            out_elem: Elem::U64,
            packed: Some(width),
        });
    }
    let out_elem =
        tr.c.node(body.node())
            .ty
            .as_scalar()
            .ok_or_else(|| tr.unsupported(body.node(), "as a reduction's result (not a scalar)"))?;
    Ok(Inner::Reduce {
        node,
        result: store(out_elem, body.value(tr, &res_env)?),
        seq,
        op_body,
        ident,
        prefix,
        out_elem: out_elem.stored(),
        packed: None,
    })
}

/// The body of operator `op(a, b)` of `node` over elements of type `elem`, and its identity.
pub(super) fn operator_of(
    tr: &Tr<'_>,
    env: &Env,
    node: NodeId,
    op: &Lambda,
    elem: Elem,
) -> Result<(String, String), CodegenError> {
    let [a, b] = op.params.as_slice() else {
        return Err(tr.unsupported(node, "(its operator does not take two values)"));
    };
    let mut op_env = env.clone();
    op_env.insert(*a, Bound::Scalar("a".into()));
    op_env.insert(*b, Bound::Scalar("b".into()));
    let op_body = tr.scalar(op.body, &op_env)?;
    let ident =
        identity(tr.c, &op.params, op.body, elem).ok_or_else(|| CodegenError::EmitVariant {
            what: format!("phase {} ({})", tr.phase, tr.sequence),
            message: format!(
                "the operator of {} has no identity the CUDA emitter knows \
                 (supported: |a, b| a + b, a * b, min, max, &&, ||)",
                tr.c.site(node)
            ),
        })?;
    Ok((op_body, ident))
}

/// The input sequence, operator `op(a, b)`, identity and prefix of a reduce/scan level.
fn operator(tr: &Tr<'_>, env: &Env, level: &Level) -> Result<Operator, CodegenError> {
    let (c, node) = (tr.c, level.node);
    let (op, input, prefix) = match &c.node(node).op {
        Op::Reduce { op, input, prefix } | Op::Scan { op, input, prefix } => (op, *input, *prefix),
        _ => return Err(unsupported_sequence(tr.phase, &tr.sequence)),
    };
    let seq = tr.seq(input, env)?;
    let (op_body, ident) = operator_of(tr, env, node, op, seq.elem)?;
    let prefix = prefix.map(|x| tr.scalar(x, env)).transpose()?;
    Ok(Operator {
        seq,
        op_body,
        ident,
        prefix,
    })
}
