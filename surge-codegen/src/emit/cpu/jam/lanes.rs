//! The lanes form of the unroll-and-jam (`jam.rs`): eight consecutive elements' inner
//! reductions at once, one SIMD lane per element, read from a transposed copy of the rows they
//! reduce. Jammed, each of k-means' (point, centroid) chains of 32 dependent additions is still
//! scalar code, about 15% of the floating-point peak. Where the jammed `map`'s rows are the full
//! tiles of a `split` of an input buffer, the rows `k..k + 8` are instead read from a copy in
//! which element `j` of the eight rows is contiguous (`ct[(g·t + j)·8 + l]` is element `j` of
//! row `off + 8g + l`, `lane_groups` in the runtime): a `for l in 0..8` loop over `[acc; 8]`
//! that LLVM vectorizes. Each lane still folds its own chain in the interpreter's order (the
//! same products and sums, the same bits), and the outer combiner still takes the eight results
//! in order; the 4/2/1 jams run the elements left over.
//!
//! Measured: by hand (`rustc -O -C target-cpu=native`, 4·10^5 points of 32, one thread, loaded
//! machine), 2.3× the two-jam at k = 10 and 3.5× at k = 16; strided loads from the rows
//! themselves (no copy) gave nothing, the transpose is what pays. Emitted (the k-means relabel
//! program, 10^5 points of 32, one thread, `sequential.sequential`, load average about 2,
//! 2026-11-27, `surge/tests/jam_lanes.rs`'s ignored `relabel_timing`): k = 10 10.8–11.3 ms before,
//! 6.5–6.7 ms after; k = 16 16.9–18.1 ms before, 13.4–13.8 ms after (one group of eight from
//! element 1, the reduction having no prefix, then the jams).
//!
//! **Tail group.** Where 3 to 7 elements are left after the groups (k = 16: the 15 elements
//! after the first are 8 + 7, which took the 4, 2 and 1 jams, three chains' latency), the last
//! eight elements run as one more group (`LaneSteps::tail`) from an extra last group of the copy
//! (`lane_groups` adds the last eight full rows where rows are left over); the lanes before the
//! first element left are computed and their outer steps skipped, so the outer reduction still
//! takes every element once, in order. With 1 or 2 left, one jam costs as much as a group.
//! Measured (same test, 2026-11-28, load about 2.5, old and new builds alternated): k = 16
//! 8.2 ms → 6.1–6.2 ms; k = 10 (one left) 3.8–4.0 ms both.
//!
//! The copy is built once per `elems` call, on first use (a `OnceCell` of the call's
//! `LaneCells`, declared by the tile-width expansion, `spec.rs`), and memoized for the run where
//! memoization is on; the tile length is the split's run-time tile. Only the generic expansion
//! (`W = 0`: every width without an expansion, k-means' 32) runs it: in every expansion, rustc's
//! time on the relabel program was +85% (3.5 s against 1.9 s), in the generic one only +45%
//! (2.6–2.8 s against 1.8–1.9 s); the widths with an expansion (2 to 4) keep their constant-length
//! jams. A group runs from the copy only where its eight tiles are full (`(k + 8)·t <= len`,
//! short last tiles take the jams) and its inner reductions have one length (otherwise the loop
//! ends and the jams take the group again: the heads' checks passed and are pure).
//!
//! Only where the jam applies (no step can fail, `jam.rs`), the map has one input, a
//! specialized `split` of an input buffer of `f64` or `f32`, and at most [`SITES`] such sites per
//! phase and element type.

use super::super::code::{Code, Env, Gen, R, SeqCode, bind, rust_ty, scalar_of};
use super::fallible;
use crate::ir::{Elem, NodeId, Op};
use std::rc::Rc;

/// Lanes per group (one AVX-512 register of `f64`, two AVX2 ones).
pub(in crate::emit::cpu) const LANES: usize = 8;

/// Cells per element type in the runtime's `LaneCells`.
const SITES: usize = 4;

/// The lanes form of one reduction, as `folds.rs` places it: statements to run once before the
/// loop, the group of eight (run while `cond` holds, advancing by eight), and the tail group.
pub(in crate::emit::cpu) struct LaneSteps {
    pub once: String,
    pub group: String,
    pub cond: String,
    /// After the groups, where 3 to 7 elements are left and every row is a full tile: the last
    /// eight elements as one more group, from the copy's extra last group (`lane_groups`), its
    /// lanes before the first element left computed and dropped. One group instead of up to
    /// three jams (k-means at k = 16: the 15 elements after the first are 8 + 7).
    pub tail: String,
}

/// What every group of one site shares: the pattern, the rows, the copy and one lane's step.
struct Site<'l, 'a> {
    p: super::Pattern<'l>,
    rows: Rc<SeqCode<'a>>,
    base: String,
    elem: Elem,
    ty: &'static str,
    bty: &'static str,
    /// Binds the copy (`ct`), built on its first use.
    ct_bind: String,
    /// The names `t`, `ct`, `blk`, `g`, `j`, `l`, `av`.
    names: [String; 7],
    /// One lane's step from the copy, and the checks its reads need.
    one: String,
    checks: String,
    first: &'static str,
}

/// Where a group runs: its first element's name, its group index in the copy, the statement
/// that leaves it when its lanes' lengths differ, and (the tail) how many lanes to drop.
struct At<'s> {
    k: &'s str,
    group: String,
    leave: String,
    skip: Option<String>,
}

impl<'a> Gen<'a> {
    /// The lanes form for elements `k..k + 8` of the reduction over `input` (see [`LaneSteps`])
    /// whose outer steps are `step`, started at `start`, over `len` elements; None where the
    /// form does not apply.
    pub(in crate::emit::cpu) fn lane_steps(
        &self,
        input: NodeId,
        (k, start, len): (&str, &str, &str),
        step: &dyn Fn(Code<'a>) -> R<String>,
        env: &Env<'a>,
    ) -> R<Option<LaneSteps>> {
        let Some((site, mut pre)) = self.lane_site_of(input, start, env)? else {
            return Ok(None);
        };
        let (tl, base) = (&site.names[0], &site.base);
        let at = At {
            k,
            group: format!("({k} - {start}) / {LANES}"),
            leave: "break;".into(),
            skip: None,
        };
        let Some(group) = self.lane_group(&site, &at, step, env, &mut pre)? else {
            return Ok(None);
        };
        let (kt, label) = (self.name("kt"), self.name("lt"));
        let last = At {
            k: &kt,
            group: format!("({len} - {start}) / {LANES}"),
            leave: format!("break '{label};"),
            skip: Some(format!("({k} - {kt})")),
        };
        let Some(last) = self.lane_group(&site, &last, step, env, &mut pre)? else {
            return Ok(None);
        };
        let tail = format!(
            "if W == 0 && {k} + {LANES} > {len} && {k} + 3 <= {len} && {len} >= {start} + {LANES} && ({len} - {start}) % {LANES} != 0 && {len} * {tl} <= {base}.len() {{\n'{label}: {{\nlet {kt}: usize = {len} - {LANES};\n// The last {LANES} elements (jam/lanes.rs), those before {k} dropped.\n{last}\n{k} = {len};\n}}\n}}"
        );
        Ok(Some(LaneSteps {
            once: pre.join("\n"),
            cond: format!("W == 0 && ({k} + {LANES}) * {tl} <= {base}.len()"),
            group,
            tail,
        }))
    }

    /// The site's shared parts and the statements to run once; None where the form does not
    /// apply: the rows are not the tiles of a specialized `split` of an `f64`/`f32` input, a
    /// lane's step could fail or its checks read the lane, or no site is left.
    fn lane_site_of<'l>(
        &'l self,
        input: NodeId,
        start: &str,
        env: &Env<'a>,
    ) -> R<Option<(Site<'l, 'a>, Vec<String>)>> {
        let Some(p) = self.jam_pattern(input, env) else {
            return Ok(None);
        };
        let [m] = p.map_inputs else {
            return Ok(None);
        };
        let Op::Split { input: buf, tile } = &self.c.node(*m).op else {
            return Ok(None);
        };
        let buf_elem = match self.c.node(*buf).ty.item().and_then(|t| t.as_scalar()) {
            Some(e @ (Elem::F64 | Elem::F32)) => e,
            _ => return Ok(None),
        };
        let Op::Reduce {
            op,
            input: inner_input,
            prefix,
        } = &self.c.node(p.inner).op
        else {
            unreachable!("jam_pattern found a reduce")
        };
        let elem = self.elem_of(p.inner).expect("a scalar reduction");
        let ty = rust_ty(elem);
        let bty = rust_ty(buf_elem);
        // The rows: checks once; the split must be a specialized one (an input buffer by a
        // literal tile, inside a flat root map's body: `LaneCells` is declared).
        if !matches!(self.c.node(*buf).op, Op::Input { .. }) {
            return Ok(None);
        }
        let rows = self.seq(*m, env)?;
        let bufs = self.seq(*buf, env)?;
        let Some(base) = bufs.slice.clone() else {
            return Ok(None);
        };
        let (lit, _) = self.scalar(*tile, env)?;
        if !self.spec_tile(true, &lit, &bufs.len) {
            return Ok(None);
        }
        let Some(site) = self.lane_site(buf_elem, SITES) else {
            return Ok(None);
        };
        let mut pre = rows.checks.clone();
        let names = ["t", "ct", "blk", "g", "j", "l", "av"].map(|b| self.name(b));
        let [tl, ct, blk, _, jj, l, acc_v] = &names;
        pre.push(format!(
            "let {tl}: usize = if W != 0 {{ W }} else {{ ({lit}) as usize }};"
        ));
        let build =
            format!("std::sync::Arc::new(lane_groups::<{bty}, {LANES}>({base}, {tl}, {start}))");
        let ct_ty = format!("std::sync::Arc<Vec<{bty}>>");
        let made = self.memoized(*m, &build, &ct_ty).unwrap_or(build);
        // Bound in the group (which only the generic expansion runs), built on its first use.
        let ct_bind =
            format!("let {ct}: &[{bty}] = &lane_cells.{bty}s[{site}].get_or_init(|| {made})[..];");
        // One lane `l` of the group, its row read from the copy: `blk[j·8 + l]` is element `j`
        // of row `k + l`.
        let view = {
            let (blk, l) = (blk.clone(), l.clone());
            let e = buf_elem;
            Code::Seq(Rc::new(SeqCode {
                slice: None,
                len: tl.clone(),
                checks: vec![],
                elem: Box::new(move |i| {
                    Ok(Code::Scalar(
                        format!("(unsafe {{ *{blk}.get_unchecked(({i}) * {LANES} + {l}) }})"),
                        e,
                    ))
                }),
            }))
        };
        let env_l = bind(env, [(p.f.params[0], view)]);
        let s = self.seq(*inner_input, &env_l)?;
        let (a, x) = (self.name("a"), self.name("x"));
        let body = self.apply2(op, &a, &x, elem, &env_l)?;
        let one = format!(
            "{{ let {x}: {ty} = {}; let {a}: {ty} = {acc_v}[{l}]; {acc_v}[{l}] = {body}; }}",
            scalar_of(s.at(jj)?)
        );
        let checks = s.checks.join("\n");
        let mentions_lane = |c: &str| {
            c.split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .any(|w| w == l.as_str())
        };
        if fallible(&one) || mentions_lane(&checks) {
            return Ok(None);
        }
        let first = if prefix.is_some() { "0" } else { "1" };
        Ok(Some((
            Site {
                p,
                rows,
                base,
                elem,
                ty,
                bty,
                ct_bind,
                names,
                one,
                checks,
                first,
            },
            pre,
        )))
    }

    /// One group of eight at `at`: the lanes' heads (as `jam.rs` binds them: checks, length,
    /// initial value), their inner reductions from the copy, then the outer steps in order
    /// (those of dropped lanes skipped); None where a head or an outer step could fail.
    fn lane_group(
        &self,
        site: &Site<'_, 'a>,
        at: &At<'_>,
        step: &dyn Fn(Code<'a>) -> R<String>,
        env: &Env<'a>,
        pre: &mut Vec<String>,
    ) -> R<Option<String>> {
        let (p, k) = (&site.p, at.k);
        let [tl, ct, blk, gb, jj, l, acc_v] = &site.names;
        let (mut heads, mut lens, mut accs) = (Vec::new(), Vec::new(), Vec::new());
        for lane in 0..LANES {
            let env_j = bind(
                env,
                [(p.f.params[0], site.rows.at(&format!("({k} + {lane})"))?)],
            );
            let Some(super::JamLane { head, acc, len, .. }) = self.jam_lane(p.inner, &env_j, jj)?
            else {
                return Ok(None);
            };
            heads.push(head);
            lens.push(len);
            accs.push(acc);
        }
        // The outer steps, in order (as `jam.rs`).
        let mut elems = Vec::new();
        for (lane, acc) in accs.iter().enumerate() {
            let at_lane = format!("({k} + {lane})");
            let mut items = Vec::new();
            for (i, inp) in p.inputs.iter().enumerate() {
                if i == p.at {
                    items.push(Code::Scalar(acc.clone(), site.elem));
                } else {
                    let s = self.seq(*inp, env)?;
                    pre.extend(s.checks.clone());
                    items.push(s.at(&at_lane)?);
                }
            }
            let e = step(Code::Tuple(items))?;
            elems.push(match &at.skip {
                Some(skip) => format!("if {lane} >= {skip} {{\n{e}\n}}"),
                None => e,
            });
        }
        if elems.iter().any(|e| fallible(e)) {
            return Ok(None);
        }
        let same = lens[1..]
            .iter()
            .map(|n| format!("{} == {n}", lens[0]))
            .collect::<Vec<_>>()
            .join(" && ");
        let accs_list = accs.join(", ");
        let (ty, first, one, checks) = (site.ty, site.first, &site.one, &site.checks);
        // Inner reductions of different lengths (never in k-means): the heads' checks passed and
        // are pure, so the jams after the loop take the group again from `k`.
        Ok(Some(format!(
            "{{\n{heads}\nif !({same}) {{ {leave} }}\n// Lanes (jam/lanes.rs): rows {k}..{k} + {LANES} from the transposed copy.\n{ct_bind}\nlet {gb}: usize = {group};\nlet {blk}: &[{bty}] = &{ct}[{gb} * {tl} * {LANES}..({gb} + 1) * {tl} * {LANES}];\n{checks}\nlet mut {acc_v}: [{ty}; {LANES}] = [{accs_list}];\nfor {jj} in {first}..{n0} {{\nfor {l} in 0..{LANES} {{\n{one}\n}}\n}}\n[{accs_list}] = {acc_v};\n{}\n}}",
            elems.join("\n"),
            heads = heads.join("\n"),
            leave = at.leave,
            ct_bind = site.ct_bind,
            group = at.group,
            bty = site.bty,
            n0 = lens[0],
        )))
    }
}
