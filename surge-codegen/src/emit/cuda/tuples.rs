//! Flat sequences of tuples in the element translator ([`Tr::tuples`]): a length and one
//! element template per component (struct of arrays, never materialized): `zip`, `join`, a
//! `map` whose body is a tuple, `reverse`/`striding`/`gather` of tuples and a `replicate` of a
//! tuple.

use super::checks::equal_lengths;
use super::elements::{Bound, Env, I, SeqV, Tr, renamed};
use crate::CodegenError;
use crate::emit::lower::Operand;
use crate::ir::{NodeId, Op, Type};

/// Whether `ty` is a flat sequence of tuples.
pub(super) fn seq_of_tuples(ty: &Type) -> bool {
    matches!(ty, Type::Seq(t) if matches!(**t, Type::Tuple(_)))
}

/// A flat sequence of tuples of scalars (`zip`, `join`): its length and one element template
/// per component, over the same index `@I@` (struct of arrays, never materialized).
#[derive(Debug, Clone)]
pub(super) struct TupleSeqV {
    pub(super) len: String,
    pub(super) parts: Vec<SeqV>,
}

impl Tr<'_> {
    /// A flat sequence of tuples of scalars: `zip` (inputs of one length, checked) and `join`
    /// (the Cartesian product, the last input varying fastest).
    pub(super) fn tuples(&self, n: NodeId, env: &Env) -> Result<TupleSeqV, CodegenError> {
        if let Some(b) = env.get(&n) {
            return match b {
                Bound::Tuples(t) => Ok(t.clone()),
                _ => Err(self.unsupported(n, "as a sequence of tuples")),
            };
        }
        if let Some(t) = self.packed_seq(n) {
            return Ok(t);
        }
        let op = &self.c.node(n).op;
        if let Op::Map { f, inputs } = op {
            return self.map_tuples(n, f, inputs, env);
        }
        if let Some(f) = crate::emit::lower::flat(op)
            && let Some(Operand::Seq(source)) = f.operands.first()
        {
            // A `reverse`, `striding` or `gather` of tuples: the lowering once per component.
            // Each component lowered over the whole sequence's length (a `join`'s components
            // are shorter: lowered over their own, a striding of a join with an empty input
            // divided by zero).
            let src = self.tuples(*source, env)?;
            let parts = src
                .parts
                .into_iter()
                .map(|mut p| {
                    p.len = src.len.clone();
                    let elem = p.elem;
                    self.lowered_with(n, &f, Some(p), elem, env)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let len = parts.first().map(|p| p.len.clone()).unwrap_or_default();
            return Ok(TupleSeqV { len, parts });
        }
        if let Op::Index { seq, index } = op
            && super::elements::rows_of_tuples(self.ty(*seq))
        {
            // A row of rows of tuples: the row of each component.
            let parts = self.tuple_rows(*seq, env)?;
            let i = self.scalar(*index, env)?;
            let rows = &parts[0].rows;
            let row = format!("surge_row_index((i64)({i}), {rows}, {}, surge_err)", n.0);
            let ok = format!("{row} < {rows}");
            let parts: Vec<SeqV> = parts
                .iter()
                .map(|p| p.row(&row, Some(ok.clone())))
                .collect();
            return Ok(TupleSeqV {
                len: parts[0].len.clone(),
                parts,
            });
        }
        if let Op::Replicate { value, len } = op {
            let len = format!(
                "surge_len((i64)({}), {}, surge_err)",
                self.scalar(*len, env)?,
                n.0
            );
            let items = self.parts(*value, env)?;
            return self.tuple_seq(*value, len, items);
        }
        if let Op::ReduceByKey {
            op: f,
            input,
            keys,
            prefix,
        } = op
        {
            return self.lazy_runs(n, (f, *input, *keys, *prefix), env);
        }
        if let Op::Scan {
            op: f,
            input,
            prefix,
        } = op
        {
            return self.lazy_tuple_scan(n, (f, *input, *prefix), env);
        }
        let (Op::Zip { inputs } | Op::Join { inputs }) = op else {
            return Err(self.unsupported(n, "as a sequence of tuples"));
        };
        let parts = inputs
            .iter()
            .map(|i| self.seq(*i, env))
            .collect::<Result<Vec<_>, _>>()?;
        let lens: Vec<String> = parts.iter().map(|s| s.len.clone()).collect();
        if matches!(self.c.node(n).op, Op::Zip { .. }) {
            return Ok(TupleSeqV {
                len: equal_lengths(&lens, n),
                parts,
            });
        }
        // Component k of element i is element (i / (l[k+1] · .. · l[n-1])) % l[k] of input k.
        let parts = (0..parts.len())
            .map(|k| {
                let later: Vec<&str> = lens[k + 1..].iter().map(String::as_str).collect();
                let q = if later.is_empty() {
                    I.to_string()
                } else {
                    format!("{I} / ({})", later.join(" * "))
                };
                SeqV {
                    len: lens[k].clone(),
                    at: parts[k].at(&format!("({q}) % {}", lens[k])),
                    elem: parts[k].elem,
                }
            })
            .collect();
        Ok(TupleSeqV {
            len: format!("({})", lens.join(" * ")),
            parts,
        })
    }

    /// A tuple of scalars as one expression per component: a bound tuple (a parameter), a
    /// `tuple` of scalars.
    pub(super) fn parts(&self, n: NodeId, env: &Env) -> Result<Vec<String>, CodegenError> {
        match (env.get(&n), &self.c.node(n).op) {
            (Some(Bound::Tuple(parts)), _) => Ok(parts.clone()),
            (_, Op::Tuple { items }) => items.iter().map(|i| self.scalar(*i, env)).collect(),
            (_, Op::Index { seq, index }) if seq_of_tuples(self.ty(*seq)) => {
                // Each component indexed alike (the index checked once per component).
                let t = self.tuples(*seq, env)?;
                let i = self.scalar(*index, env)?;
                Ok(t.parts
                    .iter()
                    .map(|p| p.checked_at(&i, &t.len, n))
                    .collect())
            }
            // Folded in the element unless an earlier phase stored it.
            (_, Op::Reduce { op, input, prefix })
                if seq_of_tuples(self.ty(*input)) && self.packed_result(n).is_none() =>
            {
                self.fold_tuple_parts(n, (op, *input, *prefix), env)
            }
            _ => self
                .packed_result(n)
                .ok_or_else(|| self.unsupported(n, "as a tuple of scalars")),
        }
    }

    /// The sequence of tuples of scalars an earlier phase stored packed (`fold::packed_write`):
    /// element `@I@`'s words read back as their components' types.
    fn packed_seq(&self, n: NodeId) -> Option<TupleSeqV> {
        let k = *self.roots.get(&n)?;
        let Type::Seq(item) = self.ty(n) else {
            return None;
        };
        let elems = super::fold::packed_tuple(item).filter(|_| k < self.phase)?;
        let a = self.arg(super::ArgSlot::Phase {
            phase: k,
            elem: crate::ir::Elem::U64,
            nested: true,
        });
        let width = elems.len();
        // A map's tuples are rows of `width` words, a root scan's one row of them: either way
        // element `@I@` is words `@I@ · width ..`.
        let len = format!("(n_{a} / {width}ULL)");
        let parts = elems.iter().enumerate().map(|(c, e)| SeqV {
            len: len.clone(),
            at: format!(
                "surge_unpack_{}({a}[{I} * {width} + {c}])",
                super::cuda_type(*e)
            ),
            elem: *e,
        });
        let parts = parts.collect();
        Some(TupleSeqV { len, parts })
    }

    /// The tuple of scalars an earlier phase stored packed (`fold::packed_write`): its one row's
    /// words read back as their components' types.
    fn packed_result(&self, n: NodeId) -> Option<Vec<String>> {
        let k = *self.roots.get(&n)?;
        let elems = super::fold::packed_tuple(self.ty(n)).filter(|_| k < self.phase)?;
        let a = self.arg(super::ArgSlot::Phase {
            phase: k,
            elem: crate::ir::Elem::U64,
            nested: true,
        });
        let words = elems
            .iter()
            .enumerate()
            .map(|(c, e)| format!("surge_unpack_{}({a}[{c}])", super::cuda_type(*e)));
        Some(words.collect())
    }

    /// A `map` whose body is a tuple of scalars, one element template per component.
    fn map_tuples(
        &self,
        n: NodeId,
        f: &crate::ir::Lambda,
        inputs: &[NodeId],
        env: &Env,
    ) -> Result<TupleSeqV, CodegenError> {
        let (e, inner, lens) = self.bind_params(n, f, inputs, env)?;
        let items = self
            .parts(f.body, &inner)?
            .into_iter()
            .map(|x| renamed(&x, &e, I))
            .collect();
        self.tuple_seq(f.body, equal_lengths(&lens, n), items)
    }

    /// A sequence of `len` tuples whose components are `items` (templates over `@I@`), typed
    /// by tuple node `t`.
    fn tuple_seq(
        &self,
        t: NodeId,
        len: String,
        items: Vec<String>,
    ) -> Result<TupleSeqV, CodegenError> {
        let Type::Tuple(tys) = self.ty(t) else {
            return Err(self.unsupported(t, "as a tuple of scalars"));
        };
        let parts = items
            .into_iter()
            .zip(tys)
            .map(|(at, ty)| {
                let elem = ty
                    .as_scalar()
                    .ok_or_else(|| self.unsupported(t, "as a tuple of scalars"))?;
                Ok(SeqV {
                    len: len.clone(),
                    at,
                    elem,
                })
            })
            .collect::<Result<Vec<_>, CodegenError>>()?;
        Ok(TupleSeqV { len, parts })
    }
}
