//! Operator overloading and math on symbolic scalars: each builds one expression node.

use super::handles::{Element, Float, IntoScalar, Numeric, Scalar, Sym};
use super::node::Node;
use std::ops;
use surge_codegen::ir::{BinaryOp, Op, ScalarExpr, UnaryOp};

fn v<T>(s: &Scalar<T>) -> Box<ScalarExpr> {
    Box::new(ScalarExpr::Value(s.node.id))
}

#[track_caller]
fn build<T, U>(expr: ScalarExpr, deps: &[&Scalar<T>]) -> Scalar<U>
where
    Scalar<U>: Sym,
{
    Scalar::<U>::from_node(Node::typed(
        Op::Scalar { expr },
        deps.iter().map(|d| d.node.clone()).collect(),
    ))
}

#[track_caller]
fn binary<T, U>(op: BinaryOp, a: &Scalar<T>, b: &Scalar<T>) -> Scalar<U>
where
    Scalar<U>: Sym,
{
    build(ScalarExpr::Binary(op, v(a), v(b)), &[a, b])
}

macro_rules! arith {
    ($Trait:ident, $method:ident, $op:ident) => {
        impl<T: Numeric> ops::$Trait<Scalar<T>> for Scalar<T> {
            type Output = Scalar<T>;
            #[track_caller]
            fn $method(self, rhs: Scalar<T>) -> Scalar<T> {
                binary(BinaryOp::$op, &self, &rhs)
            }
        }
        impl<T: Numeric> ops::$Trait<&Scalar<T>> for &Scalar<T> {
            type Output = Scalar<T>;
            #[track_caller]
            fn $method(self, rhs: &Scalar<T>) -> Scalar<T> {
                binary(BinaryOp::$op, self, rhs)
            }
        }
        impl<T: Numeric> ops::$Trait<&Scalar<T>> for Scalar<T> {
            type Output = Scalar<T>;
            #[track_caller]
            fn $method(self, rhs: &Scalar<T>) -> Scalar<T> {
                binary(BinaryOp::$op, &self, rhs)
            }
        }
        impl<T: Numeric> ops::$Trait<Scalar<T>> for &Scalar<T> {
            type Output = Scalar<T>;
            #[track_caller]
            fn $method(self, rhs: Scalar<T>) -> Scalar<T> {
                binary(BinaryOp::$op, self, &rhs)
            }
        }
        impl<T: Numeric> ops::$Trait<T> for Scalar<T> {
            type Output = Scalar<T>;
            #[track_caller]
            fn $method(self, rhs: T) -> Scalar<T> {
                binary(BinaryOp::$op, &self, &Scalar::constant(rhs))
            }
        }
        impl<T: Numeric> ops::$Trait<T> for &Scalar<T> {
            type Output = Scalar<T>;
            #[track_caller]
            fn $method(self, rhs: T) -> Scalar<T> {
                binary(BinaryOp::$op, self, &Scalar::constant(rhs))
            }
        }
        arith!(@lhs $Trait, $method, $op, f32 f64 i32 i64 u32 u64);
    };
    (@lhs $Trait:ident, $method:ident, $op:ident, $($t:ty)*) => {
        $(impl ops::$Trait<Scalar<$t>> for $t {
            type Output = Scalar<$t>;
            #[track_caller]
            fn $method(self, rhs: Scalar<$t>) -> Scalar<$t> {
                binary(BinaryOp::$op, &Scalar::constant(self), &rhs)
            }
        })*
    };
}
arith!(Add, add, Add);
arith!(Sub, sub, Sub);
arith!(Mul, mul, Mul);
arith!(Div, div, Div);
arith!(Rem, rem, Rem);

impl<T: Numeric> ops::Neg for Scalar<T> {
    type Output = Scalar<T>;
    #[track_caller]
    fn neg(self) -> Scalar<T> {
        -&self
    }
}

impl<T: Numeric> ops::Neg for &Scalar<T> {
    type Output = Scalar<T>;
    #[track_caller]
    fn neg(self) -> Scalar<T> {
        build(ScalarExpr::Unary(UnaryOp::Neg, v(self)), &[self])
    }
}

impl ops::Not for Scalar<bool> {
    type Output = Scalar<bool>;
    #[track_caller]
    fn not(self) -> Scalar<bool> {
        build(ScalarExpr::Unary(UnaryOp::Not, v(&self)), &[&self])
    }
}

impl<T: Element> Scalar<T> {
    #[track_caller]
    pub fn lt(&self, rhs: impl IntoScalar<T>) -> Scalar<bool> {
        binary(BinaryOp::Lt, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn le(&self, rhs: impl IntoScalar<T>) -> Scalar<bool> {
        binary(BinaryOp::Le, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn gt(&self, rhs: impl IntoScalar<T>) -> Scalar<bool> {
        binary(BinaryOp::Gt, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn ge(&self, rhs: impl IntoScalar<T>) -> Scalar<bool> {
        binary(BinaryOp::Ge, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn equal(&self, rhs: impl IntoScalar<T>) -> Scalar<bool> {
        binary(BinaryOp::Eq, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn not_equal(&self, rhs: impl IntoScalar<T>) -> Scalar<bool> {
        binary(BinaryOp::Ne, self, &rhs.into_scalar())
    }
    /// Converts to another element type with Rust `as` semantics.
    #[track_caller]
    pub fn cast<U: Element>(&self) -> Scalar<U> {
        build(ScalarExpr::Cast(U::ELEM, v(self)), &[self])
    }
}

impl<T: Numeric> Scalar<T> {
    #[track_caller]
    pub fn min(&self, rhs: impl IntoScalar<T>) -> Scalar<T> {
        binary(BinaryOp::Min, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn max(&self, rhs: impl IntoScalar<T>) -> Scalar<T> {
        binary(BinaryOp::Max, self, &rhs.into_scalar())
    }
    #[track_caller]
    pub fn abs(&self) -> Scalar<T> {
        build(ScalarExpr::Unary(UnaryOp::Abs, v(self)), &[self])
    }
}

impl<T: Float> Scalar<T> {
    #[track_caller]
    pub fn sqrt(&self) -> Scalar<T> {
        build(ScalarExpr::Unary(UnaryOp::Sqrt, v(self)), &[self])
    }
    #[track_caller]
    pub fn exp(&self) -> Scalar<T> {
        build(ScalarExpr::Unary(UnaryOp::Exp, v(self)), &[self])
    }
    #[track_caller]
    pub fn ln(&self) -> Scalar<T> {
        build(ScalarExpr::Unary(UnaryOp::Log, v(self)), &[self])
    }
    /// `self * b + c`, fused where the target has it.
    #[track_caller]
    pub fn fma(&self, b: impl IntoScalar<T>, c: impl IntoScalar<T>) -> Scalar<T> {
        let (b, c) = (b.into_scalar(), c.into_scalar());
        build(ScalarExpr::Fma(v(self), v(&b), v(&c)), &[self, &b, &c])
    }
}

impl Scalar<bool> {
    #[track_caller]
    pub fn and(&self, rhs: &Scalar<bool>) -> Scalar<bool> {
        binary(BinaryOp::And, self, rhs)
    }
    #[track_caller]
    pub fn or(&self, rhs: &Scalar<bool>) -> Scalar<bool> {
        binary(BinaryOp::Or, self, rhs)
    }
    /// `if self { a } else { b }`.
    #[track_caller]
    pub fn select<T: Element>(&self, a: impl IntoScalar<T>, b: impl IntoScalar<T>) -> Scalar<T> {
        let (a, b) = (a.into_scalar(), b.into_scalar());
        let deps = vec![self.node.clone(), a.node.clone(), b.node.clone()];
        Scalar::from_node(Node::typed(
            Op::Scalar {
                expr: ScalarExpr::Select(v(self), v(&a), v(&b)),
            },
            deps,
        ))
    }
}

/// `if cond { a } else { b }`.
#[track_caller]
pub fn select<T: Element>(
    cond: &Scalar<bool>,
    a: impl IntoScalar<T>,
    b: impl IntoScalar<T>,
) -> Scalar<T> {
    cond.select(a, b)
}
