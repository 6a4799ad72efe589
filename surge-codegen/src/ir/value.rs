//! Values of the reference interpreter: deliberately the most obvious representation.

use super::Elem;
use crate::data::{Buffer, Output, ScalarValue};

/// A runtime value: a scalar, a sequence of values, or a tuple.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Scalar(ScalarValue),
    Seq(Vec<Value>),
    Tuple(Vec<Value>),
}

impl Value {
    pub fn from_buffer(b: &Buffer) -> Value {
        Value::Seq(
            (0..b.len())
                .map(|i| Value::Scalar(b.get(i).expect("index in range")))
                .collect(),
        )
    }
    /// A backend's output as a value, for comparison with the interpreter.
    pub fn from_output(o: &Output) -> Value {
        match o {
            Output::Scalar(s) => Value::Scalar(*s),
            Output::Seq(b) => Value::from_buffer(b),
            Output::Nested { data, offsets } => Value::Seq(
                offsets
                    .windows(2)
                    .map(|w| {
                        Value::Seq(
                            (w[0] as usize..w[1] as usize)
                                .map(|i| Value::Scalar(data.get(i).expect("offset in range")))
                                .collect(),
                        )
                    })
                    .collect(),
            ),
        }
    }
    pub fn as_scalar(&self) -> Option<ScalarValue> {
        match self {
            Value::Scalar(s) => Some(*s),
            _ => None,
        }
    }
    pub fn as_seq(&self) -> Option<&[Value]> {
        match self {
            Value::Seq(v) => Some(v),
            _ => None,
        }
    }
    /// A flat sequence of scalars of element type `elem` as a buffer.
    pub fn to_buffer(&self, elem: Elem) -> Option<Buffer> {
        let items = self
            .as_seq()?
            .iter()
            .map(Value::as_scalar)
            .collect::<Option<Vec<_>>>()?;
        Buffer::from_values(elem, &items)
    }
    /// A flat sequence of numbers as `f64`s (for reports and tests).
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        self.as_seq()?
            .iter()
            .map(|v| v.as_scalar()?.as_f64())
            .collect()
    }
}
