//! Compiled integer programs: an expression that the `i64` fast paths of `eval` handle
//! (`int_fast`, `truthy_fast`) is flattened into straight-line register operations, run
//! without walking the tree.
//!
//! A program gives the fast path's value or `None`, never a different value: every operation
//! computes what the tree computes, and anything else (a slot that is not an int, an overflow,
//! a division by zero, an unsupported node) makes the whole program give `None`, after which
//! the caller runs the tree evaluators (the same value, or the exact error). Because a `None`
//! is always allowed, `and`, `or` and conditional expressions evaluate all their operands and
//! select the result (no branches): an operand the tree would skip can only turn a result into
//! `None`, never change it.

use super::{Builtin, Expr, ExprKind};
use crate::value::{BinOp, CmpOp, UnOp, Value};

/// Registers of one run; programs with more operations are not compiled.
const REGS: usize = 16;

/// An operand: the result of an earlier operation, an environment slot holding an int, or a
/// constant.
#[derive(Clone, Copy, Debug)]
pub(super) enum Src {
    Reg(u8),
    Slot(u32),
    Const(i64),
}

/// One operation; its result goes to the register numbered by its position.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    Add(Src, Src),
    Sub(Src, Src),
    Mul(Src, Src),
    FloorDiv(Src, Src),
    Mod(Src, Src),
    BitAnd(Src, Src),
    BitOr(Src, Src),
    BitXor(Src, Src),
    Neg(Src),
    Invert(Src),
    Abs(Src),
    Min(Src, Src),
    Max(Src, Src),
    /// 1 if the comparison holds, else 0.
    Cmp(CmpOp, Src, Src),
    /// 1 if both are non-zero.
    And(Src, Src),
    /// 1 if either is non-zero.
    Or(Src, Src),
    /// 1 if zero.
    Not(Src),
    /// 1 if non-zero.
    Truth(Src),
    /// Truthiness of a slot holding a bool or an int (a hoisted comparison).
    TruthSlot(u32),
    /// `a if c else b`.
    Select(Src, Src, Src),
}

/// A compiled expression: its value as an int, or as a truth value (0 or 1).
#[derive(Clone, Debug)]
pub(crate) struct IntProg {
    pub(super) ops: Vec<Op>,
    pub(super) out: Src,
    /// The value is a bool (a comparison or `not`), stored as `Value::Bool`.
    pub(crate) boolean: bool,
}

struct Builder {
    ops: Vec<Op>,
}

impl Builder {
    fn push(&mut self, op: Op) -> Option<Src> {
        if self.ops.len() >= REGS {
            return None;
        }
        self.ops.push(op);
        Some(Src::Reg((self.ops.len() - 1) as u8))
    }

    /// The operand computing `e` as `Expr::int_fast` does.
    fn int(&mut self, e: &Expr) -> Option<Src> {
        match &e.kind {
            ExprKind::Slot(s) | ExprKind::Cached(s, _) => Some(Src::Slot(*s)),
            ExprKind::Const(Value::Int(i)) => Some(Src::Const(*i)),
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.int(a)?, self.int(b)?);
                self.push(match op {
                    BinOp::Add => Op::Add(x, y),
                    BinOp::Sub => Op::Sub(x, y),
                    BinOp::Mul => Op::Mul(x, y),
                    BinOp::FloorDiv => Op::FloorDiv(x, y),
                    BinOp::Mod => Op::Mod(x, y),
                    BinOp::BitAnd => Op::BitAnd(x, y),
                    BinOp::BitOr => Op::BitOr(x, y),
                    BinOp::BitXor => Op::BitXor(x, y),
                    _ => return None,
                })
            }
            ExprKind::Unary(UnOp::Neg, a) => {
                let x = self.int(a)?;
                self.push(Op::Neg(x))
            }
            ExprKind::Unary(UnOp::Invert, a) => {
                let x = self.int(a)?;
                self.push(Op::Invert(x))
            }
            ExprKind::Call(b @ (Builtin::Min | Builtin::Max), args) if args.len() >= 2 => {
                let mut m = self.int(&args[0])?;
                for a in &args[1..] {
                    let x = self.int(a)?;
                    m = self.push(if *b == Builtin::Min {
                        Op::Min(m, x)
                    } else {
                        Op::Max(m, x)
                    })?;
                }
                Some(m)
            }
            ExprKind::Call(Builtin::Abs, args) if args.len() == 1 => {
                let x = self.int(&args[0])?;
                self.push(Op::Abs(x))
            }
            ExprKind::IfElse(b) => {
                let c = self.truthy(&b[1])?;
                let (x, y) = (self.int(&b[0])?, self.int(&b[2])?);
                self.push(Op::Select(c, x, y))
            }
            _ => None,
        }
    }

    /// The operand (0 or 1) computing `e` as `Expr::truthy_fast` does.
    fn truthy(&mut self, e: &Expr) -> Option<Src> {
        match &e.kind {
            ExprKind::Compare(first, rest) => {
                let mut left = self.int(first)?;
                let mut all: Option<Src> = None;
                for (op, r) in rest {
                    if matches!(op, CmpOp::In | CmpOp::NotIn) {
                        return None;
                    }
                    let right = self.int(r)?;
                    let c = self.push(Op::Cmp(*op, left, right))?;
                    all = Some(match all {
                        None => c,
                        Some(a) => self.push(Op::And(a, c))?,
                    });
                    left = right;
                }
                all
            }
            ExprKind::Unary(UnOp::Not, a) => {
                let x = self.truthy(a)?;
                self.push(Op::Not(x))
            }
            ExprKind::Cached(s, _) => self.push(Op::TruthSlot(*s)),
            ExprKind::And(xs) | ExprKind::Or(xs) if !xs.is_empty() => {
                let and = matches!(e.kind, ExprKind::And(_));
                let mut acc = self.truthy(&xs[0])?;
                for x in &xs[1..] {
                    let y = self.truthy(x)?;
                    acc = self.push(if and { Op::And(acc, y) } else { Op::Or(acc, y) })?;
                }
                Some(acc)
            }
            ExprKind::Const(v) => Some(Src::Const(i64::from(v.truthy()))),
            ExprKind::IfElse(b) => {
                let c = self.truthy(&b[1])?;
                let (x, y) = (self.truthy(&b[0])?, self.truthy(&b[2])?);
                self.push(Op::Select(c, x, y))
            }
            _ => {
                let x = self.int(e)?;
                self.push(Op::Truth(x))
            }
        }
    }
}

impl IntProg {
    /// The program of `Expr::int_fast(e)`.
    pub(crate) fn int(e: &Expr) -> Option<IntProg> {
        IntProg::build(false, |b| b.int(e))
    }

    /// The program of `Expr::eval_fast(e)` when that is an int or a bool (a comparison or
    /// `not`, as `eval_fast` decides).
    pub(crate) fn value(e: &Expr) -> Option<IntProg> {
        match e.kind {
            ExprKind::Compare(..) | ExprKind::Unary(UnOp::Not, _) => IntProg::truthy(e),
            _ => IntProg::int(e),
        }
    }

    /// The program of `Expr::truthy_fast(e)` (1 for true, 0 for false).
    pub(crate) fn truthy(e: &Expr) -> Option<IntProg> {
        IntProg::build(true, |b| b.truthy(e))
    }

    /// The program `emit` writes into a fresh builder, its value at the source `emit` returns.
    fn build(boolean: bool, emit: impl FnOnce(&mut Builder) -> Option<Src>) -> Option<IntProg> {
        let mut b = Builder { ops: Vec::new() };
        let out = emit(&mut b)?;
        Some(IntProg {
            ops: b.ops,
            out,
            boolean,
        })
    }

    /// Run in environment `env`: the fast path's value, or None (then use the tree).
    #[inline(always)]
    pub(crate) fn run(&self, env: &[Value]) -> Option<i64> {
        let mut r = [0i64; REGS];
        for (i, op) in self.ops.iter().enumerate() {
            r[i] = eval_op(op, &r, env)?;
        }
        operand(self.out, &r, env)
    }
}

/// The value of operand `s`: register `k` is `r[k]` (`r` starts at the program's first
/// register), a slot must hold an int.
#[inline(always)]
pub(super) fn operand(s: Src, r: &[i64], env: &[Value]) -> Option<i64> {
    match s {
        Src::Reg(k) => Some(r[k as usize]),
        Src::Slot(k) => match &env[k as usize] {
            Value::Int(x) => Some(*x),
            _ => None,
        },
        Src::Const(c) => Some(c),
    }
}

/// One operation on registers `r` (see [`operand`]); None: the program gives None.
#[inline(always)]
pub(super) fn eval_op(op: &Op, r: &[i64], env: &[Value]) -> Option<i64> {
    let v = |s: Src| operand(s, r, env);
    Some(match *op {
        Op::Add(a, b) => v(a)?.checked_add(v(b)?)?,
        Op::Sub(a, b) => v(a)?.checked_sub(v(b)?)?,
        Op::Mul(a, b) => v(a)?.checked_mul(v(b)?)?,
        Op::FloorDiv(a, b) => floordiv(v(a)?, v(b)?)?,
        Op::Mod(a, b) => modulo(v(a)?, v(b)?)?,
        Op::BitAnd(a, b) => v(a)? & v(b)?,
        Op::BitOr(a, b) => v(a)? | v(b)?,
        Op::BitXor(a, b) => v(a)? ^ v(b)?,
        Op::Neg(a) => v(a)?.checked_neg()?,
        Op::Invert(a) => !v(a)?,
        Op::Abs(a) => v(a)?.checked_abs()?,
        Op::Min(a, b) => v(a)?.min(v(b)?),
        Op::Max(a, b) => v(a)?.max(v(b)?),
        Op::Cmp(op, a, b) => {
            let (x, y) = (v(a)?, v(b)?);
            i64::from(op.ints(x, y)?)
        }
        Op::And(a, b) => i64::from(v(a)? != 0 && v(b)? != 0),
        Op::Or(a, b) => i64::from(v(a)? != 0 || v(b)? != 0),
        Op::Not(a) => i64::from(v(a)? == 0),
        Op::Truth(a) => i64::from(v(a)? != 0),
        Op::TruthSlot(k) => match &env[k as usize] {
            Value::Bool(b) => i64::from(*b),
            Value::Int(x) => i64::from(*x != 0),
            _ => return None,
        },
        Op::Select(c, a, b) => {
            let (x, y) = (v(a)?, v(b)?);
            if v(c)? != 0 { x } else { y }
        }
    })
}

/// Python `a // b` on ints; None on division by zero or overflow (`value::int_floordiv`
/// without its error message).
#[inline]
fn floordiv(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    // The remainder from the quotient: one division, not two.
    let r = a.wrapping_sub(q.wrapping_mul(b));
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Python `a % b` on ints; None on division by zero (`value::int_mod`).
#[inline]
fn modulo(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let r = a.wrapping_rem(b);
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Resolved;
    use crate::parse::parse_expr;
    use proptest::prelude::*;

    /// Random expressions over slots `x`, `y`, `z` (ints), `b` (a bool) and `n` (None).
    fn expr() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("x".to_string()),
            Just("y".to_string()),
            Just("z".to_string()),
            Just("b".to_string()),
            Just("n".to_string()),
            (-3i64..4).prop_map(|i| i.to_string()),
            Just("9223372036854775807".to_string()),
            Just("True".to_string()),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            let bin = prop_oneof![
                Just("+"),
                Just("-"),
                Just("*"),
                Just("//"),
                Just("%"),
                Just("&"),
                Just("|"),
                Just("^"),
                Just("<"),
                Just("<="),
                Just(">"),
                Just(">="),
                Just("=="),
                Just("!="),
                Just("and"),
                Just("or"),
                Just("/"),
                Just("**"),
            ];
            prop_oneof![
                (inner.clone(), bin, inner.clone()).prop_map(|(a, o, b)| format!("({a} {o} {b})")),
                inner.clone().prop_map(|a| format!("(-{a})")),
                inner.clone().prop_map(|a| format!("(~{a})")),
                inner.clone().prop_map(|a| format!("(not {a})")),
                inner.clone().prop_map(|a| format!("abs({a})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("min({a}, {b})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("max({a}, {b}, {c})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("({a} < {b} <= {c})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("({a} if {b} else {c})")),
            ]
        })
    }

    fn int() -> impl Strategy<Value = i64> {
        prop_oneof![-4i64..5, Just(i64::MAX), Just(i64::MIN), Just(-1 << 40)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// A program's value, when it gives one, is the tree fast path's, for the three uses.
        #[test]
        fn programs_agree_with_the_tree(src in expr(), x in int(), y in int(), z in int(),
                                        b in any::<bool>()) {
            let mut e = parse_expr(&src).unwrap();
            let slot = |s: &str| Some(Resolved::Slot(["x", "y", "z", "b", "n"].iter().position(|n| *n == s)? as u32));
            e.resolve(&slot).unwrap();
            // Hoisted sub-expressions read their slot (`b` here, a bool) first.
            let cached = Expr::new(ExprKind::Cached(3, Box::new(e.clone())), 0);
            let env = [Value::Int(x), Value::Int(y), Value::Int(z), Value::Bool(b), Value::None];
            for e in [&e, &cached] {
                if let Some(v) = IntProg::int(e).and_then(|p| p.run(&env)) {
                    prop_assert_eq!(e.int_fast(&env), Some(v), "{}", src);
                }
                if let Some(v) = IntProg::truthy(e).and_then(|p| p.run(&env)) {
                    prop_assert_eq!(e.truthy_fast(&env), Some(v != 0), "{}", src);
                }
                if let Some(p) = IntProg::value(e) && let Some(v) = p.run(&env) {
                    let want = if p.boolean { Value::Bool(v != 0) } else { Value::Int(v) };
                    let got = e.eval_fast(&env).unwrap();
                    prop_assert!(matches!((&got, &want), (Value::Int(a), Value::Int(b)) if a == b)
                        || matches!((&got, &want), (Value::Bool(a), Value::Bool(b)) if a == b),
                        "{}: {:?} vs {:?}", src, got, want);
                }
            }
        }
    }

    #[test]
    fn the_gemm_steps_compile() {
        for src in [
            "min((49152 // s), 16) * t",
            "((a * b) * 8) > 49152",
            "(a // b) < 2",
        ] {
            let mut e = parse_expr(src).unwrap();
            e.resolve(&|n: &str| Some(Resolved::Slot(n.as_bytes()[0] as u32 - b'a' as u32)))
                .unwrap();
            assert!(IntProg::value(&e).is_some(), "{src}");
        }
    }
}
