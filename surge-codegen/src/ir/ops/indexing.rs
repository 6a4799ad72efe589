//! The indexing family: `index` (`s[i]`), `gather` (`y[k] = s[idx[k]]`) and `scatter` (a copy of
//! `dest` with `d[idx[k]] = s[k]`, applied in order of `k`). Indices out of range are run-time
//! errors naming the index and its position.

use super::{Eval, Failure, Typing, ValueInfo, items, to_index, unexpected};
use crate::ir::infer::lengths_differ;
use crate::ir::value::Value;
use crate::ir::{IrError, Op, Type};

/// The message of an index out of range at `pos` of the index sequence, for a `what` of `len`.
pub fn out_of_range(i: i128, pos: usize, what: &str, len: usize) -> String {
    format!("index {i} at position {pos} is out of range for a {what} of length {len}")
}

pub(super) fn infer(t: &Typing<'_, '_>, op: &Op) -> Result<ValueInfo, IrError> {
    Ok(match op {
        Op::Index { seq, index } => {
            let e = t.seq_item(*seq, "indexed value")?;
            t.int_scalar(*index, "index")?;
            if let (Some(len), Some(i)) = (t.info(*seq).len, t.konst_int(*index))
                && (i < 0 || i >= len as i128)
            {
                return Err(t.err(format!(
                    "index {i} out of range for a sequence of length {len}"
                )));
            }
            ValueInfo::of_type(e)
        }
        Op::Gather { source, indices } => {
            let e = t.seq_item(*source, "source")?;
            t.int_seq(*indices, "indices")?;
            ValueInfo {
                ty: Type::seq(e),
                len: t.info(*indices).len,
                konst: None,
            }
        }
        Op::Scatter {
            source,
            indices,
            dest,
        } => {
            let e = t.seq_item(*source, "source")?;
            t.int_seq(*indices, "indices")?;
            let d = t.seq_item(*dest, "destination")?;
            if d != e {
                return Err(t.err(format!(
                    "source elements are {e} but destination elements are {d}"
                )));
            }
            t.pair_lengths((*source, "source"), (*indices, "indices"))?;
            ValueInfo {
                ty: Type::seq(e),
                len: t.info(*dest).len,
                konst: None,
            }
        }
        op => unexpected("indexing", op),
    })
}

pub(super) fn eval(ev: &mut dyn Eval, op: &Op) -> Result<Value, Failure> {
    match op {
        Op::Index { seq, index } => {
            let s = ev.seq(*seq)?;
            let s = items(&s);
            let i = ev.int(*index, "index")?;
            if i < 0 || i >= s.len() as i128 {
                return Err(format!(
                    "index {i} is out of range for a sequence of length {}",
                    s.len()
                )
                .into());
            }
            Ok(s[i as usize].clone())
        }
        Op::Gather { source, indices } => {
            let (s, idx) = (ev.seq(*source)?, ev.seq(*indices)?);
            let s = items(&s);
            let mut out = Vec::with_capacity(items(&idx).len());
            for (pos, i) in items(&idx).iter().enumerate() {
                let i = to_index(i, "index")?;
                if i < 0 || i >= s.len() as i128 {
                    return Err(out_of_range(i, pos, "source", s.len()).into());
                }
                out.push(s[i as usize].clone());
            }
            Ok(Value::Seq(out))
        }
        Op::Scatter {
            source,
            indices,
            dest,
        } => {
            let (s, idx) = (ev.seq(*source)?, ev.seq(*indices)?);
            let (s, idx) = (items(&s), items(&idx));
            if s.len() != idx.len() {
                return Err(lengths_differ("source", s.len(), "indices", idx.len()).into());
            }
            let mut d = items(&*ev.seq(*dest)?).to_vec();
            for (pos, (x, i)) in s.iter().zip(idx).enumerate() {
                let i = to_index(i, "index")?;
                if i < 0 || i >= d.len() as i128 {
                    return Err(out_of_range(i, pos, "destination", d.len()).into());
                }
                d[i as usize] = x.clone();
            }
            Ok(Value::Seq(d))
        }
        op => unexpected("indexing", op),
    }
}
