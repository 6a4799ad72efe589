//! Host data bound to a computation's inputs, and scalar values.

use crate::ir::{Elem, Literal};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar value of one of the IR's element types.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "lowercase")]
pub enum ScalarValue {
    F32(f32),
    F64(f64),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    Bool(bool),
}

impl ScalarValue {
    pub fn elem(self) -> Elem {
        match self {
            ScalarValue::F32(_) => Elem::F32,
            ScalarValue::F64(_) => Elem::F64,
            ScalarValue::I32(_) => Elem::I32,
            ScalarValue::I64(_) => Elem::I64,
            ScalarValue::U32(_) => Elem::U32,
            ScalarValue::U64(_) => Elem::U64,
            ScalarValue::Bool(_) => Elem::Bool,
        }
    }
    /// The value of an integer scalar, widened.
    pub fn as_i128(self) -> Option<i128> {
        match self {
            ScalarValue::I32(v) => Some(v.into()),
            ScalarValue::I64(v) => Some(v.into()),
            ScalarValue::U32(v) => Some(v.into()),
            ScalarValue::U64(v) => Some(v.into()),
            _ => None,
        }
    }
    /// The value as `f64` (lossy for large 64-bit integers); `None` for bool.
    pub fn as_f64(self) -> Option<f64> {
        match self {
            ScalarValue::F32(v) => Some(v.into()),
            ScalarValue::F64(v) => Some(v),
            ScalarValue::I32(v) => Some(v.into()),
            ScalarValue::I64(v) => Some(v as f64),
            ScalarValue::U32(v) => Some(v.into()),
            ScalarValue::U64(v) => Some(v as f64),
            ScalarValue::Bool(_) => None,
        }
    }
}

impl From<Literal> for ScalarValue {
    fn from(l: Literal) -> Self {
        match l {
            Literal::F32(b) => ScalarValue::F32(f32::from_bits(b)),
            Literal::F64(b) => ScalarValue::F64(f64::from_bits(b)),
            Literal::I32(v) => ScalarValue::I32(v),
            Literal::I64(v) => ScalarValue::I64(v),
            Literal::U32(v) => ScalarValue::U32(v),
            Literal::U64(v) => ScalarValue::U64(v),
            Literal::Bool(v) => ScalarValue::Bool(v),
        }
    }
}

impl From<ScalarValue> for Literal {
    fn from(v: ScalarValue) -> Self {
        match v {
            ScalarValue::F32(x) => Literal::f32(x),
            ScalarValue::F64(x) => Literal::f64(x),
            ScalarValue::I32(x) => Literal::I32(x),
            ScalarValue::I64(x) => Literal::I64(x),
            ScalarValue::U32(x) => Literal::U32(x),
            ScalarValue::U64(x) => Literal::U64(x),
            ScalarValue::Bool(x) => Literal::Bool(x),
        }
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::F32(v) => write!(f, "{v}"),
            ScalarValue::F64(v) => write!(f, "{v}"),
            ScalarValue::I32(v) => write!(f, "{v}"),
            ScalarValue::I64(v) => write!(f, "{v}"),
            ScalarValue::U32(v) => write!(f, "{v}"),
            ScalarValue::U64(v) => write!(f, "{v}"),
            ScalarValue::Bool(v) => write!(f, "{v}"),
        }
    }
}

/// A typed, flat host buffer bound to one input of a computation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "lowercase")]
pub enum Buffer {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

/// `$body` with `$v` bound to the buffer's typed vector, whatever its element type.
#[macro_export]
macro_rules! buffer_dispatch {
    ($self:expr, $v:ident => $body:expr) => {
        match $self {
            $crate::data::Buffer::F32($v) => $body,
            $crate::data::Buffer::F64($v) => $body,
            $crate::data::Buffer::I32($v) => $body,
            $crate::data::Buffer::I64($v) => $body,
            $crate::data::Buffer::U32($v) => $body,
            $crate::data::Buffer::U64($v) => $body,
        }
    };
}

impl Buffer {
    /// Element-wise absolute values of a floating-point buffer (integers unchanged): the input of
    /// the interpreter run that bounds a reordered sum's rounding error (`Σ|x|`).
    pub fn abs(&self) -> Buffer {
        match self {
            Buffer::F64(v) => Buffer::F64(v.iter().map(|x| x.abs()).collect()),
            Buffer::F32(v) => Buffer::F32(v.iter().map(|x| x.abs()).collect()),
            other => other.clone(),
        }
    }

    pub fn elem(&self) -> Elem {
        match self {
            Buffer::F32(_) => Elem::F32,
            Buffer::F64(_) => Elem::F64,
            Buffer::I32(_) => Elem::I32,
            Buffer::I64(_) => Elem::I64,
            Buffer::U32(_) => Elem::U32,
            Buffer::U64(_) => Elem::U64,
        }
    }
    /// `n` zeros of a storable element type (panics on `Bool`, which no buffer holds).
    pub fn zeroed(elem: Elem, n: usize) -> Buffer {
        match elem {
            Elem::F32 => Buffer::F32(vec![0.0; n]),
            Elem::F64 => Buffer::F64(vec![0.0; n]),
            Elem::I32 => Buffer::I32(vec![0; n]),
            Elem::I64 => Buffer::I64(vec![0; n]),
            Elem::U32 => Buffer::U32(vec![0; n]),
            Elem::U64 => Buffer::U64(vec![0; n]),
            Elem::Bool => panic!("internal: no buffer holds booleans"),
        }
    }
    pub fn len(&self) -> usize {
        buffer_dispatch!(self, v => v.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, i: usize) -> Option<ScalarValue> {
        Some(match self {
            Buffer::F32(v) => ScalarValue::F32(*v.get(i)?),
            Buffer::F64(v) => ScalarValue::F64(*v.get(i)?),
            Buffer::I32(v) => ScalarValue::I32(*v.get(i)?),
            Buffer::I64(v) => ScalarValue::I64(*v.get(i)?),
            Buffer::U32(v) => ScalarValue::U32(*v.get(i)?),
            Buffer::U64(v) => ScalarValue::U64(*v.get(i)?),
        })
    }
    /// Element `i` of an integer buffer, widened; `None` for float buffers or out of range.
    pub fn get_int(&self, i: usize) -> Option<i128> {
        self.get(i).and_then(ScalarValue::as_i128)
    }
    /// Builds a buffer from scalar values that all have element type `elem`.
    pub fn from_values(elem: Elem, values: &[ScalarValue]) -> Option<Buffer> {
        macro_rules! collect {
            ($variant:ident) => {
                Buffer::$variant(
                    values
                        .iter()
                        .map(|v| match v {
                            ScalarValue::$variant(x) => Some(*x),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?,
                )
            };
        }
        Some(match elem {
            Elem::F32 => collect!(F32),
            Elem::F64 => collect!(F64),
            Elem::I32 => collect!(I32),
            Elem::I64 => collect!(I64),
            Elem::U32 => collect!(U32),
            Elem::U64 => collect!(U64),
            Elem::Bool => return None,
        })
    }
}

/// The result of running a computation on a backend: a scalar, a flat sequence, or a sequence of
/// sequences stored flat with CSR-style offsets (`offsets.len() == rows + 1`).
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Scalar(ScalarValue),
    Seq(Buffer),
    Nested {
        data: Buffer,
        offsets: Vec<u64>,
    },
    /// A sequence nested three or more levels deep (`offsets.len() + 1` levels), stored flat
    /// with one level of CSR-style offsets per level of sequences above the innermost rows:
    /// `offsets[0]` (`n + 1` entries) delimits the outer elements' sequences among those of
    /// the next level, each `offsets[l + 1]` delimits the sequences `offsets[l]` counts among
    /// those of the level below, and the last delimits the innermost rows in `data`.
    Deep {
        data: Buffer,
        offsets: Vec<Vec<u64>>,
    },
    /// A result of type `ty` that phases store in parts, one per leaf of the type (tuples split,
    /// booleans as `u32`), in the order of the leaves; `Value::from_output` puts it together.
    Composite {
        ty: super::Type,
        parts: Vec<Output>,
    },
}

/// `len` pseudo-random values in [-1, 1) (xorshift64, seeded): the deterministic test and
/// tuning data of every layer (conformance tests, tuned GEMM shapes, CUDA GEMM operands).
pub fn uniform_values(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}
