//! A `reduce_by_key` of flat tuples read inside an element expression (not a phase's root:
//! `map(|v| reduce_prefix(g, reduce_by_key(f, zip(a, b), k, (p, v.0)), q), x)`, seed 23), read
//! lazily as any element-wise producer is: its length counts the runs of equal consecutive keys,
//! and its element `@I@` walks the keys to run `@I@`'s first position, then folds that run from
//! the prefix in position order (one local per component, the interpreter's order and bits),
//! returned whole as a `surge_tuple` (`tuple_fold.rs`). Each element costs a walk over the
//! keys: these are rare forms (a root `reduce_by_key` has its own kernels, `keyed.rs`), kept
//! correct rather than fast. A `reduce_by_key` of scalars in a map's body (`map(|v|
//! reduce_by_key(f, a, k, v), x)`, seed 25) is read the same way, its fold one local.

use super::checks::pair_lengths;
use super::cuda_type;
use super::elements::{Bound, Env, I, SeqV, Tr};
use super::tuple_fold::whole_or_parts;
use super::tuples::TupleSeqV;
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

/// The walk over the keys of one lazy `reduce_by_key` (node `k`): its checked length, the
/// position local `q` and the test of a run starting at `q`.
struct Walk {
    k: u64,
    len: String,
    nn: String,
    q: String,
    changes: String,
}

impl Walk {
    fn new(k: u64, len: String, keys: &SeqV) -> Walk {
        let key = |q: &str| format!("(i64)({})", keys.at(q));
        let (nn, q) = (format!("surge_kl{k}"), format!("surge_kq{k}"));
        let changes = format!("{} != {}", key(&q), key(&format!("{q} - 1")));
        Walk {
            k,
            len,
            nn,
            q,
            changes,
        }
    }

    /// The number of runs of equal consecutive keys.
    fn count(&self) -> String {
        let Walk {
            k,
            len,
            nn,
            q,
            changes,
        } = self;
        format!(
            "([&]() -> u64 {{ const u64 {nn} = {len}; u64 surge_kr{k} = {nn} > 0 ? 1 : 0; \
             for (u64 {q} = 1; {q} < {nn}; ++{q}) {{ if ({changes}) {{ ++surge_kr{k}; }} }} \
             return surge_kr{k}; }}())"
        )
    }

    /// Run `@I@`'s fold returning `value` of type `ret`: `declare` the accumulator, then `step`
    /// at every position `q` of the run.
    fn fold(&self, ret: &str, (declare, step): (&str, &str), value: &str) -> String {
        let Walk {
            k,
            len,
            nn,
            q,
            changes,
        } = self;
        let s = format!("surge_ks{k}");
        format!(
            "([&]() -> {ret} {{ const u64 {nn} = {len}; u64 {s} = 0; u64 surge_kr{k} = 0; \
             for (u64 {q} = 1; {q} < {nn} && surge_kr{k} < ({I}); ++{q}) {{ \
             if ({changes}) {{ ++surge_kr{k}; {s} = {q}; }} }} {declare}\
             for (u64 {q} = {s}; {q} < {nn} && ({q} == {s} || !({changes})); ++{q}) \
             {{ {step}}} return {value}; }}())"
        )
    }
}

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
        let init = self.parts(prefix, env)?;
        let walk = Walk::new(n.0, pair_lengths(&t.len, &ks.len, 0, n), &ks);
        let st = self.tuple_step(n, op, (&t, init, &walk.q), 'k', env)?;
        let fold = |ret: &str, value: &str| walk.fold(ret, (&st.declare, &st.step), value);
        let count = walk.count();
        let parts = whole_or_parts(&st, fold)
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

    /// `reduce_by_key(op, input, keys, prefix)` (node `n`) over scalars, read lazily: the same
    /// walk as [`Tr::lazy_runs`], the accumulator one local.
    pub(super) fn lazy_scalar_runs(
        &self,
        n: NodeId,
        (op, input, keys, prefix): (&Lambda, NodeId, NodeId, NodeId),
        env: &Env,
    ) -> Result<SeqV, CodegenError> {
        let [pa, pb] = op.params.as_slice() else {
            return Err(self.unsupported(n, "(its operator does not take two values)"));
        };
        let x = self.seq(input, env)?;
        let ks = self.seq(keys, env)?;
        let init = self.scalar(prefix, env)?;
        let walk = Walk::new(n.0, pair_lengths(&x.len, &ks.len, 0, n), &ks);
        let (acc, next) = (format!("surge_ka{}", n.0), format!("surge_kb{}", n.0));
        let mut op_env = env.clone();
        op_env.insert(*pa, Bound::Scalar(acc.clone()));
        op_env.insert(*pb, Bound::Scalar(next.clone()));
        let combined = self.scalar(op.body, &op_env)?;
        let t = cuda_type(x.elem);
        let declare = format!("{t} {acc} = {init}; ");
        let step = format!("const {t} {next} = {}; {acc} = {combined}; ", x.at(&walk.q));
        Ok(SeqV {
            len: walk.count(),
            at: walk.fold(t, (&declare, &step), &acc),
            elem: x.elem,
        })
    }
}
