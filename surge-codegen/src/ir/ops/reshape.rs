//! The reshaping family: `zip` (`x[i] = (s1[i], .., sn[i])`), `join` (the Cartesian product, the
//! last input varying fastest), `split` (tiles of `tile` elements, the last maybe shorter),
//! `striding` (`s[0], s[k], s[2k], ..`), `reverse`, `nest` (CSR rows `s[off[i]..off[i+1]]`) and
//! `transpose` (of a uniformly nested sequence). They move elements; none computes one.

use super::{Eval, Failure, Typing, ValueInfo, equal_lengths, items, seqs, to_index, unexpected};
use crate::ir::value::Value;
use crate::ir::{IrError, Op, OpKind, Type};

/// Checks CSR offsets for a flat sequence of length `len`: at least one offset, non-decreasing,
/// all within `0..=len`. The message names the first offending position.
pub fn check_offsets(off: &[i128], len: usize) -> Result<(), String> {
    if off.is_empty() {
        return Err(EMPTY_OFFSETS.into());
    }
    for (i, o) in off.iter().enumerate() {
        if *o < 0 || *o > len as i128 {
            return Err(format!(
                "offsets[{i}] = {o} is out of range for a sequence of length {len}"
            ));
        }
        if i > 0 && off[i - 1] > *o {
            return Err(format!(
                "offsets are not monotone: offsets[{}] = {} > offsets[{i}] = {o}",
                i - 1,
                off[i - 1]
            ));
        }
    }
    Ok(())
}

const EMPTY_OFFSETS: &str = "offsets are empty; a nested sequence of n rows needs n + 1 offsets";

pub(super) fn infer(t: &Typing<'_, '_>, op: &Op) -> Result<ValueInfo, IrError> {
    let seq = |ty: Type, len: Option<u64>| ValueInfo {
        ty,
        len,
        konst: None,
    };
    Ok(match op {
        Op::Zip { inputs } | Op::Join { inputs } => {
            let items = t.input_items(inputs)?;
            let len = if t.kind == OpKind::Zip {
                t.same_lengths(inputs, "input")?
            } else {
                inputs
                    .iter()
                    .try_fold(1u64, |acc, n| t.info(*n).len.map(|l| acc.saturating_mul(l)))
            };
            seq(Type::seq(Type::Tuple(items)), len)
        }
        Op::Split { input, tile: step }
        | Op::Striding {
            input,
            stride: step,
        } => {
            let e = t.seq_item(*input, "input")?;
            let what = step_name(t.kind);
            t.int_scalar(*step, what)?;
            let k = t.konst_int(*step);
            if let Some(k) = k
                && k <= 0
            {
                return Err(t.err(format!("{what} must be positive, got {k}")));
            }
            let len = match (t.info(*input).len, k) {
                (Some(n), Some(k)) => Some((n as u128).div_ceil(k as u128) as u64),
                _ => None,
            };
            let ty = if t.kind == OpKind::Split {
                Type::seq(Type::seq(e))
            } else {
                Type::seq(e)
            };
            seq(ty, len)
        }
        Op::Reverse { input } => seq(Type::seq(t.seq_item(*input, "input")?), t.info(*input).len),
        Op::Nest { input, offsets } => {
            let e = t.seq_item(*input, "input")?;
            t.int_seq(*offsets, "offsets")?;
            let len = match t.info(*offsets).len {
                Some(0) => return Err(t.err(EMPTY_OFFSETS)),
                l => l.map(|l| l - 1),
            };
            seq(Type::seq(Type::seq(e)), len)
        }
        Op::Transpose { input } => {
            let e = t.seq_item(*input, "input")?;
            if !e.is_seq() {
                return Err(t.err(format!(
                    "input must be a nested sequence, got {}",
                    t.info(*input).ty
                )));
            }
            ValueInfo::of_type(Type::seq(e))
        }
        op => unexpected("reshaping", op),
    })
}

/// What the step operand of `split` or `striding` is called in messages.
fn step_name(kind: OpKind) -> &'static str {
    if kind == OpKind::Split {
        "tile size"
    } else {
        "stride"
    }
}

pub(super) fn eval(ev: &mut dyn Eval, op: &Op) -> Result<Value, Failure> {
    Ok(match op {
        Op::Zip { inputs } => {
            let seqs = seqs(ev, inputs)?;
            let len = equal_lengths(&seqs)?;
            Value::Seq(
                (0..len)
                    .map(|i| Value::Tuple(seqs.iter().map(|s| items(s)[i].clone()).collect()))
                    .collect(),
            )
        }
        Op::Join { inputs } => {
            let mut out: Vec<Vec<Value>> = vec![vec![]];
            for s in &seqs(ev, inputs)? {
                out = out
                    .into_iter()
                    .flat_map(|prefix| {
                        items(s)
                            .iter()
                            .map(move |x| [prefix.clone(), vec![x.clone()]].concat())
                    })
                    .collect();
            }
            Value::Seq(out.into_iter().map(Value::Tuple).collect())
        }
        Op::Split { input, tile: step }
        | Op::Striding {
            input,
            stride: step,
        } => {
            let s = ev.seq(*input)?;
            let s = items(&s);
            let what = step_name(op.kind());
            let k = ev.int(*step, what)?;
            if k <= 0 {
                return Err(format!("{what} must be positive, got {k}").into());
            }
            if op.kind() == OpKind::Split {
                Value::Seq(
                    s.chunks(k as usize)
                        .map(|t| Value::Seq(t.to_vec()))
                        .collect(),
                )
            } else {
                Value::Seq(s.iter().step_by(k as usize).cloned().collect())
            }
        }
        Op::Reverse { input } => {
            Value::Seq(items(&*ev.seq(*input)?).iter().rev().cloned().collect())
        }
        Op::Nest { input, offsets } => {
            let (s, off) = (ev.seq(*input)?, ev.seq(*offsets)?);
            let s = items(&s);
            let off = items(&off)
                .iter()
                .map(|o| to_index(o, "offset"))
                .collect::<Result<Vec<_>, _>>()?;
            check_offsets(&off, s.len())?;
            Value::Seq(
                off.windows(2)
                    .map(|w| Value::Seq(s[w[0] as usize..w[1] as usize].to_vec()))
                    .collect(),
            )
        }
        Op::Transpose { input } => transpose(items(&*ev.seq(*input)?))?,
        op => unexpected("reshaping", op),
    })
}

fn transpose(rows: &[Value]) -> Result<Value, String> {
    let rows: Vec<&[Value]> = rows.iter().map(items).collect();
    let width = rows.first().map_or(0, |r| r.len());
    if let Some(k) = rows.iter().position(|r| r.len() != width) {
        return Err(format!(
            "rows differ in length (row 0 has {width}, row {k} has {}); only uniform nesting transposes",
            rows[k].len()
        ));
    }
    Ok(Value::Seq(
        (0..width)
            .map(|j| Value::Seq(rows.iter().map(|r| r[j].clone()).collect()))
            .collect(),
    ))
}
