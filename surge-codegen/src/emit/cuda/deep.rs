//! Sequences of nested sequences (depth 3) in the element translator ([`Tr::deep`]): a count
//! and element `@Q@` as a nested sequence ([`RowsV`]) whose templates mention `@Q@`. Like the
//! other producers they are substituted into their consumers, never materialized: `nest` and
//! `split` of a nested sequence (element `@Q@` is a run of its rows), a `map` whose body is a
//! nested sequence, one nested sequence repeated, `transpose` of one whose elements have as
//! many rows (element `@Q@` is row `@Q@` of every input element), and `reverse`, `striding`
//! or `gather` of them (over the element numbers). A map's parameter bound to element `@E@` of one is a
//! [`super::elements::Bound::Rows`]; `index` of one is a nested sequence.
//!
//! A depth-3 value is stored in two phases ([`super::DeepPart`]): the first stores, per
//! outer element, a row of as many zeros as it has nested rows (its offsets are the outer
//! level's), the second every nested row of every element in order (row `j` of element `q`
//! found by a binary search of the first phase's offsets); the host puts the levels together.
//! A depth-3 value of tuples of scalars that a later phase reads (a map whose body is rows of
//! tuples, a `scatter` of them) is stored as one outer phase, then one rows phase per component
//! (struct of arrays, as `tuple_rows.rs` stores rows of tuples); a result of them is split into
//! parts of scalars first (`split_parts`).

use super::checks::equal_lengths;
use super::elements::{Env, I, R, SeqV, Tr, renamed};
use super::phase::PhaseCode;
use super::rows::{RowForm, RowsV, Slices};
use super::{DeepPart, PhasePlan};
use crate::CodegenError;
use crate::analysis::{Analysis, Phase};
use crate::emit::lower::Operand;
use crate::ir::{Computation, Elem, LiteralTable, NodeId, Op, Type};
use crate::variant::Variant;
use std::collections::BTreeMap;

/// The placeholder of a depth-3 sequence's element number.
pub(super) const Q: &str = "@Q@";

/// The placeholder of a deep result's row number while its element's rows are built.
const J: &str = "@J@";

/// The placeholder of a transposed deep sequence's input element while its rows are built.
const TQ: &str = "@TQ@";

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
        self.deep_of(n, env, None)
    }

    /// A sequence three levels deep of tuples of scalars, one [`DeepV`] per component.
    pub(super) fn tuple_deeps(&self, n: NodeId, env: &Env) -> Result<Vec<DeepV>, CodegenError> {
        let leaf = self.ty(n).item().and_then(Type::item).and_then(Type::item);
        let arity = match leaf {
            Some(Type::Tuple(items)) if items.iter().all(|i| i.as_scalar().is_some()) => {
                items.len()
            }
            _ => return Err(self.unsupported(n, "as a sequence of rows of tuples of scalars")),
        };
        (0..arity).map(|k| self.deep_of(n, env, Some(k))).collect()
    }

    /// [`Tr::deep`], or component `part` of a deep sequence of tuples.
    fn deep_of(&self, n: NodeId, env: &Env, part: Option<usize>) -> Result<DeepV, CodegenError> {
        if let Some(&k) = self.roots.get(&n)
            && k < self.phase
            && let Some(stored) = self.stored_deep(n, k, part)
        {
            return Ok(stored);
        }
        match &self.c.node(n).op {
            Op::Nest { input, offsets } => {
                // Element q is rows off[q]..off[q + 1] of the input, checked as a nest's rows
                // are (a bad run reads as empty, its error recorded).
                let inner = self.rows_of(*input, env, part)?;
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
                let inner = self.rows_of(*input, env, part)?;
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
            Op::Transpose { input } => {
                // Element q is row q of every input element, the elements checked to have as
                // many rows (then q is below each one's row count).
                let d = self.deep_of(*input, env, part)?;
                let r = format!("surge_r{}", n.0);
                let width = format!(
                    "surge_transpose_width({}, {}, surge_err, [&](u64 {r}) {{ return (u64)({}); }})",
                    d.count,
                    n.0,
                    d.at(&r, None).rows
                );
                // Row @R@ of element q: row q of input element @R@ (built over `TQ` first, as
                // the input element's own templates hold `@R@` and `@Q@`).
                let row = d.at(TQ, None).row(Q, None);
                let sub = |t: &str| t.replace(TQ, R);
                Ok(DeepV {
                    count: width,
                    at: RowsV {
                        rows: d.count,
                        form: RowForm::Each(SeqV {
                            len: sub(&row.len),
                            at: sub(&row.at),
                            elem: row.elem,
                        }),
                    },
                })
            }
            Op::Replicate { value, len } if self.ty(*value).depth() == 2 => Ok(DeepV {
                count: format!(
                    "surge_len((i64)({}), {}, surge_err)",
                    self.scalar(*len, env)?,
                    n.0
                ),
                at: self.rows_of(*value, env, part)?,
            }),
            Op::Map { f, inputs } if !inputs.is_empty() => {
                let (e, inner, lens) = self.bind_params(n, f, inputs, env)?;
                let body = self.rows_of(f.body, &inner, part)?;
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
                    let src = self.deep_of(*source, env, part)?;
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

    /// An earlier phase's deep value (component `part` of one of tuples), its phases ending at
    /// `last`: its outer level in the first, its rows (per component) in the others; `None`
    /// when the request does not match how it is stored (a component of scalars).
    fn stored_deep(&self, n: NodeId, last: usize, part: Option<usize>) -> Option<DeepV> {
        let leaf = self.ty(n).item()?.item()?.item()?;
        let (rows, elem) = match (leaf, part) {
            (Type::Scalar(e), None) => (last, *e),
            (Type::Tuple(items), Some(j)) => {
                let first = last + 1 - items.len();
                (first + j, items.get(j)?.as_scalar()?)
            }
            _ => return None,
        };
        let o = self.arg(super::ArgSlot::Phase {
            phase: last - rows_phases(self.c, n)?,
            elem: Elem::U32,
            nested: true,
        });
        let r = self.arg(super::ArgSlot::Phase {
            phase: rows,
            elem: elem.stored(),
            nested: true,
        });
        let stored = RowsV::stored(&r, elem);
        Some(DeepV {
            count: format!("(n_{o}_off - 1)"),
            at: run_of(
                &stored,
                format!("{o}_off[{Q}]"),
                format!("({o}_off[{Q} + 1] - {o}_off[{Q}])"),
            ),
        })
    }

    /// `index` of a sequence of nested sequences: its element, a nested sequence.
    pub(super) fn deep_index(
        &self,
        n: NodeId,
        seq: NodeId,
        index: NodeId,
        env: &Env,
        part: Option<usize>,
    ) -> Result<RowsV, CodegenError> {
        let d = self.deep_of(seq, env, part)?;
        let i = self.scalar(index, env)?;
        let q = format!(
            "surge_row_index((i64)({i}), {}, {}, surge_err)",
            d.count, n.0
        );
        let ok = format!("{q} < {}", d.count);
        Ok(d.at(&q, Some(ok)))
    }

    /// The stored form of depth-3 result `n` in the deep result's first phase: element `@R@`
    /// as a row of as many zeros (`u32`) as it has nested rows (`part`: a component of
    /// tuples, which all have those rows).
    fn deep_outer(&self, n: NodeId, part: Option<usize>) -> Result<RowsV, CodegenError> {
        let d = self.deep_of(n, &Env::new(), part)?;
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
    /// first phase's (`outer`) offsets holds it (of component `part` for tuples).
    fn deep_rows(
        &self,
        n: NodeId,
        outer: usize,
        part: Option<usize>,
    ) -> Result<RowsV, CodegenError> {
        let d = self.deep_of(n, &Env::new(), part)?;
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

/// Whether node `n` is a sequence three levels deep of scalars (stored in two phases).
pub(super) fn is_deep(c: &Computation, n: NodeId) -> bool {
    let ty = &c.node(n).ty;
    ty.depth() == 3
        && ty
            .item()
            .and_then(Type::item)
            .and_then(Type::item)
            .and_then(Type::as_scalar)
            .is_some()
}

/// The component count of node `n` when it is a sequence three levels deep of tuples of
/// scalars (stored in one phase for the outer level and one per component for the rows).
fn deep_tuple(c: &Computation, n: NodeId) -> Option<usize> {
    let ty = &c.node(n).ty;
    match ty.item()?.item()?.item()? {
        Type::Tuple(items) if ty.depth() == 3 && items.iter().all(|i| i.as_scalar().is_some()) => {
            Some(items.len())
        }
        _ => None,
    }
}

/// How many phases store the rows of node `n` after its outer level's phase, when it is three
/// levels deep: one for scalars, one per component for tuples.
pub(super) fn rows_phases(c: &Computation, n: NodeId) -> Option<usize> {
    if is_deep(c, n) {
        return Some(1);
    }
    deep_tuple(c, n)
}

/// `analysis` with every phase whose value is three levels deep emitted once for the outer
/// level, then once for the rows (once per component for tuples), its variant list and source
/// phase repeated.
pub(super) fn expand(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Vec<Variant>],
    sources: &[usize],
) -> (Analysis, Vec<Vec<Variant>>, Vec<usize>) {
    let times = |_, phase: &Phase| rows_phases(c, phase.root).map_or(1, |k| k + 1);
    super::repeat_phases(analysis, variants, sources, times)
}

/// Which part of a deep value phase `p` stores, if any (the first of its equal phases stores
/// the outer level, the others the rows, component by component for tuples).
pub(super) fn part(c: &Computation, analysis: &Analysis, p: usize) -> Option<DeepPart> {
    let root = analysis.phases[p].root;
    let rows = rows_phases(c, root)?;
    let before = analysis.phases[..p]
        .iter()
        .rev()
        .take_while(|q| q.root == root)
        .count();
    match before % (rows + 1) {
        0 => Some(DeepPart::Outer),
        k => Some(DeepPart::Rows { outer: p - k }),
    }
}

/// Part `part` of a deep value whose phase is `phase`, as phase `p`, and its plan (the stored
/// type: rows of `u32` zeros, then the rows).
pub(super) fn phase(
    c: &Computation,
    roots: &BTreeMap<NodeId, usize>,
    lits: &LiteralTable,
    p: usize,
    phase: &Phase,
    part: DeepPart,
) -> Result<(PhaseCode, PhasePlan), CodegenError> {
    let tr = Tr::new(c, roots, lits, p, phase);
    // The component a rows phase of tuples stores (the outer level reads the first's rows).
    let component = deep_tuple(c, phase.root).map(|_| match part {
        DeepPart::Outer => 0,
        DeepPart::Rows { outer } => p - outer - 1,
    });
    if let Op::Scatter {
        source,
        indices,
        dest,
    } = &c.node(phase.root).op
    {
        let nodes = (*source, *indices, *dest);
        return scatter_phase(c, tr, phase, nodes, (part, component));
    }
    let rows = match part {
        DeepPart::Outer => tr.deep_outer(phase.root, component)?,
        DeepPart::Rows { outer } => tr.deep_rows(phase.root, outer, component)?,
    };
    let elem = rows.row("0", None).elem;
    let code = super::roots::copy_rows(&tr, rows);
    let mut plan = code.plan(c, p, phase);
    plan.ty = Type::seq(Type::scalar_seq(elem));
    plan.deep = Some(part);
    Ok((code, plan))
}

/// Part `part` of a `scatter` of elements that are rows (a deep result): the outer phase is a
/// scatter of rows (`scatter_rows.rs`) whose source element `p` is a row of as many `p + 1` as
/// it has rows and whose destination element a row of as many zeros, so each element's row
/// says its last writer (0: the destination) and the outer level's offsets its row count; the
/// rows phase copies row `r` of each element from its writer (of tuples, the rows phase of
/// component `component` copies that component's rows: a scatter moves whole elements).
fn scatter_phase(
    c: &Computation,
    tr: Tr<'_>,
    phase: &Phase,
    (source, indices, dest): (NodeId, NodeId, NodeId),
    (part, component): (DeepPart, Option<usize>),
) -> Result<(PhaseCode, PhasePlan), CodegenError> {
    let env = Env::new();
    let (s, d) = (
        tr.deep_of(source, &env, component)?,
        tr.deep_of(dest, &env, component)?,
    );
    let root = phase.root;
    let (code, elem) = match part {
        DeepPart::Outer => {
            let writers = |v: &DeepV, at: String| RowsV {
                rows: v.count.clone(),
                form: RowForm::Each(SeqV {
                    len: v.at(R, None).rows,
                    at,
                    elem: Elem::U32,
                }),
            };
            let idx = tr.seq(indices, &env)?;
            let (sw, dw) = (
                writers(&s, format!("(u32)({R} + 1)")),
                writers(&d, "0u".into()),
            );
            let code = super::scatter_rows::scatter_rows_of(tr, root, sw, &idx, dw)?;
            (code, Elem::U32)
        }
        DeepPart::Rows { outer } => {
            let rows = from_writers(&tr, (&s, &d), outer);
            let elem = rows.row("0", None).elem;
            (super::roots::copy_rows(&tr, rows), elem)
        }
    };
    let mut plan = code.plan(c, code.phase, phase);
    plan.ty = Type::seq(Type::scalar_seq(elem));
    plan.deep = Some(part);
    Ok((code, plan))
}

/// The rows phase of a `scatter` of deep values `s` into `d`: row `@R@` of the element whose
/// run of rows in phase `outer`'s offsets holds it, copied from that element's last writer (the
/// first entry of its row of writers: `p + 1` for source element `p`, 0 for the destination).
fn from_writers(tr: &Tr<'_>, (s, d): (&DeepV, &DeepV), outer: usize) -> RowsV {
    let a = tr.arg(super::ArgSlot::Phase {
        phase: outer,
        elem: Elem::U32,
        nested: true,
    });
    let q = format!("surge_run_of({a}_off, n_{a}_off, {J})");
    let r = format!("{J} - {a}_off[{q}]");
    let w = format!("{a}[{a}_off[{q}]]");
    let from_src = s.at(&format!("{w} - 1"), None).row(&r, None);
    let from_dest = d.at(&q, None).row(&r, None);
    let pick = |x: &str, y: &str| format!("(({w}) != 0u ? ({x}) : ({y}))").replace(J, R);
    RowsV {
        rows: format!("{a}_off[n_{a}_off - 1]"),
        form: RowForm::Each(SeqV {
            len: pick(&from_src.len, &from_dest.len),
            at: pick(&from_src.at, &from_dest.at),
            elem: from_dest.elem,
        }),
    }
}
