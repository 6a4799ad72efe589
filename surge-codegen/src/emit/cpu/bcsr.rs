//! The register-blocked layout (`layout1 = bcsr_<r>_<c>`): a phase of the blocked SpMV form
//! (`analysis::BlockedPattern`) also exports `bcsr<r>x<c>` per block shape of the space, its
//! kernel over block rows of r rows stored as r×c blocks (see `README.md`; the host inspector is
//! `surge-cpu/src/native/bcsr.rs`).

use super::code::{Env, Gen, R, rust_ty};
use super::render;
use crate::analysis::{BlockedPattern, DiagonalPattern, blocked_pattern};
use crate::ir::Op;
use crate::policy::bcsr::BCSR_SHAPES;
use serde::Serialize;

const BCSR: &str = include_str!("../../../templates/cpu/bcsr.rs.tera");

/// One block shape, as the template reads it.
#[derive(Serialize)]
struct Shape {
    r: usize,
    c: usize,
}

/// The phase's `bcsr<r>x<c>` functions, rendered over the phase's context `ctx` (its prefix,
/// prelude and element type), and the blocked form they compute; nothing when the phase does not
/// have that form. Each row's products and sums are the IR's own lambdas applied to a block's
/// value and the gathered value, in the IR's operand order, so every stored element is folded as
/// `elems` folds it.
pub(super) fn emit_bcsr<'a>(
    g: &Gen<'a>,
    pat: Option<&DiagonalPattern>,
    env: &Env<'a>,
    ctx: &tera::Context,
) -> R<(String, Option<BlockedPattern>)> {
    let Some((pat, blocked)) = pat.and_then(|p| Some((p, blocked_pattern(g.c, p)?))) else {
        return Ok((String::new(), None));
    };
    let c = g.c;
    let Op::Reduce {
        op,
        prefix: Some(prefix),
        ..
    } = &c.node(pat.reduce).op
    else {
        panic!(
            "internal: blocked pattern {} without its reduce",
            pat.reduce
        );
    };
    let Op::Map { f, .. } = &c.node(blocked.products).op else {
        panic!(
            "internal: blocked pattern {} without its products",
            blocked.products
        );
    };
    let (a, b) = if blocked.values_first {
        ("v", "xv")
    } else {
        ("xv", "v")
    };
    let e = blocked.elem;
    let shapes: Vec<Shape> = BCSR_SHAPES.iter().map(|&(r, c)| Shape { r, c }).collect();
    let mut ctx = ctx.clone();
    ctx.insert("bcsr_shapes", &shapes);
    ctx.insert("bcsr_acc", rust_ty(e));
    ctx.insert("bcsr_gathered", &format!("b{}", pat.gathered));
    ctx.insert("bcsr_map_node", &pat.map.0);
    ctx.insert("bcsr_init", &g.scalar(*prefix, env)?.0);
    ctx.insert("bcsr_prod", &g.apply2(f, a, b, e, env)?);
    ctx.insert("bcsr_op", &g.apply2(op, "acc", "x", e, env)?);
    Ok((render(BCSR, &ctx)?, Some(blocked)))
}
