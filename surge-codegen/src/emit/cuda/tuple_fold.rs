//! A `reduce` of tuples inside an element expression (not one of the phase's levels: CoMD's
//! per-cell sums of (fx, fy, fz, φ) inside the reduction over neighbour cells). Each component
//! is an immediately invoked lambda that folds the whole tuple sequentially from the prefix
//! (or the first element), in the interpreter's order, and returns that component: the bits
//! are the interpreter's, and a tuple of w components folds w times (no struct type is
//! declared for the tuple, so nothing but the components can be returned). Locals are named
//! by the node, so a fold inside another's elements does not shadow the outer one's names.

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
        Ok((0..w)
            .map(|c| {
                let empty = match prefix {
                    Some(_) => String::new(),
                    None => format!(
                        "if (surge_tn{k} == 0) {{ surge_fail(surge_err, {k}, SURGE_EMPTY_REDUCE, 0, 0, 0); return ({})0; }} ",
                        ty(c)
                    ),
                };
                format!(
                    "([&]() -> {tc} {{ const u64 surge_tn{k} = {len}; {empty}{declare}\
                     for (u64 {j} = {from}; {j} < surge_tn{k}; ++{j}) {{ {read}{combine}{assign}}} \
                     return {a}; }}())",
                    tc = ty(c),
                    len = t.len,
                    a = acc[c],
                )
            })
            .collect())
    }
}
