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
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

impl Tr<'_> {
    /// The components of `reduce(op, input, prefix)` (node `n`) over a flat sequence of tuples.
    pub(super) fn fold_tuple_parts(
        &self,
        n: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
        env: &Env,
    ) -> Result<Vec<String>, CodegenError> {
        let t = self.tuples(input, env)?;
        let [pa, pb] = op.params.as_slice() else {
            return Err(self.unsupported(n, "(its operator does not take two values)"));
        };
        let k = n.0;
        let w = t.parts.len();
        let names =
            |p: &str| -> Vec<String> { (0..w).map(|c| format!("surge_t{p}{k}_{c}")).collect() };
        let (acc, next, new) = (names("a"), names("b"), names("n"));
        let mut op_env = env.clone();
        op_env.insert(*pa, Bound::Tuple(acc.clone()));
        op_env.insert(*pb, Bound::Tuple(next.clone()));
        let items = self.parts(op.body, &op_env)?;
        let (init, from) = match prefix {
            Some(p) => (self.parts(p, env)?, "0"),
            None => (t.parts.iter().map(|p| p.at("0")).collect(), "1"),
        };
        if items.len() != w || init.len() != w {
            return Err(self.unsupported(
                n,
                "(its operator or prefix is not a tuple of its elements' width)",
            ));
        }
        let ty = |c: usize| cuda_type(t.parts[c].elem);
        let all = |f: &dyn Fn(usize) -> String| -> String { (0..w).map(f).collect() };
        let declare = all(&|c| format!("{} {} = {}; ", ty(c), acc[c], init[c]));
        let j = format!("surge_tj{k}");
        let read = all(&|c| format!("const {} {} = {}; ", ty(c), next[c], t.parts[c].at(&j)));
        let combine = all(&|c| format!("const {} {} = {}; ", ty(c), new[c], items[c]));
        let assign = all(&|c| format!("{} = {}; ", acc[c], new[c]));
        let fold = |ret: &str, value: &str| {
            let empty = match prefix {
                Some(_) => String::new(),
                None => format!(
                    "if (surge_tn{k} == 0) {{ surge_fail(surge_err, {k}, SURGE_EMPTY_REDUCE, 0, 0, 0); return {ret}{{}}; }} "
                ),
            };
            format!(
                "([&]() -> {ret} {{ const u64 surge_tn{k} = {len}; {empty}{declare}\
                 for (u64 {j} = {from}; {j} < surge_tn{k}; ++{j}) {{ {read}{combine}{assign}}} \
                 return {value}; }}())",
                len = t.len,
            )
        };
        if w > MAX_WHOLE {
            return Ok((0..w).map(|c| fold(ty(c), &acc[c])).collect());
        }
        let tys: Vec<&str> = (0..w).map(ty).collect();
        let st = format!("surge_tuple<{}>", tys.join(", "));
        let whole = fold(&st, &format!("{st}{{{}}}", acc.join(", ")));
        Ok((0..w).map(|c| format!("{whole}.c{c}")).collect())
    }
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
