//! Evaluation: the general evaluator over [`Value`]s and the `i64` / truthiness fast paths,
//! which give the same result or fall back to it.

use super::{Builtin, EvalError, Expr, ExprKind, call_builtin};
use crate::value::{self, BinOp, UnOp, Value};

impl Expr {
    #[inline]
    fn err(&self, message: String) -> EvalError {
        EvalError {
            pos: self.pos,
            message,
        }
    }

    /// Evaluate in environment `env` (indexed by slot).
    pub fn eval(&self, env: &[Value]) -> Result<Value, EvalError> {
        match &self.kind {
            ExprKind::Const(v) => Ok(v.clone()),
            ExprKind::Slot(s) => Ok(env[*s as usize].clone()),
            ExprKind::Binary(op, a, b) => {
                let x = a.eval(env)?;
                let y = b.eval(env)?;
                if let (Value::Int(i), Value::Int(j)) = (&x, &y) {
                    let (i, j) = (*i, *j);
                    let fast = match op {
                        BinOp::Add => i.checked_add(j),
                        BinOp::Sub => i.checked_sub(j),
                        BinOp::Mul => i.checked_mul(j),
                        BinOp::FloorDiv if j > 0 && i >= 0 => Some(i / j),
                        BinOp::Mod if j > 0 && i >= 0 => Some(i % j),
                        _ => None,
                    };
                    if let Some(r) = fast {
                        return Ok(Value::Int(r));
                    }
                }
                value::binop(*op, &x, &y).map_err(|m| self.err(m))
            }
            ExprKind::Compare(..) | ExprKind::Unary(UnOp::Not, _) => {
                Ok(Value::Bool(self.truthy(env)?))
            }
            ExprKind::Unary(op, a) => {
                let x = a.eval(env)?;
                value::unop(*op, &x).map_err(|m| self.err(m))
            }
            ExprKind::And(xs) => {
                let mut last = Value::Bool(true);
                for x in xs {
                    last = x.eval(env)?;
                    if !last.truthy() {
                        return Ok(last);
                    }
                }
                Ok(last)
            }
            ExprKind::Or(xs) => {
                let mut last = Value::Bool(false);
                for x in xs {
                    last = x.eval(env)?;
                    if last.truthy() {
                        return Ok(last);
                    }
                }
                Ok(last)
            }
            ExprKind::IfElse(b) => {
                if b[1].truthy(env)? {
                    b[0].eval(env)
                } else {
                    b[2].eval(env)
                }
            }
            ExprKind::Call(bi, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(env))
                    .collect::<Result<Vec<_>, _>>()?;
                call_builtin(*bi, &vals).map_err(|m| self.err(m))
            }
            ExprKind::List(xs) => Ok(Value::list(
                xs.iter()
                    .map(|x| x.eval(env))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            ExprKind::Index(a, i) => {
                let c = a.eval(env)?;
                let i = i.eval(env)?;
                index(&c, &i).map_err(|m| self.err(m))
            }
            ExprKind::Native(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(env))
                    .collect::<Result<Vec<_>, _>>()?;
                f(&vals).map_err(|m| self.err(m))
            }
            ExprKind::Cached(slot, e) => match &env[*slot as usize] {
                Value::None => e.eval(env),
                v => Ok(v.clone()),
            },
            ExprKind::Name(n) => Err(self.err(format!("NameError: name '{n}' is not resolved"))),
        }
    }

    /// Integer fast path: the value of an expression made of ints and int operations, or
    /// None when anything else is involved or an error would occur (the caller then runs the
    /// general evaluator, which produces the same value or the exact error).
    #[inline]
    pub fn int_fast(&self, env: &[Value]) -> Option<i64> {
        match &self.kind {
            ExprKind::Slot(s) => match &env[*s as usize] {
                Value::Int(i) => Some(*i),
                _ => None,
            },
            ExprKind::Const(Value::Int(i)) => Some(*i),
            ExprKind::Cached(slot, e) => match &env[*slot as usize] {
                Value::Int(i) => Some(*i),
                Value::None => e.int_fast(env),
                _ => None,
            },
            ExprKind::Binary(op, a, b) => {
                let x = a.int_leaf(env)?;
                let y = b.int_leaf(env)?;
                match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::FloorDiv => value::int_floordiv(x, y).ok(),
                    BinOp::Mod => value::int_mod(x, y).ok(),
                    BinOp::BitAnd => Some(x & y),
                    BinOp::BitOr => Some(x | y),
                    BinOp::BitXor => Some(x ^ y),
                    _ => None,
                }
            }
            ExprKind::Unary(UnOp::Neg, a) => a.int_fast(env)?.checked_neg(),
            ExprKind::Unary(UnOp::Invert, a) => Some(!a.int_fast(env)?),
            ExprKind::Call(Builtin::Min, args) if args.len() >= 2 => {
                let mut m = args[0].int_fast(env)?;
                for a in &args[1..] {
                    m = m.min(a.int_fast(env)?);
                }
                Some(m)
            }
            ExprKind::Call(Builtin::Max, args) if args.len() >= 2 => {
                let mut m = args[0].int_fast(env)?;
                for a in &args[1..] {
                    m = m.max(a.int_fast(env)?);
                }
                Some(m)
            }
            ExprKind::Call(Builtin::Abs, args) if args.len() == 1 => {
                args[0].int_fast(env)?.checked_abs()
            }
            ExprKind::IfElse(b) => {
                if b[1].truthy_fast(env)? {
                    b[0].int_fast(env)
                } else {
                    b[2].int_fast(env)
                }
            }
            _ => None,
        }
    }

    /// [`Expr::int_fast`] with slots and constants handled without a call.
    #[inline(always)]
    fn int_leaf(&self, env: &[Value]) -> Option<i64> {
        match &self.kind {
            ExprKind::Slot(s) => match &env[*s as usize] {
                Value::Int(i) => Some(*i),
                _ => None,
            },
            ExprKind::Const(Value::Int(i)) => Some(*i),
            _ => self.int_fast(env),
        }
    }

    /// Truthiness fast path over ints (None: use [`Expr::truthy`]).
    #[inline]
    pub fn truthy_fast(&self, env: &[Value]) -> Option<bool> {
        match &self.kind {
            ExprKind::Compare(first, rest) => {
                let mut left = first.int_leaf(env)?;
                for (op, e) in rest {
                    let right = e.int_leaf(env)?;
                    let ok = op.ints(left, right)?;
                    if !ok {
                        return Some(false);
                    }
                    left = right;
                }
                Some(true)
            }
            ExprKind::Unary(UnOp::Not, a) => Some(!a.truthy_fast(env)?),
            ExprKind::Cached(slot, e) => match &env[*slot as usize] {
                Value::Bool(b) => Some(*b),
                Value::Int(i) => Some(*i != 0),
                Value::None => e.truthy_fast(env),
                _ => None,
            },
            ExprKind::And(xs) => {
                for x in xs {
                    if !x.truthy_fast(env)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            ExprKind::Or(xs) => {
                for x in xs {
                    if x.truthy_fast(env)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            ExprKind::Const(v) => Some(v.truthy()),
            ExprKind::IfElse(b) => {
                if b[1].truthy_fast(env)? {
                    b[0].truthy_fast(env)
                } else {
                    b[2].truthy_fast(env)
                }
            }
            _ => self.int_fast(env).map(|i| i != 0),
        }
    }

    /// Evaluate (int fast path first).
    #[inline]
    pub fn eval_fast(&self, env: &[Value]) -> Result<Value, EvalError> {
        if let ExprKind::Compare(..) | ExprKind::Unary(UnOp::Not, _) = self.kind {
            if let Some(b) = self.truthy_fast(env) {
                return Ok(Value::Bool(b));
            }
        } else if let Some(i) = self.int_fast(env) {
            return Ok(Value::Int(i));
        }
        self.eval(env)
    }

    /// Truthiness (int fast path first).
    #[inline]
    pub fn truthy_any(&self, env: &[Value]) -> Result<bool, EvalError> {
        match self.truthy_fast(env) {
            Some(b) => Ok(b),
            None => self.truthy(env),
        }
    }

    /// Evaluate and take Python truthiness, without materialising booleans.
    pub fn truthy(&self, env: &[Value]) -> Result<bool, EvalError> {
        match &self.kind {
            ExprKind::Compare(first, rest) => {
                let mut left = first.eval(env)?;
                for (op, e) in rest {
                    let right = e.eval(env)?;
                    let ok = value::compare(*op, &left, &right).map_err(|m| EvalError {
                        pos: e.pos,
                        message: m,
                    })?;
                    if !ok {
                        return Ok(false);
                    }
                    left = right;
                }
                Ok(true)
            }
            ExprKind::Unary(UnOp::Not, a) => Ok(!a.truthy(env)?),
            ExprKind::And(xs) => {
                for x in xs {
                    if !x.truthy(env)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            ExprKind::Or(xs) => {
                for x in xs {
                    if x.truthy(env)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            ExprKind::IfElse(b) => {
                if b[1].truthy(env)? {
                    b[0].truthy(env)
                } else {
                    b[2].truthy(env)
                }
            }
            _ => Ok(self.eval(env)?.truthy()),
        }
    }
}

fn index(c: &Value, i: &Value) -> Result<Value, String> {
    let Some(k) = i.as_i64() else {
        return Err(format!(
            "TypeError: indices must be integers, not {}",
            i.type_name()
        ));
    };
    let len = match c {
        Value::List(l) => l.len() as i64,
        Value::Range(r) => r.len() as i64,
        Value::Str(s) => s.chars().count() as i64,
        other => {
            return Err(format!(
                "TypeError: '{}' object is not subscriptable",
                other.type_name()
            ));
        }
    };
    let j = if k < 0 { k + len } else { k };
    if j < 0 || j >= len {
        return Err(format!("IndexError: {} index out of range", c.type_name()));
    }
    Ok(match c {
        Value::List(l) => l[j as usize].clone(),
        Value::Range(r) => Value::Int(r.get(j as u64)),
        Value::Str(s) => Value::str(
            &s.chars()
                .nth(j as usize)
                .map(|ch| ch.to_string())
                .unwrap_or_default(),
        ),
        _ => unreachable!(),
    })
}
