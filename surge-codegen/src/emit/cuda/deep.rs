//! Sequences of nested sequences (depth 3) in the element translator ([`Tr::deep`]): a count
//! and element `@Q@` as a nested sequence ([`RowsV`]) whose templates mention `@Q@`. Like the
//! other producers they are substituted into their consumers, never materialized: `nest` and
//! `split` of a nested sequence (element `@Q@` is a run of its rows), a `map` whose body is a
//! nested sequence, one nested sequence repeated, and `reverse`, `striding` or `gather` of
//! them (over the element numbers). A map's parameter bound to element `@E@` of one is a
//! [`super::elements::Bound::Rows`]; `index` of one is a nested sequence.
//!
//! A depth-3 result is stored in two phases ([`super::DeepResult`]): the first stores, per
//! outer element, a row of as many zeros as it has nested rows (its offsets are the outer
//! level's), the second every nested row of every element in order (row `j` of element `q`
//! found by a binary search of the first phase's offsets); the host puts the levels together.

use super::PhasePlan;
use super::checks::equal_lengths;
use super::elements::{Env, I, R, SeqV, Tr, renamed};
use super::phase::{Inner, PhaseCode, bind_row};
use super::rows::{RowForm, RowsV, Slices};
use crate::CodegenError;
use crate::analysis::Phase;
use crate::emit::lower::Operand;
use crate::ir::{Computation, Elem, LiteralTable, NodeId, Op, Type};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The placeholder of a depth-3 sequence's element number.
pub(super) const Q: &str = "@Q@";

/// The placeholder of a deep result's row number while its element's rows are built.
const J: &str = "@J@";

/// A sequence of nested sequences: its count and element `@Q@`.
#[derive(Debug, Clone)]
pub(super) struct DeepV {
    pub(super) count: String,
    pub(super) at: RowsV,
}

impl DeepV {
    /// Element `q` (known to be below `count` when `ok` holds; read as no rows otherwise).
    pub(super) fn at(&self, q: &str, ok: Option<String>) -> RowsV {
        let q = format!("({q})");
        let rows = map_rows(&self.at, &|t| t.replace(Q, &q));
        match ok {
            Some(ok) => RowsV {
                rows: format!("(({ok}) ? {} : 0ULL)", rows.rows),
                ..rows
            },
            None => rows,
        }
    }
}

/// `s` with `f` applied to every template.
fn map_seq(s: &SeqV, f: &dyn Fn(&str) -> String) -> SeqV {
    SeqV {
        len: f(&s.len),
        at: f(&s.at),
        elem: s.elem,
    }
}

/// `r` with `f` applied to every template.
pub(super) fn map_rows(r: &RowsV, f: &dyn Fn(&str) -> String) -> RowsV {
    let form = match &r.form {
        RowForm::Slices(s) => RowForm::Slices(Slices {
            begin: f(&s.begin),
            len: f(&s.len),
            ok: s.ok.as_deref().map(f),
            flat: map_seq(&s.flat, f),
        }),
        RowForm::Columns(i) => RowForm::Columns(Box::new(map_rows(i, f))),
        RowForm::Mapped { inner, index } => RowForm::Mapped {
            inner: Box::new(map_rows(inner, f)),
            index: f(index),
        },
        RowForm::Same(s) => RowForm::Same(map_seq(s, f)),
        RowForm::Each(s) => RowForm::Each(map_seq(s, f)),
    };
    RowsV {
        rows: f(&r.rows),
        form,
    }
}

/// Rows `first + @I@` of `inner`, `count` of them.
fn run_of(inner: &RowsV, first: String, count: String) -> RowsV {
    RowsV {
        rows: count,
        form: RowForm::Mapped {
            inner: Box::new(inner.clone()),
            index: format!("({first} + {I})"),
        },
    }
}

impl Tr<'_> {
    /// A sequence of nested sequences of scalars (depth 3).
    pub(super) fn deep(&self, n: NodeId, env: &Env) -> Result<DeepV, CodegenError> {
        match &self.c.node(n).op {
            Op::Nest { input, offsets } => {
                // Element q is rows off[q]..off[q + 1] of the input, checked as a nest's rows
                // are (a bad run reads as empty, its error recorded).
                let inner = self.rows(*input, env)?;
                let off = self.seq(*offsets, env)?;
                let (lo, hi) = (off.at(Q), off.at(&format!("{Q} + 1")));
                let ok = format!(
                    "surge_segment_ok((i64)({lo}), (i64)({hi}), {Q}, {}, {}, surge_err)",
                    inner.rows, n.0
                );
                let (b, e) = (format!("(u64)({lo})"), format!("(u64)({hi})"));
                let count = format!("(({ok}) ? ({e} - {b}) : 0ULL)");
                Ok(DeepV {
                    count: format!("surge_nest_rows({}, {}, surge_err)", off.len, n.0),
                    at: run_of(&inner, format!("(({ok}) ? {b} : 0ULL)"), count),
                })
            }
            Op::Split { input, tile } => {
                let inner = self.rows(*input, env)?;
                let t = format!(
                    "surge_positive((i64)({}), 0, {}, surge_err)",
                    self.scalar(*tile, env)?,
                    n.0
                );
                let first = format!("({Q} * {t})");
                Ok(DeepV {
                    count: format!("(({} + {t} - 1) / {t})", inner.rows),
                    at: run_of(
                        &inner,
                        first.clone(),
                        format!("surge_min({t}, {} - {first})", inner.rows),
                    ),
                })
            }
            Op::Replicate { value, len } if self.ty(*value).depth() == 2 => Ok(DeepV {
                count: format!(
                    "surge_len((i64)({}), {}, surge_err)",
                    self.scalar(*len, env)?,
                    n.0
                ),
                at: self.rows(*value, env)?,
            }),
            Op::Map { f, inputs } if !inputs.is_empty() => {
                let (e, inner, lens) = self.bind_params(n, f, inputs, env)?;
                let body = self.rows(f.body, &inner)?;
                Ok(DeepV {
                    count: equal_lengths(&lens, n),
                    at: map_rows(&body, &|t| renamed(t, &e, Q)),
                })
            }
            op => match crate::emit::lower::flat(op) {
                Some(f) if matches!(f.operands.first(), Some(Operand::Seq(_))) => {
                    let Some(Operand::Seq(source)) = f.operands.first() else {
                        unreachable!("internal: matched above")
                    };
                    let src = self.deep(*source, env)?;
                    let numbers = SeqV {
                        len: src.count.clone(),
                        at: I.to_string(),
                        elem: Elem::U64,
                    };
                    let index = self.lowered_with(n, &f, Some(numbers), Elem::U64, env)?;
                    let m = index.at.replace(I, Q);
                    let ok = format!("({m}) < {}", src.count);
                    Ok(DeepV {
                        count: index.len,
                        at: src.at(&m, Some(ok)),
                    })
                }
                _ => Err(self.unsupported(n, "as a sequence of nested sequences")),
            },
        }
    }

    /// `index` of a sequence of nested sequences: its element, a nested sequence.
    pub(super) fn deep_index(
        &self,
        n: NodeId,
        seq: NodeId,
        index: NodeId,
        env: &Env,
    ) -> Result<RowsV, CodegenError> {
        let d = self.deep(seq, env)?;
        let i = self.scalar(index, env)?;
        let q = format!(
            "surge_row_index((i64)({i}), {}, {}, surge_err)",
            d.count, n.0
        );
        let ok = format!("{q} < {}", d.count);
        Ok(d.at(&q, Some(ok)))
    }

    /// The stored form of depth-3 result `n` in the deep result's first phase: element `@R@`
    /// as a row of as many zeros (`u32`) as it has nested rows.
    pub(super) fn deep_outer(&self, n: NodeId) -> Result<RowsV, CodegenError> {
        let d = self.deep(n, &Env::new())?;
        let rows = d.at(R, None).rows;
        Ok(RowsV {
            rows: d.count,
            form: RowForm::Each(SeqV {
                len: rows,
                at: "0u".into(),
                elem: Elem::U32,
            }),
        })
    }

    /// The stored form of depth-3 result `n` in the deep result's second phase: every nested
    /// row of every element in order; row `@R@` belongs to the element whose run of rows in the
    /// first phase's (`outer`) offsets holds it.
    pub(super) fn deep_rows(&self, n: NodeId, outer: usize) -> Result<RowsV, CodegenError> {
        let d = self.deep(n, &Env::new())?;
        let a = self.arg(super::ArgSlot::Phase {
            phase: outer,
            elem: Elem::U32,
            nested: true,
        });
        // The row number is `@J@` until the element's own rows (over `@R@`) are substituted.
        let q = format!("surge_run_of({a}_off, n_{a}_off, {J})");
        let element = d.at(&q, None);
        let row = element.row(&format!("{J} - {a}_off[{q}]"), None);
        Ok(RowsV {
            rows: format!("{a}_off[n_{a}_off - 1]"),
            form: RowForm::Each(SeqV {
                len: row.len.replace(J, R),
                at: row.at.replace(J, R),
                elem: row.elem,
            }),
        })
    }
}

/// Part `part` (0: the outer level, 1: the nested rows) of a depth-3 result whose phase is
/// `phase`, as phase `p`, and its plan (the stored type: rows of `u32` zeros, then the rows).
pub(super) fn phase(
    c: &Computation,
    roots: &BTreeMap<NodeId, usize>,
    lits: &LiteralTable,
    p: usize,
    phase: &Phase,
    part: usize,
) -> Result<(PhaseCode, PhasePlan), CodegenError> {
    let sequence = phase.expression_sequence();
    let tr = Tr {
        c,
        roots,
        lits,
        phase: p,
        sequence,
        args: RefCell::new(Vec::new()),
    };
    let rows = match part {
        0 => tr.deep_outer(phase.root)?,
        _ => tr.deep_rows(phase.root, p - 1)?,
    };
    let mut bind = Vec::new();
    let seq = bind_row(&rows, 0, &mut bind);
    let elem = seq.elem;
    let code = PhaseCode::of(&tr, rows.rows, bind, Inner::Copy { seq });
    let mut plan = code.plan(c, p, phase);
    plan.ty = Type::seq(Type::scalar_seq(elem));
    Ok((code, plan))
}
