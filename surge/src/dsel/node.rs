//! Graph nodes behind the typed handles, and lowering to the IR.
//!
//! Each handle owns an `Rc<Node>`; a node holds its operator with *global* node ids and keeps its
//! dependencies alive. Type and shape inference runs when the node is created (the same
//! `surge_codegen::ir::infer` the validator uses), so a bad argument fails at the call that made it.
//! Lowering numbers the reachable nodes topologically and inlines each scalar node that is used
//! once into its user; a scalar used more than once stays a node that its users name.
//!
//! Every node records the `file:line:column` of the user's call that made it: the public DSEL
//! functions, operator impls and the helpers between them and [`Node::new`] are all
//! `#[track_caller]`, so `Location::caller()` here is the user's line. Lowering carries it into
//! the IR ([`ir::Node::loc`]), where errors read it.

use crate::{Result, SurgeError};
use std::collections::HashMap;
use std::panic::Location;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use surge_codegen::data::Buffer;
use surge_codegen::ir::{self, InputDecl, IrError, NodeId, Op, ScalarExpr, Type, ValueInfo, infer};

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Data bound to an input of a computation.
#[derive(Debug)]
pub struct InputData {
    pub(crate) name: String,
    pub(crate) buffer: Buffer,
}

/// A graph node behind a handle (opaque outside this crate).
#[derive(Debug)]
pub struct Node {
    pub(crate) id: NodeId,
    pub(crate) op: Op,
    pub(crate) info: ValueInfo,
    pub(crate) deps: Vec<Rc<Node>>,
    pub(crate) input: Option<Rc<InputData>>,
    /// The user's call that made this node.
    pub(crate) loc: &'static Location<'static>,
}

impl Node {
    /// A node whose info is inferred from its dependencies. A typing error names the caller's line.
    #[track_caller]
    pub(crate) fn new(op: Op, deps: Vec<Rc<Node>>) -> Result<Rc<Node>, IrError> {
        let loc = Location::caller();
        let info = {
            let lookup = |id: NodeId| -> &ValueInfo {
                &deps
                    .iter()
                    .find(|d| d.id == id)
                    .unwrap_or_else(|| panic!("internal: {id} missing from deps"))
                    .info
            };
            infer(&op, &lookup).map_err(|e| e.located(Some(loc.into())))?
        };
        Ok(Rc::new(Node {
            id: fresh_id(),
            op,
            info,
            deps,
            input: None,
            loc,
        }))
    }

    /// Like [`Node::new`] for arguments whose types the Rust type system already guarantees.
    #[track_caller]
    pub(crate) fn typed(op: Op, deps: Vec<Rc<Node>>) -> Rc<Node> {
        let kind = op.kind();
        Node::new(op, deps)
            .unwrap_or_else(|e| panic!("internal: statically typed `{kind}` failed inference: {e}"))
    }

    #[track_caller]
    pub(crate) fn param(ty: Type) -> Rc<Node> {
        Rc::new(Node {
            id: fresh_id(),
            op: Op::Param,
            info: ValueInfo::of_type(ty),
            deps: vec![],
            input: None,
            loc: Location::caller(),
        })
    }

    #[track_caller]
    pub(crate) fn input(name: String, buffer: Buffer) -> Rc<Node> {
        let info = ValueInfo::input(buffer.elem(), buffer.len() as u64);
        let data = Rc::new(InputData { name, buffer });
        Rc::new(Node {
            id: fresh_id(),
            op: Op::Input { buffer: 0 },
            info,
            deps: vec![],
            input: Some(data),
            loc: Location::caller(),
        })
    }

    pub(crate) fn ty(&self) -> &Type {
        &self.info.ty
    }
}

fn fresh_id() -> NodeId {
    NodeId(NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// Lowers the graph reachable from `root` to an IR computation and its bound buffers. A lambda
/// parameter that a closure let out of its lambda is an error naming both places.
#[track_caller]
pub(crate) fn lower(root: &Rc<Node>) -> Result<(ir::Computation, Vec<Buffer>)> {
    let caller = Location::caller();
    let all = collect(root);
    let inlined = inline_scalars(&all);
    let mut l = Lowering::default();
    // Post-order numbering over the references of the inlined operators.
    let mut work: Vec<(NodeId, bool)> = vec![(root.id, false)];
    while let Some((id, expanded)) = work.pop() {
        if l.local.contains_key(&id) {
            continue;
        }
        let node = &all[&id];
        let op = match &node.op {
            Op::Scalar { .. } => Op::Scalar {
                expr: inlined[&id].clone(),
            },
            op => op.clone(),
        };
        if expanded {
            l.push(node, op)?;
            continue;
        }
        work.push((id, true));
        let refs = op.references().into_iter().rev();
        work.extend(
            refs.filter(|r| !l.local.contains_key(r))
                .map(|r| (r, false)),
        );
    }
    let c = ir::Computation {
        inputs: l.inputs,
        nodes: l.nodes,
        root: l.local[&root.id],
    };
    // A result that is itself a parameter has no node to name: name the caller's line.
    c.check_scopes()
        .map_err(|e| e.located(Some(caller.into())))?;
    c.validate()
        .unwrap_or_else(|e| panic!("internal: lowering produced invalid IR: {e}\n{c}"));
    Ok((c, l.buffers))
}

/// Every node reachable from `root`, by global id.
fn collect(root: &Rc<Node>) -> HashMap<NodeId, Rc<Node>> {
    let mut all: HashMap<NodeId, Rc<Node>> = HashMap::new();
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if all.contains_key(&n.id) {
            continue;
        }
        stack.extend(n.deps.iter().cloned());
        all.insert(n.id, n);
    }
    all
}

/// Each scalar node's expression with every `Value` leaf naming another scalar node *used once*
/// replaced by that node's tree. A scalar node used twice or more (by several expressions, or
/// twice by one) stays a node of its own that its users name: inlining it would copy its tree into
/// each use, and a value reused at every step of a chain (`y = y·y − y`, CoMD's interpolation)
/// grows exponentially. The emitters bind such a node once (`emit/cpu/shared.rs`).
fn inline_scalars(all: &HashMap<NodeId, Rc<Node>>) -> HashMap<NodeId, ScalarExpr> {
    let uses = use_counts(all);
    let mut inlined: HashMap<NodeId, ScalarExpr> = HashMap::new();
    let mut scalar_ids: Vec<NodeId> = all
        .values()
        .filter(|n| matches!(n.op, Op::Scalar { .. }))
        .map(|n| n.id)
        .collect();
    scalar_ids.sort();
    for id in scalar_ids {
        // Global ids grow with creation time, so a scalar's operands were inlined before it.
        let Op::Scalar { expr } = &all[&id].op else {
            unreachable!()
        };
        let once = |n: &NodeId| uses.get(n) == Some(&1);
        inlined.insert(id, inline(expr, &inlined, &once));
    }
    inlined
}

/// How many times each node is referenced: once per `Value` leaf of a scalar expression, once
/// per operand, lambda parameter or body of any other operator.
fn use_counts(all: &HashMap<NodeId, Rc<Node>>) -> HashMap<NodeId, usize> {
    let mut uses: HashMap<NodeId, usize> = HashMap::new();
    for n in all.values() {
        match &n.op {
            Op::Scalar { expr } => expr.for_each_value(&mut |v| *uses.entry(v).or_default() += 1),
            op => {
                for r in op.references() {
                    *uses.entry(r).or_default() += 1;
                }
            }
        }
    }
    uses
}

/// The IR being built: nodes numbered so far (global id → local id) and the bound inputs.
#[derive(Default)]
struct Lowering {
    local: HashMap<NodeId, NodeId>,
    nodes: Vec<ir::Node>,
    inputs: Vec<InputDecl>,
    buffers: Vec<Buffer>,
    input_index: HashMap<*const InputData, usize>,
    names: HashMap<String, *const InputData>,
}

impl Lowering {
    /// Appends `node` (its operator `op`, operands already numbered) with its location.
    fn push(&mut self, node: &Node, mut op: Op) -> Result<()> {
        if let Some(data) = &node.input {
            op = Op::Input {
                buffer: self.bind(data)?,
            };
        }
        op.remap(&mut |r| self.local[&r]);
        self.local.insert(node.id, NodeId(self.nodes.len() as u64));
        self.nodes.push(ir::Node {
            op,
            ty: node.info.ty.clone(),
            loc: Some(node.loc.into()),
        });
        Ok(())
    }

    /// The input index of `data`, declaring it on first sight; two inputs with one name are an
    /// error.
    fn bind(&mut self, data: &Rc<InputData>) -> Result<usize> {
        let key = Rc::as_ptr(data);
        let next = self.input_index.len();
        let idx = *self.input_index.entry(key).or_insert(next);
        if idx == next {
            if let Some(other) = self.names.insert(data.name.clone(), key)
                && other != key
            {
                return Err(SurgeError::Input {
                    input: data.name.clone(),
                    message: "two different inputs of one computation have this name".into(),
                });
            }
            self.inputs.push(InputDecl {
                name: data.name.clone(),
                elem: data.buffer.elem(),
                len: data.buffer.len() as u64,
            });
            self.buffers.push(data.buffer.clone());
        }
        Ok(idx)
    }
}

fn inline(
    e: &ScalarExpr,
    done: &HashMap<NodeId, ScalarExpr>,
    once: &impl Fn(&NodeId) -> bool,
) -> ScalarExpr {
    let b = |x: &ScalarExpr| Box::new(inline(x, done, once));
    match e {
        ScalarExpr::Const(l) => ScalarExpr::Const(*l),
        ScalarExpr::Value(n) => match done.get(n) {
            Some(tree) if once(n) => tree.clone(),
            _ => ScalarExpr::Value(*n),
        },
        ScalarExpr::Unary(op, a) => ScalarExpr::Unary(*op, b(a)),
        ScalarExpr::Binary(op, x, y) => ScalarExpr::Binary(*op, b(x), b(y)),
        ScalarExpr::Fma(x, y, z) => ScalarExpr::Fma(b(x), b(y), b(z)),
        ScalarExpr::Select(x, y, z) => ScalarExpr::Select(b(x), b(y), b(z)),
        ScalarExpr::Cast(t, x) => ScalarExpr::Cast(*t, b(x)),
    }
}
