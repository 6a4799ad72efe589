//! The diagonal layout (`layout1 = diagonals`): a phase shaped like SpMV also exports `diag`,
//! its kernel over blocks of 64 rows stored diagonal-major (see `README.md`).

use super::code::lines;
use super::code::{Code, Env, Gen, R, SeqCode, bind, rust_ty, scalar_of};
use crate::analysis::DiagonalPattern;
use crate::ir::{Op, Type};
use std::rc::Rc;

/// Fills the template variables of the phase's `diag` function: the map's rows bound to one row
/// of a diagonal block (`i` the row, `q` the block, `k` the diagonal), the reduce unrolled over
/// the block's rows so that each diagonal is a contiguous, vectorizable pass.
pub(super) fn emit_diagonal<'a>(
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
    // A block at either end of the gathered input reads its window through `xpad` (zeros past
    // the ends: see `diag_x_window`).
    decls.push_str(&format!(
        "        let mut xpad: [{0}; DIAG_BLOCK] = [<{0}>::default(); DIAG_BLOCK];\n",
        rust_ty(xe)
    ));
    windows.push_str(&format!(
        "let xk: &[{}; DIAG_BLOCK] = diag_x_window(b{}, base as i64 + doffs[k], &mut xpad);\n",
        rust_ty(xe),
        pat.gathered,
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
