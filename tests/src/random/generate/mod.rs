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

mod scalars;
mod seqs;

use super::program::{Expr, Lam, Program, Var};
use surge_codegen::data::Buffer;
use surge_codegen::ir::{BinaryOp as B, Elem, Literal, Type};

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
}
