//! Python operator semantics on [`Value`]s: arithmetic with floor division and modulo (sign of
//! the divisor), `**`, unary operators, equality and ordering across ints, floats and
//! containers, membership. Integer overflow is an error, never a wrap.

use std::cmp::Ordering;

use super::{BinOp, CmpOp, UnOp, Value};

enum Num {
    I(i64),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Bool(b) => Some(Num::I(*b as i64)),
        Value::Float(f) => Some(Num::F(*f)),
        _ => None,
    }
}

const OVERFLOW: &str = "OverflowError: integer result does not fit in 64 bits";

fn unsupported(op: &str, a: &Value, b: &Value) -> String {
    format!(
        "TypeError: unsupported operand type(s) for {op}: '{}' and '{}'",
        a.type_name(),
        b.type_name()
    )
}

/// Python `a // b` on ints.
#[inline]
pub fn int_floordiv(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("ZeroDivisionError: integer division or modulo by zero".into());
    }
    let q = a.checked_div(b).ok_or_else(|| OVERFLOW.to_string())?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        Ok(q - 1)
    } else {
        Ok(q)
    }
}

/// Python `a % b` on ints (result has the sign of `b`).
#[inline]
pub fn int_mod(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("ZeroDivisionError: integer division or modulo by zero".into());
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        Ok(r + b)
    } else {
        Ok(r)
    }
}

/// Python's `float.__divmod__` (CPython `float_divmod`).
fn float_divmod(vx: f64, wx: f64) -> Result<(f64, f64), String> {
    if wx == 0.0 {
        return Err("ZeroDivisionError: float divmod()".into());
    }
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let mut fd = div.floor();
        if div - fd > 0.5 {
            fd += 1.0;
        }
        fd
    } else {
        0.0f64.copysign(vx / wx)
    };
    Ok((floordiv, m))
}

fn float_pow(a: f64, b: f64) -> Result<Value, String> {
    if a == 0.0 && b < 0.0 {
        return Err("ZeroDivisionError: 0.0 cannot be raised to a negative power".into());
    }
    if a < 0.0 && b.is_finite() && b.fract() != 0.0 {
        return Err(
            "ValueError: negative number raised to a fractional power (complex result)".into(),
        );
    }
    Ok(Value::Float(a.powf(b)))
}

/// Evaluate `a op b` with Python 3 semantics.
pub fn binop(op: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    use BinOp::*;
    // Sequences first.
    match (op, a, b) {
        (Add, Value::Str(x), Value::Str(y)) => return Ok(Value::str(&format!("{x}{y}"))),
        (Add, Value::List(x), Value::List(y)) => {
            return Ok(Value::list(x.iter().chain(y.iter()).cloned().collect()));
        }
        (Mul, Value::Str(s), n) | (Mul, n, Value::Str(s)) if n.as_i64().is_some() => {
            let k = n.as_i64().unwrap_or(0).max(0) as usize;
            if s.len().saturating_mul(k) > 1 << 24 {
                return Err("MemoryError: string repetition too large".into());
            }
            return Ok(Value::str(&s.repeat(k)));
        }
        (Mul, Value::List(l), n) | (Mul, n, Value::List(l)) if n.as_i64().is_some() => {
            let k = n.as_i64().unwrap_or(0).max(0) as usize;
            if l.len().saturating_mul(k) > 1 << 24 {
                return Err("MemoryError: list repetition too large".into());
            }
            let mut out = Vec::with_capacity(l.len() * k);
            for _ in 0..k {
                out.extend(l.iter().cloned());
            }
            return Ok(Value::list(out));
        }
        _ => {}
    }
    let (x, y) = match (num(a), num(b)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(unsupported(op.symbol(), a, b)),
    };
    let both_bool = matches!((a, b), (Value::Bool(_), Value::Bool(_)));
    match (x, y) {
        (Num::I(i), Num::I(j)) => match op {
            Add => i
                .checked_add(j)
                .map(Value::Int)
                .ok_or_else(|| OVERFLOW.into()),
            Sub => i
                .checked_sub(j)
                .map(Value::Int)
                .ok_or_else(|| OVERFLOW.into()),
            Mul => i
                .checked_mul(j)
                .map(Value::Int)
                .ok_or_else(|| OVERFLOW.into()),
            Div => {
                if j == 0 {
                    Err("ZeroDivisionError: division by zero".into())
                } else {
                    Ok(Value::Float(i as f64 / j as f64))
                }
            }
            FloorDiv => int_floordiv(i, j).map(Value::Int),
            Mod => int_mod(i, j).map(Value::Int),
            Pow => {
                if j >= 0 {
                    let e = u32::try_from(j).map_err(|_| OVERFLOW.to_string())?;
                    i.checked_pow(e)
                        .map(Value::Int)
                        .ok_or_else(|| OVERFLOW.into())
                } else {
                    float_pow(i as f64, j as f64)
                }
            }
            BitAnd if both_bool => Ok(Value::Bool((i & j) != 0)),
            BitOr if both_bool => Ok(Value::Bool((i | j) != 0)),
            BitXor if both_bool => Ok(Value::Bool((i ^ j) != 0)),
            BitAnd => Ok(Value::Int(i & j)),
            BitOr => Ok(Value::Int(i | j)),
            BitXor => Ok(Value::Int(i ^ j)),
            Shl => {
                if j < 0 {
                    return Err("ValueError: negative shift count".into());
                }
                if i == 0 {
                    return Ok(Value::Int(0));
                }
                if j >= 64 {
                    return Err(OVERFLOW.into());
                }
                let r = i << j;
                if (r >> j) != i {
                    Err(OVERFLOW.into())
                } else {
                    Ok(Value::Int(r))
                }
            }
            Shr => {
                if j < 0 {
                    return Err("ValueError: negative shift count".into());
                }
                Ok(Value::Int(i >> j.min(63)))
            }
        },
        (x, y) => {
            let f = |n: Num| match n {
                Num::I(i) => i as f64,
                Num::F(f) => f,
            };
            let (p, q) = (f(x), f(y));
            match op {
                Add => Ok(Value::Float(p + q)),
                Sub => Ok(Value::Float(p - q)),
                Mul => Ok(Value::Float(p * q)),
                Div => {
                    if q == 0.0 {
                        Err("ZeroDivisionError: float division by zero".into())
                    } else {
                        Ok(Value::Float(p / q))
                    }
                }
                FloorDiv => float_divmod(p, q).map(|(d, _)| Value::Float(d)),
                Mod => float_divmod(p, q).map(|(_, m)| Value::Float(m)),
                Pow => float_pow(p, q),
                _ => Err(unsupported(op.symbol(), a, b)),
            }
        }
    }
}

/// Python unary operators.
pub fn unop(op: UnOp, a: &Value) -> Result<Value, String> {
    match (op, a) {
        (UnOp::Not, v) => Ok(Value::Bool(!v.truthy())),
        (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnOp::Pos, Value::Float(f)) => Ok(Value::Float(*f)),
        (UnOp::Neg, v) if v.as_i64().is_some() => v
            .as_i64()
            .unwrap_or(0)
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| OVERFLOW.into()),
        (UnOp::Pos, v) if v.as_i64().is_some() => Ok(Value::Int(v.as_i64().unwrap_or(0))),
        (UnOp::Invert, v) if v.as_i64().is_some() => Ok(Value::Int(!v.as_i64().unwrap_or(0))),
        (op, v) => {
            let s = match op {
                UnOp::Neg => "-",
                UnOp::Pos => "+",
                UnOp::Invert => "~",
                UnOp::Not => "not",
            };
            Err(format!(
                "TypeError: bad operand type for unary {s}: '{}'",
                v.type_name()
            ))
        }
    }
}

/// Python `==`.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q))
        }
        (Value::Range(x), Value::Range(y)) => {
            let (n, m) = (x.len(), y.len());
            n == m && (n == 0 || (x.start == y.start && (n == 1 || x.step == y.step)))
        }
        _ => match (num(a), num(b)) {
            (Some(Num::I(x)), Some(Num::I(y))) => x == y,
            (Some(Num::F(x)), Some(Num::F(y))) => x == y,
            (Some(Num::I(x)), Some(Num::F(y))) | (Some(Num::F(y)), Some(Num::I(x))) => {
                int_float_cmp(x, y) == Some(Ordering::Equal)
            }
            _ => false,
        },
    }
}

/// Exact comparison of an int with a float (None if the float is NaN).
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= 9.3e18 {
        return Some(Ordering::Less);
    }
    if f <= -9.3e18 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    let ti = t as i64;
    match i.cmp(&ti) {
        Ordering::Equal => {
            let frac = f - t;
            if frac > 0.0 {
                Some(Ordering::Less)
            } else if frac < 0.0 {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

/// Python ordering of two values (`None` when unordered, e.g. NaN); errors on unorderable types.
fn py_order(op: CmpOp, a: &Value, b: &Value) -> Result<Option<Ordering>, String> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(Some(x.as_ref().cmp(y.as_ref()))),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                if !py_eq(p, q) {
                    return py_order(op, p, q);
                }
            }
            Ok(Some(x.len().cmp(&y.len())))
        }
        _ => match (num(a), num(b)) {
            (Some(Num::I(x)), Some(Num::I(y))) => Ok(Some(x.cmp(&y))),
            (Some(Num::F(x)), Some(Num::F(y))) => Ok(x.partial_cmp(&y)),
            (Some(Num::I(x)), Some(Num::F(y))) => Ok(int_float_cmp(x, y)),
            (Some(Num::F(x)), Some(Num::I(y))) => Ok(int_float_cmp(y, x).map(Ordering::reverse)),
            _ => Err(format!(
                "TypeError: '{}' not supported between instances of '{}' and '{}'",
                op.symbol(),
                a.type_name(),
                b.type_name()
            )),
        },
    }
}

/// Python `a op b` for comparison operators.
#[inline]
pub fn compare(op: CmpOp, a: &Value, b: &Value) -> Result<bool, String> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return match op.ints(*x, *y) {
            Some(r) => Ok(r),
            None => contains(b, a).map(|c| c == (op == CmpOp::In)),
        };
    }
    match op {
        CmpOp::Eq => Ok(py_eq(a, b)),
        CmpOp::Ne => Ok(!py_eq(a, b)),
        CmpOp::In => contains(b, a),
        CmpOp::NotIn => contains(b, a).map(|c| !c),
        _ => {
            let o = py_order(op, a, b)?;
            Ok(match (op, o) {
                (_, None) => false,
                (CmpOp::Lt, Some(o)) => o == Ordering::Less,
                (CmpOp::Le, Some(o)) => o != Ordering::Greater,
                (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
                (_, Some(o)) => o != Ordering::Less,
            })
        }
    }
}

/// Python `item in container`.
pub fn contains(container: &Value, item: &Value) -> Result<bool, String> {
    match container {
        Value::List(l) => Ok(l.iter().any(|v| py_eq(v, item))),
        Value::Range(r) => match item {
            Value::Int(i) => Ok(r.contains(*i)),
            Value::Bool(b) => Ok(r.contains(*b as i64)),
            Value::Float(f) => Ok(f.fract() == 0.0 && f.abs() < 9e18 && r.contains(*f as i64)),
            _ => Ok(false),
        },
        Value::Str(s) => match item {
            Value::Str(sub) => Ok(s.contains(sub.as_ref())),
            other => Err(format!(
                "TypeError: 'in <string>' requires string as left operand, not {}",
                other.type_name()
            )),
        },
        other => Err(format!(
            "TypeError: argument of type '{}' is not iterable",
            other.type_name()
        )),
    }
}

/// Python `min`/`max` ordering helper: `a < b` (errors on unorderable types).
pub fn less_than(a: &Value, b: &Value) -> Result<bool, String> {
    compare(CmpOp::Lt, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::PyRange;

    #[test]
    fn floor_semantics() {
        assert_eq!(int_floordiv(-7, 2).unwrap(), -4);
        assert_eq!(int_mod(-7, 2).unwrap(), 1);
        assert_eq!(int_mod(7, -2).unwrap(), -1);
        assert_eq!(float_divmod(7.5, 2.0).unwrap(), (3.0, 1.5));
        assert_eq!(float_divmod(-7.5, 2.0).unwrap(), (-4.0, 0.5));
    }

    #[test]
    fn range_len() {
        assert_eq!(
            PyRange {
                start: 10,
                stop: 0,
                step: -3
            }
            .len(),
            4
        );
        assert!(
            PyRange {
                start: 10,
                stop: 0,
                step: -3
            }
            .contains(1)
        );
        assert!(
            !PyRange {
                start: 10,
                stop: 0,
                step: -3
            }
            .contains(0)
        );
    }
}
