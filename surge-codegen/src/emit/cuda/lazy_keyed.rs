//! A `reduce_by_key` of flat tuples read inside an element expression (not a phase's root:
//! `map(|v| reduce_prefix(g, reduce_by_key(f, zip(a, b), k, (p, v.0)), q), x)`, seed 23), read
//! lazily as any element-wise producer is: its length counts the runs of equal consecutive keys,
//! and its element `@I@` walks the keys to run `@I@`'s first position, then folds that run from
//! the prefix in position order (one local per component, the interpreter's order and bits),
//! returned whole as a `surge_tuple` (`tuple_fold.rs`). Each element costs a walk over the
//! keys: these are rare forms (a root `reduce_by_key` has its own kernels, `keyed.rs`), kept
//! correct rather than fast.

use super::checks::pair_lengths;
use super::cuda_type;
use super::elements::{Bound, Env, I, SeqV, Tr};
use super::tuples::TupleSeqV;
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

/// The most components a run's fold returns whole (`surge_tuple`'s in the prelude).
const MAX_WHOLE: usize = 8;

impl Tr<'_> {
    /// `reduce_by_key(op, input, keys, prefix)` (node `n`) over flat tuples, read lazily.
    pub(super) fn lazy_runs(
        &self,
        n: NodeId,
        (op, input, keys, prefix): (&Lambda, NodeId, NodeId, NodeId),
        env: &Env,
    ) -> Result<TupleSeqV, CodegenError> {
        let t = self.tuples(input, env)?;
        let ks = self.seq(keys, env)?;
        let [pa, pb] = op.params.as_slice() else {
            return Err(self.unsupported(n, "(its operator does not take two values)"));
        };
        let k = n.0;
        let w = t.parts.len();
        let names =
            |p: &str| -> Vec<String> { (0..w).map(|c| format!("surge_k{p}{k}_{c}")).collect() };
        let (acc, next, new) = (names("a"), names("b"), names("n"));
        let mut op_env = env.clone();
        op_env.insert(*pa, Bound::Tuple(acc.clone()));
        op_env.insert(*pb, Bound::Tuple(next.clone()));
        let items = self.parts(op.body, &op_env)?;
        let init = self.parts(prefix, env)?;
        if items.len() != w || init.len() != w {
            return Err(self.unsupported(
                n,
                "(its operator or prefix is not a tuple of its elements' width)",
            ));
        }
        let len = pair_lengths(&t.len, &ks.len, 0, n);
        let key = |q: &str| format!("(i64)({})", ks.at(q));
        let (nn, q) = (format!("surge_kl{k}"), format!("surge_kq{k}"));
        let changes = format!("{} != {}", key(&q), key(&format!("{q} - 1")));
        let count = format!(
            "([&]() -> u64 {{ const u64 {nn} = {len}; u64 surge_kr{k} = {nn} > 0 ? 1 : 0; \
             for (u64 {q} = 1; {q} < {nn}; ++{q}) {{ if ({changes}) {{ ++surge_kr{k}; }} }} \
             return surge_kr{k}; }}())"
        );
        let ty = |c: usize| cuda_type(t.parts[c].elem);
        let all = |f: &dyn Fn(usize) -> String| -> String { (0..w).map(f).collect() };
        let declare = all(&|c| format!("{} {} = {}; ", ty(c), acc[c], init[c]));
        let read = all(&|c| format!("const {} {} = {}; ", ty(c), next[c], t.parts[c].at(&q)));
        let combine = all(&|c| format!("const {} {} = {}; ", ty(c), new[c], items[c]));
        let assign = all(&|c| format!("{} = {}; ", acc[c], new[c]));
        let s = format!("surge_ks{k}");
        let fold = |ret: &str, value: &str| {
            format!(
                "([&]() -> {ret} {{ const u64 {nn} = {len}; u64 {s} = 0; u64 surge_kr{k} = 0; \
                 for (u64 {q} = 1; {q} < {nn} && surge_kr{k} < ({I}); ++{q}) {{ \
                 if ({changes}) {{ ++surge_kr{k}; {s} = {q}; }} }} {declare}\
                 for (u64 {q} = {s}; {q} < {nn} && ({q} == {s} || !({changes})); ++{q}) \
                 {{ {read}{combine}{assign}}} return {value}; }}())"
            )
        };
        let parts: Vec<String> = if w > MAX_WHOLE {
            (0..w).map(|c| fold(ty(c), &acc[c])).collect()
        } else {
            let tys: Vec<&str> = (0..w).map(ty).collect();
            let st = format!("surge_tuple<{}>", tys.join(", "));
            let whole = fold(&st, &format!("{st}{{{}}}", acc.join(", ")));
            (0..w).map(|c| format!("{whole}.c{c}")).collect()
        };
        let parts = parts
            .into_iter()
            .enumerate()
            .map(|(c, at)| SeqV {
                len: count.clone(),
                at,
                elem: t.parts[c].elem,
            })
            .collect();
        Ok(TupleSeqV { len: count, parts })
    }
}
