//! A `scan` of scalars or of tuples of scalars inside an element expression (not a phase's root
//! or level: `map(|v| reduce_prefix(g, scan_prefix(g, zip(a, b), (v.0, v.0)), p), x)`, random
//! seed 31), read lazily as any element-wise producer is: its length is its input's, and its
//! element `@I@` folds the input's positions before `@I@` from the prefix (exclusive), or those
//! up to and including `@I@` from the first element (inclusive, no prefix), in position order,
//! the interpreter's order and bits. A tuple scan's element is returned whole as a
//! `surge_tuple` (`tuple_fold.rs`), so a consumer that reads every component folds once.
//!
//! Each element costs a walk over the positions before it (a reduction over the scan is
//! quadratic in the row): these are rare forms (a scan at a phase's root or level has its own
//! kernels), kept correct rather than fast. The interpreter combines the positions an element
//! reads and, for an exclusive scan, every position but the last: an error of the operator
//! (an integer division by zero) at a position no element reads is not raised here.

use super::cuda_type;
use super::elements::{Bound, Env, I, SeqV, Tr};
use super::tuple_fold::whole_or_parts;
use super::tuples::TupleSeqV;
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

/// Where element `@I@`'s walk starts and ends (exclusive), given whether the scan has a prefix.
fn walk_bounds(prefixed: bool) -> (&'static str, String) {
    match prefixed {
        true => ("0", I.to_string()),
        false => ("1", format!("{I} + 1")),
    }
}

impl Tr<'_> {
    /// `op` (node `n`'s combiner of two scalars) applied to the locals `acc` and `next`.
    pub(super) fn scalar_combine(
        &self,
        n: NodeId,
        op: &Lambda,
        (acc, next): (&str, &str),
        env: &Env,
    ) -> Result<String, CodegenError> {
        let [pa, pb] = op.params.as_slice() else {
            return Err(self.unsupported(n, "(its operator does not take two values)"));
        };
        let mut op_env = env.clone();
        op_env.insert(*pa, Bound::Scalar(acc.to_string()));
        op_env.insert(*pb, Bound::Scalar(next.to_string()));
        self.scalar(op.body, &op_env)
    }

    /// `scan(op, input, prefix)` (node `n`) over scalars, read lazily.
    pub(super) fn lazy_scan(
        &self,
        n: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
        env: &Env,
    ) -> Result<SeqV, CodegenError> {
        let x = self.seq(input, env)?;
        let k = n.0;
        let (acc, next, j) = (
            format!("surge_ca{k}"),
            format!("surge_cb{k}"),
            format!("surge_cj{k}"),
        );
        let combined = self.scalar_combine(n, op, (&acc, &next), env)?;
        let init = match prefix {
            Some(p) => self.scalar(p, env)?,
            None => x.at("0"),
        };
        let (from, end) = walk_bounds(prefix.is_some());
        let t = cuda_type(x.elem);
        let at = format!(
            "([&]() -> {t} {{ {t} {acc} = {init}; for (u64 {j} = {from}; {j} < ({end}); ++{j}) \
             {{ const {t} {next} = {}; {acc} = {combined}; }} return {acc}; }}())",
            x.at(&j)
        );
        Ok(SeqV {
            len: x.len,
            at,
            elem: x.elem,
        })
    }

    /// `scan(op, input, prefix)` (node `n`) over tuples of scalars, read lazily: one local per
    /// component in the accumulator.
    pub(super) fn lazy_tuple_scan(
        &self,
        n: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
        env: &Env,
    ) -> Result<TupleSeqV, CodegenError> {
        let t = self.tuples(input, env)?;
        let init = match prefix {
            Some(p) => self.parts(p, env)?,
            None => t.parts.iter().map(|p| p.at("0")).collect(),
        };
        let j = format!("surge_cj{}", n.0);
        let st = self.tuple_step(n, op, (&t, init, &j), 'c', env)?;
        let (from, end) = walk_bounds(prefix.is_some());
        let fold = |ret: &str, value: &str| {
            format!(
                "([&]() -> {ret} {{ {}for (u64 {j} = {from}; {j} < ({end}); ++{j}) {{ {}}} \
                 return {value}; }}())",
                st.declare, st.step
            )
        };
        let parts = whole_or_parts(&st, fold)
            .into_iter()
            .enumerate()
            .map(|(c, at)| SeqV {
                len: t.len.clone(),
                at,
                elem: t.parts[c].elem,
            })
            .collect();
        Ok(TupleSeqV { len: t.len, parts })
    }
}
