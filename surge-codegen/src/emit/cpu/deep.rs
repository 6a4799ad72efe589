//! Phase results nested three or more levels deep (`split(nest(x, off), 3)`, a map whose body
//! splits its row, tuples inside three levels), stored as numbers (or words, `packed.rs`) with
//! one level of offsets per level of sequences above the innermost rows, as
//! [`Output::Deep`](crate::data::Output) holds them.
//!
//! Level 1 is the result's elements (`n` of them, at positions `0..n`); the items of a level-`l`
//! sequence at position `p` are the level-`l + 1` sequences at positions `o_{l-1}[p] + j` (the
//! innermost rows' items: scalars at `data[o_{depth-2}[p] + k]`). The phase exports `lens` (the
//! level-1 lengths, as a nested phase does), `sublens(level)` (the lengths of level `level`,
//! written at their positions by the offsets of the levels above) and `deep_rows` (the innermost
//! rows). The host runs `lens`, then `sublens` level by level, turning each level's lengths into
//! offsets, then `deep_rows`; each call walks elements `lo..hi` down to its level, so elements are
//! dealt to threads as any phase's are. The offsets slot of such a phase holds a table of slots,
//! one per level.
//!
//! Why: a decomposition into storable parts (one phase for the lengths, one for the data) computes
//! the element twice and reads its errors in another order; the offsets are what the host
//! builds for two levels already, once more per level.

use super::Shape;
use super::code::{Code, Env, Gen, R, SeqCode, lines, rust_ty};
use super::packed::Packing;
use super::phase::{PhaseCtx, element_i, row_element};
use crate::analysis::Phase;
use crate::ir::{Elem, Type};
use std::rc::Rc;

/// The levels of sequences of type `t` when a phase stores it as a deep result (three or more).
pub(super) fn deep_levels(t: &Type) -> Option<usize> {
    let d = t.depth();
    (d >= 3).then_some(d)
}

/// The element stored for the innermost items of type `t` (a number, or words when `packed`).
fn stored_elem(t: &Type, packed: &Option<Packing>) -> Option<Elem> {
    let mut item = t;
    while let Type::Seq(i) = item {
        item = i;
    }
    match (packed, item) {
        (Some(_), _) => Some(Elem::U64),
        (None, Type::Scalar(e)) if *e != Elem::Bool => Some(*e),
        _ => None,
    }
}

/// The name of level `l`'s offsets in a phase's functions.
fn offs(l: usize) -> String {
    format!("deep_o{l}")
}

/// A root whose result is `depth` levels deep: `lens`, `sublens` and `deep_rows` over its
/// elements (`None` when its innermost items cannot be stored).
pub(super) fn root_deep<'a>(
    g: &Gen<'a>,
    phase: &Phase,
    env0: &Env<'a>,
    st: &mut PhaseCtx,
    depth: usize,
) -> R<Option<(Shape, Elem)>> {
    let Some(e) = stored_elem(&g.c.node(phase.root).ty, &st.packed) else {
        return Ok(None);
    };
    let (len, _, elem_i) = element_i(g, phase.root, env0, st)?;
    let Code::Seq(row) = elem_i else {
        panic!("internal: a deep result's element is not a sequence")
    };
    let bind_offs: Vec<String> = (0..depth - 1)
        .map(|l| format!("let {}: &[u64] = unsafe {{ slot(offs, {l}) }};", offs(l)))
        .collect();
    let ctx = &mut st.ctx;
    ctx.insert("outer_len", &len);
    ctx.insert("env_i", &lines(&row.checks));
    ctx.insert("deep_checks", &check_walk(g, &row, 1, depth - 1)?);
    ctx.insert("row_len", &row.len);
    ctx.insert("deep_offsets", &lines(&bind_offs));
    ctx.insert("sublens_body", &sublens(g, &row, depth)?);
    ctx.insert("row_write", &rows(g, &row, depth, e, &st.packed)?);
    Ok(Some((Shape::Deep { depth }, e)))
}

/// The body of `sublens` for element `i` (`row`): per level below the first, its sequences'
/// lengths written at their positions.
fn sublens<'a>(g: &Gen<'a>, row: &Rc<SeqCode<'a>>, depth: usize) -> R<String> {
    let write = |s: &SeqCode<'a>, p: &str| {
        Ok(format!(
            "unsafe {{ *out.add({p}) = ({}) as u64 }};\n",
            s.len
        ))
    };
    let mut body = String::new();
    for level in 2..depth {
        let walked = walk(g, row, "i", 1, level, &write)?;
        body.push_str(&format!(
            "            if level == {level} {{\n{walked}            }}\n"
        ));
    }
    Ok(body)
}

/// The body of `deep_rows` for element `i` (`row`): each innermost row's items written at its
/// offset (elements of `e`, or their words when `packed`).
fn rows<'a>(
    g: &Gen<'a>,
    row: &Rc<SeqCode<'a>>,
    depth: usize,
    e: Elem,
    packed: &Option<Packing>,
) -> R<String> {
    let w = packed.as_ref().map_or(1, Packing::width);
    let write = |s: &SeqCode<'a>, p: &str| {
        let elem = row_element(g, s.at("k")?, e, packed)?;
        Ok(format!(
            "let row: *mut {} = unsafe {{ data.add({}[{p}] as usize * {w}) }};\nfor k in 0..({}) {{\n{elem}}}\n",
            rust_ty(e),
            offs(depth - 2),
            s.len
        ))
    };
    walk(g, row, "i", 1, depth - 1, &write)
}

/// Statements running the checks of every sequence inside `seq` (a level-`level` sequence whose
/// checks have run) down to level `last`, in order: `lens` runs them, so an element's errors at
/// any level come before the next element's, as the interpreter finds them (a bad tile size of
/// element 1 does not hide a zip of unequal rows in element 0). Empty when nothing is checked.
fn check_walk<'a>(g: &Gen<'a>, seq: &Rc<SeqCode<'a>>, level: usize, last: usize) -> R<String> {
    if level == last {
        return Ok(String::new());
    }
    let j = g.name("dj");
    let Code::Seq(item) = seq.at(&j)? else {
        panic!("internal: an item of a deep result's level {level} is not a sequence")
    };
    let inner = check_walk(g, &item, level + 1, last)?;
    if item.checks.is_empty() && inner.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(
        "for {j} in 0..({}) {{\n{}\n{inner}}}\n",
        seq.len,
        lines(&item.checks)
    ))
}

/// Statements visiting the level-`target` sequences inside `seq`, a level-`level` sequence at
/// position `pos` whose checks have run: each item's checks, then `leaf` on each sequence of
/// the target level with its position.
fn walk<'a>(
    g: &Gen<'a>,
    seq: &Rc<SeqCode<'a>>,
    pos: &str,
    level: usize,
    target: usize,
    leaf: &dyn Fn(&SeqCode<'a>, &str) -> R<String>,
) -> R<String> {
    if level == target {
        return leaf(seq, pos);
    }
    let (j, q) = (g.name("dj"), g.name("dq"));
    let Code::Seq(item) = seq.at(&j)? else {
        panic!("internal: an item of a deep result's level {level} is not a sequence")
    };
    let inner = walk(g, &item, &q, level + 1, target, leaf)?;
    Ok(format!(
        "for {j} in 0..({}) {{\nlet {q}: usize = {}[{pos}] as usize + {j};\n{}\n{inner}}}\n",
        seq.len,
        offs(level - 1),
        lines(&item.checks)
    ))
}

/// Element code reading an earlier deep phase result: data `data`, the offsets of each level
/// `offsets` (outermost first), and `leaf`, the code of the item at a data position.
pub(super) fn reader<'a>(
    offsets: Rc<Vec<String>>,
    leaf: Rc<dyn Fn(&str) -> Code<'a> + 'a>,
) -> Code<'a> {
    let o0 = offsets[0].clone();
    Code::Seq(Rc::new(SeqCode {
        slice: None,
        len: format!("({o0}.len() - 1)"),
        checks: vec![],
        elem: Box::new(move |i| Ok(level_seq(offsets.clone(), leaf.clone(), 1, i.to_string()))),
    }))
}

/// The level-`l` sequence at position `pos` of a deep phase result (see [`reader`]).
fn level_seq<'a>(
    offsets: Rc<Vec<String>>,
    leaf: Rc<dyn Fn(&str) -> Code<'a> + 'a>,
    l: usize,
    pos: String,
) -> Code<'a> {
    let o = offsets[l - 1].clone();
    let last = l == offsets.len();
    Code::Seq(Rc::new(SeqCode {
        slice: None,
        len: format!("(({o}[({pos}) + 1] - {o}[{pos}]) as usize)"),
        checks: vec![],
        elem: Box::new(move |j| {
            let p = format!("({o}[{pos}] as usize + ({j}))");
            Ok(if last {
                leaf(&p)
            } else {
                level_seq(offsets.clone(), leaf.clone(), l + 1, p)
            })
        }),
    }))
}

/// The prelude binding an earlier deep phase's data and offsets (slot `s`, its table of offsets
/// slots in `s + 1`), and its reader.
pub(super) fn phase_reader<'a>(
    k: usize,
    s: usize,
    t: &Type,
    packed: Option<&Packing>,
) -> Option<(String, Code<'a>)> {
    let depth = deep_levels(t)?;
    let e = stored_elem(t, &packed.cloned())?;
    let d = format!("p{k}");
    let mut prelude = format!(
        "        let {d}: &[{}] = unsafe {{ slot(bufs, {s}) }};\n        let {d}_offs: &[Buf] = unsafe {{ slot(bufs, {}) }};\n",
        rust_ty(e),
        s + 1
    );
    let names: Vec<String> = (0..depth - 1).map(|l| format!("{d}_o{l}")).collect();
    for (l, o) in names.iter().enumerate() {
        prelude.push_str(&format!(
            "        let {o}: &[u64] = unsafe {{ slot({d}_offs.as_ptr(), {l}) }};\n"
        ));
    }
    let leaf: Rc<dyn Fn(&str) -> Code<'a> + 'a> = match packed {
        Some(p) => {
            let p = p.clone();
            Rc::new(move |pos| super::packed::unpack_at(&d, pos, &p))
        }
        None => Rc::new(move |pos| Code::Scalar(format!("{d}[{pos}]"), e)),
    };
    Some((prelude, reader(Rc::new(names), leaf)))
}
