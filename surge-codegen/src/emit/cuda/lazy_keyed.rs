//! A `reduce_by_key` of flat tuples read inside an element expression (not a phase's root:
//! `map(|v| reduce_prefix(g, reduce_by_key(f, zip(a, b), k, (p, v.0)), q), x)`, seed 23), read
//! lazily as any element-wise producer is: its length counts the runs of equal consecutive keys,
//! and its element `@I@` walks the keys to run `@I@`'s first position, then folds that run from
//! the prefix in position order (one local per component, the interpreter's order and bits),
//! returned whole as a `surge_tuple` (`tuple_fold.rs`). Each element costs a walk over the
//! keys: these are rare forms (a root `reduce_by_key` has its own kernels, `keyed.rs`), kept
//! correct rather than fast.

use super::checks::pair_lengths;
use super::elements::{Env, I, SeqV, Tr};
use super::tuple_fold::whole_or_parts;
use super::tuples::TupleSeqV;
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

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
        let k = n.0;
        let init = self.parts(prefix, env)?;
        let len = pair_lengths(&t.len, &ks.len, 0, n);
        let key = |q: &str| format!("(i64)({})", ks.at(q));
        let (nn, q) = (format!("surge_kl{k}"), format!("surge_kq{k}"));
        let changes = format!("{} != {}", key(&q), key(&format!("{q} - 1")));
        let count = format!(
            "([&]() -> u64 {{ const u64 {nn} = {len}; u64 surge_kr{k} = {nn} > 0 ? 1 : 0; \
             for (u64 {q} = 1; {q} < {nn}; ++{q}) {{ if ({changes}) {{ ++surge_kr{k}; }} }} \
             return surge_kr{k}; }}())"
        );
        let st = self.tuple_step(n, op, (&t, init, &q), 'k', env)?;
        let (declare, step) = (&st.declare, &st.step);
        let s = format!("surge_ks{k}");
        let fold = |ret: &str, value: &str| {
            format!(
                "([&]() -> {ret} {{ const u64 {nn} = {len}; u64 {s} = 0; u64 surge_kr{k} = 0; \
                 for (u64 {q} = 1; {q} < {nn} && surge_kr{k} < ({I}); ++{q}) {{ \
                 if ({changes}) {{ ++surge_kr{k}; {s} = {q}; }} }} {declare}\
                 for (u64 {q} = {s}; {q} < {nn} && ({q} == {s} || !({changes})); ++{q}) \
                 {{ {step}}} return {value}; }}())"
            )
        };
        let parts = whole_or_parts(&st, fold);
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
