//! A `reduce` of tuples inside an element expression (not one of the phase's levels: CoMD's
//! per-cell sums of (fx, fy, fz, φ) inside the reduction over neighbour cells): an immediately
//! invoked lambda that folds the tuple sequentially from the prefix (or the first element), in
//! the interpreter's order, and returns it whole as a `surge_tuple` (up to eight components);
//! component c is that expression's `.cc`. A consumer that reads every component of one element
//! (`Fold`'s step, [`whole_of`]) evaluates the expression once; any other reads it per
//! component. Locals are named by the node, so a fold inside another's elements does not shadow
//! the outer one's names. Wider tuples: each component folds the whole tuple and returns itself.
//!
//! Measured in the CUDA emulator (host time, 2-core VM with other builds running; not a GPU):
//! CoMD's direct program, 500 atoms, 4 steps: 6.4-6.6 s with a fold per component, 1.4-2.0 s
//! with the whole fold read once (two alternating runs each; the redistributed program, which
//! has no such fold, 0.24-0.39 s either way).

use super::cuda_type;
use super::elements::{Bound, Env, Tr};
use super::tuples::TupleSeqV;
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

/// One step of a sequential fold of tuples (`reduce` here, a run of `reduce_by_key` in
/// `lazy_keyed.rs`): the accumulator's locals declared from the initial value, and the statements
/// that read element `j` and combine it in. Locals are named by the node and `tag`.
pub(super) struct TupleStep {
    pub acc: Vec<String>,
    pub tys: Vec<&'static str>,
    pub declare: String,
    pub step: String,
}

impl Tr<'_> {
    /// The step of folding `t` (node `n`'s input) with `op` from `init`, element `j` read.
    pub(super) fn tuple_step(
        &self,
        n: NodeId,
        op: &Lambda,
        (t, init, j): (&TupleSeqV, Vec<String>, &str),
        tag: char,
        env: &Env,
    ) -> Result<TupleStep, CodegenError> {
        let [pa, pb] = op.params.as_slice() else {
            return Err(self.unsupported(n, "(its operator does not take two values)"));
        };
        let (k, w) = (n.0, t.parts.len());
        let names =
            |p: &str| -> Vec<String> { (0..w).map(|c| format!("surge_{tag}{p}{k}_{c}")).collect() };
        let (acc, next, new) = (names("a"), names("b"), names("n"));
        let mut op_env = env.clone();
        op_env.insert(*pa, Bound::Tuple(acc.clone()));
        op_env.insert(*pb, Bound::Tuple(next.clone()));
        let items = self.parts(op.body, &op_env)?;
        if items.len() != w || init.len() != w {
            return Err(self.unsupported(
                n,
                "(its operator or prefix is not a tuple of its elements' width)",
            ));
        }
        let tys: Vec<&'static str> = t.parts.iter().map(|p| cuda_type(p.elem)).collect();
        let all = |f: &dyn Fn(usize) -> String| -> String { (0..w).map(f).collect() };
        let declare = all(&|c| format!("{} {} = {}; ", tys[c], acc[c], init[c]));
        let ats: Vec<String> = t.parts.iter().map(|p| p.at(j)).collect();
        // An element that is itself a fold of tuples (a lazy scan's, `lazy_scan.rs`) is
        // computed once, whole.
        let read = match whole_of(&ats) {
            Some(x) => {
                let e = format!("surge_{tag}e{k}");
                let parts = all(&|c| format!("const {} {} = {e}.c{c}; ", tys[c], next[c]));
                format!("const auto {e} = {x}; {parts}")
            }
            None => all(&|c| format!("const {} {} = {}; ", tys[c], next[c], ats[c])),
        };
        let combine = all(&|c| format!("const {} {} = {}; ", tys[c], new[c], items[c]));
        let assign = all(&|c| format!("{} = {}; ", acc[c], new[c]));
        Ok(TupleStep {
            acc,
            tys,
            declare,
            step: format!("{read}{combine}{assign}"),
        })
    }

    /// The components of `reduce(op, input, prefix)` (node `n`) over a flat sequence of tuples.
    pub(super) fn fold_tuple_parts(
        &self,
        n: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
        env: &Env,
    ) -> Result<Vec<String>, CodegenError> {
        let t = self.tuples(input, env)?;
        let k = n.0;
        let (init, from) = match prefix {
            Some(p) => (self.parts(p, env)?, "0"),
            None => (t.parts.iter().map(|p| p.at("0")).collect(), "1"),
        };
        let j = format!("surge_tj{k}");
        let s = self.tuple_step(n, op, (&t, init, &j), 't', env)?;
        let (declare, step) = (&s.declare, &s.step);
        let fold = |ret: &str, value: &str| {
            let empty = match prefix {
                Some(_) => String::new(),
                None => format!(
                    "if (surge_tn{k} == 0) {{ surge_fail(surge_err, {k}, SURGE_EMPTY_REDUCE, 0, 0, 0); return {ret}{{}}; }} "
                ),
            };
            format!(
                "([&]() -> {ret} {{ const u64 surge_tn{k} = {len}; {empty}{declare}\
                 for (u64 {j} = {from}; {j} < surge_tn{k}; ++{j}) {{ {step}}} \
                 return {value}; }}())",
                len = t.len,
            )
        };
        Ok(whole_or_parts(&s, fold))
    }
}

/// The parts of a fold whose lambda (`fold(return type, returned value)`) is written once: as
/// one whole `surge_tuple` read per component, or, wider than [`MAX_WHOLE`], once per component.
pub(super) fn whole_or_parts(s: &TupleStep, fold: impl Fn(&str, &str) -> String) -> Vec<String> {
    let w = s.acc.len();
    if w > MAX_WHOLE {
        return (0..w).map(|c| fold(s.tys[c], &s.acc[c])).collect();
    }
    let st = format!("surge_tuple<{}>", s.tys.join(", "));
    let whole = fold(&st, &format!("{st}{{{}}}", s.acc.join(", ")));
    (0..w).map(|c| format!("{whole}.c{c}")).collect()
}

/// The most components a fold returns whole (`surge_tuple`'s in the prelude).
const MAX_WHOLE: usize = 8;

/// When every part is component c of one whole expression (`X.c0`, `X.c1`, ..: a fold of
/// tuples), that expression `X`, so a reader of every component evaluates it once.
pub(super) fn whole_of(parts: &[String]) -> Option<&str> {
    let (first, rest) = parts.split_first()?;
    let x = first.strip_suffix(".c0")?;
    let same = rest
        .iter()
        .enumerate()
        .all(|(c, p)| p.strip_suffix(&format!(".c{}", c + 1)) == Some(x));
    (same && x.starts_with("([&]() -> surge_tuple<")).then_some(x)
}
