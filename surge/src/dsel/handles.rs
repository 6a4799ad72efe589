//! Typed handles over graph nodes: `Seq<T>`, `Nested<T>`, `Scalar<T>`, and tuples of them.

use super::node::Node;
use crate::Result;
use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;
use surge_codegen::data::{Buffer, ScalarValue};
use surge_codegen::ir::{Elem, Literal, Op, ScalarExpr, Type};

/// A type that can be an element of a sequence: a scalar type, a sequence, or a tuple of those.
/// `Sym` is what a traced lambda receives for one element.
pub trait Item: 'static {
    type Sym: Sym<Item = Self>;
    fn ty() -> Type;
}

/// A symbolic value inside a traced computation.
pub trait Sym: Clone {
    type Item: Item<Sym = Self>;
    #[doc(hidden)]
    #[track_caller]
    fn from_node(n: Rc<Node>) -> Self;
    #[doc(hidden)]
    #[track_caller]
    fn to_node(&self) -> Rc<Node>;
}

/// A scalar element type a buffer can hold.
pub trait Element: Item<Sym = Scalar<Self>> + Copy + fmt::Debug {
    const ELEM: Elem;
    fn literal(self) -> Literal;
    fn into_buffer(v: Vec<Self>) -> Buffer;
    fn from_value(v: ScalarValue) -> Option<Self>;
}

/// Element types usable as indices, keys, offsets and lengths.
pub trait IndexElement: Element {}

/// Element types with arithmetic.
pub trait Numeric: Element {}

/// Float element types (`sqrt`, `exp`, `log`, `fma`).
pub trait Float: Numeric {}

macro_rules! element {
    ($t:ty, $e:ident, $lit:expr, $($marker:ident),*) => {
        impl Item for $t {
            type Sym = Scalar<$t>;
            fn ty() -> Type {
                Type::Scalar(Elem::$e)
            }
        }
        impl Element for $t {
            const ELEM: Elem = Elem::$e;
            fn literal(self) -> Literal {
                let f: fn($t) -> Literal = $lit;
                f(self)
            }
            fn into_buffer(v: Vec<Self>) -> Buffer {
                Buffer::$e(v)
            }
            fn from_value(v: ScalarValue) -> Option<Self> {
                match v {
                    ScalarValue::$e(x) => Some(x),
                    _ => None,
                }
            }
        }
        $(impl $marker for $t {})*
    };
}
element!(f32, F32, Literal::f32, Numeric, Float);
element!(f64, F64, Literal::f64, Numeric, Float);
element!(i32, I32, Literal::I32, Numeric, IndexElement);
element!(i64, I64, Literal::I64, Numeric, IndexElement);
element!(u32, U32, Literal::U32, Numeric, IndexElement);
element!(u64, U64, Literal::U64, Numeric, IndexElement);

impl Item for bool {
    type Sym = Scalar<bool>;
    fn ty() -> Type {
        Type::Scalar(Elem::Bool)
    }
}

/// A symbolic scalar of type `T`: a lambda parameter, a reduction result, or an expression over them.
/// Arithmetic on it builds an expression tree; nothing is computed until the computation runs.
#[must_use = "a Scalar describes a computation; pass it on or build a Computation from it"]
pub struct Scalar<T> {
    pub(crate) node: Rc<Node>,
    _t: PhantomData<T>,
}

impl<T> Clone for Scalar<T> {
    fn clone(&self) -> Self {
        Scalar {
            node: self.node.clone(),
            _t: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Scalar<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scalar<{}>({})", self.node.ty(), self.node.id)
    }
}

impl<T: Item<Sym = Scalar<T>>> Sym for Scalar<T> {
    type Item = T;
    #[track_caller]
    fn from_node(node: Rc<Node>) -> Self {
        Scalar {
            node,
            _t: PhantomData,
        }
    }
    #[track_caller]
    fn to_node(&self) -> Rc<Node> {
        self.node.clone()
    }
}

impl<T: Element> Scalar<T> {
    /// A constant.
    #[track_caller]
    pub fn constant(v: T) -> Self {
        Scalar::from_node(Node::typed(
            Op::Scalar {
                expr: ScalarExpr::Const(v.literal()),
            },
            vec![],
        ))
    }
}

/// A constant scalar; shorthand for [`Scalar::constant`].
#[track_caller]
pub fn lit<T: Element>(v: T) -> Scalar<T> {
    Scalar::constant(v)
}

/// Anything usable where a scalar operand is expected: a plain value or a symbolic scalar.
pub trait IntoScalar<T> {
    #[track_caller]
    fn into_scalar(self) -> Scalar<T>;
}
impl<T: Element> IntoScalar<T> for T {
    #[track_caller]
    fn into_scalar(self) -> Scalar<T> {
        Scalar::constant(self)
    }
}
impl<T> IntoScalar<T> for Scalar<T> {
    #[track_caller]
    fn into_scalar(self) -> Scalar<T> {
        self
    }
}
impl<T> IntoScalar<T> for &Scalar<T> {
    #[track_caller]
    fn into_scalar(self) -> Scalar<T> {
        self.clone()
    }
}

/// A lazy sequence of `T`. `Seq<f64>` is a flat sequence of numbers; `Seq<Seq<f64>>` (alias
/// [`Nested<f64>`]) a sequence of rows.
#[must_use = "a Seq describes a computation; pass it on or build a Computation from it"]
pub struct Seq<T> {
    pub(crate) node: Rc<Node>,
    _t: PhantomData<T>,
}

/// A nested sequence: a sequence of rows (from `nest` or `split`).
pub type Nested<T> = Seq<Seq<T>>;

impl<T> Clone for Seq<T> {
    fn clone(&self) -> Self {
        Seq {
            node: self.node.clone(),
            _t: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Seq<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seq<{}>({}", self.node.ty(), self.node.id)?;
        if let Some(l) = self.node.info.len {
            write!(f, ", len {l}")?;
        }
        write!(f, ")")
    }
}

impl<T: Item> Item for Seq<T> {
    type Sym = Seq<T>;
    fn ty() -> Type {
        Type::seq(T::ty())
    }
}

impl<T: Item> Sym for Seq<T> {
    type Item = Seq<T>;
    #[track_caller]
    fn from_node(node: Rc<Node>) -> Self {
        Seq {
            node,
            _t: PhantomData,
        }
    }
    #[track_caller]
    fn to_node(&self) -> Rc<Node> {
        self.node.clone()
    }
}

impl<T: Element> Seq<T> {
    /// An input sequence named `name`, holding `data`.
    ///
    /// Floats pass through as IEEE values: NaN and infinities are accepted and propagate as
    /// they do in Rust (`NaN + 1` is NaN, `min` and `max` ignore a NaN operand), the same in the
    /// interpreter and in every backend (README, "Non-finite values").
    ///
    /// ```
    /// use surge::prelude::*;
    /// let s = Seq::input("s", vec![1.0f64, f64::NAN, f64::INFINITY])?;
    /// let y = map(|x| x * 2.0, &s)?.interpret()?;
    /// assert!(y[1].is_nan() && y[2] == f64::INFINITY);
    /// assert_eq!(reduce(max, &s)?.interpret()?, f64::INFINITY);
    /// # Ok::<(), surge::SurgeError>(())
    /// ```
    #[track_caller]
    pub fn input(name: impl Into<String>, data: Vec<T>) -> Result<Self> {
        Ok(Seq::from_node(Node::input(
            name.into(),
            T::into_buffer(data),
        )))
    }
}

impl<T> Seq<T> {
    /// The length, when it is known before running (inputs and shapes derived from them).
    pub fn static_len(&self) -> Option<u64> {
        self.node.info.len
    }
}

macro_rules! tuple_sym {
    ($($T:ident $i:tt),+) => {
        impl<$($T: Item),+> Item for ($($T,)+) {
            type Sym = ($($T::Sym,)+);
            fn ty() -> Type {
                Type::Tuple(vec![$($T::ty()),+])
            }
        }
        impl<$($T: Sym),+> Sym for ($($T,)+) {
            type Item = ($($T::Item,)+);
            #[track_caller]
            fn from_node(n: Rc<Node>) -> Self {
                ($($T::from_node(Node::typed(Op::Project { tuple: n.id, index: $i }, vec![n.clone()])),)+)
            }
            #[track_caller]
            fn to_node(&self) -> Rc<Node> {
                let deps = vec![$(self.$i.to_node()),+];
                Node::typed(Op::Tuple { items: deps.iter().map(|d| d.id).collect() }, deps)
            }
        }
    };
}
tuple_sym!(A 0, B 1);
tuple_sym!(A 0, B 1, C 2);
tuple_sym!(A 0, B 1, C 2, D 3);

/// What a traced lambda may return: a symbolic value, or a `Result` of one (so `?` works inside).
pub trait Traced {
    type Sym: Sym;
    #[track_caller]
    fn into_sym(self) -> Result<Self::Sym>;
}
impl<S: Sym> Traced for S {
    type Sym = S;
    #[track_caller]
    fn into_sym(self) -> Result<S> {
        Ok(self)
    }
}
impl<S: Sym> Traced for Result<S> {
    type Sym = S;
    #[track_caller]
    fn into_sym(self) -> Result<S> {
        self
    }
}
