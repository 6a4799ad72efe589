//! Scalars, tuples and combiners: scalar code over parameters, literals and reductions.

use super::{Gen, bin, lit_u64, numeric};
use crate::random::program::{Expr, Lam, Var};
use surge_codegen::ir::{BinaryOp as B, Elem, Literal, Type, UnaryOp as U};

impl Gen<'_> {
    /// Any value of type `ty`.
    pub(super) fn val(&mut self, ty: &Type, size: u32) -> Expr {
        match ty {
            Type::Scalar(e) => self.scalar(*e, size),
            Type::Seq(t) => self.seq(t, size),
            Type::Tuple(ts) => self.tuple(ts, size),
        }
    }

    pub(super) fn tuple(&mut self, ts: &[Type], size: u32) -> Expr {
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

    pub(super) fn maybe_prefix(&mut self, ty: &Type, size: u32) -> Option<Box<Expr>> {
        self.coin(2).then(|| self.val(ty, size).boxed())
    }

    /// An index: a small literal or an integer from the scope.
    pub(super) fn index(&mut self, size: u32) -> Expr {
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
    pub(super) fn count(&mut self, size: u32, positive: bool) -> Expr {
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
    pub(super) fn combiner(&mut self, ty: &Type) -> Lam {
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
    pub(super) fn scalar(&mut self, e: Elem, size: u32) -> Expr {
        let ty = Type::Scalar(e);
        let s = size.saturating_sub(1);
        let leaf = |g: &mut Self| -> Expr {
            if let Some(v) = g.pick_var(&ty)
                && !g.coin(4)
            {
                return v;
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
    pub(super) fn reduction(&mut self, ty: &Type, size: u32) -> Expr {
        let input = self.seq(ty, size);
        let op = self.combiner(ty);
        let prefix = self.maybe_prefix(ty, size / 2);
        Expr::Reduce(op, input.boxed(), prefix)
    }
}
