//! Built-in functions (`range`, `min`, `max`, `len`, set algebra, ...) on evaluated arguments.

use super::Builtin;
use crate::value::{self, BinOp, PyRange, Value};

fn arity(name: &str, args: &[Value], lo: usize, hi: usize) -> Result<(), String> {
    if args.len() < lo || args.len() > hi {
        Err(format!(
            "TypeError: {name}() takes {lo} to {hi} arguments ({} given)",
            args.len()
        ))
    } else {
        Ok(())
    }
}

/// Build a Python `range` from evaluated arguments.
pub fn make_range(args: &[Value]) -> Result<PyRange, String> {
    arity("range", args, 1, 3)?;
    let mut ints = [0i64; 3];
    for (i, a) in args.iter().enumerate() {
        ints[i] = a.as_i64().ok_or_else(|| {
            format!(
                "TypeError: '{}' object cannot be interpreted as an integer",
                a.type_name()
            )
        })?;
    }
    let (start, stop, step) = match args.len() {
        1 => (0, ints[0], 1),
        2 => (ints[0], ints[1], 1),
        _ => (ints[0], ints[1], ints[2]),
    };
    if step == 0 {
        return Err("ValueError: range() arg 3 must not be zero".into());
    }
    Ok(PyRange { start, stop, step })
}

fn extremum(name: &str, args: &[Value], want_max: bool) -> Result<Value, String> {
    let items: Vec<Value> = if args.len() == 1 {
        args[0].iter_values()?
    } else {
        args.to_vec()
    };
    let mut it = items.into_iter();
    let Some(mut best) = it.next() else {
        return Err(format!("ValueError: {name}() arg is an empty sequence"));
    };
    for v in it {
        let better = if want_max {
            value::less_than(&best, &v)?
        } else {
            value::less_than(&v, &best)?
        };
        if better {
            best = v;
        }
    }
    Ok(best)
}

/// Python set algebra on iterables, keeping first-occurrence order of the left operand.
fn set_op(bi: Builtin, args: &[Value]) -> Result<Value, String> {
    if args.is_empty() {
        return Err(format!(
            "TypeError: {}() needs at least one argument",
            bi.name()
        ));
    }
    let mut acc: Vec<Value> = Vec::new();
    for v in args[0].iter_values()? {
        if !acc.iter().any(|a| value::py_eq(a, &v)) {
            acc.push(v);
        }
    }
    for other in &args[1..] {
        let other = other.iter_values()?;
        match bi {
            Builtin::Union => {
                for v in other {
                    if !acc.iter().any(|a| value::py_eq(a, &v)) {
                        acc.push(v);
                    }
                }
            }
            Builtin::Intersection => acc.retain(|a| other.iter().any(|o| value::py_eq(a, o))),
            _ => acc.retain(|a| !other.iter().any(|o| value::py_eq(a, o))),
        }
    }
    Ok(Value::list(acc))
}

/// Python's `math.gcd(*integers)`: the non-negative greatest common divisor of ints (and
/// bools); `gcd()` is 0.
fn gcd(args: &[Value]) -> Result<Value, String> {
    let mut g: u64 = 0;
    for a in args {
        let x = match a {
            Value::Int(_) | Value::Bool(_) => a.as_i64().unwrap_or(0).unsigned_abs(),
            v => {
                return Err(format!(
                    "TypeError: '{}' object cannot be interpreted as an integer",
                    v.type_name()
                ));
            }
        };
        let (mut p, mut q) = (g, x);
        while q != 0 {
            (p, q) = (q, p % q);
        }
        g = p;
    }
    i64::try_from(g)
        .map(Value::Int)
        .map_err(|_| "OverflowError: integer result does not fit in 64 bits".into())
}

/// Apply a builtin function to evaluated arguments.
pub fn call_builtin(bi: Builtin, args: &[Value]) -> Result<Value, String> {
    match bi {
        Builtin::Range => make_range(args).map(Value::Range),
        Builtin::Min => extremum("min", args, false),
        Builtin::Max => extremum("max", args, true),
        Builtin::Abs => {
            arity("abs", args, 1, 1)?;
            match &args[0] {
                Value::Float(f) => Ok(Value::Float(f.abs())),
                v => match v.as_i64() {
                    Some(i) => i.checked_abs().map(Value::Int).ok_or_else(|| {
                        "OverflowError: integer result does not fit in 64 bits".into()
                    }),
                    None => Err(format!(
                        "TypeError: bad operand type for abs(): '{}'",
                        v.type_name()
                    )),
                },
            }
        }
        Builtin::Gcd => gcd(args),
        Builtin::Len => {
            arity("len", args, 1, 1)?;
            match &args[0] {
                Value::List(l) => Ok(Value::Int(l.len() as i64)),
                Value::Range(r) => Ok(Value::Int(r.len() as i64)),
                Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
                v => Err(format!(
                    "TypeError: object of type '{}' has no len()",
                    v.type_name()
                )),
            }
        }
        Builtin::Int => {
            arity("int", args, 1, 1)?;
            match &args[0] {
                Value::Float(f) => {
                    if !f.is_finite() || f.abs() >= 9.2e18 {
                        Err("OverflowError: cannot convert float to integer".into())
                    } else {
                        Ok(Value::Int(f.trunc() as i64))
                    }
                }
                Value::Str(s) => s
                    .trim()
                    .replace('_', "")
                    .parse::<i64>()
                    .map(Value::Int)
                    .map_err(|_| {
                        format!("ValueError: invalid literal for int() with base 10: '{s}'")
                    }),
                v => v.as_i64().map(Value::Int).ok_or_else(|| {
                    format!(
                        "TypeError: int() argument must be a number, not '{}'",
                        v.type_name()
                    )
                }),
            }
        }
        Builtin::Float => {
            arity("float", args, 1, 1)?;
            match &args[0] {
                Value::Str(s) => {
                    s.trim().parse::<f64>().map(Value::Float).map_err(|_| {
                        format!("ValueError: could not convert string to float: '{s}'")
                    })
                }
                v => v.as_f64().map(Value::Float).ok_or_else(|| {
                    format!(
                        "TypeError: float() argument must be a number, not '{}'",
                        v.type_name()
                    )
                }),
            }
        }
        Builtin::Bool => {
            arity("bool", args, 1, 1)?;
            Ok(Value::Bool(args[0].truthy()))
        }
        Builtin::Str => {
            arity("str", args, 1, 1)?;
            Ok(match &args[0] {
                Value::Str(s) => Value::Str(s.clone()),
                v => Value::str(&v.to_string()),
            })
        }
        Builtin::Sum => {
            arity("sum", args, 1, 2)?;
            let mut acc = args.get(1).cloned().unwrap_or(Value::Int(0));
            for v in args[0].iter_values()? {
                acc = value::binop(BinOp::Add, &acc, &v)?;
            }
            Ok(acc)
        }
        Builtin::Any => {
            arity("any", args, 1, 1)?;
            Ok(Value::Bool(
                args[0].iter_values()?.iter().any(Value::truthy),
            ))
        }
        Builtin::All => {
            arity("all", args, 1, 1)?;
            Ok(Value::Bool(
                args[0].iter_values()?.iter().all(Value::truthy),
            ))
        }
        Builtin::Union | Builtin::Intersection | Builtin::Difference => set_op(bi, args),
    }
}
