//! Phases whose root builds its result position by position, in input order: a
//! `reduce_by_key` (one result per run of equal consecutive keys) and a `scatter` (a copy of the
//! destination written at the indices, the last write to an index winning). Each has its own
//! kernel template (`runs.cu.tera`, `scatter.cu.tera`), since neither is a map over a known
//! number of elements.
//!
//! - `reduce_by_key`: one execution resource walks the runs in order (the variant's one level,
//!   as for a root `reduce`, is the level that folds each run: one thread, or a logical warp or
//!   block row whose lane 0 finds the run's end and whose lanes reduce its elements). The shape
//!   kernel counts the runs. Like `reduce`, the lanes assume an associative and commutative
//!   operator.
//! - `scatter`: one block copies the destination, then its thread 0 writes the source at the
//!   indices in order of position, so duplicate indices end with the last write and the first
//!   out-of-range index (in position order) is the error, exactly as in the interpreter. The
//!   CPU backend also writes a scatter in order on one thread; a parallel form (a winner per
//!   destination by an atomic maximum of positions) needs a workspace the phases do not have.

use super::checks::pair_lengths;
use super::elements::{Env, I, SeqV, Tr};
use super::phase::{Inner, PhaseCode};
use super::{Launch, cuda_type, kernel_name};
use crate::CodegenError;
use crate::analysis::Phase;
use crate::ir::{Elem, Op};
use crate::params::CudaParams;
use crate::schedule::ScheduleElem;
use crate::variant::Variant;

/// The integer key at position `@I@` as an `i64` (equal keys are equal bit patterns).
fn key_at(keys: &SeqV) -> String {
    format!("(i64)({})", keys.at)
}

/// A `reduce_by_key` at the phase's root.
pub(super) fn runs(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let root = phase.root;
    let Op::ReduceByKey {
        op,
        input,
        keys,
        prefix,
    } = &tr.c.node(root).op
    else {
        return Err(tr.unsupported(root, "as a reduce_by_key phase"));
    };
    let env = Env::new();
    let seq = tr.seq(*input, &env)?;
    let ks = tr.seq(*keys, &env)?;
    let len = pair_lengths(&seq.len, &ks.len, 0, root);
    let (op_body, ident) = super::phase::operator_of(&tr, &env, root, op, seq.elem)?;
    let prefix = tr.scalar(*prefix, &env)?;
    let key = key_at(&ks);
    let n_expr = format!(
        "surge_run_count({len}, [&](u64 surge_j) {{ return {}; }})",
        key.replace(I, "(surge_j)")
    );
    Ok(PhaseCode {
        phase: tr.phase,
        sequence: tr.sequence.clone(),
        args: tr.args.borrow().clone(),
        n_expr,
        bind: Vec::new(),
        inner: Inner::Runs {
            len,
            elem: seq.at.clone(),
            key,
            t: seq.elem,
            op_body,
            ident,
            prefix,
        },
    })
}

/// A `scatter` at the phase's root.
pub(super) fn scatter(tr: Tr<'_>, phase: &Phase) -> Result<PhaseCode, CodegenError> {
    let root = phase.root;
    let Op::Scatter {
        source,
        indices,
        dest,
    } = &tr.c.node(root).op
    else {
        return Err(tr.unsupported(root, "as a scatter phase"));
    };
    let env = Env::new();
    let (s, idx, d) = (
        tr.seq(*source, &env)?,
        tr.seq(*indices, &env)?,
        tr.seq(*dest, &env)?,
    );
    let len = pair_lengths(&s.len, &idx.len, 1, root);
    Ok(PhaseCode {
        phase: tr.phase,
        sequence: tr.sequence.clone(),
        args: tr.args.borrow().clone(),
        n_expr: d.len.clone(),
        bind: Vec::new(),
        inner: Inner::Scatter {
            node: root,
            len,
            source: s.at.clone(),
            index: key_at(&idx),
            dest: d.at.clone(),
            t: d.elem,
        },
    })
}

/// The execution resource and lanes of a root `reduce_by_key` variant's one level.
fn runs_resource(p: &CudaParams, level: ScheduleElem) -> Result<(&'static str, i64), CodegenError> {
    if level != ScheduleElem::Cooperative {
        return Ok(("thread", 1));
    }
    match p.res1.as_deref() {
        Some("warp") if p.lw > 1 && p.by == 1 => Ok(("warp", p.lw)),
        Some("block") => Ok(("block", p.bx)),
        other => Err(p.bad(format!(
            "a cooperative reduce_by_key runs on a warp (lw > 1, by = 1) or a block, not {other:?}"
        ))),
    }
}

impl PhaseCode {
    /// The kernel of variant `v` of a `reduce_by_key` or `scatter` phase, and its launch: one
    /// block (the work is ordered; see the module docs).
    pub(super) fn render_keyed(
        &self,
        tera: &tera::Tera,
        p: usize,
        v: &Variant,
        params: String,
    ) -> Result<(String, Launch), CodegenError> {
        let cp = CudaParams::of(v)?;
        let level = v.schedule.elems()[0];
        let mut ctx = tera::Context::new();
        ctx.insert("id", &cp.id);
        ctx.insert("name", &kernel_name(p, v));
        ctx.insert("phase", &p);
        ctx.insert("params", &params);
        ctx.insert("bx", &cp.bx);
        ctx.insert("by", &cp.by);
        ctx.insert("lw", &cp.lw);
        ctx.insert("threads", &(cp.bx * cp.by));
        if let Some(st) = output_elem(&self.inner) {
            ctx.insert("st", cuda_type(st));
        }
        let template = match &self.inner {
            Inner::Runs {
                len,
                elem,
                key,
                t,
                op_body,
                ident,
                prefix,
            } => {
                let (res, lanes) = runs_resource(&cp, level)?;
                ctx.insert("res", res);
                ctx.insert("lanes", &lanes);
                ctx.insert("algo", &block_algo(&cp)?);
                ctx.insert("len_expr", len);
                ctx.insert("elem_expr", &elem.replace(I, "(j)"));
                ctx.insert("key_expr", &key.replace(I, "(j)"));
                ctx.insert("t", cuda_type(*t));
                ctx.insert("op_body", op_body);
                ctx.insert("ident", ident);
                ctx.insert("prefix", prefix);
                "runs"
            }
            Inner::Scatter {
                node,
                len,
                source,
                index,
                dest,
                t,
            } => {
                ctx.insert("node", &node.0);
                ctx.insert("len_expr", len);
                ctx.insert("m_expr", &self.n_expr);
                ctx.insert("source_expr", &source.replace(I, "(pos)"));
                ctx.insert("index_expr", &index.replace(I, "(pos)"));
                ctx.insert("dest_expr", &dest.replace(I, "(d)"));
                ctx.insert("t", cuda_type(*t));
                "scatter"
            }
            _ => panic!("internal: phase {p} is not a reduce_by_key or scatter phase"),
        };
        let src = tera
            .render(template, &ctx)
            .map_err(|e| CodegenError::EmitVariant {
                what: format!("kernel for variant {}", cp.id),
                message: format!("template: {e:?}"),
            })?;
        let launch = Launch {
            block: (cp.bx as u32, cp.by as u32),
            groups_per_block: 1,
            grain: 1,
            single_group: true,
        };
        Ok((src, launch))
    }
}

/// The block reduction of a cooperative level on a block (`reduce1`): raking or warps.
fn block_algo(p: &CudaParams) -> Result<&'static str, CodegenError> {
    Ok(match p.reduce1.as_deref() {
        None | Some("raking") => "raking",
        Some("warp_reductions") => "warps",
        Some(other) => return Err(p.bad(format!("`reduce1` = {other} is not a block algorithm"))),
    })
}

/// The stored element type of a keyed phase's result.
pub(super) fn output_elem(inner: &Inner) -> Option<Elem> {
    match inner {
        Inner::Runs { t, .. } | Inner::Scatter { t, .. } => Some(t.stored()),
        _ => None,
    }
}
