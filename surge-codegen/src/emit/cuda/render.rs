//! Rendering with the tera templates (`templates/cuda/shape.cu.tera`, `kernel.cu.tera`): a
//! phase's shape kernel, and one kernel per variant from its launch geometry (block shape,
//! logical warp, grain, execution resource) and inner-level schedule (algorithm, unrolling,
//! scan grain), with the kernel parameters.

use super::elements::I;
use super::phase::{Inner, PhaseCode};
use super::{ArgSlot, Launch, PhasePlan, cuda_type, kernel_name};
use crate::CodegenError;
use crate::params::CudaParams;
use crate::schedule::ScheduleElem;
use crate::target::Platform;
use crate::variant::Variant;
use std::fmt::Write as _;

const KERNEL: &str = include_str!("../../../templates/cuda/kernel.cu.tera");
const SHAPE: &str = include_str!("../../../templates/cuda/shape.cu.tera");
const RUNS: &str = include_str!("../../../templates/cuda/runs.cu.tera");
const SCATTER: &str = include_str!("../../../templates/cuda/scatter.cu.tera");
const RUNS_ROWS: &str = include_str!("../../../templates/cuda/runs_rows.cu.tera");
const SCATTER_ROWS: &str = include_str!("../../../templates/cuda/scatter_rows.cu.tera");

pub(super) fn templates() -> Result<tera::Tera, CodegenError> {
    let mut t = tera::Tera::default();
    t.autoescape_on(vec![]);
    t.add_raw_templates(vec![
        ("kernel", KERNEL),
        ("shape", SHAPE),
        ("runs", RUNS),
        ("runs_rows", RUNS_ROWS),
        ("scatter", SCATTER),
        ("scatter_rows", SCATTER_ROWS),
    ])
    .map_err(|e| CodegenError::EmitVariant {
        what: "cuda templates".into(),
        message: format!("{e:?}"),
    })?;
    Ok(t)
}

/// A variant and its decoded parameters.
struct Params<'a> {
    v: &'a Variant,
    p: CudaParams,
}

impl Params<'_> {
    fn bad(&self, m: String) -> CodegenError {
        self.p.bad(m)
    }
}

/// The most blocks that take part in a `reduce_by_key` (or a `reduce` of rows): each counts the
/// runs before its range of positions, so the work grows with the block count times the length.
const ROW_RUN_BLOCKS: u32 = 256;

/// Where and how a variant's kernel runs.
struct Geometry {
    bx: i64,
    by: i64,
    lw: i64,
    /// Elements per resource per step (independent outer level).
    grain: i64,
    /// `#pragma unroll` of a sequential outer level.
    unroll1: i32,
    outer: ScheduleElem,
    inner: Option<ScheduleElem>,
    /// The execution resource of the outer level: `thread`, `warp` or `block`.
    res: String,
    groups_per_block: u32,
    lanes: i64,
}

impl Geometry {
    fn launch(&self) -> Launch {
        Launch {
            block: (self.bx as u32, self.by as u32),
            groups_per_block: self.groups_per_block,
            grain: self.grain as u32,
            single_group: self.outer == ScheduleElem::Sequential,
            min_blocks: 0,
        }
    }
}

/// The block shape `(bx, by)` and logical warp size `lw`, checked.
fn block_shape(pv: &Params<'_>) -> Result<(i64, i64, i64), CodegenError> {
    let (bx, by, lw) = (pv.p.bx, pv.p.by, pv.p.lw);
    if !(32..=1024).contains(&bx) || bx % 32 != 0 || !(1..=32).contains(&by) || bx * by > 1024 {
        return Err(pv.bad(format!(
            "block shape {bx}x{by} (bx must be a multiple of 32, at most 1024 threads)"
        )));
    }
    if !(1..=32).contains(&lw) || lw & (lw - 1) != 0 {
        return Err(pv.bad(format!("logical warp size {lw} is not a power of two ≤ 32")));
    }
    Ok((bx, by, lw))
}

/// The execution resource of the outer level (`res1`, or `res2` under a cooperative inner
/// level, which runs on the outer level's resource), checked against the schedule.
fn resource(
    pv: &Params<'_>,
    outer: ScheduleElem,
    inner: Option<ScheduleElem>,
    any_resource: bool,
) -> Result<String, CodegenError> {
    let (res1, res2) = (&pv.p.res1, &pv.p.res2);
    let res = match (inner, &res1, &res2) {
        (Some(ScheduleElem::Cooperative), Some(a), Some(b)) if a != b => {
            return Err(pv.bad(format!(
                "res1 = {a} and res2 = {b}: a cooperative inner level runs on the outer level's resource"
            )));
        }
        (Some(ScheduleElem::Cooperative), _, Some(b)) => b.clone(),
        (Some(ScheduleElem::Cooperative), _, None) => {
            return Err(pv.bad("parameter `res2` is missing".into()));
        }
        (_, Some(a), _) => a.clone(),
        (_, None, _) => "thread".into(),
    };
    if outer == ScheduleElem::Cooperative {
        return Err(pv.bad("a cooperative outer map level has no CUDA realization".into()));
    }
    if inner != Some(ScheduleElem::Cooperative) && res != "thread" && !any_resource {
        return Err(pv.bad(format!(
            "a sequential inner level runs on one thread, not a {res} (res1 must be thread)"
        )));
    }
    Ok(res)
}

/// The launch geometry of a variant: block shape, grain or outer unrolling, and the execution
/// resource with its groups per block and lanes (`any_resource`: the phase's kernel runs on any
/// resource: copied rows are shared by its lanes, a scatter runs on one block).
fn geometry(
    pv: &Params<'_>,
    (outer, inner): (ScheduleElem, Option<ScheduleElem>),
    any_resource: bool,
) -> Result<Geometry, CodegenError> {
    let (bx, by, lw) = block_shape(pv)?;
    let (grain, unroll1) = match outer {
        ScheduleElem::Independent => (pv.p.need(&pv.p.grain1, "grain1")?, 1),
        // Rows copied from a cooperative level another phase stored (`roots.rs`,
        // `over_stored`), run with that level's variant: one resource copies them in order.
        ScheduleElem::Sequential if any_resource && pv.p.unroll1.is_none() => (1, 1),
        _ => (
            1,
            if pv.p.need(&pv.p.unroll1, "unroll1")? {
                4
            } else {
                1
            },
        ),
    };
    if !(1..=64).contains(&grain) {
        return Err(pv.bad(format!("grain1 = {grain} is out of range 1..=64")));
    }
    let res = resource(pv, outer, inner, any_resource)?;
    let (groups_per_block, lanes) = match res.as_str() {
        "thread" => ((bx * by) as u32, 1),
        "warp" => {
            if lw == 1 || by != 1 {
                return Err(pv.bad(format!(
                    "warp execution needs lw > 1 and by = 1 (lw = {lw}, by = {by})"
                )));
            }
            ((bx * by / lw) as u32, lw)
        }
        "block" => (by as u32, bx),
        other => return Err(pv.bad(format!("unknown execution resource `{other}`"))),
    };
    Ok(Geometry {
        bx,
        by,
        lw,
        grain,
        unroll1,
        outer,
        inner,
        res,
        groups_per_block,
        lanes,
    })
}

/// The inner level's schedule: `sched2`, `unroll2` of a sequential level, and for a cooperative
/// one the block algorithm and the scan grain.
fn insert_inner_schedule(
    ctx: &mut tera::Context,
    pv: &Params<'_>,
    g: &Geometry,
    inner: &str,
) -> Result<(), CodegenError> {
    let Some(e) = g.inner else {
        ctx.insert("sched2", "none");
        return Ok(());
    };
    ctx.insert("sched2", e.name());
    let unroll2 = if e == ScheduleElem::Sequential && pv.p.need(&pv.p.unroll2, "unroll2")? {
        4
    } else {
        1
    };
    ctx.insert("unroll2", &unroll2);
    // A fold runs on lane 0 alone, row runs and scalar code (one element over a materialized
    // result) use no cooperative algorithm.
    if e == ScheduleElem::Cooperative && !matches!(inner, "fold" | "row_runs" | "none") {
        let algo_key = if inner == "scan" { "scan2" } else { "reduce2" };
        let algo_value = if inner == "scan" {
            &pv.p.scan2
        } else {
            &pv.p.reduce2
        };
        let algo = match (g.res.as_str(), algo_value.as_deref()) {
            ("block", Some("raking")) => "raking",
            ("block", Some("warp_reductions" | "warp_scans")) => "warps",
            ("block", other) => {
                return Err(pv.bad(format!(
                    "parameter `{algo_key}` = {other:?} is not a block algorithm"
                )));
            }
            _ => "raking",
        };
        ctx.insert("algo", algo);
        let sg = if inner == "scan" {
            pv.p.need(&pv.p.scan_grain2, "scan_grain2")?
        } else {
            1
        };
        if !(1..=16).contains(&sg) {
            return Err(pv.bad(format!("scan_grain2 = {sg} is out of range 1..=16")));
        }
        ctx.insert("scan_grain", &sg);
    }
    Ok(())
}

impl PhaseCode {
    /// The kernel parameters for the phase's inputs.
    fn params(&self) -> String {
        let mut v = Vec::new();
        for a in &self.args {
            let name = a.name();
            match a {
                ArgSlot::Input { elem, .. } | ArgSlot::Phase { elem, .. } => {
                    v.push(format!(
                        "SURGE_PTR(const {}) {name}, const u64 n_{name}",
                        cuda_type(*elem)
                    ));
                }
                ArgSlot::Literal { elem, .. } => {
                    v.push(format!("const {} {name}", cuda_type(*elem)));
                }
            }
            if let ArgSlot::Phase { nested: true, .. } = a {
                v.push(format!(
                    "SURGE_PTR(const u64) {name}_off, const u64 n_{name}_off"
                ));
            }
        }
        v.join(", ")
    }

    pub(super) fn render_shape(
        &self,
        tera: &tera::Tera,
        plan: &PhasePlan,
    ) -> Result<String, CodegenError> {
        let mut ctx = tera::Context::new();
        ctx.insert("phase", &self.phase);
        ctx.insert("sequence", &self.sequence);
        ctx.insert("shape_name", &plan.shape_kernel);
        ctx.insert("rows_name", &plan.rows_kernel);
        ctx.insert("nested", &plan.output.nested);
        let params = self.params();
        ctx.insert(
            "params",
            if params.is_empty() {
                "int unused"
            } else {
                &params
            },
        );
        ctx.insert("n_expr", &self.n_expr);
        ctx.insert("bind", &self.bind);
        match &self.inner {
            Inner::Scan { seq, .. } | Inner::Copy { seq } => ctx.insert("len_expr", &seq.len),
            Inner::FoldScan { len, .. } => ctx.insert("len_expr", len),
            Inner::RowRuns { width, .. } => ctx.insert("len_expr", width),
            Inner::Packed { width, .. }
            | Inner::Reduce {
                packed: Some(width),
                ..
            }
            | Inner::Scatter {
                packed: Some(width),
                ..
            } => ctx.insert("len_expr", &format!("{width}ULL")),
            Inner::Runs(r) => ctx.insert("len_expr", &r.row_len().unwrap_or_default()),
            Inner::ScatterRows {
                node,
                len,
                index,
                source_len,
                dest_len,
                ..
            } => {
                ctx.insert("scatter_rows", &true);
                ctx.insert("node", &node.0);
                ctx.insert("len_expr", len);
                ctx.insert("index_expr", index);
                ctx.insert("source_len", source_len);
                ctx.insert("dest_len", dest_len);
            }
            _ => {}
        }
        tera.render("shape", &ctx)
            .map_err(|e| CodegenError::EmitVariant {
                what: format!("phase {} ({})", self.phase, self.sequence),
                message: format!("shape template: {e:?}"),
            })
    }

    /// The kernel parameters: the phase's inputs, then the output (and its row offsets when
    /// nested) and the error record.
    fn kernel_params(&self) -> String {
        let mut params = self.params();
        if !params.is_empty() {
            params.push_str(", ");
        }
        let out = self.output();
        let _ = write!(params, "SURGE_PTR({}) out", cuda_type(out.elem));
        if out.nested {
            params.push_str(", SURGE_PTR(const u64) out_off");
        }
        params.push_str(", u64 *__restrict__ surge_err");
        params
    }

    /// A reduction, scan or `reduce_by_key` at the root: one element, whose one resource runs
    /// the variant's one level as its inner level.
    fn one_element(&self) -> bool {
        self.sequence == "reduce"
            || self.sequence == "scan"
            || matches!(self.inner, Inner::Runs(_) | Inner::RowRuns { .. })
    }

    /// Checks that `v` is a CUDA variant whose schedule has as many levels as the phase.
    fn check_levels(&self, v: &Variant, p: usize) -> Result<(), CodegenError> {
        let bad = |message: String| CodegenError::Variant {
            id: v.id(),
            message,
        };
        if !matches!(v.platform, Platform::Cuda(_)) {
            return Err(bad("not a CUDA variant".into()));
        }
        let one_level = matches!(
            self.inner,
            Inner::None { .. } | Inner::Scatter { .. } | Inner::ScatterRows { .. }
        );
        let levels = if one_level || self.one_element() {
            1
        } else {
            2
        };
        // Copied rows come from a nested producer's or a map body's one level (`map` over a
        // sequence-valued body) or two (`map.reverse`), or three (a depth-3 result's rows,
        // `deep.rs`): the outer resource copies either way.
        let copy_any = match self.inner {
            Inner::Copy { .. } => v.schedule.depth() <= 3,
            // A scalar element whose phase's inner levels it reads lazily (one element over a
            // nested producer, `roots.rs`; a map whose body reads an inner map, `map.map`, or
            // a scan of rows and its combiner's map, `map.scan.map`).
            Inner::None { .. } => v.schedule.depth() <= 3,
            Inner::RowRuns { .. } | Inner::ScatterRows { .. } | Inner::Packed { .. } => {
                v.schedule.depth() <= 2
            }
            _ => false,
        };
        if v.schedule.depth() != levels && !copy_any {
            return Err(bad(format!(
                "its schedule `{}` has {} levels but phase {p} ({}) has {levels}",
                v.schedule,
                v.schedule.depth(),
                self.sequence
            )));
        }
        Ok(())
    }

    /// The template context of the outer level: names, geometry, element count and bindings.
    fn outer_context(&self, pv: &Params<'_>, p: usize, g: &Geometry) -> tera::Context {
        let mut ctx = tera::Context::new();
        ctx.insert("id", &pv.p.id);
        ctx.insert("name", &kernel_name(p, pv.v));
        ctx.insert("phase", &p);
        ctx.insert("sequence", &self.sequence);
        ctx.insert("bx", &g.bx);
        ctx.insert("by", &g.by);
        ctx.insert("lw", &g.lw);
        ctx.insert("threads", &(g.bx * g.by));
        ctx.insert("lanes", &g.lanes);
        ctx.insert("groups_per_block", &g.groups_per_block);
        ctx.insert("grain", &g.grain);
        ctx.insert("outer", g.outer.name());
        ctx.insert("res", &g.res);
        ctx.insert("unroll1", &g.unroll1);
        ctx.insert("n_expr", &self.n_expr);
        ctx.insert("bind", &self.bind);
        ctx
    }

    /// The template variables of the inner level; returns its kind (`none`, `reduce`, `scan`,
    /// `copy`, `runs`, `scatter`) and the element type it works on.
    fn insert_inner(&self, ctx: &mut tera::Context) -> (&'static str, &'static str) {
        let (inner, t) = match &self.inner {
            Inner::None { result, elem } => {
                ctx.insert("result", result);
                ("none", *elem)
            }
            Inner::Reduce {
                node,
                seq,
                op_body,
                ident,
                prefix,
                result,
                out_elem: _,
                packed,
            } => {
                ctx.insert("node", &node.0);
                ctx.insert("result", result);
                ctx.insert("packed_result", &packed.is_some());
                ctx.insert("len_expr", &seq.len);
                ctx.insert("elem_expr", &seq.at("j"));
                ctx.insert("op_body", op_body);
                ctx.insert("ident", ident);
                ctx.insert("prefix", prefix);
                ("reduce", seq.elem)
            }
            Inner::Scan {
                seq,
                op_body,
                ident,
                prefix,
            } => {
                ctx.insert("len_expr", &seq.len);
                ctx.insert("elem_expr", &seq.at("j"));
                ctx.insert("op_body", op_body);
                ctx.insert("ident", ident);
                ctx.insert("prefix", prefix);
                ("scan", seq.elem)
            }
            Inner::Copy { seq } => {
                ctx.insert("len_expr", &seq.len);
                ctx.insert("elem_expr", &seq.at("j"));
                ("copy", seq.elem)
            }
            Inner::RowRuns {
                node,
                whole,
                len,
                key,
                width,
                row_len,
                row_at,
                row_check,
                prefix_at,
                combine,
                t,
            } => {
                ctx.insert("len_expr", len);
                ctx.insert("key_expr", &key.replace(I, "(j)"));
                ctx.insert("width", width);
                ctx.insert("row_len", row_len);
                ctx.insert("row_at", row_at);
                ctx.insert("row_check", row_check);
                ctx.insert("node", &node.0);
                ctx.insert("whole", &(*whole != super::inner::Whole::Keyed));
                ctx.insert("scan", &(*whole == super::inner::Whole::Scan));
                ctx.insert("has_prefix", &prefix_at.is_some());
                ctx.insert("prefix_at", prefix_at);
                ctx.insert("combine", combine);
                ctx.insert("max_blocks", &ROW_RUN_BLOCKS);
                ("row_runs", *t)
            }
            Inner::Fold { code, out_elem } | Inner::FoldScan { code, out_elem, .. } => {
                ctx.insert("fold", code);
                ("fold", *out_elem)
            }
            Inner::Packed { code, .. } => {
                ctx.insert("fold", code);
                ("fold", crate::ir::Elem::U64)
            }
            Inner::Runs(r) => {
                r.insert(ctx, ROW_RUN_BLOCKS);
                ("runs", r.t)
            }
            Inner::Scatter {
                node,
                len,
                source,
                index,
                dest,
                t,
                packed,
            } => {
                ctx.insert("packed", &packed.is_some());
                ctx.insert("node", &node.0);
                ctx.insert("len_expr", len);
                ctx.insert("source_expr", &source.replace(I, "(pos)"));
                ctx.insert("index_expr", &index.replace(I, "(pos)"));
                ctx.insert("dest_expr", &dest.replace(I, "(d)"));
                ("scatter", *t)
            }
            Inner::ScatterRows {
                node,
                len,
                index,
                source_len,
                source_at,
                dest_len,
                dest_at,
                t,
            } => {
                ctx.insert("node", &node.0);
                ctx.insert("len_expr", len);
                ctx.insert("index_expr", index);
                ctx.insert("source_len", source_len);
                ctx.insert("source_at", source_at);
                ctx.insert("dest_len", dest_len);
                ctx.insert("dest_at", dest_at);
                ("scatter_rows", *t)
            }
        };
        (inner, cuda_type(t))
    }

    /// The kernel of variant `v` in phase `p`, and how to launch it.
    pub(super) fn render_kernel(
        &self,
        tera: &tera::Tera,
        p: usize,
        v: &Variant,
    ) -> Result<(String, Launch), CodegenError> {
        self.check_levels(v, p)?;
        let s = v.schedule.elems();
        // Copied rows: the outer level's resource copies each row with all its lanes, whatever
        // the inner level's schedule; a scatter runs on one block whatever its level's; a
        // scalar element run with a cooperative level's variant (parts over a materialized
        // `reduce_by_key` of tuples, `at(rbk, k)`) on that variant's resource.
        let any_resource = matches!(
            self.inner,
            Inner::Copy { .. } | Inner::Scatter { .. } | Inner::ScatterRows { .. }
        ) || (matches!(self.inner, Inner::None { .. })
            && (v.schedule.depth() == 2 || s[0] == ScheduleElem::Cooperative));
        let (p_of, levels) = if self.one_element() {
            // The variant's one level is the inner level of one element's sequential loop.
            let p = CudaParams::of(v)?.as_inner_level();
            (p, (ScheduleElem::Sequential, Some(s[0])))
        } else if any_resource && s[0] == ScheduleElem::Cooperative {
            (CudaParams::of(v)?, (ScheduleElem::Sequential, None))
        } else if any_resource {
            (CudaParams::of(v)?, (s[0], None))
        } else {
            (CudaParams::of(v)?, (s[0], s.get(1).copied()))
        };
        let pv = Params { v, p: p_of };
        let g = geometry(&pv, levels, any_resource)?;
        let mut ctx = self.outer_context(&pv, p, &g);
        let (inner, t) = self.insert_inner(&mut ctx);
        ctx.insert("params", &self.kernel_params());
        ctx.insert("inner", inner);
        ctx.insert("t", t);
        ctx.insert("st", cuda_type(self.output().elem));
        insert_inner_schedule(&mut ctx, &pv, &g, inner)?;
        // reduce_by_key and scatter have their own templates (`keyed.rs`); a scatter is one
        // block's work.
        if inner == "row_runs" {
            let workers = match g.res.as_str() {
                "thread" => 1,
                "warp" => g.lanes,
                _ => g.bx * g.by,
            };
            ctx.insert("workers", &workers);
        }
        let keyed_rows = matches!(
            self.inner,
            Inner::RowRuns {
                whole: super::inner::Whole::Keyed,
                ..
            }
        );
        let (template, launch) = match inner {
            // About one run per group of threads; at most ROW_RUN_BLOCKS blocks take part.
            "runs" => (
                "runs",
                Launch {
                    single_group: false,
                    grain: 1,
                    ..g.launch()
                },
            ),
            // ROW_RUN_BLOCKS blocks however few the runs (the template knows the cap): each
            // takes the runs that start in its range of positions, a group of their columns,
            // folding with every thread of the variant's resource: one, a logical warp, or the
            // whole block. A reduce or scan of rows is one block's.
            "row_runs" => (
                "runs_rows",
                Launch {
                    single_group: false,
                    groups_per_block: 1,
                    grain: 1,
                    min_blocks: if keyed_rows { ROW_RUN_BLOCKS } else { 0 },
                    ..g.launch()
                },
            ),
            "scatter" | "scatter_rows" => (
                inner,
                Launch {
                    single_group: true,
                    ..g.launch()
                },
            ),
            _ => ("kernel", g.launch()),
        };
        let src = tera
            .render(template, &ctx)
            .map_err(|e| CodegenError::EmitVariant {
                what: format!("kernel for variant {}", pv.p.id),
                message: format!("template: {e:?}"),
            })?;
        Ok((src, launch))
    }
}
