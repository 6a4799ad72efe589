//! The data-parallel operators, one per file (the dissertation's Table 5.1 plus `transpose`).
//! Each builds a lazy node; the argument checks that can be made before running are made here.

mod gather;
mod index;
mod join;
mod map;
mod nest;
mod range;
mod reduce;
mod reduce_by_key;
mod replicate;
mod reverse;
mod scan;
mod scatter;
mod split;
mod striding;
mod transpose;
mod zip;

pub use gather::gather;
pub use index::{at, len};
pub use join::{join, join3};
pub use map::map;
pub use nest::nest;
pub use range::{range, range_step};
pub use reduce::{reduce, reduce_prefix};
pub use reduce_by_key::reduce_by_key;
pub use replicate::replicate;
pub use reverse::reverse;
pub use scan::{scan, scan_prefix};
pub use scatter::scatter;
pub use split::split;
pub use striding::striding;
pub use transpose::transpose;
pub use zip::{zip, zip3};

use super::handles::{Seq, Sym};
use super::node::Node;
use crate::Result;
use std::rc::Rc;
use surge_codegen::ir::Op;

/// Builds a `reduce` or `scan` node: traces the operator and keeps the input and prefix alive.
#[track_caller]
fn fold<T: super::Item, R: Sym>(
    op: impl super::Combiner<T::Sym>,
    s: &Seq<T>,
    prefix: Option<T::Sym>,
    make: impl FnOnce(
        surge_codegen::ir::Lambda,
        surge_codegen::ir::NodeId,
        Option<surge_codegen::ir::NodeId>,
    ) -> Op,
) -> Result<R> {
    let l = op.trace()?.0;
    let p = prefix.map(|p| p.to_node());
    let ir = make(l.ir(), s.id(), p.as_ref().map(|p| p.id));
    build(
        ir,
        std::iter::once(s.node.clone())
            .chain(p)
            .chain(l.deps())
            .collect(),
    )
}

#[track_caller]
fn build<S: Sym>(op: Op, deps: Vec<Rc<Node>>) -> Result<S> {
    Ok(S::from_node(Node::new(op, deps)?))
}

impl<T> Seq<T> {
    pub(crate) fn id(&self) -> surge_codegen::ir::NodeId {
        self.node.id
    }
}
