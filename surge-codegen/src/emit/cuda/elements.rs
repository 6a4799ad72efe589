//! The element translator: IR values of one phase as C++ expressions. A scalar becomes an
//! expression; a flat sequence ([`SeqV`]) a length and an element template over the placeholder
//! index `@I@`; a nested sequence ([`RowsV`]) a row count and row `@R@` as (begin, length) into
//! a flat sequence. Producers (`gather`, element-wise `map`, `range`, `replicate`, `reverse`,
//! `striding`, `index` of a nested sequence, `nest`, `split`) are substituted into their
//! consumers' templates, never materialized.

use super::checks::equal_lengths;
pub(super) use super::rows::{RowForm, RowsV, Slices};
pub(super) use super::tuples::seq_of_tuples;
use super::{ArgSlot, cuda_type};
use crate::CodegenError;
use crate::emit::sharing;
use crate::ir::{
    BinaryOp, Computation, Elem, Literal, LiteralCursor, LiteralTable, NodeId, Op, ScalarExpr,
    Type, UnaryOp, is_runtime,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// Template `t` with placeholder `from` renamed `to`: the parenthesized form a substitution
/// wrote (`(@E3@)`) first, so the text is what binding `to` directly printed.
pub(super) fn renamed(t: &str, from: &str, to: &str) -> String {
    t.replace(&format!("({from})"), to).replace(from, to)
}

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

    /// Element `i` read by node `node`, `i` checked against `len` (the interpreter's `index`
    /// error). The read's index is named by the node: an element read inside another's
    /// (`at(map(|p| at(scan_prefix(add, x, p), 2)), 1)`) must not shadow the outer index its
    /// template reads.
    pub(super) fn checked_at(&self, i: &str, len: &str, node: NodeId) -> String {
        let k = node.0;
        format!(
            "surge_index<{}>((i64)({i}), {len}, {k}, surge_err, [&](u64 surge_k{k}) {{ return {}; }})",
            cuda_type(self.elem),
            self.at(&format!("surge_k{k}"))
        )
    }

    /// Element `i`, or the element template itself when `i` is the placeholder.
    pub(super) fn at_or_template(&self, i: &str) -> String {
        if i == I { self.at.clone() } else { self.at(i) }
    }
}

#[derive(Debug, Clone)]
pub(super) enum Bound {
    Scalar(String),
    Seq(SeqV),
    /// A tuple of scalars (an element of a `zip` or `join`): one expression per component.
    Tuple(Vec<String>),
    /// A flat sequence of tuples of scalars (a row of rows of tuples): one sequence per
    /// component.
    Tuples(super::tuples::TupleSeqV),
    /// A nested sequence (an element of a sequence of nested sequences, `deep.rs`).
    Rows(RowsV),
    /// A nested sequence of tuples of scalars, one nested sequence per component (an element
    /// of a deep sequence of tuples).
    TupleRows(Vec<RowsV>),
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

impl<'a> Tr<'a> {
    /// The translator of `phase`, emitted as program phase `p`.
    pub(super) fn new(
        c: &'a Computation,
        roots: &'a BTreeMap<NodeId, usize>,
        lits: &'a LiteralTable,
        p: usize,
        phase: &crate::analysis::Phase,
    ) -> Tr<'a> {
        Tr {
            c,
            roots,
            lits,
            phase: p,
            sequence: phase.expression_sequence(),
            args: RefCell::new(Vec::new()),
        }
    }
}

impl Tr<'_> {
    pub(super) fn unsupported(&self, n: NodeId, what: &str) -> CodegenError {
        CodegenError::EmitVariant {
            what: format!("phase {} ({})", self.phase, self.sequence),
            message: format!("the CUDA emitter cannot generate {} {what}", self.c.site(n)),
        }
    }

    pub(super) fn ty(&self, n: NodeId) -> &Type {
        &self.c.node(n).ty
    }

    pub(super) fn arg(&self, slot: ArgSlot) -> String {
        let mut args = self.args.borrow_mut();
        if !args.contains(&slot) {
            args.push(slot.clone());
        }
        slot.name()
    }

    /// An earlier phase's result, when `n` is one (and not the phase being emitted).
    pub(super) fn phase_result(&self, n: NodeId) -> Option<(usize, Elem, bool)> {
        let &k = self.roots.get(&n)?;
        if k >= self.phase {
            return None;
        }
        let ty = self.ty(n);
        if ty.depth() > 2 {
            // Stored in two phases, read by `Tr::deep`.
            return None;
        }
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
                Bound::Seq(_) | Bound::Tuples(_) | Bound::Rows(_) | Bound::TupleRows(_) => {
                    Err(self.unsupported(n, "as a scalar (it is a sequence)"))
                }
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
                        Ok(s.checked_at(&i, &s.len, n))
                    }
                    _ => Err(self.unsupported(n, "to a scalar (it indexes a nested sequence)")),
                }
            }
            Op::Length { seq } => match self.ty(*seq).depth() {
                1 if seq_of_tuples(self.ty(*seq)) => Ok(self.tuples(*seq, env)?.len),
                1 => Ok(self.seq(*seq, env)?.len),
                3 => Ok(self.deep_element(*seq, env, "0")?.0),
                _ if rows_of_tuples(self.ty(*seq)) => {
                    Ok(self.tuple_rows(*seq, env)?[0].rows.clone())
                }
                _ => Ok(self.rows(*seq, env)?.rows),
            },
            Op::Project { tuple, index } => match (env.get(tuple), &self.c.node(*tuple).op) {
                (Some(Bound::Tuple(parts)), _) if *index < parts.len() => Ok(parts[*index].clone()),
                (_, Op::Tuple { items }) if *index < items.len() => self.scalar(items[*index], env),
                _ => match self.parts(*tuple, env) {
                    Ok(parts) if *index < parts.len() => Ok(parts[*index].clone()),
                    _ => Err(self.unsupported(n, "(a projection of a computed tuple)")),
                },
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
                    (BinaryOp::Div | BinaryOp::Rem, t) if t.is_integer() => {
                        let f = if *op == BinaryOp::Div {
                            "surge_div"
                        } else {
                            "surge_rem"
                        };
                        let ct = cuda_type(t);
                        format!(
                            "{f}<{ct}>(({ct})({a}), ({ct})({b}), {}, surge_err)",
                            lits.node().0
                        )
                    }
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
                let x = self.expr(a, env, lits)?;
                float_to_int(*e, self.elem_of(a)?, &x)
                    .unwrap_or_else(|| format!("(({})({x}))", cuda_type(*e)))
            }
        })
    }

    /// A flat sequence (depth 1) as a length and an element template.
    pub(super) fn seq(&self, n: NodeId, env: &Env) -> Result<SeqV, CodegenError> {
        if let Some(b) = env.get(&n) {
            return match b {
                Bound::Seq(s) => Ok(s.clone()),
                Bound::Tuples(_) | Bound::Rows(_) | Bound::TupleRows(_) => {
                    Err(self.unsupported(n, "as a sequence of scalars"))
                }
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
            Op::Scatter {
                source,
                indices,
                dest,
            } => self.lazy_scatter(n, (*source, *indices, *dest), env),
            Op::Reduce { op, input, prefix } if self.ty(*input).depth() == 2 => {
                self.lazy_row_reduce(n, (op, *input, *prefix), env)
            }
            Op::ReduceByKey {
                op,
                input,
                keys,
                prefix,
            } => self.lazy_scalar_runs(n, (op, *input, *keys, *prefix), env),
            Op::Scan { op, input, prefix } if self.ty(*input).depth() == 1 => {
                self.lazy_scan(n, (op, *input, *prefix), env)
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

    /// Binds the parameters of map `n`'s function `f` to element (or row, for a nested input)
    /// `@E<n>@` of its inputs; returns that placeholder, the body's environment and the inputs'
    /// lengths. The caller renames the placeholder (`@I@`, `@R@`) once the body has consumed
    /// its rows' own element placeholders: one name per map, so that a map in the body (a fold's
    /// elements) does not capture the enclosing map's index.
    pub(super) fn bind_params(
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
            let (len, b) = if self.ty(*i).depth() == 2 && rows_of_tuples(self.ty(*i)) {
                let parts = self.tuple_rows(*i, env)?;
                let rows = parts[0].rows.clone();
                (rows, Bound::Tuples(row_of_tuples(&parts, &e)))
            } else if self.ty(*i).depth() == 2 {
                let rows = self.rows(*i, env)?;
                (rows.rows.clone(), Bound::Seq(rows.row(&e, None)))
            } else if self.ty(*i).depth() == 3 {
                self.deep_element(*i, env, &e)?
            } else {
                self.element(*i, env, &e)?
            };
            inner.insert(*p, b);
            lens.push(len);
        }
        Ok((e, inner, lens))
    }
}

impl Tr<'_> {
    /// The count of deep sequence `n` and its element `q` bound for a lambda parameter: a
    /// nested sequence, or one per component for tuples.
    pub(super) fn deep_element(
        &self,
        n: NodeId,
        env: &Env,
        q: &str,
    ) -> Result<(String, Bound), CodegenError> {
        if self
            .ty(n)
            .item()
            .and_then(Type::item)
            .and_then(Type::item)
            .and_then(Type::as_scalar)
            .is_some()
        {
            let d = self.deep(n, env)?;
            return Ok((d.count.clone(), Bound::Rows(d.at(q, None))));
        }
        let parts = self.tuple_deeps(n, env)?;
        let rows = parts.iter().map(|d| d.at(q, None)).collect();
        Ok((parts[0].count.clone(), Bound::TupleRows(rows)))
    }
}

/// Whether `ty` is a nested sequence of tuples.
pub(super) fn rows_of_tuples(ty: &Type) -> bool {
    matches!(ty, Type::Seq(row) if seq_of_tuples(row))
}

/// Row `r` of rows of tuples given per component (`Tr::tuple_rows`): one sequence per component,
/// all of the first component's length (the components share their row structure).
pub(super) fn row_of_tuples(parts: &[RowsV], r: &str) -> super::tuples::TupleSeqV {
    let parts: Vec<SeqV> = parts.iter().map(|p| p.row(r, None)).collect();
    super::tuples::TupleSeqV {
        len: parts[0].len.clone(),
        parts,
    }
}

/// A cast from a float to an integer type as Rust's `as` (the interpreter's) makes it: NaN is 0,
/// a value beyond the type's range its nearest bound, any other truncated. C++ leaves an
/// out-of-range conversion undefined (the host compiler gave `(u32)-2.0` = 4294967294; found by
/// the random programs, seed 9). `None` for the other casts, which C++ defines as Rust does.
fn float_to_int(to: Elem, from: Elem, x: &str) -> Option<String> {
    if !matches!(from, Elem::F32 | Elem::F64) {
        return None;
    }
    // The bounds are powers of two, exact in f32 and f64: below `lo` saturates to `min`, at or
    // above `hi` to `max`.
    let (lo, hi, min, max) = match to {
        Elem::I32 => (
            "-2147483648.0",
            "2147483648.0",
            "(-2147483647 - 1)",
            "2147483647",
        ),
        Elem::U32 => ("0.0", "4294967296.0", "0u", "4294967295u"),
        Elem::I64 => (
            "-9223372036854775808.0",
            "9223372036854775808.0",
            "(-9223372036854775807LL - 1)",
            "9223372036854775807LL",
        ),
        Elem::U64 => (
            "0.0",
            "18446744073709551616.0",
            "0ULL",
            "18446744073709551615ULL",
        ),
        _ => return None,
    };
    let (t, f) = (cuda_type(to), cuda_type(from));
    Some(format!(
        "surge_fcast<{t}, {f}>({x}, ({f}){lo}, ({f}){hi}, ({t}){min}, ({t}){max})"
    ))
}
