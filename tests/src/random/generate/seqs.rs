//! Sequences: a type-directed choice among the operators that produce a sequence of a given
//! element type, and sequences of a known length built from new inputs.

use super::{Gen, bin, item_of_ty, lit_u64, numeric};
use crate::random::program::{Expr, Var};
use surge_codegen::data::Buffer;
use surge_codegen::ir::{BinaryOp as B, Elem, Literal, Type};

impl Gen<'_> {
    /// A sequence of exactly `n` elements of type `it`, built from new inputs.
    pub(super) fn fresh(&mut self, it: &Type, n: usize) -> Expr {
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
    pub(super) fn seq_len(&mut self, it: &Type, n: usize, size: u32) -> Expr {
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
    pub(super) fn map_over(&mut self, inputs: Vec<Expr>, it: &Type, size: u32) -> Expr {
        let tys: Vec<Type> = inputs.iter().map(|e| self.item_of(e)).collect();
        let f = self.lambda(&tys, |g, _| g.val(it, size));
        Expr::Map(f, inputs)
    }

    /// The element type of a generated sequence expression.
    pub(super) fn item_of(&self, e: &Expr) -> Type {
        crate::random::types::type_of(e, &self.inputs)
            .item()
            .cloned()
            .expect("internal: a sequence")
    }

    /// A sequence with elements of type `it`.
    pub(super) fn seq(&mut self, it: &Type, size: u32) -> Expr {
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
