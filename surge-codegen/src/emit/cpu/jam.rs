//! Unroll-and-jam of a reduction over a `map` of scalar reductions: k-means' argmin over
//! `zip(map(|q| reduce(add, map((p - q)²)), centroids), range(0, k))`. Sequentially, each
//! element's inner reduction is one chain of dependent additions (32 of them for 32 values), so
//! the core waits on its adder; `width` consecutive elements' reductions run in one loop instead,
//! independent chains, each still adding in its own order: the same bits as the sequential
//! code, and the outer combiner still takes the elements in order. Measured on 4·10^5 points of
//! 32 values and 10 centroids, one thread: 93 ms sequential, 71 ms two elements jammed (four
//! jammed through an array: 101 ms). The caller (`folds.rs`) jams four, then two, then runs
//! single steps: each lane is its own named accumulator, so the four chains stay in registers.
//! A hand-written loop of the same shape (`rustc -O -C target-cpu=native`, same 4·10^5 × 32 × 10,
//! one thread, 2026-11-27, load average about 1): one chain 61 ms, two jammed 45 ms, four then
//! two 39.5 ms, five 37 ms, eight 62 ms (spills); four-then-two is within 7% of five at k = 10
//! and needs no k-specific width.
//!
//! Only where no step can fail: the inner loops, the inner initial values, the other zipped items
//! and the outer combiner contain no check (`chk_*`, `fail`), so running element `k + 1`'s checks
//! before element `k`'s loop reports the error the sequential order would.

mod lanes;

pub(super) use lanes::{LANES, LaneSteps};

use super::code::{Code, Env, Gen, R, bind, scalar_of};
use crate::ir::{Lambda, NodeId, Op};

/// Whether generated code can fail at run time.
fn fallible(code: &str) -> bool {
    code.contains("chk_") || code.contains("fail(") || code.contains("int_div(")
}

/// The jammed reduction's parts: the zip's inputs, which one is the map, and the map's lambda.
struct Pattern<'l> {
    inputs: &'l [NodeId],
    at: usize,
    f: &'l Lambda,
    map_inputs: &'l [NodeId],
    inner: NodeId,
}

impl<'a> Gen<'a> {
    fn jam_pattern<'l>(&'l self, input: NodeId, env: &Env<'a>) -> Option<Pattern<'l>> {
        let Op::Zip { inputs } = &self.c.node(input).op else {
            return None;
        };
        inputs.iter().enumerate().find_map(|(at, m)| {
            let Op::Map {
                f,
                inputs: map_inputs,
            } = &self.c.node(*m).op
            else {
                return None;
            };
            let inner = f.body;
            let scalar_reduce = matches!(self.c.node(inner).op, Op::Reduce { .. })
                && self.elem_of(inner).is_some()
                && !env.contains_key(&inner);
            (scalar_reduce && f.params.len() == map_inputs.len()).then_some(Pattern {
                inputs,
                at,
                f,
                map_inputs,
                inner,
            })
        })
    }

    /// Statements that compute element `k` and `k + 1`'s steps of the outer reduction
    /// (`step(acc, element)`), their inner reductions jammed, and the statements to run once
    /// before the loop (the checks of the sequences the elements are read from, binding the
    /// names they use: checks the outer reduction's input already passed); None where the
    /// pattern does not apply or a step could fail.
    pub(super) fn jammed_steps(
        &self,
        input: NodeId,
        k: &str,
        width: usize,
        step: &dyn Fn(Code<'a>) -> R<String>,
        env: &Env<'a>,
    ) -> R<Option<(String, String)>> {
        let Some(p) = self.jam_pattern(input, env) else {
            return Ok(None);
        };
        let Op::Reduce { prefix, .. } = &self.c.node(p.inner).op else {
            unreachable!("jam_pattern found a reduce")
        };
        let elem = self.elem_of(p.inner).expect("a scalar reduction");
        let mut pre = Vec::new();
        let mut rows = Vec::new();
        for m in p.map_inputs {
            let s = self.seq(*m, env)?;
            pre.extend(s.checks.clone());
            rows.push(s);
        }
        let jj = self.name("j");
        let mut lanes = Vec::new();
        for lane in 0..width {
            let at = match lane {
                0 => k.to_string(),
                l => format!("({k} + {l})"),
            };
            let binds =
                p.f.params
                    .iter()
                    .zip(&rows)
                    .map(|(q, s)| Ok((*q, s.at(&at)?)))
                    .collect::<R<Vec<_>>>()?;
            let env_j = bind(env, binds);
            let Some(JamLane {
                head,
                one,
                acc,
                len,
            }) = self.jam_lane(p.inner, &env_j, &jj)?
            else {
                return Ok(None);
            };
            let first = if prefix.is_some() { "0" } else { "1" };
            lanes.push((head, one, first, acc, at, len));
        }
        let mut elems = Vec::new();
        for (_, _, _, acc, at, _) in &lanes {
            let mut items = Vec::new();
            for (i, inp) in p.inputs.iter().enumerate() {
                if i == p.at {
                    items.push(Code::Scalar(acc.clone(), elem));
                } else {
                    let s = self.seq(*inp, env)?;
                    pre.extend(s.checks.clone());
                    items.push(s.at(at)?);
                }
            }
            elems.push(step(Code::Tuple(items))?);
        }
        if elems.iter().any(|e| fallible(e)) {
            return Ok(None);
        }
        let first = lanes[0].2;
        debug_assert!(lanes.iter().all(|l| l.2 == first));
        let heads: Vec<&str> = lanes.iter().map(|l| l.0.as_str()).collect();
        let steps: Vec<&str> = lanes.iter().map(|l| l.1.as_str()).collect();
        let same = lanes[1..]
            .iter()
            .map(|l| format!("{} == {}", lanes[0].5, l.5))
            .collect::<Vec<_>>()
            .join(" && ");
        let apart: String = lanes
            .iter()
            .map(|l| format!("for {jj} in {first}..{} {{\n{}\n}}\n", l.5, l.1))
            .collect();
        Ok(Some((
            pre.join("\n"),
            format!(
                "{{\n{}\nif {same} {{\nfor {jj} in {first}..{} {{\n{}\n}}\n}} else {{\n{apart}}}\n{}\n}}",
                heads.join("\n"),
                lanes[0].5,
                steps.join("\n"),
                elems.join("\n"),
            ),
        )))
    }
}

/// One element of a jam: its head (the inner sequence's checks, its length, the empty check of a
/// reduction without a prefix, the accumulator at its initial value) and its step at `j`.
pub(super) struct JamLane {
    pub head: String,
    pub one: String,
    pub acc: String,
    pub len: String,
}

impl<'a> Gen<'a> {
    /// The lane of the scalar reduction `inner` (read under `env_j`, one element's bindings) whose
    /// step reads position `jj`; None where its step or initial value could fail.
    pub(super) fn jam_lane(&self, inner: NodeId, env_j: &Env<'a>, jj: &str) -> R<Option<JamLane>> {
        let Op::Reduce {
            op,
            input: inner_input,
            prefix,
        } = &self.c.node(inner).op
        else {
            unreachable!("a jam lane of a reduce")
        };
        let elem = self.elem_of(inner).expect("a scalar reduction");
        let ty = super::code::rust_ty(elem);
        let s = self.seq(*inner_input, env_j)?;
        let acc = self.name("a");
        let x = self.name("x");
        let init = match prefix {
            Some(pf) => self.scalar(*pf, env_j)?.0,
            None => scalar_of(s.at("0")?),
        };
        let body = self.apply2(op, &acc, &x, elem, env_j)?;
        let len = self.name("n");
        let one = format!(
            "{{ let {x}: {ty} = {}; {acc} = {body}; }}",
            scalar_of(s.at(jj)?)
        );
        if fallible(&one) || fallible(&init) {
            return Ok(None);
        }
        let empty = match prefix {
            Some(_) => String::new(),
            None => format!(
                "if {len} == 0 {{ {}; }}",
                self.fail(inner, "\"reduction of an empty sequence without a prefix\"")
            ),
        };
        let head = format!(
            "{}\nlet {len}: usize = {};\n{empty}\nlet mut {acc}: {ty} = {init};",
            s.checks.join("\n"),
            s.len
        );
        Ok(Some(JamLane {
            head,
            one,
            acc,
            len,
        }))
    }
}
