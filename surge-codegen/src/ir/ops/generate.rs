//! The generator family: `range(start, end, stride)` (Python's semantics; stride 1 when absent,
//! a negative stride counts down; the element type is the bounds') and `replicate(value, len)`.

use super::arith::cast;
use super::{Eval, Failure, Typing, ValueInfo, unexpected};
use crate::data::ScalarValue;
use crate::ir::value::Value;
use crate::ir::{IrError, Op, Type, range_len};

/// The longest range the interpreter materializes.
const MAX_RANGE: u64 = 1 << 32;

pub(super) fn infer(t: &Typing<'_, '_>, op: &Op) -> Result<ValueInfo, IrError> {
    match op {
        Op::Range { start, end, stride } => {
            let e = t.int_scalar(*start, "start")?;
            let e2 = t.int_scalar(*end, "end")?;
            if e != e2 {
                return Err(t.err(format!("start is {e} but end is {e2}")));
            }
            let mut step = Some(1i128);
            if let Some(s) = stride {
                let e3 = t.int_scalar(*s, "stride")?;
                if e3 != e {
                    return Err(t.err(format!("start is {e} but stride is {e3}")));
                }
                step = t.konst_int(*s);
                if step == Some(0) {
                    return Err(t.err("stride is 0"));
                }
            }
            let len = match (t.konst_int(*start), t.konst_int(*end), step) {
                (Some(a), Some(b), Some(s)) => Some(range_len(a, b, s)),
                _ => None,
            };
            Ok(ValueInfo {
                ty: Type::scalar_seq(e),
                len,
                konst: None,
            })
        }
        Op::Replicate { value, len } => {
            t.int_scalar(*len, "length")?;
            let n = t.konst_int(*len);
            if let Some(n) = n
                && n < 0
            {
                return Err(t.err(format!("length {n} is negative")));
            }
            Ok(ValueInfo {
                ty: Type::seq(t.info(*value).ty.clone()),
                len: n.map(|n| n as u64),
                konst: None,
            })
        }
        op => unexpected("generator", op),
    }
}

pub(super) fn eval(ev: &mut dyn Eval, op: &Op) -> Result<Value, Failure> {
    match op {
        Op::Range { start, end, stride } => {
            let elem = ev.value(*start)?.as_scalar().expect("scalar").elem();
            let a = ev.int(*start, "start")?;
            let b = ev.int(*end, "end")?;
            let s = match stride {
                Some(s) => ev.int(*s, "stride")?,
                None => 1,
            };
            if s == 0 {
                return Err("stride is 0".into());
            }
            let len = range_len(a, b, s);
            if len > MAX_RANGE {
                return Err(
                    format!("range of {len} elements is too long for the interpreter").into(),
                );
            }
            let mut out = Vec::with_capacity(len as usize);
            for k in 0..len as i128 {
                out.push(Value::Scalar(cast(
                    elem,
                    ScalarValue::I64((a + k * s) as i64),
                )?));
            }
            Ok(Value::Seq(out))
        }
        Op::Replicate { value, len } => {
            let l = ev.int(*len, "length")?;
            if l < 0 {
                return Err(format!("length {l} is negative").into());
            }
            let v = ev.value(*value)?;
            Ok(Value::Seq(vec![(*v).clone(); l as usize]))
        }
        op => unexpected("generator", op),
    }
}
