//! Nested sequences in the element translator ([`Tr::rows`]): a row count and row `@R@` as a
//! flat sequence, laid out as slices of a flat sequence (`nest`, `split`, an earlier phase's
//! nested result), columns of rows (`transpose`), rows mapped by the shared lowering over row
//! numbers (`reverse`, `striding`, `gather` of rows), one row repeated (`replicate` of a
//! sequence) or a row per element of a `map` whose body is a sequence.

use super::ArgSlot;
use super::checks::equal_lengths;
use super::elements::{Bound, Env, I, R, SeqV, Tr, renamed};
use crate::CodegenError;
use crate::emit::lower::{Flat, Operand};
use crate::ir::{Elem, NodeId, Op, Type};

/// A nested sequence: its row count and its rows.
#[derive(Debug, Clone)]
pub(super) struct RowsV {
    pub(super) rows: String,
    pub(super) form: RowForm,
}

/// How the rows of a nested sequence are laid out.
#[derive(Debug, Clone)]
pub(super) enum RowForm {
    /// Row `@R@` is a contiguous (begin, length) range of a flat sequence.
    Slices(Slices),
    /// Row `@R@` is element `@R@` of every row of a uniformly nested sequence (`transpose`;
    /// its row count is the checked common row length).
    Columns(Box<RowsV>),
    /// Row `@R@` is row `index` of `inner`, `index` a template over `@I@` (= `@R@`): the rows
    /// of a `reverse`, `striding` or `gather` of a nested sequence (lowered by
    /// `emit::lower` over the row numbers). A source row out of range reads as empty (a
    /// gathered one has recorded its error).
    Mapped { inner: Box<RowsV>, index: String },
    /// Every row is the same flat sequence (a `replicate` of one).
    Same(SeqV),
    /// Row `@R@` is a flat sequence whose length and element templates mention `@R@` (a
    /// `map` whose body is a sequence, its parameters bound to element `@R@` of its inputs).
    Each(SeqV),
}

/// Rows as (begin, length) ranges of a flat sequence.
#[derive(Debug, Clone)]
pub(super) struct Slices {
    pub(super) begin: String,
    pub(super) len: String,
    /// A run-time check of row `@R@` (a `bool` expression that records the error when false);
    /// a row that fails it is read as empty.
    pub(super) ok: Option<String>,
    pub(super) flat: SeqV,
}

/// The stem of the placeholders for the row index of a transposed sequence's input while its
/// row is built (`@T0@`, `@T1@`, .. one per transpose in a chain).
const T: &str = "@T";

impl RowsV {
    /// The rows a phase stored, read through its parameter `a` (and `a_off`).
    pub(super) fn stored(a: &str, elem: Elem) -> RowsV {
        RowsV::slices(
            format!("(n_{a}_off - 1)"),
            format!("{a}_off[{R}]"),
            format!("({a}_off[{R} + 1] - {a}_off[{R}])"),
            None,
            SeqV {
                len: format!("n_{a}"),
                at: format!("{a}[{I}]"),
                elem,
            },
        )
    }

    fn slices(rows: String, begin: String, len: String, ok: Option<String>, flat: SeqV) -> RowsV {
        RowsV {
            rows,
            form: RowForm::Slices(Slices {
                begin,
                len,
                ok,
                flat,
            }),
        }
    }

    /// Row `r` (known to be below `rows` when `r_ok` is true) as a flat sequence.
    pub(super) fn row(&self, r: &str, r_ok: Option<String>) -> SeqV {
        match &self.form {
            RowForm::Slices(s) => s.row(r, r_ok),
            RowForm::Columns(input) => {
                // Element i of column r is element r of input row i (every input row is
                // `rows` long once the width check passed, so r is in range). The input row's
                // placeholder is one that `r` does not hold (a transpose of a transpose passes
                // its own as `r`).
                let t = (0..)
                    .map(|k| format!("{T}{k}@"))
                    .find(|t| !r.contains(t.as_str()))
                    .expect("a free placeholder");
                let row_i = input.row(&t, None);
                let len = match r_ok {
                    Some(ok) => format!("(({ok}) ? {} : 0ULL)", input.rows),
                    None => input.rows.clone(),
                };
                SeqV {
                    len,
                    at: row_i.at(r).replace(&t, I),
                    elem: row_i.elem,
                }
            }
            RowForm::Mapped { inner, index } => {
                let m = index.replace(I, &format!("({r})"));
                let ok = format!("({m}) < {}", inner.rows);
                let ok = match r_ok {
                    Some(r_ok) => format!("({r_ok}) && {ok}"),
                    None => ok,
                };
                inner.row(&m, Some(ok))
            }
            RowForm::Same(seq) => guarded(seq.clone(), r_ok),
            RowForm::Each(seq) => {
                let sub = |t: &str| t.replace(R, &format!("({r})"));
                let seq = SeqV {
                    len: sub(&seq.len),
                    at: sub(&seq.at),
                    elem: seq.elem,
                };
                guarded(seq, r_ok)
            }
        }
    }
}

/// `seq`, read as empty unless `ok` holds.
fn guarded(seq: SeqV, ok: Option<String>) -> SeqV {
    match ok {
        Some(ok) => SeqV {
            len: format!("(({ok}) ? {} : 0ULL)", seq.len),
            ..seq
        },
        None => seq,
    }
}

impl Slices {
    fn row(&self, r: &str, r_ok: Option<String>) -> SeqV {
        let sub = |t: &str| t.replace(R, &format!("({r})"));
        let ok: Vec<String> = r_ok
            .into_iter()
            .chain(self.ok.as_ref().map(|o| sub(o)))
            .collect();
        let (begin, len) = if ok.is_empty() {
            (sub(&self.begin), sub(&self.len))
        } else {
            let ok = ok.join(" && ");
            (
                format!("(({ok}) ? {} : 0ULL)", sub(&self.begin)),
                format!("(({ok}) ? {} : 0ULL)", sub(&self.len)),
            )
        };
        SeqV {
            len,
            at: self.flat.at(&format!("{begin} + {I}")),
            elem: self.flat.elem,
        }
    }
}

impl Tr<'_> {
    /// A nested sequence (depth 2) of scalars as rows over a flat sequence.
    pub(super) fn rows(&self, n: NodeId, env: &Env) -> Result<RowsV, CodegenError> {
        self.rows_of(n, env, None)
    }

    /// A nested sequence (depth 2) of tuples of scalars as one nested sequence per component:
    /// the row structure (`nest`, `split`, `transpose`, `replicate`, a `map` whose body is a
    /// sequence of tuples, rows reversed, strided or gathered) applies to each component alike.
    pub(super) fn tuple_rows(&self, n: NodeId, env: &Env) -> Result<Vec<RowsV>, CodegenError> {
        let arity = match self.ty(n) {
            Type::Seq(row) => match &**row {
                Type::Seq(t) => match &**t {
                    Type::Tuple(items) if items.iter().all(|i| i.as_scalar().is_some()) => {
                        items.len()
                    }
                    _ => 0,
                },
                _ => 0,
            },
            _ => 0,
        };
        if arity == 0 {
            return Err(self.unsupported(n, "as rows of tuples of scalars"));
        }
        (0..arity).map(|k| self.rows_of(n, env, Some(k))).collect()
    }

    /// The flat sequence `n`, or component `k` of the flat sequence of tuples `n` (its length
    /// the checked length of the whole).
    fn flat_part(&self, n: NodeId, env: &Env, part: Option<usize>) -> Result<SeqV, CodegenError> {
        let Some(k) = part else {
            return self.seq(n, env);
        };
        let t = self.tuples(n, env)?;
        let mut p = t.parts.get(k).cloned().ok_or_else(|| {
            self.unsupported(n, "(a component of a sequence of tuples out of range)")
        })?;
        p.len = t.len;
        Ok(p)
    }

    /// [`Tr::rows`], or component `part` of the rows of tuples `n`.
    pub(super) fn rows_of(
        &self,
        n: NodeId,
        env: &Env,
        part: Option<usize>,
    ) -> Result<RowsV, CodegenError> {
        match (part, env.get(&n)) {
            (None, Some(Bound::Rows(r))) => return Ok(r.clone()),
            (Some(k), Some(Bound::TupleRows(parts))) if k < parts.len() => {
                return Ok(parts[k].clone());
            }
            _ => {}
        }
        if let (None, Some((k, elem, true))) = (part, self.phase_result(n)) {
            let a = self.arg(ArgSlot::Phase {
                phase: k,
                elem: elem.stored(),
                nested: true,
            });
            return Ok(RowsV::stored(&a, elem));
        }
        if let Some(rows) = part.and_then(|j| self.stored_component(n, j)) {
            return Ok(rows);
        }
        match &self.c.node(n).op {
            Op::Nest { input, offsets } => {
                // Checked: no offsets, and rows outside the flat sequence or reversed, record the
                // error (the rows read as empty).
                let flat = self.flat_part(*input, env, part)?;
                let off = self.seq(*offsets, env)?;
                let (lo, hi) = (off.at(R), off.at(&format!("{R} + 1")));
                let (b, e) = (format!("(u64)({lo})"), format!("(u64)({hi})"));
                let ok = format!(
                    "surge_segment_ok((i64)({lo}), (i64)({hi}), {R}, {}, {}, surge_err)",
                    flat.len, n.0
                );
                Ok(RowsV::slices(
                    format!("surge_nest_rows({}, {}, surge_err)", off.len, n.0),
                    b.clone(),
                    format!("({e} - {b})"),
                    Some(ok),
                    flat,
                ))
            }
            Op::Split { input, tile } => {
                let flat = self.flat_part(*input, env, part)?;
                let t = format!(
                    "surge_positive((i64)({}), 0, {}, surge_err)",
                    self.scalar(*tile, env)?,
                    n.0
                );
                let begin = format!("({R} * {t})");
                Ok(RowsV::slices(
                    format!("(({} + {t} - 1) / {t})", flat.len),
                    begin.clone(),
                    format!("surge_min({t}, {} - {begin})", flat.len),
                    None,
                    flat,
                ))
            }
            Op::Transpose { input } => {
                let input = self.rows_of(*input, env, part)?;
                let r = format!("surge_r{}", n.0);
                let width = format!(
                    "surge_transpose_width({}, {}, surge_err, [&](u64 {r}) {{ return (u64)({}); }})",
                    input.rows,
                    n.0,
                    input.row(&r, None).len
                );
                Ok(RowsV {
                    rows: width,
                    form: RowForm::Columns(Box::new(input)),
                })
            }
            Op::Replicate { value, len } if self.ty(*value).depth() == 1 => {
                let count = format!(
                    "surge_len((i64)({}), {}, surge_err)",
                    self.scalar(*len, env)?,
                    n.0
                );
                Ok(RowsV {
                    rows: count,
                    form: RowForm::Same(self.flat_part(*value, env, part)?),
                })
            }
            Op::Map { f, inputs } if !inputs.is_empty() => self.map_rows(n, f, inputs, env, part),
            Op::Index { seq, index } if self.ty(*seq).depth() == 3 => {
                self.deep_index(n, *seq, *index, env, part)
            }
            Op::ReduceByKey {
                op,
                input,
                keys,
                prefix,
            } => self.lazy_row_runs(n, (op, *input, *keys, *prefix), env, part),
            Op::Scan { op, input, prefix } if part.is_none() => {
                self.lazy_row_scan(n, (op, *input, *prefix), env)
            }
            op => match crate::emit::lower::flat(op) {
                Some(f) if matches!(f.operands.first(), Some(Operand::Seq(_))) => {
                    self.lowered_rows(n, &f, env, part)
                }
                _ => Err(self.unsupported(n, "as a nested sequence")),
            },
        }
    }

    /// A `map` whose body is a flat sequence, as rows: row `@R@` is the body with the
    /// parameters bound to element (or row) `@R@` of the inputs, whose lengths are checked
    /// equal.
    fn map_rows(
        &self,
        n: NodeId,
        f: &crate::ir::Lambda,
        inputs: &[NodeId],
        env: &Env,
        part: Option<usize>,
    ) -> Result<RowsV, CodegenError> {
        let (e, inner, lens) = self.bind_params(n, f, inputs, env)?;
        let row = self.flat_part(f.body, &inner, part)?;
        Ok(RowsV {
            rows: equal_lengths(&lens, n),
            form: RowForm::Each(SeqV {
                len: renamed(&row.len, &e, R),
                at: renamed(&row.at, &e, R),
                elem: row.elem,
            }),
        })
    }

    /// A `reverse`, `striding` or `gather` of a nested sequence: the lowering of `emit::lower`
    /// over the source's row numbers gives each result row's source row.
    fn lowered_rows(
        &self,
        n: NodeId,
        f: &Flat,
        env: &Env,
        part: Option<usize>,
    ) -> Result<RowsV, CodegenError> {
        let Some(Operand::Seq(source)) = f.operands.first() else {
            unreachable!("internal: checked by the caller")
        };
        let src = self.rows_of(*source, env, part)?;
        let numbers = SeqV {
            len: src.rows.clone(),
            at: I.to_string(),
            elem: Elem::U64,
        };
        let index = self.lowered_with(n, f, Some(numbers), Elem::U64, env)?;
        Ok(RowsV {
            rows: index.len,
            form: RowForm::Mapped {
                inner: Box::new(src),
                index: index.at,
            },
        })
    }
}
