//! The SELL-C-σ layout (`layout1 = sell_<C>_<σ>`): a phase shaped like SpMV also exports
//! `sell<C>` per chunk size of the space, its kernel over chunks of C rows stored column-major
//! (see `README.md`; the host inspector is `surge-cpu/src/native/sell.rs`).

use super::code::{Code, Env, Gen, R, SeqCode, bind, lines, rust_ty, scalar_of};
use super::render;
use crate::analysis::{DiagonalPattern, blocked_pattern};
use crate::ir::{Computation, Elem, Op, Type};
use crate::policy::sell::SELL_CHUNKS;
use std::rc::Rc;

const SELL: &str = include_str!("../../../templates/cpu/sell.rs.tera");

/// The rows the explicit SIMD path of `sell<C>` reads (`templates/cpu/sell_simd.rs`).
#[derive(serde::Serialize)]
pub(super) struct Simd {
    /// Positions in the pattern's rows of the values and of the column indices.
    pub(super) values: usize,
    pub(super) index: usize,
    /// Whether the product's left operand is the value (else the gathered element).
    pub(super) values_first: bool,
    /// The `sell` slot of the one value every element has, after the nested inputs' slots
    /// (empty where the elements have several; the host's `SellLayout::iso`).
    pub(super) iso_slot: usize,
}

/// The SIMD form of `pat`: `reduce(+, map(*, values, gather(x, index)), +0.0)` over `f64`
/// values and `x` with `u32` indices (the blocked form of `analysis::blocked`, with the types
/// the SIMD gathers read); `None` for any other phase, which keeps the kernel's own loop.
pub(super) fn simd_form(c: &Computation, pat: &DiagonalPattern) -> Option<Simd> {
    let b = blocked_pattern(c, pat)?;
    (b.elem == Elem::F64 && pat.rows.get(pat.index)?.elem == Elem::U32).then_some(Simd {
        values: b.values,
        index: pat.index,
        values_first: b.values_first,
        iso_slot: 3 + pat.rows.len(),
    })
}

/// The phase's `sell<C>` functions, rendered over the phase's context `ctx` (its prefix, prelude
/// and element type), or nothing when the phase has no SpMV pattern. Every nested input, the
/// index row included, is read from the chunk's columns (`vk<j>[r]`); the gather reads the
/// gathered input at the index column without a check (the inspector stored valid positions).
pub(super) fn emit_sell<'a>(
    g: &Gen<'a>,
    pat: Option<&DiagonalPattern>,
    env0: &Env<'a>,
    ctx: &tera::Context,
) -> R<String> {
    let Some(pat) = pat else {
        return Ok(String::new());
    };
    let c = g.c;
    let Op::Reduce { op, input, prefix } = &c.node(pat.reduce).op else {
        panic!("internal: SELL pattern {} without its reduce", pat.reduce);
    };
    let Type::Scalar(a) = c.node(pat.reduce).ty else {
        panic!("internal: SELL reduce {} is not scalar", pat.reduce);
    };
    let mut decls = String::new();
    let mut spans = String::new();
    let mut windows = String::new();
    let mut binds = Vec::new();
    for (j, row) in pat.rows.iter().enumerate() {
        let ty = rust_ty(row.elem);
        let elem = row.elem;
        decls.push_str(&format!(
            "        let sv{j}: &[{ty}] = unsafe {{ slot(sell, {}) }};\n",
            j + 3
        ));
        spans.push_str(&format!(
            "            let vq{j}: &[{ty}] = sell_span(sv{j}, a, e, \"map\", {});\n",
            pat.map.0
        ));
        windows.push_str(&format!("let vk{j}: &[{ty}; C] = sell_column(vq{j}, k);\n"));
        binds.push((
            row.param,
            Code::Seq(Rc::new(SeqCode {
                slice: None,
                len: "(lq[r] as usize)".into(),
                checks: vec![],
                elem: Box::new(move |_| Ok(Code::Scalar(format!("vk{j}[r]"), elem))),
            })),
        ));
    }
    let Some(xe) = c.inputs.get(pat.gathered).map(|d| d.elem) else {
        panic!("internal: SELL pattern gathers from a missing input");
    };
    let (gathered, index) = (format!("b{}", pat.gathered), pat.index);
    let read = format!("sell_gather({gathered}, vk{index}[r] as usize, xmax)");
    binds.push((
        pat.gather,
        Code::Seq(Rc::new(SeqCode {
            slice: None,
            len: "(lq[r] as usize)".into(),
            checks: vec![],
            elem: Box::new(move |_| Ok(Code::Scalar(read.clone(), xe))),
        })),
    ));
    let env = bind(env0, binds);
    let s = g.seq(*input, &env)?;
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
    let mut ctx = ctx.clone();
    ctx.insert("chunks", &SELL_CHUNKS);
    ctx.insert("sell_rows", &decls);
    ctx.insert("sell_gathered", &gathered);
    ctx.insert("sell_gather_node", &pat.gather.0);
    ctx.insert("sell_map_node", &pat.map.0);
    ctx.insert("sell_acc", rust_ty(a));
    ctx.insert("sell_checks", &lines(&s.checks));
    ctx.insert("sell_init", &init);
    ctx.insert("sell_start", start);
    ctx.insert("sell_spans", &spans);
    ctx.insert("sell_windows", &windows);
    ctx.insert("sell_at_k", &scalar_of(s.at("k")?));
    ctx.insert("sell_op", &g.apply2(op, "acc", "x", a, &env)?);
    ctx.insert("sell_simd", &simd_form(c, pat));
    render(SELL, &ctx)
}
