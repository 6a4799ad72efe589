//! The element translator: IR values of one phase as C++ expressions. A scalar becomes an
//! expression; a flat sequence ([`SeqV`]) a length and an element template over the placeholder
//! index `@I@`; a nested sequence ([`RowsV`]) a row count and row `@R@` as (begin, length) into
//! a flat sequence. Producers (`gather`, element-wise `map`, `range`, `replicate`, `reverse`,
//! `striding`, `index` of a nested sequence, `nest`, `split`) are substituted into their
//! consumers' templates, never materialized.

use super::checks::equal_lengths;
use super::{ArgSlot, cuda_type};
use crate::CodegenError;
use crate::emit::lower::{Flat, Operand};
use crate::emit::sharing;
use crate::ir::{
    BinaryOp, Computation, Elem, Literal, LiteralCursor, LiteralTable, NodeId, Op, ScalarExpr,
    Type, UnaryOp, is_runtime,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// Placeholders in element templates: the element index and the row index.
pub(super) const I: &str = "@I@";
pub(super) const R: &str = "@R@";

/// A float or bool literal as a C++ expression of its type (non-finite floats by their bits).
/// Integer literals are kernel parameters instead ([`ArgSlot::Literal`]).
fn literal(l: Literal) -> String {
    match l {
        Literal::F64(b) => {
            let v = f64::from_bits(b);
            if v.is_finite() {
                format!("{v:?}")
            } else {
                format!("__longlong_as_double(0x{b:016x}LL)")
            }
        }
        Literal::F32(b) => {
            let v = f32::from_bits(b);
            if v.is_finite() {
                format!("{v:?}f")
            } else {
                format!("__int_as_float(0x{b:08x})")
            }
        }
        Literal::Bool(v) => v.to_string(),
        Literal::I32(_) | Literal::I64(_) | Literal::U32(_) | Literal::U64(_) => {
            unreachable!("internal: integer literal {l} is a kernel parameter")
        }
    }
}

/// A flat sequence: its length and its element `@I@` as C++ expressions.
#[derive(Debug, Clone)]
pub(super) struct SeqV {
    pub(super) len: String,
    pub(super) at: String,
    pub(super) elem: Elem,
}

impl SeqV {
    pub(super) fn at(&self, i: &str) -> String {
        self.at.replace(I, &format!("({i})"))
    }

    /// Element `i`, or the element template itself when `i` is the placeholder.
    fn at_or_template(&self, i: &str) -> String {
        if i == I { self.at.clone() } else { self.at(i) }
    }
}

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

/// A placeholder for the row index of a transposed sequence's input while its row is built.
const T: &str = "@T@";

impl RowsV {
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
                // `rows` long once the width check passed, so r is in range).
                let row_i = input.row(T, None);
                let len = match r_ok {
                    Some(ok) => format!("(({ok}) ? {} : 0ULL)", input.rows),
                    None => input.rows.clone(),
                };
                SeqV {
                    len,
                    at: row_i.at(r).replace(T, I),
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

/// Template `t` with placeholder `from` renamed `to`: the parenthesized form a substitution
/// wrote (`(@E3@)`) first, so the text is what binding `to` directly printed.
fn renamed(t: &str, from: &str, to: &str) -> String {
    t.replace(&format!("({from})"), to).replace(from, to)
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

#[derive(Debug, Clone)]
pub(super) enum Bound {
    Scalar(String),
    Seq(SeqV),
    /// A tuple of scalars (an element of a `zip` or `join`): one expression per component.
    Tuple(Vec<String>),
}

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

pub(super) type Env = HashMap<NodeId, Bound>;

/// The IR → C++ expression translator of one phase.
pub(super) struct Tr<'a> {
    pub(super) c: &'a Computation,
    pub(super) roots: &'a BTreeMap<NodeId, usize>,
    /// The computation's integer literals, passed as kernel parameters.
    pub(super) lits: &'a LiteralTable,
    pub(super) phase: usize,
    pub(super) sequence: String,
    pub(super) args: RefCell<Vec<ArgSlot>>,
}

impl Tr<'_> {
    pub(super) fn unsupported(&self, n: NodeId, what: &str) -> CodegenError {
        CodegenError::EmitVariant {
            what: format!("phase {} ({})", self.phase, self.sequence),
            message: format!("the CUDA emitter cannot generate {} {what}", self.c.site(n)),
        }
    }

    fn ty(&self, n: NodeId) -> &Type {
        &self.c.node(n).ty
    }

    fn arg(&self, slot: ArgSlot) -> String {
        let mut args = self.args.borrow_mut();
        if !args.contains(&slot) {
            args.push(slot.clone());
        }
        slot.name()
    }

    /// An earlier phase's result, when `n` is one (and not the phase being emitted).
    fn phase_result(&self, n: NodeId) -> Option<(usize, Elem, bool)> {
        let &k = self.roots.get(&n)?;
        if k >= self.phase {
            return None;
        }
        let ty = self.ty(n);
        let nested = ty.depth() == 2;
        let mut t = ty;
        while let Type::Seq(inner) = t {
            t = inner;
        }
        Some((k, t.as_scalar()?, nested))
    }

    pub(super) fn scalar(&self, n: NodeId, env: &Env) -> Result<String, CodegenError> {
        if let Some(b) = env.get(&n) {
            return match b {
                Bound::Scalar(s) => Ok(s.clone()),
                Bound::Seq(_) => Err(self.unsupported(n, "as a scalar (it is a sequence)")),
                Bound::Tuple(_) => Err(self.unsupported(n, "as a scalar (it is a tuple)")),
            };
        }
        if self.ty(n).depth() == 0
            && let Some((k, elem, _)) = self.phase_result(n)
        {
            // An earlier phase's scalar result (a reduction read by a later phase's elements).
            let a = self.arg(ArgSlot::Phase {
                phase: k,
                elem: elem.stored(),
                nested: false,
            });
            return Ok(if elem == Elem::Bool {
                format!("({a}[0] != 0u)")
            } else {
                format!("{a}[0]")
            });
        }
        match &self.c.node(n).op {
            Op::Scalar { expr } => self.shared_expr(n, expr, env),
            Op::Index { seq, index } => {
                let i = self.scalar(*index, env)?;
                match self.ty(*seq).depth() {
                    1 => {
                        let s = self.seq(*seq, env)?;
                        Ok(format!(
                            "surge_index<{}>((i64)({i}), {}, {}, surge_err, [&](u64 surge_k) {{ return {}; }})",
                            cuda_type(s.elem),
                            s.len,
                            n.0,
                            s.at("surge_k")
                        ))
                    }
                    _ => Err(self.unsupported(n, "to a scalar (it indexes a nested sequence)")),
                }
            }
            Op::Length { seq } => match self.ty(*seq).depth() {
                1 => Ok(self.seq(*seq, env)?.len),
                _ => Ok(self.rows(*seq, env)?.rows),
            },
            Op::Project { tuple, index } => match (env.get(tuple), &self.c.node(*tuple).op) {
                (Some(Bound::Tuple(parts)), _) if *index < parts.len() => Ok(parts[*index].clone()),
                (_, Op::Tuple { items }) if *index < items.len() => self.scalar(items[*index], env),
                _ => Err(self.unsupported(n, "(a projection of a computed tuple)")),
            },
            Op::Reduce { op, input, prefix } => self.fold(n, op, *input, *prefix, env),
            _ => Err(self.unsupported(n, "as a scalar in an element expression")),
        }
    }

    /// A `reduce` inside an element expression (not one of the phase's levels: a second
    /// reduction in a map's body, a reduction in a reduction's elements), folded sequentially
    /// from the first element as the interpreter folds (so the bits are its bits); an empty
    /// sequence without a prefix records the node's error and reads 0.
    fn fold(
        &self,
        n: NodeId,
        op: &crate::ir::Lambda,
        input: NodeId,
        prefix: Option<NodeId>,
        env: &Env,
    ) -> Result<String, CodegenError> {
        let seq = self.seq(input, env)?;
        let [a, b] = op.params.as_slice() else {
            return Err(self.unsupported(n, "(its operator does not take two values)"));
        };
        let k = n.0;
        let mut op_env = env.clone();
        op_env.insert(*a, Bound::Scalar(format!("surge_a{k}")));
        op_env.insert(*b, Bound::Scalar(format!("surge_b{k}")));
        let body = self.scalar(op.body, &op_env)?;
        let t = cuda_type(seq.elem);
        let (init, from) = match prefix {
            Some(p) => (self.scalar(p, env)?, "0"),
            None => (seq.at("0"), "1"),
        };
        let empty = match prefix {
            Some(_) => String::new(),
            None => format!(
                "if (surge_n{k} == 0) {{ surge_fail(surge_err, {k}, SURGE_EMPTY_REDUCE, 0, 0, 0); return ({t})0; }} "
            ),
        };
        Ok(format!(
            "([&]() -> {t} {{ const u64 surge_n{k} = {len}; {empty}{t} surge_acc{k} = {init}; \
             for (u64 surge_j{k} = {from}; surge_j{k} < surge_n{k}; ++surge_j{k}) {{ \
             const {t} surge_a{k} = surge_acc{k}; const {t} surge_b{k} = {at}; \
             surge_acc{k} = {body}; }} return surge_acc{k}; }}())",
            len = seq.len,
            at = seq.at(&format!("surge_j{k}")),
        ))
    }

    /// Scalar node `n` (expression `e`) with the values it reaches more than once
    /// ([`sharing::shared_values`]) computed once, as `const` locals of an immediately invoked
    /// lambda around it.
    fn shared_expr(&self, n: NodeId, e: &ScalarExpr, env: &Env) -> Result<String, CodegenError> {
        let shared = sharing::shared_values(self.c, e, &|m| env.contains_key(&m));
        if shared.is_empty() {
            return self.expr(e, env, &self.lits.cursor(n));
        }
        let mut env = env.clone();
        let mut locals = String::new();
        for m in shared {
            let Some(t) = self.ty(m).as_scalar() else {
                continue;
            };
            let v = self.scalar(m, &env)?;
            let name = format!("surge_v{}", m.0);
            locals.push_str(&format!("const {} {name} = {v}; ", cuda_type(t)));
            env.insert(m, Bound::Scalar(name));
        }
        let body = self.expr(e, &env, &self.lits.cursor(n))?;
        Ok(format!("([&]() {{ {locals}return {body}; }}())"))
    }

    fn elem_of(&self, e: &ScalarExpr) -> Result<Elem, CodegenError> {
        crate::ir::infer_scalar(e, &|n| self.ty(n).clone()).map_err(|m| CodegenError::EmitVariant {
            what: format!("phase {} ({})", self.phase, self.sequence),
            message: m,
        })
    }

    /// Scalar expression `e`; `lits` numbers its run-time literals.
    fn expr(
        &self,
        e: &ScalarExpr,
        env: &Env,
        lits: &LiteralCursor,
    ) -> Result<String, CodegenError> {
        let t = self.elem_of(e)?;
        Ok(match e {
            ScalarExpr::Const(l) if is_runtime(*l) => self.arg(ArgSlot::Literal {
                index: lits.take(*l),
                elem: l.elem(),
            }),
            ScalarExpr::Const(l) => literal(*l),
            ScalarExpr::Value(n) => self.scalar(*n, env)?,
            ScalarExpr::Unary(op, a) => {
                let ta = self.elem_of(a)?;
                let a = self.expr(a, env, lits)?;
                match (op, ta) {
                    // Parenthesized: `-` before a negative literal would print `--1.0f`, the
                    // decrement operator (NVRTC: "expression must be a modifiable lvalue").
                    (UnaryOp::Neg, _) => format!("(-({a}))"),
                    (UnaryOp::Not, _) => format!("(!{a})"),
                    (UnaryOp::Abs, Elem::F32) => format!("fabsf({a})"),
                    (UnaryOp::Abs, Elem::F64) => format!("fabs({a})"),
                    (UnaryOp::Abs, Elem::I32) => format!("abs({a})"),
                    (UnaryOp::Abs, Elem::I64) => format!("llabs({a})"),
                    (UnaryOp::Abs, _) => a,
                    (UnaryOp::Sqrt, Elem::F32) => format!("sqrtf({a})"),
                    (UnaryOp::Exp, Elem::F32) => format!("expf({a})"),
                    (UnaryOp::Log, Elem::F32) => format!("logf({a})"),
                    (UnaryOp::Sqrt, _) => format!("sqrt((f64)({a}))"),
                    (UnaryOp::Exp, _) => format!("exp((f64)({a}))"),
                    (UnaryOp::Log, _) => format!("log((f64)({a}))"),
                }
            }
            ScalarExpr::Binary(op, a, b) => {
                let ta = self.elem_of(a)?;
                let (a, b) = (self.expr(a, env, lits)?, self.expr(b, env, lits)?);
                match (op, ta) {
                    (BinaryOp::Min, Elem::F32) => format!("fminf({a}, {b})"),
                    (BinaryOp::Max, Elem::F32) => format!("fmaxf({a}, {b})"),
                    (BinaryOp::Min, Elem::F64) => format!("fmin({a}, {b})"),
                    (BinaryOp::Max, Elem::F64) => format!("fmax({a}, {b})"),
                    (BinaryOp::Min, _) => format!("surge_min({a}, {b})"),
                    (BinaryOp::Max, _) => format!("surge_max({a}, {b})"),
                    (BinaryOp::Rem, Elem::F32) => format!("fmodf({a}, {b})"),
                    (BinaryOp::Rem, Elem::F64) => format!("fmod({a}, {b})"),
                    (op, _) => format!("({a} {} {b})", op.symbol()),
                }
            }
            ScalarExpr::Fma(a, b, c) => {
                let (a, b, c) = (
                    self.expr(a, env, lits)?,
                    self.expr(b, env, lits)?,
                    self.expr(c, env, lits)?,
                );
                match t {
                    Elem::F32 => format!("fmaf({a}, {b}, {c})"),
                    Elem::F64 => format!("fma({a}, {b}, {c})"),
                    _ => format!("({a} * {b} + {c})"),
                }
            }
            ScalarExpr::Select(c, a, b) => format!(
                "({} ? {} : {})",
                self.expr(c, env, lits)?,
                self.expr(a, env, lits)?,
                self.expr(b, env, lits)?
            ),
            ScalarExpr::Cast(e, a) => {
                format!("(({})({}))", cuda_type(*e), self.expr(a, env, lits)?)
            }
        })
    }

    /// A flat sequence (depth 1) as a length and an element template.
    pub(super) fn seq(&self, n: NodeId, env: &Env) -> Result<SeqV, CodegenError> {
        if let Some(b) = env.get(&n) {
            return match b {
                Bound::Seq(s) => Ok(s.clone()),
                Bound::Scalar(_) | Bound::Tuple(_) => {
                    Err(self.unsupported(n, "as a sequence (it is a scalar)"))
                }
            };
        }
        if let Some((k, elem, false)) = self.phase_result(n) {
            let a = self.arg(ArgSlot::Phase {
                phase: k,
                elem: elem.stored(),
                nested: false,
            });
            return Ok(SeqV {
                len: format!("n_{a}"),
                at: format!("{a}[{I}]"),
                elem,
            });
        }
        let elem_ty = |n: NodeId| match self.ty(n) {
            Type::Seq(t) => t.as_scalar(),
            _ => None,
        };
        let elem =
            elem_ty(n).ok_or_else(|| self.unsupported(n, "(not a flat sequence of scalars)"))?;
        if let Some(f) = crate::emit::lower::flat(&self.c.node(n).op) {
            return self.lowered(n, &f, elem, env);
        }
        match &self.c.node(n).op {
            Op::Input { buffer } => {
                let a = self.arg(ArgSlot::Input {
                    buffer: *buffer,
                    elem,
                });
                Ok(SeqV {
                    len: format!("n_{a}"),
                    at: format!("{a}[{I}]"),
                    elem,
                })
            }
            Op::Map { f, inputs } => {
                if inputs.is_empty() {
                    return Err(self.unsupported(n, "(a map without inputs)"));
                }
                let (e, inner, lens) = self.bind_params(n, f, inputs, env)?;
                Ok(SeqV {
                    len: equal_lengths(&lens, n),
                    at: renamed(&self.scalar(f.body, &inner)?, &e, I),
                    elem,
                })
            }
            Op::Index { seq, index } if self.ty(*seq).depth() == 2 => {
                let r = self.rows(*seq, env)?;
                let i = self.scalar(*index, env)?;
                let row = format!(
                    "surge_row_index((i64)({i}), {}, {}, surge_err)",
                    r.rows, n.0
                );
                let ok = format!("{row} < {}", r.rows);
                Ok(r.row(&row, Some(ok)))
            }
            _ => Err(self.unsupported(n, "as a flat sequence")),
        }
    }

    /// A flat sequence's length and its element `i` bound for a lambda parameter: a scalar, or
    /// a tuple of scalars for a sequence of tuples.
    pub(super) fn element(
        &self,
        n: NodeId,
        env: &Env,
        i: &str,
    ) -> Result<(String, Bound), CodegenError> {
        if seq_of_tuples(self.ty(n)) {
            let t = self.tuples(n, env)?;
            let at = t.parts.iter().map(|p| p.at_or_template(i)).collect();
            return Ok((t.len, Bound::Tuple(at)));
        }
        let s = self.seq(n, env)?;
        let at = s.at_or_template(i);
        Ok((s.len, Bound::Scalar(at)))
    }

    /// A flat sequence of tuples of scalars: `zip` (inputs of one length, checked) and `join`
    /// (the Cartesian product, the last input varying fastest).
    pub(super) fn tuples(&self, n: NodeId, env: &Env) -> Result<TupleSeqV, CodegenError> {
        let op = &self.c.node(n).op;
        if let Op::Map { f, inputs } = op {
            return self.map_tuples(n, f, inputs, env);
        }
        if let Some(f) = crate::emit::lower::flat(op)
            && let Some(Operand::Seq(source)) = f.operands.first()
        {
            // A `reverse`, `striding` or `gather` of tuples: the lowering once per component.
            let src = self.tuples(*source, env)?;
            let parts = src
                .parts
                .into_iter()
                .map(|p| {
                    let elem = p.elem;
                    self.lowered_with(n, &f, Some(p), elem, env)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let len = parts.first().map(|p| p.len.clone()).unwrap_or_default();
            return Ok(TupleSeqV { len, parts });
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
            _ => Err(self.unsupported(n, "as a tuple of scalars")),
        }
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

    /// A nested sequence (depth 2) as rows over a flat sequence.
    pub(super) fn rows(&self, n: NodeId, env: &Env) -> Result<RowsV, CodegenError> {
        if let Some((k, elem, true)) = self.phase_result(n) {
            let a = self.arg(ArgSlot::Phase {
                phase: k,
                elem: elem.stored(),
                nested: true,
            });
            return Ok(RowsV::slices(
                format!("(n_{a}_off - 1)"),
                format!("{a}_off[{R}]"),
                format!("({a}_off[{R} + 1] - {a}_off[{R}])"),
                None,
                SeqV {
                    len: format!("n_{a}"),
                    at: format!("{a}[{I}]"),
                    elem,
                },
            ));
        }
        match &self.c.node(n).op {
            Op::Nest { input, offsets } => {
                // Checked: no offsets, and rows outside the flat sequence or reversed, record the
                // error (the rows read as empty).
                let flat = self.seq(*input, env)?;
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
                let flat = self.seq(*input, env)?;
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
                let input = self.rows(*input, env)?;
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
                    form: RowForm::Same(self.seq(*value, env)?),
                })
            }
            Op::Map { f, inputs } if !inputs.is_empty() => self.map_rows(n, f, inputs, env),
            op => match crate::emit::lower::flat(op) {
                Some(f) if matches!(f.operands.first(), Some(Operand::Seq(_))) => {
                    self.lowered_rows(n, &f, env)
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
    ) -> Result<RowsV, CodegenError> {
        let (e, inner, lens) = self.bind_params(n, f, inputs, env)?;
        let row = self.seq(f.body, &inner)?;
        Ok(RowsV {
            rows: equal_lengths(&lens, n),
            form: RowForm::Each(SeqV {
                len: renamed(&row.len, &e, R),
                at: renamed(&row.at, &e, R),
                elem: row.elem,
            }),
        })
    }

    /// Binds the parameters of map `n`'s function `f` to element (or row, for a nested input)
    /// `@E<n>@` of its inputs; returns that placeholder, the body's environment and the inputs'
    /// lengths. The caller renames the placeholder (`@I@`, `@R@`) once the body has consumed
    /// its rows' own element placeholders: one name per map, so that a map in the body (a fold's
    /// elements) does not capture the enclosing map's index.
    fn bind_params(
        &self,
        n: NodeId,
        f: &crate::ir::Lambda,
        inputs: &[NodeId],
        env: &Env,
    ) -> Result<(String, Env, Vec<String>), CodegenError> {
        let e = format!("@E{}@", n.0);
        let mut inner = env.clone();
        let mut lens = Vec::new();
        for (p, i) in f.params.iter().zip(inputs) {
            let (len, b) = if self.ty(*i).depth() == 2 {
                let rows = self.rows(*i, env)?;
                (rows.rows.clone(), Bound::Seq(rows.row(&e, None)))
            } else {
                self.element(*i, env, &e)?
            };
            inner.insert(*p, b);
            lens.push(len);
        }
        Ok((e, inner, lens))
    }

    /// A `reverse`, `striding` or `gather` of a nested sequence: the lowering of `emit::lower`
    /// over the source's row numbers gives each result row's source row.
    fn lowered_rows(&self, n: NodeId, f: &Flat, env: &Env) -> Result<RowsV, CodegenError> {
        let Some(Operand::Seq(source)) = f.operands.first() else {
            unreachable!("internal: checked by the caller")
        };
        let src = self.rows(*source, env)?;
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
