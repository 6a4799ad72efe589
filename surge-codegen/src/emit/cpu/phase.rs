//! One phase's functions (`templates/cpu/phase.rs.tera`): earlier phases' results bound to
//! their slots, the outer level (a root `reduce`/`scan` has one element; a root `map` binds its
//! parameters to element `i`), the inner level the skeleton may run cooperatively (reduce, scan,
//! or an element-wise map writing a row), and the row writers of nested results.

use super::code::{Code, Env, Gen, R, SeqCode, bind, lines, rust_ty, scalar_of};
use super::deep::deep_levels;
use super::diagonal::emit_diagonal;
use super::inner::{inner_reduce_scan, scan_rows, slot_acc};
use super::packed::{Packing, packing, reader};
use super::result::{Assembly, assemble};
use super::{ACC_SLOT_WORDS, Inner, PHASE, PhaseAbi, Shape, phase_slot, render};
use crate::analysis::{Analysis, Phase};
use crate::ir::{Elem, NodeId, Op, Type};
use std::collections::HashMap;
use std::rc::Rc;

/// The template context of one phase being filled, and what the host learns of its inner level.
pub(super) struct PhaseCtx {
    pub(super) ctx: tera::Context,
    pub(super) inner: Option<Inner>,
    /// Accumulator type of the inner reduce/scan (the element type of an inner map's rows).
    pub(super) acc: Option<Elem>,
    /// Statements every function of the phase runs once after binding its buffers: the root's
    /// checks, and the locals its elements read.
    pub(super) pre: Vec<String>,
    /// Set when the result is stored as words (`packed.rs`).
    pub(super) packed: Option<Packing>,
    /// Whether a root map's body is emitted with tile-width specialization (`spec.rs`), and
    /// the splits it specialized.
    pub(super) specialize: bool,
    pub(super) spec_tiles: Vec<super::spec::SpecTile>,
}

/// The element type of a flat sequence type, or of the rows of a nested one.
fn seq_elem(t: &Type) -> Option<(Elem, bool)> {
    match t {
        Type::Seq(inner) => match &**inner {
            Type::Scalar(e) => Some((*e, false)),
            Type::Seq(row) => match &**row {
                Type::Scalar(e) => Some((*e, true)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// How earlier phases' results are read: materialized buffers in their slots (a result stored
/// in parts put back together, `result.rs`).
fn phase_outputs<'a>(
    g: &Gen<'a>,
    (analysis, assemblies): (&Analysis, &[Assembly]),
    upto: usize,
    inputs: usize,
) -> (Env<'a>, String) {
    let mut env: HashMap<NodeId, Code<'a>> = HashMap::new();
    let mut prelude = String::new();
    for i in 0..inputs {
        let e = g.c.inputs[i].elem;
        prelude.push_str(&format!(
            "        let b{i}: &[{}] = unsafe {{ slot(bufs, {i}) }};\n",
            rust_ty(e)
        ));
    }
    for (k, ph) in analysis.phases.iter().enumerate().take(upto) {
        let node = g.c.node(ph.root);
        let s = phase_slot(inputs, k);
        let (d, o) = (format!("p{k}"), format!("p{k}_off"));
        let whole = matches!(node.op, Op::Reduce { .. } | Op::Scan { .. });
        if let Some((bind, code)) =
            super::deep::phase_reader(k, s, &node.ty, packing(&node.ty).as_ref())
        {
            prelude.push_str(&bind);
            env.insert(ph.root, code);
            continue;
        }
        if let Some(p) = packing(&node.ty) {
            prelude.push_str(&format!(
                "        let {d}: &[u64] = unsafe {{ slot(bufs, {s}) }};\n"
            ));
            if p.depth == 2 {
                prelude.push_str(&format!(
                    "        let {o}: &[u64] = unsafe {{ slot(bufs, {}) }};\n",
                    s + 1
                ));
            }
            env.insert(ph.root, reader(d, o, &p));
            continue;
        }
        let code = match (&node.ty, whole) {
            (Type::Scalar(e), _) => {
                prelude.push_str(&format!(
                    "        let {d}: &[{}] = unsafe {{ slot(bufs, {s}) }};\n",
                    rust_ty(*e)
                ));
                Code::Scalar(format!("{d}[0]"), *e)
            }
            (t, _) => {
                let Some((e, nested)) = seq_elem(t) else {
                    continue;
                };
                prelude.push_str(&format!(
                    "        let {d}: &[{}] = unsafe {{ slot(bufs, {s}) }};\n",
                    rust_ty(e)
                ));
                if nested {
                    prelude.push_str(&format!(
                        "        let {o}: &[u64] = unsafe {{ slot(bufs, {}) }};\n",
                        s + 1
                    ));
                    let (d2, o2) = (d.clone(), o.clone());
                    Code::Seq(Rc::new(SeqCode {
                        slice: None,
                        len: format!("({o}.len() - 1)"),
                        checks: vec![],
                        elem: Box::new(move |i| {
                            let (d3, o3) = (d2.clone(), o2.clone());
                            let i = i.to_string();
                            Ok(Code::Seq(Rc::new(SeqCode {
                                slice: None,
                                len: format!("(({o2}[({i}) + 1] - {o2}[{i}]) as usize)"),
                                checks: vec![],
                                elem: Box::new(move |k| {
                                    Ok(Code::Scalar(format!("{d3}[{o3}[{i}] as usize + ({k})]"), e))
                                }),
                            })))
                        }),
                    }))
                } else {
                    Code::Seq(Rc::new(SeqCode {
                        slice: Some(d.clone()),
                        len: format!("{d}.len()"),
                        checks: vec![],
                        elem: Box::new(move |i| Ok(Code::Scalar(format!("{d}[{i}]"), e))),
                    }))
                }
            }
        };
        env.insert(ph.root, code);
    }
    for asm in assemblies
        .iter()
        .filter(|a| a.phases.iter().all(|k| *k < upto))
    {
        let root = |k: &usize| analysis.phases[*k].root;
        let mut parts = asm.phases.iter().map(|k| env[&root(k)].clone());
        let code = assemble(&asm.ty, &mut parts);
        env.insert(asm.root, code);
    }
    prelude.push_str(&g.bind_literals(analysis, upto));
    (Rc::new(env), prelude)
}

/// Emits one phase's functions.
pub(super) fn emit_phase<'a>(
    g: &Gen<'a>,
    (analysis, assemblies): (&Analysis, &[Assembly]),
    pi: usize,
    phase: &Phase,
    inputs: usize,
    prefix: &str,
) -> R<(String, PhaseAbi)> {
    {
        let mut m = g.memo.borrow_mut();
        m.prefix = prefix.to_string();
        m.statics.clear();
    }
    let (env0, prelude) = phase_outputs(g, (analysis, assemblies), pi, inputs);
    let root = phase.root;
    let node = g.c.node(root);
    let mut ctx = tera::Context::new();
    ctx.insert("p", prefix);
    ctx.insert("phase", &pi);
    ctx.insert("sequence", &phase.expression_sequence());
    ctx.insert("prelude", &prelude);
    ctx.insert("env_i", "");
    ctx.insert("spec", "");
    ctx.insert("acc_slot_bytes", &(ACC_SLOT_WORDS * 8));
    let packed = packing(&node.ty);
    ctx.insert("packed", &packed.is_some());
    ctx.insert("width", &packed.as_ref().map_or(1, Packing::width));
    let mut st = PhaseCtx {
        ctx,
        inner: None,
        acc: None,
        pre: Vec::new(),
        packed: packed.clone(),
        specialize: false,
        spec_tiles: Vec::new(),
    };
    let top = phase.levels.first().map_or(root, |l| l.node);
    let item = fold_item(g, top);
    let flat_acc = item.as_ref().is_some_and(|t| t.as_scalar().is_some());
    let slot = slot_acc(item.as_ref());
    let depth = packed.as_ref().map(|p| p.depth);
    let scalar_root = matches!(node.ty, Type::Scalar(_)) || depth == Some(0);
    // Rows of rows are written row by row (`root_map`), whatever computes them.
    let nested_root = matches!(seq_elem(&node.ty), Some((_, true)))
        || depth == Some(2)
        || deep_levels(&node.ty).is_some();
    let (shape, elem, whole) = match &g.c.node(top).op {
        Op::Reduce { .. } if slot && scalar_root => {
            let (sh, e) = root_reduce(g, top, root, &env0, &mut st)?;
            (sh, e, true)
        }
        Op::Scan { .. } if top == root && scan_rows(item.as_ref(), &packed, 1) => {
            let (sh, e) = root_scan(g, root, &env0, &mut st)?;
            (sh, e, true)
        }
        Op::ReduceByKey { .. } if top == root && flat_acc && !nested_root && packed.is_none() => {
            let (sh, e) = root_whole(g, root, &env0, &mut st)?;
            super::runs::root_runs(g, root, &env0, &mut st)?;
            (sh, e, true)
        }
        Op::Reduce { .. } | Op::Scan { .. } | Op::ReduceByKey { .. } | Op::Scatter { .. }
            if !nested_root =>
        {
            let (sh, e) = root_whole(g, root, &env0, &mut st)?;
            (sh, e, true)
        }
        _ if top != root && !nested_root => {
            let (sh, e) = root_whole(g, root, &env0, &mut st)?;
            (sh, e, true)
        }
        _ => {
            let (sh, e) = root_map(g, phase, &env0, &mut st)?;
            (sh, e, false)
        }
    };
    if elem == Elem::Bool {
        return Err(g.unsupported(
            root,
            "a phase result of booleans cannot be stored; cast it to an integer type",
        ));
    }
    let PhaseCtx {
        mut ctx,
        inner,
        acc,
        pre,
        ..
    } = st;
    ctx.insert("prelude", &format!("{prelude}{}", lines(&pre)));
    ctx.insert("elem", rust_ty(elem));
    let diagonal = match &phase.diagonal {
        Some(pat) if pat.map == root && shape == Shape::Flat && !whole => {
            emit_diagonal(g, pat, &env0, &mut ctx)?;
            Some(pat.clone())
        }
        _ => None,
    };
    ctx.insert("diag", &diagonal.is_some());
    ctx.insert(
        "shape",
        match shape {
            Shape::Flat => "flat",
            Shape::Nested => "nested",
            Shape::Deep { .. } => "deep",
        },
    );
    ctx.insert(
        "inner",
        &inner.map(|i| match i {
            Inner::Reduce => "reduce",
            Inner::Scan => "scan",
            Inner::Map => "map",
            Inner::Runs => "runs",
        }),
    );
    let text = render(PHASE, &ctx)?;
    let text = text + &super::sell::emit_sell(g, diagonal.as_ref(), &env0, &ctx)?;
    let (blocks, bcsr) = super::bcsr::emit_bcsr(g, diagonal.as_ref(), &env0, &ctx)?;
    let text = text + &blocks;
    let text = text + &super::lanes::emit_lanes(g.c, diagonal.as_ref(), &ctx)?;
    // The memo cells of the values this phase computes once per run (`materialized_at`).
    let statics = {
        let mut m = g.memo.borrow_mut();
        m.prefix.clear();
        std::mem::take(&mut m.statics)
    };
    let text = if statics.is_empty() {
        text
    } else {
        format!("{}\n{text}", statics.join("\n"))
    };
    Ok((
        text,
        PhaseAbi {
            root,
            expression_sequence: phase.expression_sequence(),
            shape,
            elem,
            whole,
            inner,
            acc,
            diagonal,
            bcsr,
            packed,
        },
    ))
}

/// The item type of a `reduce`, `scan` or `reduce_by_key` node's input.
fn fold_item(g: &Gen<'_>, n: NodeId) -> Option<Type> {
    match &g.c.node(n).op {
        Op::Reduce { input, .. } | Op::Scan { input, .. } | Op::ReduceByKey { input, .. } => {
            g.c.node(*input).ty.item().cloned()
        }
        _ => None,
    }
}

/// A root `reduce` of scalars (`top`), or scalar code `root` around one: one outer element, the
/// reduction its inner level, the scalar code applied in `finish`.
fn root_reduce<'a>(
    g: &Gen<'a>,
    top: NodeId,
    root: NodeId,
    env0: &Env<'a>,
    st: &mut PhaseCtx,
) -> R<(Shape, Elem)> {
    let e = storable(g, root)?;
    st.ctx.insert("outer_len", "1usize");
    let elem_i = element(g, root, env0, &st.packed)?;
    st.ctx.insert("elem_i", &elem_i);
    inner_reduce_scan(g, top, env0, (top != root).then_some(root), st)?;
    Ok((Shape::Flat, e))
}

/// The element type of scalar node `n`, when a phase result of it can be stored (words, for a
/// tuple or a boolean).
fn storable(g: &Gen<'_>, n: NodeId) -> R<Elem> {
    if packing(&g.c.node(n).ty).is_some_and(|p| p.depth == 0) {
        return Ok(Elem::U64);
    }
    match seq_elem(&Type::seq(g.c.node(n).ty.clone())) {
        Some((e, false)) if e != Elem::Bool => Ok(e),
        _ => Err(unstorable(g, n)),
    }
}

/// The scalar expression of node `n` in `env`: its words (`[u64; width]`) when packed.
pub(super) fn element<'a>(
    g: &Gen<'a>,
    n: NodeId,
    env: &Env<'a>,
    packed: &Option<Packing>,
) -> R<String> {
    match packed {
        Some(p) => g.pack(g.eval(n, env)?, p),
        None => Ok(scalar_of(g.eval(n, env)?)),
    }
}

/// The statements writing element `k` of a row (`row`) from its code.
pub(super) fn row_element<'a>(
    g: &Gen<'a>,
    code: Code<'a>,
    e: Elem,
    packed: &Option<Packing>,
) -> R<String> {
    Ok(match packed {
        Some(p) => format!(
            "                let v: [u64; {w}] = {};\n                unsafe {{ std::ptr::copy_nonoverlapping(v.as_ptr(), row.add(k * {w}), {w}) }};\n",
            g.pack(code, p)?,
            w = p.width()
        ),
        None => format!(
            "                let v: {} = {};\n                unsafe {{ *row.add(k) = v }};\n",
            rust_ty(e),
            scalar_of(code)
        ),
    })
}

fn unstorable(g: &Gen<'_>, n: NodeId) -> crate::CodegenError {
    g.unsupported(
        n,
        format!(
            "a phase result of type {} cannot be stored by the CPU backend yet (scalars, \
             sequences of numbers at any depth, and of tuples of scalars can); project the \
             fields you need",
            g.c.node(n).ty
        ),
    )
}

/// Any other root computed whole, sequentially, by its element code: a `reduce_by_key`, a
/// `scatter`, a reduction or scan over tuples or rows, scalar code around any operator. A
/// scalar result is one element; a flat sequence is written as one row.
fn root_whole<'a>(
    g: &Gen<'a>,
    root: NodeId,
    env0: &Env<'a>,
    st: &mut PhaseCtx,
) -> R<(Shape, Elem)> {
    st.ctx.insert("outer_len", "1usize");
    let depth = st.packed.as_ref().map(|p| p.depth);
    if matches!(g.c.node(root).ty, Type::Scalar(_)) || depth == Some(0) {
        let e = storable(g, root)?;
        let elem_i = element(g, root, env0, &st.packed)?;
        st.ctx.insert("elem_i", &elem_i);
        return Ok((Shape::Flat, e));
    }
    let e = match seq_elem(&g.c.node(root).ty) {
        _ if depth == Some(1) => Elem::U64,
        Some((e, false)) if e != Elem::Bool => e,
        _ => return Err(unstorable(g, root)),
    };
    let r = g.seq(root, env0)?;
    st.ctx.insert("env_i", &lines(&r.checks));
    st.ctx.insert("row_len", &r.len);
    st.ctx.insert(
        "row_write",
        &format!(
            "            for k in 0..({}) {{\n{}            }}\n",
            r.len,
            row_element(g, r.at("k")?, e, &st.packed)?
        ),
    );
    Ok((Shape::Nested, e))
}

/// A root `scan`: one outer element, a row written by the scan loop.
fn root_scan<'a>(g: &Gen<'a>, root: NodeId, env0: &Env<'a>, st: &mut PhaseCtx) -> R<(Shape, Elem)> {
    let e = match (&st.packed, seq_elem(&g.c.node(root).ty)) {
        (Some(_), _) => Elem::U64,
        (None, Some((e, false))) => e,
        _ => panic!("internal: a root scan of {}", g.c.node(root).ty),
    };
    st.ctx.insert("outer_len", "1usize");
    inner_reduce_scan(g, root, env0, None, st)?;
    // The row is the loop `inner_reduce_scan` wrote over its evaluation of the input: its checks
    // and length, not a second evaluation's, whose locals (a split's tile size, a transpose's
    // width, a tile subslice) have other names (found by the random programs: rustc errors).
    let text = |k: &str| {
        st.ctx
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("internal: `{k}` set by inner_reduce_scan"))
    };
    let (checks, len) = (text("inner_checks"), text("inner_len"));
    st.ctx.insert("env_i", &checks);
    st.ctx.insert("row_len", &len);
    st.ctx.insert("row_write", &seq_writer(&st.ctx)?);
    Ok((Shape::Nested, e))
}

/// Any other root (a `map`, or a sequence producer): one result element or row per outer
/// element `i`.
fn root_map<'a>(g: &Gen<'a>, phase: &Phase, env0: &Env<'a>, st: &mut PhaseCtx) -> R<(Shape, Elem)> {
    let root = phase.root;
    let node = g.c.node(root);
    if let Some(depth) = deep_levels(&node.ty) {
        return super::deep::root_deep(g, phase, env0, st, depth)?
            .ok_or_else(|| unstorable(g, root));
    }
    let Some((e, nested)) = (match &st.packed {
        Some(p) => Some((Elem::U64, p.depth == 2)),
        None => seq_elem(&node.ty).filter(|(e, _)| *e != Elem::Bool),
    }) else {
        return Err(unstorable(g, root));
    };
    if nested && super::keyed_rows::root_keyed_rows(g, root, e, env0, st)? {
        return Ok((Shape::Nested, e));
    }
    st.specialize = !nested && st.packed.is_none();
    let (len, map, elem_i) = element_i(g, root, env0, st)?;
    st.specialize = false;
    st.ctx.insert("outer_len", &len);
    let level2 = phase.levels.get(1).map(|l| l.node);
    if let (Some((body, env_i)), Some(l2)) = (&map, level2) {
        inner_level(g, l2, *body, env_i, nested, e, st)?;
    }
    if nested {
        write_rows(g, &map, elem_i, e, st)?;
    } else {
        let elem_i = match &st.packed {
            Some(p) => g.pack(elem_i, p)?,
            None => scalar_of(elem_i),
        };
        if let Some((width, widths)) = super::spec::dispatch(&st.spec_tiles, &elem_i) {
            st.ctx.insert("spec", &width);
            st.ctx.insert("spec_widths", &widths);
        }
        st.ctx.insert("elem_i", &elem_i);
    }
    Ok((if nested { Shape::Nested } else { Shape::Flat }, e))
}

/// A root's length, its map's body and element environment (for a root map), and the code of
/// its element `i`.
pub(super) type ElementI<'a> = (String, Option<(NodeId, Env<'a>)>, Code<'a>);

/// Element `i` of a root sequence: a root map's body with its parameters bound to its inputs'
/// elements, or the root sequence's element. The checks (`st.pre`) run once per call, before
/// the elements; they may bind names the elements read (a transpose's row count, a materialized
/// input).
pub(super) fn element_i<'a>(
    g: &Gen<'a>,
    root: NodeId,
    env0: &Env<'a>,
    st: &mut PhaseCtx,
) -> R<ElementI<'a>> {
    Ok(match &g.c.node(root).op {
        Op::Map { f, inputs } => {
            let (ins, checks) = g.equal_inputs(root, inputs, env0)?;
            st.pre = checks;
            let binds = f
                .params
                .iter()
                .zip(&ins)
                .map(|(p, s)| Ok((*p, s.at("i")?)))
                .collect::<R<Vec<_>>>()?;
            let env_i = bind(env0, binds);
            let elem_i = if st.specialize {
                let (e, tiles) = g.specializing(|| g.eval(f.body, &env_i));
                st.spec_tiles = tiles;
                e?
            } else {
                g.eval(f.body, &env_i)?
            };
            (ins[0].len.clone(), Some((f.body, env_i)), elem_i)
        }
        _ => {
            let r = g.seq(root, env0)?;
            st.pre = r.checks.clone();
            (r.len.clone(), None, r.at("i")?)
        }
    })
}

/// The inner level `l2` of a root map with body `body`: a reduce of a flat result, or a scan or
/// element-wise map that is the body of a nested one (anything else stays sequential).
fn inner_level<'a>(
    g: &Gen<'a>,
    l2: NodeId,
    body: NodeId,
    env_i: &Env<'a>,
    nested: bool,
    e: Elem,
    st: &mut PhaseCtx,
) -> R<()> {
    let item = fold_item(g, l2);
    match &g.c.node(l2).op {
        Op::Reduce { .. } if !slot_acc(item.as_ref()) => {}
        Op::Scan { .. } if !scan_rows(item.as_ref(), &st.packed, 2) => {}
        // Rows of tuples are written by a scan only (an inner map's chunks write numbers).
        _ if nested && st.packed.is_some() && !matches!(g.c.node(l2).op, Op::Scan { .. }) => {}
        Op::Reduce { .. } if !nested => {
            inner_reduce_scan(g, l2, env_i, Some(body), st)?;
        }
        Op::Scan { .. } if nested && body == l2 => {
            inner_reduce_scan(g, l2, env_i, None, st)?;
        }
        Op::Map { .. } if nested && body == l2 => {
            let s = g.seq(l2, env_i)?;
            st.ctx.insert("inner_checks", &lines(&s.checks));
            st.ctx.insert("inner_len", &s.len);
            st.ctx.insert("acc", rust_ty(e));
            st.ctx.insert(
                "chunk_body",
                &format!(
                    "        let _ = (has_carry, carry);\n        for k in lo..hi {{\n            let v: {} = {};\n            unsafe {{ *row.add(k) = v }};\n        }}\n",
                    rust_ty(e),
                    scalar_of(s.at("k")?)
                ),
            );
            st.inner = Some(Inner::Map);
            st.acc = Some(e);
        }
        _ => {}
    }
    Ok(())
}

/// The row writer of a nested result: a row produced by a scan is written by the scan loop; any
/// other row is copied element by element from its lazy code.
fn write_rows<'a>(
    g: &Gen<'a>,
    map: &Option<(NodeId, Env<'a>)>,
    row: Code<'a>,
    e: Elem,
    st: &mut PhaseCtx,
) -> R<()> {
    match map {
        // A scan computed here (not an earlier phase's result, which is copied like any row).
        Some((body, env_i))
            if matches!(g.c.node(*body).op, Op::Scan { .. })
                && scan_rows(fold_item(g, *body).as_ref(), &st.packed, 2)
                && !env_i.contains_key(body) =>
        {
            if st.inner != Some(Inner::Scan) {
                inner_reduce_scan(g, *body, env_i, None, st)?;
            }
            let sc = scan_input(g, *body, env_i)?;
            st.ctx.insert("env_i", &lines(&sc.checks));
            st.ctx.insert("row_len", &sc.len);
            st.ctx.insert("row_write", &seq_writer(&st.ctx)?);
        }
        _ => {
            let Code::Seq(row) = row else {
                panic!("internal: nested row is not a sequence")
            };
            st.ctx.insert("env_i", &lines(&row.checks));
            st.ctx.insert("row_len", &row.len);
            st.ctx.insert(
                "row_write",
                &format!(
                    "            for k in 0..({}) {{\n{}            }}\n",
                    row.len,
                    row_element(g, row.at("k")?, e, &st.packed)?
                ),
            );
        }
    }
    Ok(())
}

/// The input sequence of a scan node.
fn scan_input<'a>(g: &Gen<'a>, scan: NodeId, env: &Env<'a>) -> R<Rc<SeqCode<'a>>> {
    match &g.c.node(scan).op {
        Op::Scan { input, .. } => g.seq(*input, env),
        _ => panic!("internal: {scan} is not a scan"),
    }
}

/// The whole row written by the chunk body, as a sequential loop.
fn seq_writer(ctx: &tera::Context) -> R<String> {
    let body = ctx
        .get("chunk_body")
        .and_then(|v| v.as_str())
        .expect("chunk body set before the writer")
        .to_string();
    let acc = ctx
        .get("acc")
        .and_then(|v| v.as_str())
        .expect("accumulator type set")
        .to_string();
    let len = ctx
        .get("inner_len")
        .and_then(|v| v.as_str())
        .expect("inner length set")
        .to_string();
    Ok(format!(
        "            {{\n            let lo = 0usize;\n            let hi: usize = {len};\n            let has_carry = 0u8;\n            let carry: *const {acc} = std::ptr::null();\n{body}\n            }}\n"
    ))
}
