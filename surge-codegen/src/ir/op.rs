//! Operator nodes of the IR.

use super::{ScalarExpr, SourceLoc, Type};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Index of a node in [`Computation::nodes`](super::Computation::nodes). Operands always have
/// smaller ids than their users, so the node list is a topological order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u64);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// A traced function: its parameter nodes (each an [`Op::Param`]) and the node computing its result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Lambda {
    pub params: Vec<NodeId>,
    pub body: NodeId,
}

/// The operator of an IR node. Scalar operands (lengths, strides, prefixes) are nodes too.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Op {
    /// Input buffer `buffer` of the computation, a flat sequence.
    Input { buffer: usize },
    /// A lambda parameter; bound by exactly one [`Lambda`].
    Param,
    /// A scalar expression tree.
    Scalar { expr: ScalarExpr },
    /// A tuple of values.
    Tuple { items: Vec<NodeId> },
    /// Field `index` of a tuple.
    Project { tuple: NodeId, index: usize },
    /// `seq[index]`.
    Index { seq: NodeId, index: NodeId },
    /// The length of a sequence, as `u64`.
    Length { seq: NodeId },
    /// `(f(s1[0], .., sn[0]), f(s1[1], .., sn[1]), ..)`.
    Map { f: Lambda, inputs: Vec<NodeId> },
    /// `p ⊕ s[0] ⊕ s[1] ⊕ ..`; without a prefix `s[0] ⊕ s[1] ⊕ ..` (an empty input is then an error).
    Reduce {
        op: Lambda,
        input: NodeId,
        prefix: Option<NodeId>,
    },
    /// Segmented reduction: one `p ⊕ s[i] ⊕ ..` per run of equal consecutive keys.
    ReduceByKey {
        op: Lambda,
        input: NodeId,
        keys: NodeId,
        prefix: NodeId,
    },
    /// With prefix: `y[0] = p, y[i] = f(y[i-1], s[i-1])` (exclusive, same length as `s`).
    /// Without: `y[0] = s[0], y[i] = f(y[i-1], s[i])` (inclusive).
    Scan {
        op: Lambda,
        input: NodeId,
        prefix: Option<NodeId>,
    },
    /// `y[i] = s[idx[i]]`.
    Gather { source: NodeId, indices: NodeId },
    /// A copy of `dest` with `d[idx[i]] = s[i]`, applied in order of `i`.
    Scatter {
        source: NodeId,
        indices: NodeId,
        dest: NodeId,
    },
    /// `start, start + stride, ..` up to but excluding `end` (stride 1 when absent; a negative stride counts down).
    Range {
        start: NodeId,
        end: NodeId,
        stride: Option<NodeId>,
    },
    /// `len` copies of `value`.
    Replicate { value: NodeId, len: NodeId },
    /// `x[i] = (s1[i], .., sn[i])`.
    Zip { inputs: Vec<NodeId> },
    /// Tiles of `tile` consecutive elements; the last tile may be shorter.
    Split { input: NodeId, tile: NodeId },
    /// The Cartesian product `(x1, .., xn)` for `x1 ∈ s1, .., xn ∈ sn`, the last input varying fastest.
    Join { inputs: Vec<NodeId> },
    /// `s[0], s[stride], s[2 stride], ..`.
    Striding { input: NodeId, stride: NodeId },
    /// The reversed sequence.
    Reverse { input: NodeId },
    /// CSR-style nested sequence: row `i` is `s[off[i]..off[i+1]]`.
    Nest { input: NodeId, offsets: NodeId },
    /// The transpose of a uniformly nested sequence.
    Transpose { input: NodeId },
}

/// The operator of a node without its operands: what the schedule lookup table is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Input,
    Param,
    Scalar,
    Tuple,
    Project,
    Index,
    Length,
    Map,
    Reduce,
    ReduceByKey,
    Scan,
    Gather,
    Scatter,
    Range,
    Replicate,
    Zip,
    Split,
    Join,
    Striding,
    Reverse,
    Nest,
    Transpose,
}

/// The strongest schedule of an operator (the schedule lookup table, the dissertation's
/// Table 5.3), or `None` for the value operators, which have no schedule of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strongest {
    None,
    /// One independent level (`map`, `gather`, ...).
    Independent,
    /// Two independent levels: the operator yields a nested sequence (`split`, `nest`, ...).
    Nested,
    /// One cooperative level (`reduce`, `reduce_by_key`, `scan`).
    Cooperative,
}

/// Everything Surge knows about an operator without its operands: one row per operator in
/// [`OpKind::info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpInfo {
    pub name: &'static str,
    /// The family whose file (`ir/ops/<family>.rs`) holds its typing rule, checks and semantics.
    pub family: Family,
    /// Whether each element can be produced without looking at other elements, so the operator
    /// fuses into its consumer instead of being materialized (dissertation Section 5.3.2).
    pub elementwise: bool,
    pub strongest: Strongest,
}

/// The family an operator's typing rule and reference semantics live in (`ir/ops/<family>.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `input`, `param`: leaves whose value the interpreter binds itself.
    Leaf,
    Values,
    Map,
    Fold,
    Indexing,
    Generate,
    Reshape,
}

impl OpKind {
    /// Every operator, in declaration order.
    pub const ALL: [OpKind; 22] = [
        OpKind::Input,
        OpKind::Param,
        OpKind::Scalar,
        OpKind::Tuple,
        OpKind::Project,
        OpKind::Index,
        OpKind::Length,
        OpKind::Map,
        OpKind::Reduce,
        OpKind::ReduceByKey,
        OpKind::Scan,
        OpKind::Gather,
        OpKind::Scatter,
        OpKind::Range,
        OpKind::Replicate,
        OpKind::Zip,
        OpKind::Split,
        OpKind::Join,
        OpKind::Striding,
        OpKind::Reverse,
        OpKind::Nest,
        OpKind::Transpose,
    ];

    /// The operator table: one row per operator.
    pub fn info(self) -> OpInfo {
        use Family as F;
        use Strongest as S;
        let (name, family, elementwise, strongest) = match self {
            OpKind::Input => ("input", F::Leaf, true, S::None),
            OpKind::Param => ("param", F::Leaf, true, S::None),
            OpKind::Scalar => ("scalar", F::Values, true, S::None),
            OpKind::Tuple => ("tuple", F::Values, true, S::None),
            OpKind::Project => ("project", F::Values, true, S::None),
            OpKind::Index => ("index", F::Indexing, true, S::None),
            OpKind::Length => ("length", F::Values, true, S::None),
            OpKind::Map => ("map", F::Map, true, S::Independent),
            OpKind::Reduce => ("reduce", F::Fold, false, S::Cooperative),
            OpKind::ReduceByKey => ("reduce_by_key", F::Fold, false, S::Cooperative),
            OpKind::Scan => ("scan", F::Fold, false, S::Cooperative),
            OpKind::Gather => ("gather", F::Indexing, true, S::Independent),
            OpKind::Scatter => ("scatter", F::Indexing, false, S::Independent),
            OpKind::Range => ("range", F::Generate, true, S::Independent),
            OpKind::Replicate => ("replicate", F::Generate, true, S::Independent),
            OpKind::Zip => ("zip", F::Reshape, true, S::Independent),
            OpKind::Split => ("split", F::Reshape, true, S::Nested),
            OpKind::Join => ("join", F::Reshape, true, S::Independent),
            OpKind::Striding => ("striding", F::Reshape, true, S::Independent),
            OpKind::Reverse => ("reverse", F::Reshape, true, S::Independent),
            OpKind::Nest => ("nest", F::Reshape, true, S::Nested),
            OpKind::Transpose => ("transpose", F::Reshape, true, S::Nested),
        };
        OpInfo {
            name,
            family,
            elementwise,
            strongest,
        }
    }

    /// The data-parallel operators of the DSEL (Table 5.1 plus `transpose`): those with a
    /// schedule of their own.
    pub fn data_parallel() -> impl Iterator<Item = OpKind> {
        Self::ALL.into_iter().filter(|k| k.is_data_parallel())
    }

    pub fn is_data_parallel(self) -> bool {
        self.info().strongest != Strongest::None
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The family whose file holds this operator's typing rule, checks and semantics.
    pub fn family(self) -> Family {
        self.info().family
    }

    /// See [`OpInfo::elementwise`].
    pub fn is_elementwise_producer(self) -> bool {
        self.info().elementwise
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Op {
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Input { .. } => OpKind::Input,
            Op::Param => OpKind::Param,
            Op::Scalar { .. } => OpKind::Scalar,
            Op::Tuple { .. } => OpKind::Tuple,
            Op::Project { .. } => OpKind::Project,
            Op::Index { .. } => OpKind::Index,
            Op::Length { .. } => OpKind::Length,
            Op::Map { .. } => OpKind::Map,
            Op::Reduce { .. } => OpKind::Reduce,
            Op::ReduceByKey { .. } => OpKind::ReduceByKey,
            Op::Scan { .. } => OpKind::Scan,
            Op::Gather { .. } => OpKind::Gather,
            Op::Scatter { .. } => OpKind::Scatter,
            Op::Range { .. } => OpKind::Range,
            Op::Replicate { .. } => OpKind::Replicate,
            Op::Zip { .. } => OpKind::Zip,
            Op::Split { .. } => OpKind::Split,
            Op::Join { .. } => OpKind::Join,
            Op::Striding { .. } => OpKind::Striding,
            Op::Reverse { .. } => OpKind::Reverse,
            Op::Nest { .. } => OpKind::Nest,
            Op::Transpose { .. } => OpKind::Transpose,
        }
    }

    /// The lambdas this operator applies.
    pub fn lambdas(&self) -> Vec<&Lambda> {
        match self {
            Op::Map { f, .. } => vec![f],
            Op::Reduce { op, .. } | Op::ReduceByKey { op, .. } | Op::Scan { op, .. } => vec![op],
            _ => vec![],
        }
    }

    /// The value operands (not lambda parameters or bodies), in a fixed order.
    pub fn operands(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.for_each_operand(|n| out.push(n));
        out
    }

    fn for_each_operand(&self, mut f: impl FnMut(NodeId)) {
        // Visiting a copy keeps one list of operand positions (`operands_mut`) for reading and
        // rewriting alike; this is not on a hot path (validation and lowering).
        self.clone().operands_mut(&mut |n| f(*n));
    }

    /// Visits every value operand in place, in the order [`operands`](Self::operands) lists them.
    fn operands_mut(&mut self, f: &mut impl FnMut(&mut NodeId)) {
        match self {
            Op::Input { .. } | Op::Param => {}
            Op::Scalar { expr } => expr.values_mut(f),
            Op::Tuple { items: v }
            | Op::Zip { inputs: v }
            | Op::Join { inputs: v }
            | Op::Map { inputs: v, .. } => v.iter_mut().for_each(f),
            Op::Project { tuple: a, .. }
            | Op::Length { seq: a }
            | Op::Reverse { input: a }
            | Op::Transpose { input: a } => f(a),
            Op::Index { seq: a, index: b }
            | Op::Gather {
                source: a,
                indices: b,
            }
            | Op::Replicate { value: a, len: b }
            | Op::Split { input: a, tile: b }
            | Op::Striding {
                input: a,
                stride: b,
            }
            | Op::Nest {
                input: a,
                offsets: b,
            } => {
                f(a);
                f(b)
            }
            Op::Reduce { input, prefix, .. } | Op::Scan { input, prefix, .. } => {
                f(input);
                prefix.iter_mut().for_each(f)
            }
            Op::ReduceByKey {
                input,
                keys,
                prefix,
                ..
            } => {
                f(input);
                f(keys);
                f(prefix)
            }
            Op::Scatter {
                source,
                indices,
                dest,
            } => {
                f(source);
                f(indices);
                f(dest)
            }
            Op::Range { start, end, stride } => {
                f(start);
                f(end);
                stride.iter_mut().for_each(f)
            }
        }
    }

    /// Every node this node refers to: operands, lambda parameters and lambda bodies.
    pub fn references(&self) -> Vec<NodeId> {
        let mut out = self.operands();
        for l in self.lambdas() {
            out.extend(l.params.iter().copied());
            out.push(l.body);
        }
        out
    }

    /// Rewrites every node reference (operands, lambda parameters and bodies, scalar leaves).
    pub fn remap(&mut self, f: &mut impl FnMut(NodeId) -> NodeId) {
        match self {
            Op::Map { f: l, .. }
            | Op::Reduce { op: l, .. }
            | Op::ReduceByKey { op: l, .. }
            | Op::Scan { op: l, .. } => {
                l.params.iter_mut().for_each(|p| *p = f(*p));
                l.body = f(l.body);
            }
            _ => {}
        }
        self.operands_mut(&mut |n| *n = f(*n));
    }
}

/// One node: its operator, its type (checked by the validator) and, when it was traced from
/// user code, where ([`SourceLoc`]). Equality and hashing ignore the location: two programs that
/// differ only in where their lines are have the same structure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    #[serde(flatten)]
    pub op: Op,
    pub ty: Type,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<SourceLoc>,
}

impl Node {
    /// A node without a source location (IR built by hand).
    pub fn new(op: Op, ty: Type) -> Self {
        Node { op, ty, loc: None }
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.op == other.op && self.ty == other.ty
    }
}

impl Eq for Node {}

impl std::hash::Hash for Node {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.op.hash(state);
        self.ty.hash(state);
    }
}
