//! The Surge IR: plain data describing one computation.
//!
//! A [`Computation`] is a list of [`Node`]s in topological order (operands before users), the
//! input buffers it reads ([`InputDecl`]), and the root node whose value is the result. Lambdas
//! passed to operators are traced into the same list: their parameters are [`Op::Param`] nodes and
//! their bodies ordinary nodes, so nesting (a `reduce` inside the function of a `map`) is explicit.
//! Scalar lambda bodies are [`ScalarExpr`] trees.
//!
//! Each operator's typing rule, run-time checks and reference semantics sit together in its
//! family's file under `ops/`; [`interpret`] (the correctness oracle) is the engine that runs
//! those semantics over a whole computation.

mod anchor;
pub mod data;
mod infer;
pub mod interpret;
mod literals;
mod loc;
mod op;
mod ops;
mod scalar;
#[cfg(test)]
pub(crate) mod testing;
mod types;
mod validate;
mod value;

pub use anchor::anchored;
pub use infer::{Typing, ValueInfo, lengths_differ, range_len};
pub use interpret::interpret;
pub use literals::{
    LiteralCursor, LiteralTable, RuntimeLiteral, for_each_runtime_literal, is_runtime,
    literal_bits, literal_values, literals, structure, structure_difference,
};
pub use loc::{SourceLoc, site};
pub use op::{Family, Lambda, Node, NodeId, Op, OpInfo, OpKind, Strongest};
pub use ops::{check_offsets, infer, out_of_range};
pub use scalar::{BinaryOp, Literal, ScalarExpr, UnaryOp, infer_scalar};
pub use types::{Elem, Type};
pub use value::Value;

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// An input buffer of a computation: a flat sequence of `len` elements of type `elem`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InputDecl {
    pub name: String,
    pub elem: Elem,
    pub len: u64,
}

/// A validation failure: the operator at fault, where the user built it and the node when
/// known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", site(.op, .loc.as_ref(), *.node))]
pub struct IrError {
    pub op: &'static str,
    pub node: Option<NodeId>,
    pub loc: Option<SourceLoc>,
    pub message: String,
}

impl IrError {
    pub fn new(op: &'static str, message: impl Into<String>) -> Self {
        IrError {
            op,
            node: None,
            loc: None,
            message: message.into(),
        }
    }
    pub fn at(mut self, node: NodeId) -> Self {
        self.node = Some(node);
        self
    }
    /// Names the user's line, unless a location is already known.
    pub fn located(mut self, loc: Option<SourceLoc>) -> Self {
        self.loc = self.loc.or(loc);
        self
    }
    /// [`at`](Self::at) node `n` of `c`, with its location.
    pub fn in_computation(self, c: &Computation, n: NodeId) -> Self {
        self.at(n).located(c.loc(n))
    }
}

/// One nested data-parallel computation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Computation {
    pub inputs: Vec<InputDecl>,
    pub nodes: Vec<Node>,
    pub root: NodeId,
}

impl Computation {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    pub fn root_node(&self) -> &Node {
        self.node(self.root)
    }

    /// A hash of the whole IR, stable across runs, platforms and compiler versions (FNV-1a over
    /// the canonical JSON form). It keys every cache.
    /// Source locations are left out: moving a line of the program keeps the hash.
    pub fn stable_hash(&self) -> u128 {
        fnv1a128(&serde_json::to_vec(&self.without_locs()).expect("IR serializes"))
    }

    /// The hash of the computation's [`structure`]: like [`stable_hash`](Self::stable_hash)
    /// but ignoring input lengths and integer literal values (sizes are kernel arguments), so the
    /// same program on inputs of other sizes has the same structure hash and reuses its kernels.
    pub fn structure_hash(&self) -> u128 {
        fnv1a128(&serde_json::to_vec(&structure(&self.without_locs())).expect("IR serializes"))
    }

    /// For each node, the lambda parameters it depends on that are not bound inside it.
    /// Assumes a valid computation.
    pub fn free_params(&self) -> Vec<BTreeSet<NodeId>> {
        let mut free: Vec<BTreeSet<NodeId>> = Vec::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            let mut fr = BTreeSet::new();
            if matches!(node.op, Op::Param) {
                fr.insert(NodeId(i as u64));
            }
            for r in node.op.operands() {
                fr.extend(free[r.0 as usize].iter().copied());
            }
            for l in node.op.lambdas() {
                fr.extend(
                    free[l.body.0 as usize]
                        .iter()
                        .copied()
                        .filter(|x| !l.params.contains(x)),
                );
            }
            free.push(fr);
        }
        free
    }

    /// The ids of nodes reachable from `from` through operands, lambda parameters and bodies.
    pub fn reachable(&self, from: NodeId) -> BTreeSet<NodeId> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                stack.extend(self.node(n).op.references());
            }
        }
        seen
    }
}

/// Checks that bound buffers match the declared inputs.
pub fn check_buffers(
    c: &Computation,
    buffers: &[crate::data::Buffer],
) -> Result<(), crate::CodegenError> {
    if buffers.len() != c.inputs.len() {
        return Err(crate::CodegenError::Input {
            input: "(all)".into(),
            message: format!(
                "{} buffers bound to {} declared inputs",
                buffers.len(),
                c.inputs.len()
            ),
        });
    }
    for (d, b) in c.inputs.iter().zip(buffers) {
        if d.elem != b.elem() || d.len != b.len() as u64 {
            return Err(crate::CodegenError::Input {
                input: d.name.clone(),
                message: format!(
                    "declared {} elements of {}, bound {} elements of {}",
                    d.len,
                    d.elem,
                    b.len(),
                    b.elem()
                ),
            });
        }
    }
    Ok(())
}

/// 128-bit FNV-1a.
pub fn fnv1a128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ *b as u128).wrapping_mul(PRIME))
}

impl fmt::Display for Computation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.inputs.iter().enumerate() {
            writeln!(f, "input {i}: {}: seq<{}> (len {})", d.name, d.elem, d.len)?;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let id = NodeId(i as u64);
            write!(f, "{id}: {} = ", node.ty)?;
            match &node.op {
                Op::Input { buffer } => write!(
                    f,
                    "input {}",
                    self.inputs.get(*buffer).map_or("?", |d| &d.name)
                )?,
                Op::Param => write!(f, "param")?,
                Op::Scalar { expr } => write!(f, "{expr}")?,
                Op::Project { tuple, index } => write!(f, "{tuple}.{index}")?,
                op => {
                    write!(f, "{}(", op.kind())?;
                    for (k, r) in op.operands().iter().enumerate() {
                        if k > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{r}")?;
                    }
                    write!(f, ")")?;
                    for l in op.lambdas() {
                        write!(f, " |")?;
                        for (k, p) in l.params.iter().enumerate() {
                            if k > 0 {
                                write!(f, ", ")?;
                            }
                            write!(f, "{p}")?;
                        }
                        write!(f, "| -> {}", l.body)?;
                    }
                }
            }
            if id == self.root {
                write!(f, "  (root)")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
