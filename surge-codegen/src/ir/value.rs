//! Values of the reference interpreter: deliberately the most obvious representation.

use super::{Elem, Type};
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
            Output::Deep { data, offsets } => Value::Seq(
                (0..offsets[0].len().saturating_sub(1))
                    .map(|i| deep_item(data, offsets, 0, i))
                    .collect(),
            ),
            Output::Composite { ty, parts } => {
                let mut leaves = parts.iter().map(Value::from_output);
                let v = assemble(ty, &mut leaves);
                assert!(
                    leaves.next().is_none(),
                    "internal: more result parts than leaves"
                );
                v
            }
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

/// Sequence `i` of level `l` of a deep output (`Output::Deep`): the items `offsets[l]` gives
/// it, sequences of the next level or, at the last level, scalars of `data`.
fn deep_item(data: &Buffer, offsets: &[Vec<u64>], l: usize, i: usize) -> Value {
    let range = offsets[l][i] as usize..offsets[l][i + 1] as usize;
    Value::Seq(if l + 1 == offsets.len() {
        range
            .map(|k| Value::Scalar(data.get(k).expect("offset in range")))
            .collect()
    } else {
        range.map(|j| deep_item(data, offsets, l + 1, j)).collect()
    })
}

/// The value of type `ty` from its parts (one per leaf, in order; see `Output::Composite`).
fn assemble(ty: &Type, leaves: &mut dyn Iterator<Item = Value>) -> Value {
    match ty {
        Type::Tuple(items) => Value::Tuple(items.iter().map(|t| assemble(t, leaves)).collect()),
        Type::Seq(item) if has_tuple(item) => {
            // One part per leaf of the item, each a sequence: zipped back element by element.
            let n = leaf_count(item);
            let cols: Vec<Vec<Value>> = (0..n)
                .map(|_| match leaves.next() {
                    Some(Value::Seq(items)) => items,
                    other => panic!("internal: result part {other:?} is not a sequence"),
                })
                .collect();
            let len = cols.first().map_or(0, Vec::len);
            Value::Seq(
                (0..len)
                    .map(|i| assemble(item, &mut cols.iter().map(|c| c[i].clone())))
                    .collect(),
            )
        }
        _ => {
            let leaf = leaves
                .next()
                .expect("internal: fewer result parts than leaves");
            as_type(leaf, ty)
        }
    }
}

fn has_tuple(t: &Type) -> bool {
    match t {
        Type::Tuple(_) => true,
        Type::Seq(i) => has_tuple(i),
        Type::Scalar(_) => false,
    }
}

fn leaf_count(t: &Type) -> usize {
    match t {
        Type::Tuple(items) => items.iter().map(leaf_count).sum(),
        Type::Seq(i) if has_tuple(i) => leaf_count(i),
        _ => 1,
    }
}

/// A stored leaf as a value of its type: booleans were stored as `u32`.
fn as_type(v: Value, ty: &Type) -> Value {
    match (v, ty) {
        (Value::Scalar(s), Type::Scalar(Elem::Bool)) => {
            Value::Scalar(ScalarValue::Bool(s.as_i128().is_some_and(|x| x != 0)))
        }
        (Value::Seq(items), Type::Seq(item)) => {
            Value::Seq(items.into_iter().map(|v| as_type(v, item)).collect())
        }
        (v, _) => v,
    }
}
