//! The CPU emitter: Rust source for the variants of a computation, compiled by `rustc` into one
//! `cdylib` in `surge-cpu` and driven there by rayon skeletons. See `README.md` here.

mod code;
mod scalar;

use crate::CodegenError;
use crate::analysis::{Analysis, DiagonalPattern, Phase};
use crate::ir::{Computation, Elem, NodeId, Op, OpKind, Type};
use crate::policy::PValue;
use crate::variant::Variant;
use code::{Code, Env, Gen, R, SeqCode, bind, rust_ty, scalar_of};
use serde::Serialize;
use std::collections::HashMap;
use std::rc::Rc;

const RUNTIME: &str = include_str!("../../../templates/cpu/runtime.rs");
const PHASE: &str = include_str!("../../../templates/cpu/phase.rs.tera");
const PROGRAM: &str = include_str!("../../../templates/cpu/program.rs.tera");

/// How a phase's result is laid out in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// One scalar per outer element (`elems`).
    Flat,
    /// One sequence per outer element, stored flat with offsets (`lens`, then `rows`).
    Nested,
}

/// What the cooperative inner level of a phase is, when the skeleton can run it in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Inner {
    /// `partial`/`combine` over chunks, then `finish`.
    Reduce,
    /// `partial`/`combine` over chunks, then `chunk` with the carried prefix (two-pass scan).
    Scan,
    /// `chunk` over disjoint ranges of the row.
    Map,
}

/// The host-side contract of one phase's exported functions (`m<k>_p<phase>_<fn>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseAbi {
    pub root: NodeId,
    pub expression_sequence: String,
    pub shape: Shape,
    /// Element type of the output.
    pub elem: Elem,
    /// The root is itself a `reduce` (result: a scalar) or `scan` (result: one flat sequence):
    /// there is one outer element, and schedule level 1 is the inner level.
    pub whole: bool,
    pub inner: Option<Inner>,
    /// Accumulator type of the inner reduce/scan.
    pub acc: Option<Elem>,
    /// Set when the phase also exports `diag`, its kernel over blocks of diagonally stored rows.
    pub diagonal: Option<DiagonalPattern>,
}

/// One compiled module: the functions shared by every variant with the same code-shaping
/// parameters (the `unroll<d>` flags; thread counts and loop schedules live in the host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Module {
    pub index: usize,
    pub variants: Vec<String>,
    /// 1-based, inclusive line range of the module in the source.
    pub lines: (usize, usize),
}

/// The emitted program for a computation and a set of CPU variants.
#[derive(Debug, Clone, Serialize)]
pub struct CpuProgram {
    pub source: String,
    pub modules: Vec<Module>,
    pub phases: Vec<PhaseAbi>,
    /// Buffer slots: the inputs, then (data, offsets) per phase.
    pub slots: usize,
}

impl CpuProgram {
    /// The module implementing `variant_id`.
    pub fn module_of(&self, variant_id: &str) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.variants.iter().any(|v| v == variant_id))
    }
    /// Variant ids of the modules whose lines contain `line`.
    pub fn variants_at_line(&self, line: usize) -> Vec<String> {
        self.modules
            .iter()
            .filter(|m| m.lines.0 <= line && line <= m.lines.1)
            .flat_map(|m| m.variants.clone())
            .collect()
    }
}

/// Slot of phase `k`'s data (its offsets follow).
pub fn phase_slot(inputs: usize, k: usize) -> usize {
    inputs + 2 * k
}

/// Test hook: emit `poison` (a deliberately undefined template variable) into the module of one
/// variant, so a test can check that compile errors name the variant.
#[derive(Debug, Clone, Default)]
pub struct EmitOptions {
    pub poison_variant: Option<String>,
}

/// Emits the program for `variants` (CPU variants of `c`'s phases).
pub fn emit(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Variant],
    options: &EmitOptions,
) -> Result<CpuProgram, CodegenError> {
    // Group variants by their code-shaping parameters.
    let mut keys: Vec<(Vec<bool>, Vec<String>)> = Vec::new();
    for v in variants {
        if !matches!(v.platform, crate::target::Platform::Cpu(_)) {
            return Err(CodegenError::Variant {
                id: v.id(),
                message: "not a CPU variant".into(),
            });
        }
        let key: Vec<bool> = (1..=4)
            .map(|d| v.get(&format!("unroll{d}")) == Some(&PValue::Int(1)))
            .collect();
        match keys.iter_mut().find(|k| k.0 == key) {
            Some(k) => k.1.push(v.id()),
            None => keys.push((key, vec![v.id()])),
        }
    }
    if keys.is_empty() {
        // Still emit one module so the phase ABI is known.
        keys.push((vec![false; 4], vec![]));
    }
    let inputs = c.inputs.len();
    let mut modules_src = Vec::new();
    let mut phases_abi = Vec::new();
    for (mi, (key, ids)) in keys.iter().enumerate() {
        let mut src = String::new();
        for (pi, phase) in analysis.phases.iter().enumerate() {
            let unroll: HashMap<NodeId, bool> = phase
                .levels
                .iter()
                .enumerate()
                .map(|(d, l)| (l.node, key.get(d).copied().unwrap_or(false)))
                .collect();
            let g = Gen::new(c, unroll);
            let (text, abi) =
                emit_phase(&g, analysis, pi, phase, inputs, &format!("m{mi}_p{pi}_"))?;
            src.push_str(&text);
            if mi == 0 {
                phases_abi.push(abi);
            }
        }
        if options
            .poison_variant
            .as_ref()
            .is_some_and(|p| ids.contains(p))
        {
            src.push_str("\nconst POISON: f64 = surge_undefined_template_variable;\n");
        }
        modules_src.push((mi, ids.clone(), src));
    }
    let mut ctx = tera::Context::new();
    ctx.insert("hash", &format!("{:032x}", c.structure_hash()));
    ctx.insert("runtime", RUNTIME);
    let ms: Vec<serde_json::Value> = modules_src
        .iter()
        .map(|(i, ids, src)| serde_json::json!({"index": i, "variants": ids, "code": src}))
        .collect();
    ctx.insert("modules", &ms);
    ctx.insert(
        "sequences",
        &analysis
            .phases
            .iter()
            .map(Phase::expression_sequence)
            .collect::<Vec<_>>(),
    );
    let source = render(PROGRAM, &ctx)?;
    // Module line ranges, from the markers the template writes.
    let lines: Vec<&str> = source.lines().collect();
    let mut modules = Vec::new();
    for (mi, ids, _) in &modules_src {
        let marker = format!("// ---- module m{mi} ----");
        let start = lines.iter().position(|l| *l == marker).map_or(0, |p| p + 1);
        let end_marker = format!("// ---- end of module m{mi} ----");
        let end = lines
            .iter()
            .position(|l| *l == end_marker)
            .map_or(lines.len(), |p| p + 1);
        modules.push(Module {
            index: *mi,
            variants: ids.clone(),
            lines: (start, end),
        });
    }
    Ok(CpuProgram {
        source,
        modules,
        phases: phases_abi,
        slots: inputs + 2 * analysis.phases.len(),
    })
}

fn render(template: &str, ctx: &tera::Context) -> R<String> {
    tera::Tera::one_off(template, ctx, false).map_err(|e| {
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            msg.push_str(&format!(": {s}"));
            src = s.source();
        }
        CodegenError::Emit {
            backend: "cpu",
            op: "template",
            node: NodeId(0),
            message: msg,
        }
    })
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

/// How earlier phases' results are read: materialized buffers in their slots.
fn phase_outputs<'a>(
    g: &Gen<'a>,
    analysis: &Analysis,
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
    (Rc::new(env), prelude)
}

fn lines(stmts: &[String]) -> String {
    stmts
        .iter()
        .map(|s| format!("        {s}\n"))
        .collect::<String>()
}

/// Emits one phase's functions.
fn emit_phase<'a>(
    g: &Gen<'a>,
    analysis: &Analysis,
    pi: usize,
    phase: &Phase,
    inputs: usize,
    prefix: &str,
) -> R<(String, PhaseAbi)> {
    let c = g.c;
    let (env0, prelude) = phase_outputs(g, analysis, pi, inputs);
    let root = phase.root;
    let node = c.node(root);
    let mut ctx = tera::Context::new();
    ctx.insert("p", prefix);
    ctx.insert("phase", &pi);
    ctx.insert("sequence", &phase.expression_sequence());
    ctx.insert("prelude", &prelude);
    ctx.insert("env_i", "");
    let mut inner: Option<Inner> = None;
    let mut acc: Option<Elem> = None;
    let whole = matches!(node.op, Op::Reduce { .. } | Op::Scan { .. });

    // The inner level as (level node, its input sequence, element environment).
    let (shape, elem) = match &node.op {
        Op::Reduce { .. } => {
            let Type::Scalar(e) = node.ty else {
                return Err(g.unsupported(root, "reductions over tuples are not emitted yet"));
            };
            ctx.insert("outer_len", "1usize");
            ctx.insert("elem_i", &scalar_of(g.eval(root, &env0)?));
            inner_reduce_scan(g, root, &env0, None, &mut ctx, &mut inner, &mut acc)?;
            (Shape::Flat, e)
        }
        Op::Scan { .. } => {
            let Some((e, false)) = seq_elem(&node.ty) else {
                return Err(g.unsupported(root, "scans over tuples are not emitted yet"));
            };
            ctx.insert("outer_len", "1usize");
            inner_reduce_scan(g, root, &env0, None, &mut ctx, &mut inner, &mut acc)?;
            let sc: Rc<SeqCode<'a>> = scan_input(g, root, &env0)?;
            ctx.insert("env_i", &lines(&sc.checks));
            ctx.insert("row_len", &sc.len);
            ctx.insert("row_write", &seq_writer(&ctx)?);
            (Shape::Nested, e)
        }
        _ => {
            let Some((e, nested)) = seq_elem(&node.ty) else {
                return Err(g.unsupported(
                    root,
                    "the CPU backend emits phases whose result is a scalar, a flat sequence or a sequence of flat sequences; this one has tuples",
                ));
            };
            let r = g.seq(root, &env0)?;
            ctx.insert(
                "outer_len",
                &format!("{{\n{}        {}\n        }}", lines(&r.checks), r.len),
            );
            // Element i's environment: the root map's parameters bound to its inputs' elements.
            let map = match &node.op {
                Op::Map { f, inputs: ins } => {
                    let binds = f
                        .params
                        .iter()
                        .zip(ins)
                        .map(|(p, s)| Ok((*p, g.seq(*s, &env0)?.at("i")?)))
                        .collect::<R<Vec<_>>>()?;
                    Some((f.body, bind(&env0, binds)))
                }
                _ => None,
            };
            let level2 = phase.levels.get(1).map(|l| l.node);
            if let (Some((body, env_i)), Some(l2)) = (&map, level2) {
                {
                    let l2op = &c.node(l2).op;
                    match l2op {
                        Op::Reduce { .. } if !nested => {
                            inner_reduce_scan(
                                g,
                                l2,
                                env_i,
                                Some(*body),
                                &mut ctx,
                                &mut inner,
                                &mut acc,
                            )?;
                        }
                        Op::Scan { .. } if nested && *body == l2 => {
                            inner_reduce_scan(g, l2, env_i, None, &mut ctx, &mut inner, &mut acc)?;
                        }
                        Op::Map { .. } if nested && *body == l2 => {
                            let s = g.seq(l2, env_i)?;
                            ctx.insert("inner_checks", &lines(&s.checks));
                            ctx.insert("inner_len", &s.len);
                            ctx.insert("acc", rust_ty(e));
                            ctx.insert(
                                "chunk_body",
                                &format!(
                                    "        let _ = (has_carry, carry);\n        for k in lo..hi {{\n            let v: {} = {};\n            unsafe {{ *row.add(k) = v }};\n        }}\n",
                                    rust_ty(e),
                                    scalar_of(s.at("k")?)
                                ),
                            );
                            inner = Some(Inner::Map);
                            acc = Some(e);
                        }
                        _ => {}
                    }
                }
            }
            if nested {
                // A row produced by a scan is written by the scan loop; any other row is copied
                // element by element from its lazy code.
                match &map {
                    Some((body, env_i)) if matches!(c.node(*body).op, Op::Scan { .. }) => {
                        if inner != Some(Inner::Scan) {
                            inner_reduce_scan(
                                g, *body, env_i, None, &mut ctx, &mut inner, &mut acc,
                            )?;
                        }
                        let sc = scan_input(g, *body, env_i)?;
                        ctx.insert("env_i", &lines(&sc.checks));
                        ctx.insert("row_len", &sc.len);
                        ctx.insert("row_write", &seq_writer(&ctx)?);
                    }
                    _ => {
                        let Code::Seq(row) = r.at("i")? else {
                            panic!("internal: nested row is not a sequence")
                        };
                        ctx.insert("env_i", &lines(&row.checks));
                        ctx.insert("row_len", &row.len);
                        ctx.insert(
                            "row_write",
                            &format!(
                                "            for k in 0..({}) {{\n                let v: {} = {};\n                unsafe {{ *row.add(k) = v }};\n            }}\n",
                                row.len,
                                rust_ty(e),
                                scalar_of(row.at("k")?)
                            ),
                        );
                    }
                }
            } else {
                ctx.insert("elem_i", &scalar_of(r.at("i")?));
            }
            (if nested { Shape::Nested } else { Shape::Flat }, e)
        }
    };
    if elem == Elem::Bool {
        return Err(g.unsupported(
            root,
            "a phase result of booleans cannot be stored; cast it to an integer type",
        ));
    }
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
        },
    );
    ctx.insert(
        "inner",
        &inner.map(|i| match i {
            Inner::Reduce => "reduce",
            Inner::Scan => "scan",
            Inner::Map => "map",
        }),
    );
    let text = render(PHASE, &ctx)?;
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
        },
    ))
}

/// Fills the template variables of the phase's `diag` function: the map's rows bound to one row
/// of a diagonal block (`i` the row, `q` the block, `k` the diagonal), the reduce unrolled over
/// the block's rows so that each diagonal is a contiguous, vectorizable pass.
fn emit_diagonal<'a>(
    g: &Gen<'a>,
    pat: &DiagonalPattern,
    env0: &Env<'a>,
    ctx: &mut tera::Context,
) -> R<()> {
    let c = g.c;
    let Op::Reduce { op, input, prefix } = &c.node(pat.reduce).op else {
        panic!(
            "internal: diagonal pattern {} without its reduce",
            pat.reduce
        );
    };
    let Type::Scalar(a) = c.node(pat.reduce).ty else {
        panic!("internal: diagonal reduce {} is not scalar", pat.reduce);
    };
    // Per diagonal `k` of block `q`: a checked window of 64 elements of every diagonal-major
    // input and of the gathered input, so the row loop has no checks and vectorizes.
    let mut decls = String::new();
    let mut windows = String::new();
    let mut binds = Vec::new();
    let mut slot = 1;
    for (j, row) in pat.rows.iter().enumerate() {
        let ty = rust_ty(row.elem);
        let elem = row.elem;
        let code = if j == pat.index {
            Code::Seq(Rc::new(SeqCode {
                slice: None,
                len: "nd".into(),
                checks: vec![],
                elem: Box::new(move |k| {
                    Ok(Code::Scalar(
                        format!("((i as i64 + doffs[{k}]) as {ty})"),
                        elem,
                    ))
                }),
            }))
        } else {
            decls.push_str(&format!(
                "        let dv{j}: &[{ty}] = unsafe {{ slot(dia, {slot}) }};\n"
            ));
            windows.push_str(&format!(
                "let vk{j}: &[{ty}; DIAG_BLOCK] = diag_window(dv{j}, ((q * nd + k) * DIAG_BLOCK) as i64, \"map\", {});\nprefetch_ahead(dv{j}, (q * nd + k) * DIAG_BLOCK);\n",
                pat.map.0
            ));
            slot += 1;
            Code::Seq(Rc::new(SeqCode {
                slice: None,
                len: "nd".into(),
                checks: vec![],
                elem: Box::new(move |_| Ok(Code::Scalar(format!("vk{j}[r]"), elem))),
            }))
        };
        binds.push((row.param, code));
    }
    let Some(xe) = g.c.inputs.get(pat.gathered).map(|d| d.elem) else {
        panic!("internal: diagonal pattern gathers from a missing input");
    };
    windows.push_str(&format!(
        "let xk: &[{}; DIAG_BLOCK] = diag_window(b{}, base as i64 + doffs[k], \"gather\", {});\n",
        rust_ty(xe),
        pat.gathered,
        pat.gather.0
    ));
    binds.push((
        pat.gather,
        Code::Seq(Rc::new(SeqCode {
            slice: None,
            len: "nd".into(),
            checks: vec![],
            elem: Box::new(move |_| Ok(Code::Scalar("xk[r]".into(), xe))),
        })),
    ));
    let env = bind(env0, binds);
    let s = g.seq(*input, &env)?;
    let ty = rust_ty(a);
    let (init, start) = match prefix {
        Some(p) => (g.scalar(*p, &env)?.0, "0"),
        None => (
            format!(
                "{{ let k: usize = 0;\n{windows}{} }}",
                scalar_of(s.at("k")?)
            ),
            "1",
        ),
    };
    ctx.insert("diag_windows", &windows);
    ctx.insert("diag_gathered", &format!("b{}", pat.gathered));
    ctx.insert("diag_acc", ty);
    ctx.insert("diag_rows", &decls);
    ctx.insert("diag_checks", &lines(&s.checks));
    ctx.insert("diag_init", &init);
    ctx.insert("diag_start", start);
    ctx.insert("diag_at_k", &scalar_of(s.at("k")?));
    ctx.insert("diag_op", &g.apply2(op, "acc", "x", a, &env)?);
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

/// Fills the template variables of a cooperative reduce or scan level `l` (element environment
/// `env_i`); `body` is the enclosing map's body for a reduce (`finish` binds the level to the
/// reduced value and evaluates it).
fn inner_reduce_scan<'a>(
    g: &Gen<'a>,
    l: NodeId,
    env_i: &Env<'a>,
    body: Option<NodeId>,
    ctx: &mut tera::Context,
    inner: &mut Option<Inner>,
    acc: &mut Option<Elem>,
) -> R<()> {
    let c = g.c;
    let (op, input, prefix, is_scan) = match &c.node(l).op {
        Op::Reduce { op, input, prefix } => (op, *input, *prefix, false),
        Op::Scan { op, input, prefix } => (op, *input, *prefix, true),
        _ => panic!("internal: {l} is neither a reduce nor a scan"),
    };
    let Some((a, _)) = seq_elem(&c.node(input).ty) else {
        return Err(g.unsupported(l, "reductions and scans over tuples are not emitted yet"));
    };
    let s = g.seq(input, env_i)?;
    let ty = rust_ty(a);
    ctx.insert("acc", ty);
    ctx.insert("inner_checks", &lines(&s.checks));
    ctx.insert("inner_len", &s.len);
    ctx.insert("inner_at_lo", &scalar_of(s.at("lo")?));
    ctx.insert("inner_at_k", &scalar_of(s.at("k")?));
    let op_acc_x = g.apply2(op, "acc", "x", a, env_i)?;
    ctx.insert("op_acc_x", &op_acc_x);
    let pfx = match prefix {
        Some(p) => Some(g.scalar(p, env_i)?.0),
        None => None,
    };
    if is_scan {
        let n = &s.len;
        let x_k = scalar_of(s.at("k")?);
        let chunk = match &pfx {
            Some(p) => format!(
                "        let n: usize = {n};\n        let pfx: {ty} = {p};\n        let mut acc: {ty} = if has_carry != 0 {{\n            let x: {ty} = unsafe {{ *carry }};\n            let acc: {ty} = pfx;\n            {op_acc_x}\n        }} else {{\n            pfx\n        }};\n        for k in lo..hi {{\n            unsafe {{ *row.add(k) = acc }};\n            if k + 1 < n {{\n                let x: {ty} = {x_k};\n                acc = {op_acc_x};\n            }}\n        }}\n"
            ),
            None => format!(
                "        let mut prev: Option<{ty}> = if has_carry != 0 {{ Some(unsafe {{ *carry }}) }} else {{ None }};\n        for k in lo..hi {{\n            let x: {ty} = {x_k};\n            let v: {ty} = match prev {{\n                Some(acc) => {op_acc_x},\n                None => x,\n            }};\n            unsafe {{ *row.add(k) = v }};\n            prev = Some(v);\n        }}\n"
            ),
        };
        ctx.insert("chunk_body", &chunk);
        *inner = Some(Inner::Scan);
    } else {
        let reduced = match &pfx {
            Some(p) => format!("{{ let acc: {ty} = {p}; let x: {ty} = r; {op_acc_x} }}"),
            None => "r".to_string(),
        };
        ctx.insert("finish_reduced", &reduced);
        let value = match body {
            Some(b) => {
                let env = bind(env_i, [(l, Code::Scalar("reduced".into(), a))]);
                scalar_of(g.eval(b, &env)?)
            }
            None => "reduced".to_string(),
        };
        ctx.insert("finish_value", &value);
        *inner = Some(Inner::Reduce);
    }
    *acc = Some(a);
    let _ = OpKind::Reduce;
    Ok(())
}
