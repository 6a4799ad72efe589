//! Tracing Rust closures into IR lambdas: each parameter becomes a `Param` node, the closure runs
//! once on symbolic values, and the node it returns is the body.

use super::handles::{Item, Numeric, Scalar, Seq, Sym, Traced};
use super::node::Node;
use crate::Result;
use std::rc::Rc;
use surge_codegen::ir::{Lambda, NodeId};

/// A traced lambda: its parameter nodes and its body node.
pub(crate) struct TracedLambda {
    pub params: Vec<Rc<Node>>,
    pub body: Rc<Node>,
}

impl TracedLambda {
    pub fn ir(&self) -> Lambda {
        Lambda {
            params: self.params.iter().map(|p| p.id).collect(),
            body: self.body.id,
        }
    }
    /// Dependencies a node applying this lambda must keep alive.
    pub fn deps(&self) -> impl Iterator<Item = Rc<Node>> + '_ {
        self.params
            .iter()
            .cloned()
            .chain(std::iter::once(self.body.clone()))
    }
}

#[track_caller]
pub(crate) fn param<S: Sym>() -> (S, Rc<Node>) {
    let p = Node::param(S::Item::ty());
    (S::from_node(p.clone()), p)
}

/// The sequences a `map` applies its function to: one `&Seq` or a tuple of up to four.
/// `Args` is what the function receives: one symbolic element per input.
pub trait MapInputs {
    type Args;
    #[doc(hidden)]
    #[track_caller]
    fn nodes(&self) -> Vec<Rc<Node>>;
    #[doc(hidden)]
    #[track_caller]
    fn params() -> (Self::Args, Vec<Rc<Node>>);
}

impl<A: Item> MapInputs for &Seq<A> {
    type Args = A::Sym;
    #[track_caller]
    fn nodes(&self) -> Vec<Rc<Node>> {
        vec![self.node.clone()]
    }
    #[track_caller]
    fn params() -> (Self::Args, Vec<Rc<Node>>) {
        let (a, p) = param::<A::Sym>();
        (a, vec![p])
    }
}

macro_rules! map_inputs {
    ($($A:ident $a:ident $i:tt),+) => {
        impl<$($A: Item),+> MapInputs for ($(&Seq<$A>,)+) {
            type Args = ($($A::Sym,)+);
            #[track_caller]
            fn nodes(&self) -> Vec<Rc<Node>> {
                vec![$(self.$i.node.clone()),+]
            }
            #[track_caller]
            fn params() -> (Self::Args, Vec<Rc<Node>>) {
                $(let $a = param::<$A::Sym>();)+
                (($($a.0,)+), vec![$($a.1),+])
            }
        }
    };
}
map_inputs!(A a 0);
map_inputs!(A a 0, B b 1);
map_inputs!(A a 0, B b 1, C c 2);
map_inputs!(A a 0, B b 1, C c 2, D d 3);

#[track_caller]
pub(crate) fn trace_map<I: MapInputs, R: Traced>(
    f: impl FnOnce(I::Args) -> R,
) -> Result<(TracedLambda, R::Sym)> {
    let (args, params) = I::params();
    let out = f(args).into_sym()?;
    Ok((
        TracedLambda {
            params,
            body: out.to_node(),
        },
        out,
    ))
}

/// A binary operator for `reduce`, `reduce_by_key` and `scan`: a closure `|a, b| ...` or one of
/// the built-ins [`add`](crate::add), [`mul`](crate::mul), [`min`](crate::min), [`max`](crate::max).
pub trait Combiner<S: Sym> {
    #[doc(hidden)]
    #[track_caller]
    fn trace(self) -> Result<TracedLambdaPub>;
}

/// Opaque traced lambda (public only so [`Combiner`] can name it).
#[doc(hidden)]
pub struct TracedLambdaPub(pub(crate) TracedLambda);

impl std::fmt::Debug for TracedLambdaPub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "lambda({:?}) -> {}",
            self.0.params.iter().map(|p| p.id).collect::<Vec<NodeId>>(),
            self.0.body.id
        )
    }
}

impl<S: Sym, R: Traced<Sym = S>, F: FnOnce(S, S) -> R> Combiner<S> for F {
    #[track_caller]
    fn trace(self) -> Result<TracedLambdaPub> {
        let (a, pa) = param::<S>();
        let (b, pb) = param::<S>();
        let body = self(a, b).into_sym()?.to_node();
        Ok(TracedLambdaPub(TracedLambda {
            params: vec![pa, pb],
            body,
        }))
    }
}

/// Built-in `+` for reductions and scans: `reduce(add, &s)`.
pub fn add<T: Numeric>(a: Scalar<T>, b: Scalar<T>) -> Scalar<T> {
    a + b
}

/// Built-in `*` for reductions and scans.
pub fn mul<T: Numeric>(a: Scalar<T>, b: Scalar<T>) -> Scalar<T> {
    a * b
}

/// Built-in minimum for reductions and scans.
pub fn min<T: Numeric>(a: Scalar<T>, b: Scalar<T>) -> Scalar<T> {
    a.min(b)
}

/// Built-in maximum for reductions and scans.
pub fn max<T: Numeric>(a: Scalar<T>, b: Scalar<T>) -> Scalar<T> {
    a.max(b)
}

/// A prefix (initial value) for `reduce`, `reduce_by_key` and `scan`: a symbolic value or a plain
/// number.
pub trait IntoSym<S> {
    #[track_caller]
    fn into_sym(self) -> S;
}
impl<S: Sym> IntoSym<S> for S {
    #[track_caller]
    fn into_sym(self) -> S {
        self
    }
}
impl<S: Sym> IntoSym<S> for &S {
    #[track_caller]
    fn into_sym(self) -> S {
        self.clone()
    }
}
impl<T: super::handles::Element> IntoSym<Scalar<T>> for T {
    #[track_caller]
    fn into_sym(self) -> Scalar<T> {
        Scalar::constant(self)
    }
}
