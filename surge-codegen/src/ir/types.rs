//! Element and value types of the IR.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar element type. `Bool` only arises from comparisons and is never stored in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Elem {
    F32,
    F64,
    I32,
    I64,
    U32,
    U64,
    Bool,
}

impl Elem {
    /// All element types a buffer can hold.
    pub const STORABLE: [Elem; 6] = [
        Elem::F32,
        Elem::F64,
        Elem::I32,
        Elem::I64,
        Elem::U32,
        Elem::U64,
    ];

    /// How backends store an element of this type in a buffer: booleans as `u32` 0/1 (there
    /// are no boolean buffers), every other type as itself.
    pub fn stored(self) -> Elem {
        if self == Elem::Bool { Elem::U32 } else { self }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F64)
    }
    pub fn is_integer(self) -> bool {
        matches!(self, Elem::I32 | Elem::I64 | Elem::U32 | Elem::U64)
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Elem::I32 | Elem::I64 | Elem::F32 | Elem::F64)
    }
    /// Size in bytes of one element as stored in memory.
    pub fn size_bytes(self) -> usize {
        match self {
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
            Elem::Bool => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::I32 => "i32",
            Elem::I64 => "i64",
            Elem::U32 => "u32",
            Elem::U64 => "u64",
            Elem::Bool => "bool",
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of an IR value: a scalar, a sequence of values, or a tuple (from `zip`/`join`).
///
/// A nested sequence is `Seq(Seq(Scalar(_)))`; its rows may differ in length (`nest`) or not (`split`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Type {
    Scalar(Elem),
    Seq(Box<Type>),
    Tuple(Vec<Type>),
}

impl Type {
    pub fn seq(inner: Type) -> Type {
        Type::Seq(Box::new(inner))
    }
    pub fn scalar_seq(e: Elem) -> Type {
        Type::seq(Type::Scalar(e))
    }
    /// The element type of a sequence type.
    pub fn item(&self) -> Option<&Type> {
        match self {
            Type::Seq(t) => Some(t),
            _ => None,
        }
    }
    pub fn as_scalar(&self) -> Option<Elem> {
        match self {
            Type::Scalar(e) => Some(*e),
            _ => None,
        }
    }
    pub fn is_seq(&self) -> bool {
        matches!(self, Type::Seq(_))
    }
    /// This type as backends store it: booleans as `u32` ([`Elem::stored`]).
    pub fn stored(&self) -> Type {
        match self {
            Type::Scalar(e) => Type::Scalar(e.stored()),
            Type::Seq(i) => Type::seq(i.stored()),
            Type::Tuple(items) => Type::Tuple(items.iter().map(Type::stored).collect()),
        }
    }
    /// Whether a boolean is among this type's elements (it is stored otherwise than it is).
    pub fn has_bool(&self) -> bool {
        self.stored() != *self
    }
    /// Nesting depth: 0 for scalars and tuples, 1 for a flat sequence, 2 for a nested one.
    pub fn depth(&self) -> usize {
        match self {
            Type::Seq(t) => 1 + t.depth(),
            _ => 0,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(e) => write!(f, "{e}"),
            Type::Seq(t) => write!(f, "seq<{t}>"),
            Type::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
        }
    }
}
