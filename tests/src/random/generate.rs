//! The type-directed program generator, driven by a choice sequence.
//!
//! [`decode`] turns a list of numbers into a [`Program`]: every decision (which operator, which
//! element type, how long an input, which value) reads the next number, and a list that runs out
//! reads zeros. Choice 0 is always the simplest option (an input, a literal, no prefix, length 0
//! or small), so when proptest shrinks the list (dropping numbers, lowering them) the program
//! shrinks with it. Generation is type-directed: it asks for a value of a type and picks an
//! operator that produces that type, recursively, within a size budget.
//!
//! Values are kept where every backend computes them exactly: floats are small multiples of 1/4
//! (sums and products of a few of them are exact in any order, so reassociating reductions
//! cannot blur a wrong answer into the tolerance), integers small (wrapping arithmetic is
//! consistent anyway), floats are divided only by powers of two.

use super::program::{Expr, Lam, Program, Var};
use surge_codegen::data::Buffer;
use surge_codegen::ir::{BinaryOp as B, Elem, Literal, Type, UnaryOp as U};

/// Element types of stored sequences the generator uses (`bool` arises from comparisons).
const ELEMS: [Elem; 4] = [Elem::F64, Elem::I64, Elem::F32, Elem::U32];

/// Decodes `choices` into a program (never fails; the IR's typing may still refuse it).
pub fn decode(choices: &[u32]) -> Program {
    let mut g = Gen {
        choices,
        pos: 0,
        inputs: vec![],
        next_var: 0,
        env: vec![],
    };
    let size = 3 + g.pick(4) as u32;
    let root = match g.pick(7) {
        0 => {
            let e = g.elem();
            g.seq(&Type::Scalar(e), size)
        }
        1 => {
            // Scalar code over a reduction (a scalar without one has nothing to schedule).
            let e = g.elem();
            let r = g.reduction(&Type::Scalar(e), size);
            match g.pick(3) {
                0 => r,
                1 => g.scalar(e, size),
                _ => {
                    let op = [B::Add, B::Max, B::Mul][g.pick(3)];
                    bin(op, r, g.scalar(e, size / 2))
                }
            }
        }
        2 => {
            let t = g.item_ty(1);
            g.seq(&Type::seq(t), size)
        }
        3 => {
            let t = g.tuple_ty();
            g.val(&t, size)
        }
        4 => {
            let t = g.tuple_ty();
            g.seq(&t, size)
        }
        5 => {
            let e = g.elem();
            g.seq(&Type::scalar_seq(e), size)
        }
        _ => g.seq(&Type::Scalar(Elem::Bool), size),
    };
    Program {
        inputs: g.inputs,
        root,
    }
}

struct Gen<'a> {
    choices: &'a [u32],
    pos: usize,
    inputs: Vec<Buffer>,
    next_var: u32,
    /// The lambda parameters in scope, innermost last.
    env: Vec<Var>,
}

fn lit_u64(n: u64) -> Expr {
    Expr::Lit(Literal::U64(n))
}

fn bin(op: B, a: Expr, b: Expr) -> Expr {
    Expr::Bin(op, a.boxed(), b.boxed())
}

fn item_of_ty(t: &Type) -> Type {
    t.item().cloned().expect("internal: a sequence type")
}

fn numeric(t: &Type) -> Option<Elem> {
    t.as_scalar().filter(|e| *e != Elem::Bool)
}

impl Gen<'_> {
    /// The next choice in `0..n` (0 once the list runs out).
    fn pick(&mut self, n: usize) -> usize {
        let c = self.choices.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        c as usize % n.max(1)
    }

    /// True with probability `1/n` (false for choice 0).
    fn coin(&mut self, n: usize) -> bool {
        self.pick(n) == n - 1
    }

    fn elem(&mut self) -> Elem {
        ELEMS[self.pick(ELEMS.len())]
    }

    fn index_elem(&mut self) -> Elem {
        [Elem::U32, Elem::I64][self.pick(2)]
    }

    /// A small value in zig-zag order (0, 1, -1, 2, -2, ..) so shrinking heads for 0.
    fn small_int(&mut self, n: usize) -> i64 {
        let k = self.pick(2 * n + 1) as i64;
        if k % 2 == 1 { (k + 1) / 2 } else { -k / 2 }
    }

    fn literal(&mut self, e: Elem) -> Literal {
        match e {
            Elem::F64 => Literal::f64(self.small_int(24) as f64 / 4.0),
            Elem::F32 => Literal::f32(self.small_int(24) as f32 / 4.0),
            Elem::I64 => Literal::I64(self.small_int(6)),
            Elem::I32 => Literal::I32(self.small_int(6) as i32),
            Elem::U32 => Literal::U32(self.pick(8) as u32),
            Elem::U64 => Literal::U64(self.pick(8) as u64),
            Elem::Bool => unreachable!("internal: no boolean literals in the DSEL"),
        }
    }

    fn input_len(&mut self) -> usize {
        if self.coin(5) {
            self.pick(21)
        } else {
            self.pick(9)
        }
    }

    /// A new input buffer of `n` values of `e` (`index`: small non-negative values).
    fn input(&mut self, e: Elem, n: usize, index: bool) -> Expr {
        let ints = |g: &mut Self| -> Vec<i64> {
            (0..n)
                .map(|_| {
                    if index {
                        g.pick(5) as i64
                    } else {
                        g.small_int(8)
                    }
                })
                .collect()
        };
        let b = match e {
            Elem::F64 => Buffer::F64((0..n).map(|_| self.small_int(24) as f64 / 4.0).collect()),
            Elem::F32 => Buffer::F32((0..n).map(|_| self.small_int(24) as f32 / 4.0).collect()),
            Elem::I64 => Buffer::I64(ints(self)),
            Elem::I32 => Buffer::I32(ints(self).into_iter().map(|v| v as i32).collect()),
            Elem::U32 => Buffer::U32(
                ints(self)
                    .into_iter()
                    .map(|v| v.unsigned_abs() as u32)
                    .collect(),
            ),
            Elem::U64 => Buffer::U64(ints(self).into_iter().map(|v| v.unsigned_abs()).collect()),
            Elem::Bool => unreachable!("internal: booleans are not stored"),
        };
        self.inputs.push(b);
        Expr::Input(self.inputs.len() - 1)
    }

    /// Non-decreasing offsets within `0..=n` for a few (possibly empty) rows.
    fn offsets(&mut self, n: usize) -> Expr {
        let rows = self.pick(5);
        let mut cuts: Vec<u64> = (0..=rows).map(|_| self.pick(n + 1) as u64).collect();
        cuts.sort_unstable();
        if !self.coin(4) {
            cuts[0] = 0;
            cuts[rows] = n as u64;
        }
        let b = match self.index_elem() {
            Elem::U32 => Buffer::U32(cuts.iter().map(|c| *c as u32).collect()),
            _ => Buffer::I64(cuts.iter().map(|c| *c as i64).collect()),
        };
        self.inputs.push(b);
        Expr::Input(self.inputs.len() - 1)
    }

    fn tuple_ty(&mut self) -> Type {
        let n = 2 + self.pick(2);
        Type::Tuple(
            (0..n)
                .map(|_| {
                    if self.coin(5) {
                        Type::Scalar(Elem::Bool)
                    } else {
                        Type::Scalar(self.elem())
                    }
                })
                .collect(),
        )
    }

    /// A type for sequence elements, nested at most `depth` levels.
    fn item_ty(&mut self, depth: usize) -> Type {
        match self.pick(6) {
            0..=2 => Type::Scalar(self.elem()),
            3 => self.tuple_ty(),
            4 if depth > 0 => Type::seq(self.item_ty(depth - 1)),
            _ => Type::Scalar(self.elem()),
        }
    }

    fn fresh_var(&mut self, ty: Type) -> Var {
        self.next_var += 1;
        Var {
            id: self.next_var,
            ty,
        }
    }

    /// `f` with parameters of types `tys` in scope.
    fn lambda(&mut self, tys: &[Type], body: impl FnOnce(&mut Self, &[Var]) -> Expr) -> Lam {
        let params: Vec<Var> = tys.iter().map(|t| self.fresh_var(t.clone())).collect();
        let depth = self.env.len();
        self.env.extend(params.iter().cloned());
        let body = body(self, &params);
        self.env.truncate(depth);
        Lam {
            params,
            body: body.boxed(),
        }
    }

    /// Variables in scope (and fields of tuple variables) of type `ty`.
    fn vars_of(&self, ty: &Type) -> Vec<Expr> {
        let mut out = vec![];
        for v in &self.env {
            if v.ty == *ty {
                out.push(Expr::Var(v.clone()));
            }
            if let Type::Tuple(ts) = &v.ty {
                for (i, t) in ts.iter().enumerate() {
                    if t == ty {
                        out.push(Expr::Proj(Expr::Var(v.clone()).boxed(), i));
                    }
                }
            }
        }
        out
    }

    fn pick_var(&mut self, ty: &Type) -> Option<Expr> {
        let vs = self.vars_of(ty);
        if vs.is_empty() {
            return None;
        }
        let k = self.pick(vs.len());
        Some(vs[k].clone())
    }

    /// Any value of type `ty`.
    fn val(&mut self, ty: &Type, size: u32) -> Expr {
        match ty {
            Type::Scalar(e) => self.scalar(*e, size),
            Type::Seq(t) => self.seq(t, size),
            Type::Tuple(ts) => self.tuple(ts, size),
        }
    }

    fn tuple(&mut self, ts: &[Type], size: u32) -> Expr {
        let ty = Type::Tuple(ts.to_vec());
        let s = size.saturating_sub(1);
        match if size == 0 { 0 } else { self.pick(4) } {
            1 => {
                let input = self.seq(&ty, s);
                let (op, prefix) = (self.combiner(&ty), self.maybe_prefix(&ty, s / 2));
                Expr::Reduce(op, input.boxed(), prefix)
            }
            2 => {
                let seq = self.seq(&ty, s);
                let i = self.index(s / 2);
                Expr::Index(seq.boxed(), i.boxed())
            }
            _ => Expr::Tuple(ts.iter().map(|t| self.val(t, s)).collect()),
        }
    }

    fn maybe_prefix(&mut self, ty: &Type, size: u32) -> Option<Box<Expr>> {
        self.coin(2).then(|| self.val(ty, size).boxed())
    }

    /// An index: a small literal or an integer from the scope.
    fn index(&mut self, size: u32) -> Expr {
        let e = self.index_elem();
        if size > 0
            && self.coin(3)
            && let Some(v) = self.pick_var(&Type::Scalar(e))
        {
            return v;
        }
        Expr::Lit(match e {
            Elem::U32 => Literal::U32(self.pick(4) as u32),
            _ => Literal::I64(self.pick(4) as i64),
        })
    }

    /// A `u64` count (tile size, stride, replicate length): a small literal, or computed.
    fn count(&mut self, size: u32, positive: bool) -> Expr {
        let lo = positive as u64;
        match if size == 0 { 0 } else { self.pick(6) } {
            1 => {
                let t = self.item_ty(0);
                let s = self.seq(&t, size - 1);
                let n = Expr::Length(s.boxed());
                let m = bin(B::Rem, n, lit_u64(4));
                bin(B::Add, m, lit_u64(lo))
            }
            _ => lit_u64(lo + self.pick(4) as u64),
        }
    }

    /// A binary combiner over `ty`: associative, so every variant's reassociation agrees.
    fn combiner(&mut self, ty: &Type) -> Lam {
        match ty {
            Type::Scalar(Elem::Bool) => {
                let op = [B::Or, B::And][self.pick(2)];
                self.lambda(&[ty.clone(), ty.clone()], |_, p| {
                    bin(op, Expr::Var(p[0].clone()), Expr::Var(p[1].clone()))
                })
            }
            Type::Scalar(_) => {
                let op = [B::Add, B::Max, B::Min, B::Mul][self.pick(4)];
                self.lambda(&[ty.clone(), ty.clone()], |_, p| {
                    bin(op, Expr::Var(p[0].clone()), Expr::Var(p[1].clone()))
                })
            }
            Type::Tuple(ts) => {
                let ts = ts.clone();
                let argmin = numeric(&ts[0]).is_some() && self.coin(2);
                let ops: Vec<B> = ts
                    .iter()
                    .map(|t| match t {
                        Type::Scalar(Elem::Bool) => [B::Or, B::And][self.pick(2)],
                        _ => [B::Add, B::Max, B::Min][self.pick(3)],
                    })
                    .collect();
                self.lambda(&[ty.clone(), ty.clone()], |_, p| {
                    let field = |v: &Var, i| Expr::Proj(Expr::Var(v.clone()).boxed(), i);
                    if argmin {
                        let take = bin(B::Le, field(&p[0], 0), field(&p[1], 0));
                        Expr::Tuple(
                            (0..ts.len())
                                .map(|i| {
                                    if ts[i] == Type::Scalar(Elem::Bool) {
                                        bin(B::And, field(&p[0], i), field(&p[1], i))
                                    } else {
                                        Expr::Select(
                                            take.clone().boxed(),
                                            field(&p[0], i).boxed(),
                                            field(&p[1], i).boxed(),
                                        )
                                    }
                                })
                                .collect(),
                        )
                    } else {
                        Expr::Tuple(
                            ops.iter()
                                .enumerate()
                                .map(|(i, op)| bin(*op, field(&p[0], i), field(&p[1], i)))
                                .collect(),
                        )
                    }
                })
            }
            Type::Seq(t) => {
                // Element-wise over rows (the dissertation's Listing 5.5): rows must agree in
                // length. The elements combine by a combiner of their own type.
                let t = (**t).clone();
                self.lambda(&[ty.clone(), ty.clone()], |g, p| {
                    let f = g.combiner(&t);
                    Expr::Map(f, vec![Expr::Var(p[0].clone()), Expr::Var(p[1].clone())])
                })
            }
        }
    }

    /// A scalar of element type `e`.
    fn scalar(&mut self, e: Elem, size: u32) -> Expr {
        let ty = Type::Scalar(e);
        let s = size.saturating_sub(1);
        let leaf = |g: &mut Self| -> Expr {
            if let Some(v) = g.pick_var(&ty) {
                if !g.coin(4) {
                    return v;
                }
            }
            match e {
                Elem::Bool => {
                    let t = g.elem();
                    let a = g.scalar(t, 0);
                    bin(B::Lt, a, Expr::Lit(g.literal(t)))
                }
                _ => Expr::Lit(g.literal(e)),
            }
        };
        if size == 0 {
            return leaf(self);
        }
        if e == Elem::Bool {
            return match self.pick(5) {
                0 => leaf(self),
                1 => {
                    let a = self.scalar(e, s);
                    Expr::Un(U::Not, a.boxed())
                }
                2 => {
                    let op = [B::And, B::Or][self.pick(2)];
                    bin(op, self.scalar(e, s), self.scalar(e, s / 2))
                }
                3 => self.reduction(&ty, s),
                _ => {
                    let t = self.elem();
                    let op = [B::Lt, B::Le, B::Gt, B::Ge, B::Eq, B::Ne][self.pick(6)];
                    bin(op, self.scalar(t, s), self.scalar(t, s / 2))
                }
            };
        }
        match self.pick(12) {
            0 | 1 => leaf(self),
            2 => {
                let op = [B::Add, B::Sub, B::Mul, B::Min, B::Max][self.pick(5)];
                bin(op, self.scalar(e, s), self.scalar(e, s / 2))
            }
            3 => {
                // Division and remainder by a literal (a power of two for floats); rarely by a
                // computed divisor, which may be zero (an error in every backend).
                let a = self.scalar(e, s);
                let op = [B::Div, B::Rem][self.pick(2)];
                let d = match e {
                    _ if self.coin(6) => self.scalar(e, s / 2),
                    Elem::F64 => Expr::Lit(Literal::f64([2.0, 0.5, 4.0][self.pick(3)])),
                    Elem::F32 => Expr::Lit(Literal::f32([2.0, 0.5, 4.0][self.pick(3)])),
                    Elem::I64 => Expr::Lit(Literal::I64([2, -3, 5][self.pick(3)])),
                    Elem::I32 => Expr::Lit(Literal::I32([2, -3, 5][self.pick(3)])),
                    Elem::U32 => Expr::Lit(Literal::U32(1 + self.pick(4) as u32)),
                    _ => Expr::Lit(Literal::U64(1 + self.pick(4) as u64)),
                };
                bin(op, a, d)
            }
            4 => {
                let a = self.scalar(e, s);
                match e {
                    Elem::U32 | Elem::U64 => Expr::Un(U::Abs, a.boxed()),
                    _ if e.is_float() && self.coin(3) => {
                        Expr::Un(U::Sqrt, Expr::Un(U::Abs, a.boxed()).boxed())
                    }
                    _ => Expr::Un([U::Neg, U::Abs][self.pick(2)], a.boxed()),
                }
            }
            5 => {
                let c = self.scalar(Elem::Bool, s / 2);
                Expr::Select(
                    c.boxed(),
                    self.scalar(e, s).boxed(),
                    self.scalar(e, s / 2).boxed(),
                )
            }
            6 => {
                let t = self.elem();
                Expr::Cast(e, self.scalar(t, s).boxed())
            }
            7 if e.is_float() => Expr::Fma(
                self.scalar(e, s).boxed(),
                self.scalar(e, s / 2).boxed(),
                self.scalar(e, s / 2).boxed(),
            ),
            8 => {
                let t = self.item_ty(1);
                let seq = self.seq(&t, s);
                Expr::Cast(e, Expr::Length(seq.boxed()).boxed())
            }
            9 => {
                let seq = self.seq(&ty, s);
                let i = self.index(s / 2);
                Expr::Index(seq.boxed(), i.boxed())
            }
            10 if self.coin(2) => {
                // A field of a tuple-valued reduction (argmin and friends).
                let mut ts = match self.tuple_ty() {
                    Type::Tuple(ts) => ts,
                    _ => unreachable!(),
                };
                let k = self.pick(ts.len());
                ts[k] = ty.clone();
                let t = self.tuple(&ts, s);
                Expr::Proj(t.boxed(), k)
            }
            _ => self.reduction(&ty, s),
        }
    }

    /// `reduce(op, s)` or `reduce_prefix(op, s, p)` of a value of type `ty`.
    fn reduction(&mut self, ty: &Type, size: u32) -> Expr {
        let input = self.seq(ty, size);
        let op = self.combiner(ty);
        let prefix = self.maybe_prefix(ty, size / 2);
        Expr::Reduce(op, input.boxed(), prefix)
    }

    /// A sequence of exactly `n` elements of type `it`, built from new inputs.
    fn fresh(&mut self, it: &Type, n: usize) -> Expr {
        match it {
            Type::Scalar(Elem::Bool) => {
                let e = self.elem();
                let s = self.input(e, n, false);
                let lit = Expr::Lit(self.literal(e));
                let f = self.lambda(&[Type::Scalar(e)], |_, p| {
                    bin(B::Lt, Expr::Var(p[0].clone()), lit)
                });
                Expr::Map(f, vec![s])
            }
            Type::Scalar(e) => self.input(*e, n, false),
            Type::Tuple(ts) => Expr::Zip(ts.iter().map(|t| self.fresh(t, n)).collect()),
            Type::Seq(t) if self.coin(3) => {
                // `n` rows of `c` elements.
                let c = 1 + self.pick(4);
                let data = self.fresh(t, n * c);
                Expr::Split(data.boxed(), lit_u64(c as u64).boxed())
            }
            Type::Seq(t) => {
                // `n` rows (some empty, lengths differing) over a flat sequence.
                let m = self.input_len();
                let data = self.fresh(t, m);
                let mut cuts: Vec<u64> = (0..=n).map(|_| self.pick(m + 1) as u64).collect();
                cuts.sort_unstable();
                let off = match self.index_elem() {
                    Elem::U32 => Buffer::U32(cuts.iter().map(|c| *c as u32).collect()),
                    _ => Buffer::I64(cuts.iter().map(|c| *c as i64).collect()),
                };
                self.inputs.push(off);
                Expr::Nest(data.boxed(), Expr::Input(self.inputs.len() - 1).boxed())
            }
        }
    }

    /// A sequence of exactly `n` elements of type `it`: new inputs, or length-preserving
    /// operators over a sequence of `n` elements.
    fn seq_len(&mut self, it: &Type, n: usize, size: u32) -> Expr {
        let s = size.saturating_sub(1);
        match if size == 0 { 0 } else { self.pick(6) } {
            1 => {
                let t = self.item_ty(1);
                let k = 1 + self.pick(2);
                let inputs: Vec<Expr> = (0..k)
                    .map(|_| {
                        let t = if self.coin(2) {
                            self.item_ty(1)
                        } else {
                            t.clone()
                        };
                        self.seq_len(&t, n, s / 2)
                    })
                    .collect();
                self.map_over(inputs, it, s)
            }
            2 => Expr::Reverse(self.seq_len(it, n, s).boxed()),
            3 if numeric(it).is_some() || matches!(it, Type::Tuple(_)) => {
                let input = self.seq_len(it, n, s);
                let op = self.combiner(it);
                let prefix = self.maybe_prefix(it, s / 2);
                Expr::Scan(op, input.boxed(), prefix)
            }
            4 => {
                let v = self.val(it, s / 2);
                Expr::Replicate(v.boxed(), lit_u64(n as u64).boxed())
            }
            _ => self.fresh(it, n),
        }
    }

    /// `map(f, inputs)` producing elements of type `it`; the inputs' types are read back from
    /// how they were generated.
    fn map_over(&mut self, inputs: Vec<Expr>, it: &Type, size: u32) -> Expr {
        let tys: Vec<Type> = inputs.iter().map(|e| self.item_of(e)).collect();
        let f = self.lambda(&tys, |g, _| g.val(it, size));
        Expr::Map(f, inputs)
    }

    /// The element type of a generated sequence expression.
    fn item_of(&self, e: &Expr) -> Type {
        super::types::type_of(e, &self.inputs)
            .item()
            .cloned()
            .expect("internal: a sequence")
    }

    /// A sequence with elements of type `it`.
    fn seq(&mut self, it: &Type, size: u32) -> Expr {
        let s = size.saturating_sub(1);
        let seq_ty = Type::seq(it.clone());
        if size == 0 || self.coin(8) {
            if let Some(v) = self.pick_var(&seq_ty)
                && !self.coin(3)
            {
                return v;
            }
            let n = self.input_len();
            return self.fresh(it, n);
        }
        match self.pick(18) {
            0 => {
                let n = self.input_len();
                self.seq_len(it, n, s)
            }
            16 | 17 if matches!(it, Type::Tuple(ts) if ts.len() <= 3) => {
                let ts = match it {
                    Type::Tuple(ts) => ts.clone(),
                    _ => unreachable!(),
                };
                Expr::Join(ts.iter().map(|t| self.seq(t, s / 2)).collect())
            }
            16 | 17 if matches!(it, Type::Seq(_)) => {
                let inner = item_of_ty(it);
                let (r, c) = (self.pick(4), 1 + self.pick(4));
                let src = self.seq_len(&inner, r * c, s);
                let rows = Expr::Split(src.boxed(), lit_u64(c as u64).boxed());
                Expr::Transpose(rows.boxed())
            }
            1 | 2 => {
                // map over one to three sequences of one length (or over a row in scope).
                let rows: Vec<Var> = self.env.iter().filter(|v| v.ty.is_seq()).cloned().collect();
                if !rows.is_empty() && !self.coin(3) {
                    let v = rows[self.pick(rows.len())].clone();
                    return self.map_over(vec![Expr::Var(v)], it, s);
                }
                let n = self.input_len();
                let k = 1 + self.pick(3);
                let inputs: Vec<Expr> = (0..k)
                    .map(|_| {
                        let t = self.item_ty(1);
                        self.seq_len(&t, n, s / 2)
                    })
                    .collect();
                self.map_over(inputs, it, s)
            }
            3 => {
                let t = self.item_ty(1);
                let src = self.seq(&t, s);
                self.map_over(vec![src], it, s)
            }
            4 => Expr::Reverse(self.seq(it, s).boxed()),
            5 => {
                let src = self.seq(it, s);
                let e = self.index_elem();
                let n = self.input_len();
                let idx = self.input(e, n, true);
                Expr::Gather(src.boxed(), idx.boxed())
            }
            6 => {
                let n = self.input_len();
                let src = self.seq_len(it, n, s / 2);
                let e = self.index_elem();
                let idx = self.input(e, n, true);
                let dest = self.seq(it, s / 2);
                Expr::Scatter(src.boxed(), idx.boxed(), dest.boxed())
            }
            7 if numeric(it).is_some() => {
                let want = it.as_scalar().unwrap();
                let e = match want {
                    Elem::I64 | Elem::U32 => want,
                    _ => self.index_elem(),
                };
                let a = Expr::Lit(self.literal(e));
                let b = match self.pick(3) {
                    2 if size > 1 => Expr::Cast(
                        e,
                        Expr::Length(self.seq(&Type::Scalar(e), s).boxed()).boxed(),
                    ),
                    _ => Expr::Lit(self.literal(e)),
                };
                let step = self.coin(2).then(|| {
                    Expr::Lit(match e {
                        Elem::I64 => Literal::I64([2, -1, 3, -2][self.pick(4)]),
                        _ => Literal::U32(2 + self.pick(2) as u32),
                    })
                    .boxed()
                });
                let r = Expr::Range(a.boxed(), b.boxed(), step);
                if e == want {
                    return r;
                }
                let f = self.lambda(&[Type::Scalar(e)], |_, p| {
                    Expr::Cast(want, Expr::Var(p[0].clone()).boxed())
                });
                Expr::Map(f, vec![r])
            }
            8 => {
                let v = self.val(it, s / 2);
                let n = self.count(s / 2, false);
                Expr::Replicate(v.boxed(), n.boxed())
            }
            9 => {
                let src = self.seq(it, s);
                let k = self.count(s / 2, true);
                Expr::Striding(src.boxed(), k.boxed())
            }
            10 if numeric(it).is_some() || matches!(it, Type::Tuple(_)) || self.coin(4) => {
                let input = self.seq(it, s);
                let op = self.combiner(it);
                let prefix = self.maybe_prefix(it, s / 2);
                Expr::Scan(op, input.boxed(), prefix)
            }
            11 => {
                let n = self.input_len();
                let input = self.seq_len(it, n, s / 2);
                let e = self.index_elem();
                let keys = self.input(e, n, true);
                let op = self.combiner(it);
                let prefix = self.val(it, s / 2);
                Expr::ReduceByKey(op, input.boxed(), keys.boxed(), prefix.boxed())
            }
            12 if it.depth() < 2 => {
                // A row of a nested sequence.
                let rows = self.seq(&seq_ty, s);
                let i = self.index(s / 2);
                Expr::Index(rows.boxed(), i.boxed())
            }
            13 if numeric(it).is_some() => {
                // A reduction over rows with an element-wise combiner: uniform rows of `c`.
                let c = self.pick(4);
                let r = 1 + self.pick(3);
                let data = self.seq_len(it, r * c, s / 2);
                let rows = Expr::Split(data.boxed(), lit_u64(c.max(1) as u64).boxed());
                let op = self.combiner(&seq_ty);
                let prefix = self.coin(2).then(|| {
                    Expr::Replicate(
                        self.scalar(it.as_scalar().unwrap(), 0).boxed(),
                        lit_u64(c as u64).boxed(),
                    )
                    .boxed()
                });
                Expr::Reduce(op, rows.boxed(), prefix)
            }
            14 | 15 => match it {
                Type::Seq(inner) => match self.pick(4) {
                    0 => {
                        let src = self.seq(inner, s);
                        let k = self.count(s / 2, true);
                        Expr::Split(src.boxed(), k.boxed())
                    }
                    1 => {
                        let n = self.input_len();
                        let src = self.seq_len(inner, n, s);
                        let off = self.offsets(n);
                        Expr::Nest(src.boxed(), off.boxed())
                    }
                    2 => {
                        let (r, c) = (self.pick(4), 1 + self.pick(4));
                        let src = self.seq_len(inner, r * c, s);
                        let rows = Expr::Split(src.boxed(), lit_u64(c as u64).boxed());
                        Expr::Transpose(rows.boxed())
                    }
                    _ => Expr::Transpose(self.seq(it, s).boxed()),
                },
                Type::Tuple(ts) => {
                    let ts = ts.clone();
                    if self.coin(2) && ts.len() <= 3 {
                        Expr::Join(ts.iter().map(|t| self.seq(t, s / 2)).collect())
                    } else {
                        let n = self.input_len();
                        Expr::Zip(ts.iter().map(|t| self.seq_len(t, n, s / 2)).collect())
                    }
                }
                _ => {
                    let t = self.item_ty(1);
                    let src = self.seq(&t, s);
                    self.map_over(vec![src], it, s)
                }
            },
            _ => {
                let n = self.input_len();
                self.seq_len(it, n, s)
            }
        }
    }
}
