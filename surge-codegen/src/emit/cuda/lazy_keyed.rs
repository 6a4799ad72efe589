//! A `reduce_by_key` of flat tuples read inside an element expression (not a phase's root:
//! `map(|v| reduce_prefix(g, reduce_by_key(f, zip(a, b), k, (p, v.0)), q), x)`, seed 23), read
//! lazily as any element-wise producer is: its length counts the runs of equal consecutive keys,
//! and its element `@I@` walks the keys to run `@I@`'s first position, then folds that run from
//! the prefix in position order (one local per component, the interpreter's order and bits),
//! returned whole as a `surge_tuple` (`tuple_fold.rs`). Each element costs a walk over the
//! keys: these are rare forms (a root `reduce_by_key` has its own kernels, `keyed.rs`), kept
//! correct rather than fast. A `reduce_by_key` of scalars in a map's body (`map(|v|
//! reduce_by_key(f, a, k, v), x)`, seed 25) is read the same way, its fold one local; and a
//! `reduce_by_key` of rows (of tuples: one component) whose element-wise combiner mixes the
//! components (seed 25: `|a, b| map(|(u, v)| (min(u.0, v.0), u.0 <= v.0 ? u.1 : v.1), ..)`),
//! which the per-component run kernels cannot fold: row `@R@` is run `@R@`, its element `@I@`
//! column `@I@` folded over the run's rows with every component in the accumulator.

use super::checks::{equal_lengths, pair_lengths};
use super::cuda_type;
use super::elements::{Bound, Env, I, R, SeqV, Tr};
use super::rows::{RowForm, RowsV};
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
        self.fold_run(I, ret, (declare, step), value)
    }

    /// [`Walk::fold`] of run `run`.
    fn fold_run(&self, run: &str, ret: &str, (declare, step): (&str, &str), value: &str) -> String {
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
             for (u64 {q} = 1; {q} < {nn} && surge_kr{k} < ({run}); ++{q}) {{ \
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
        let x = self.seq(input, env)?;
        let ks = self.seq(keys, env)?;
        let init = self.scalar(prefix, env)?;
        let walk = Walk::new(n.0, pair_lengths(&x.len, &ks.len, 0, n), &ks);
        let (acc, next) = (format!("surge_ka{}", n.0), format!("surge_kb{}", n.0));
        let combined = self.scalar_combine(n, op, (&acc, &next), env)?;
        let t = cuda_type(x.elem);
        let declare = format!("{t} {acc} = {init}; ");
        let step = format!("const {t} {next} = {}; {acc} = {combined}; ", x.at(&walk.q));
        Ok(SeqV {
            len: walk.count(),
            at: walk.fold(t, (&declare, &step), &acc),
            elem: x.elem,
        })
    }

    /// `reduce_by_key(op, input, keys, prefix)` (node `n`) of rows, `op` element-wise, read
    /// lazily (component `part` of rows of tuples): run `@R@` as a row as long as the prefix
    /// (checked against each of the run's rows as the combiner's map checks it), its element
    /// `@I@` the fold of column `@I@` from the prefix's element in row order.
    pub(super) fn lazy_row_runs(
        &self,
        n: NodeId,
        (op, input, keys, prefix): (&Lambda, NodeId, NodeId, NodeId),
        env: &Env,
        part: Option<usize>,
    ) -> Result<RowsV, CodegenError> {
        let (f, (u, v), row_first) = super::keyed::elementwise_map(self, op)?;
        let (rows, pfx) = match part {
            None => (vec![self.rows(input, env)?], vec![self.seq(prefix, env)?]),
            Some(_) => {
                let t = self.tuples(prefix, env)?;
                let len = t.len;
                let parts = t.parts.into_iter().map(|p| SeqV {
                    len: len.clone(),
                    ..p
                });
                (self.tuple_rows(input, env)?, parts.collect())
            }
        };
        let ks = self.seq(keys, env)?;
        let k = n.0;
        let walk = Walk::new(k, pair_lengths(&rows[0].rows, &ks.len, 0, n), &ks);
        let names = |p: &str| -> Vec<String> {
            (0..rows.len())
                .map(|c| format!("surge_k{p}{k}_{c}"))
                .collect()
        };
        let (acc, x, new) = (names("a"), names("x"), names("n"));
        let mut inner = env.clone();
        let items = match part {
            None => {
                inner.insert(u, Bound::Scalar(acc[0].clone()));
                inner.insert(v, Bound::Scalar(x[0].clone()));
                vec![self.scalar(f.body, &inner)?]
            }
            Some(_) => {
                inner.insert(u, Bound::Tuple(acc.clone()));
                inner.insert(v, Bound::Tuple(x.clone()));
                self.parts(f.body, &inner)?
            }
        };
        let j = part.unwrap_or(0);
        if items.len() != rows.len() || pfx.len() != rows.len() || j >= rows.len() {
            return Err(self.unsupported(
                n,
                "(its combiner or prefix is not a tuple of its rows' width)",
            ));
        }
        let q = &walk.q;
        let row: Vec<SeqV> = rows.iter().map(|r| r.row(q, None)).collect();
        // The width: the prefix's, checked against every row of the run.
        let w = format!("surge_kw{k}");
        let lens = if row_first {
            [row[0].len.clone(), w.clone()]
        } else {
            [w.clone(), row[0].len.clone()]
        };
        let check = equal_lengths(&lens, op.body);
        let declare = format!("u64 {w} = {}; ", pfx[0].len);
        let len = walk.fold_run(R, "u64", (&declare, &format!("{w} = {check}; ")), &w);
        // Each column folds every component; a row shorter than the prefix (its error
        // recorded) reads as 0 past its end.
        let mut declare = String::new();
        let mut step = String::new();
        let mut assign = String::new();
        for c in 0..rows.len() {
            let t = cuda_type(pfx[c].elem);
            declare += &format!("{t} {} = {}; ", acc[c], pfx[c].at(I));
            step += &format!(
                "const {t} {} = ({I}) < ({}) ? ({}) : ({t})0; ",
                x[c],
                row[c].len,
                row[c].at(I)
            );
        }
        for c in 0..rows.len() {
            let t = cuda_type(pfx[c].elem);
            step += &format!("const {t} {} = {}; ", new[c], items[c]);
            assign += &format!("{} = {}; ", acc[c], new[c]);
        }
        let t = cuda_type(pfx[j].elem);
        let at = walk.fold_run(R, t, (&declare, &(step + &assign)), &acc[j]);
        Ok(RowsV {
            rows: walk.count(),
            form: RowForm::Each(SeqV {
                len,
                at,
                elem: pfx[j].elem,
            }),
        })
    }
}
