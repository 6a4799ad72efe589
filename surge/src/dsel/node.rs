//! Graph nodes behind the typed handles, and lowering to the IR.
//!
//! Each handle owns an `Rc<Node>`; a node holds its operator with *global* node ids and keeps its
//! dependencies alive. Type and shape inference runs when the node is created (the same
//! `surge_codegen::ir::infer` the validator uses), so a bad argument fails at the call that made it.
//! Lowering numbers the reachable nodes topologically and inlines chains of scalar nodes into one
//! expression tree per lambda body.

use crate::{Result, SurgeError};
use std::collections::HashMap;
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
}

impl Node {
    /// A node whose info is inferred from its dependencies.
    pub(crate) fn new(op: Op, deps: Vec<Rc<Node>>) -> Result<Rc<Node>, IrError> {
        let info = {
            let lookup = |id: NodeId| -> &ValueInfo {
                &deps
                    .iter()
                    .find(|d| d.id == id)
                    .unwrap_or_else(|| panic!("internal: {id} missing from deps"))
                    .info
            };
            infer(&op, &lookup)?
        };
        Ok(Rc::new(Node {
            id: fresh_id(),
            op,
            info,
            deps,
            input: None,
        }))
    }

    /// Like [`Node::new`] for arguments whose types the Rust type system already guarantees.
    pub(crate) fn typed(op: Op, deps: Vec<Rc<Node>>) -> Rc<Node> {
        let kind = op.kind();
        Node::new(op, deps)
            .unwrap_or_else(|e| panic!("internal: statically typed `{kind}` failed inference: {e}"))
    }

    pub(crate) fn param(ty: Type) -> Rc<Node> {
        Rc::new(Node {
            id: fresh_id(),
            op: Op::Param,
            info: ValueInfo::of_type(ty),
            deps: vec![],
            input: None,
        })
    }

    pub(crate) fn input(name: String, buffer: Buffer) -> Rc<Node> {
        let info = ValueInfo::input(buffer.elem(), buffer.len() as u64);
        let data = Rc::new(InputData { name, buffer });
        Rc::new(Node {
            id: fresh_id(),
            op: Op::Input { buffer: 0 },
            info,
            deps: vec![],
            input: Some(data),
        })
    }

    pub(crate) fn ty(&self) -> &Type {
        &self.info.ty
    }
}

fn fresh_id() -> NodeId {
    NodeId(NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// Lowers the graph reachable from `root` to an IR computation and its bound buffers.
pub(crate) fn lower(root: &Rc<Node>) -> Result<(ir::Computation, Vec<Buffer>)> {
    // Collect every node by global id.
    let mut all: HashMap<NodeId, Rc<Node>> = HashMap::new();
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if all.contains_key(&n.id) {
            continue;
        }
        stack.extend(n.deps.iter().cloned());
        all.insert(n.id, n);
    }
    // Inline scalar chains: a `Value` leaf naming another scalar node is replaced by its tree.
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
        inlined.insert(id, inline(expr, &inlined));
    }
    let op_of = |n: &Node| -> Op {
        match &n.op {
            Op::Scalar { .. } => Op::Scalar {
                expr: inlined[&n.id].clone(),
            },
            op => op.clone(),
        }
    };
    // Post-order numbering over the references of the inlined operators.
    let mut local: HashMap<NodeId, NodeId> = HashMap::new();
    let mut nodes: Vec<ir::Node> = Vec::new();
    let mut inputs: Vec<InputDecl> = Vec::new();
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut input_index: HashMap<*const InputData, usize> = HashMap::new();
    let mut names: HashMap<String, *const InputData> = HashMap::new();
    let mut work: Vec<(NodeId, bool)> = vec![(root.id, false)];
    while let Some((id, expanded)) = work.pop() {
        if local.contains_key(&id) {
            continue;
        }
        let node = &all[&id];
        let mut op = op_of(node);
        if !expanded {
            work.push((id, true));
            let mut refs = op.references();
            refs.reverse();
            work.extend(
                refs.into_iter()
                    .filter(|r| !local.contains_key(r))
                    .map(|r| (r, false)),
            );
            continue;
        }
        if let Some(data) = &node.input {
            let key = Rc::as_ptr(data);
            let next = input_index.len();
            let idx = *input_index.entry(key).or_insert(next);
            if idx == next {
                if let Some(other) = names.insert(data.name.clone(), key)
                    && other != key
                {
                    return Err(SurgeError::Input {
                        input: data.name.clone(),
                        message: "two different inputs of one computation have this name".into(),
                    });
                }
                inputs.push(InputDecl {
                    name: data.name.clone(),
                    elem: data.buffer.elem(),
                    len: data.buffer.len() as u64,
                });
                buffers.push(data.buffer.clone());
            }
            op = Op::Input { buffer: idx };
        }
        op.remap(&mut |r| local[&r]);
        local.insert(id, NodeId(nodes.len() as u64));
        nodes.push(ir::Node {
            op,
            ty: node.info.ty.clone(),
        });
    }
    let c = ir::Computation {
        inputs,
        nodes,
        root: local[&root.id],
    };
    c.validate()
        .unwrap_or_else(|e| panic!("internal: lowering produced invalid IR: {e}\n{c}"));
    Ok((c, buffers))
}

fn inline(e: &ScalarExpr, done: &HashMap<NodeId, ScalarExpr>) -> ScalarExpr {
    let b = |x: &ScalarExpr| Box::new(inline(x, done));
    match e {
        ScalarExpr::Const(l) => ScalarExpr::Const(*l),
        ScalarExpr::Value(n) => done.get(n).cloned().unwrap_or(ScalarExpr::Value(*n)),
        ScalarExpr::Unary(op, a) => ScalarExpr::Unary(*op, b(a)),
        ScalarExpr::Binary(op, x, y) => ScalarExpr::Binary(*op, b(x), b(y)),
        ScalarExpr::Fma(x, y, z) => ScalarExpr::Fma(b(x), b(y), b(z)),
        ScalarExpr::Select(x, y, z) => ScalarExpr::Select(b(x), b(y), b(z)),
        ScalarExpr::Cast(t, x) => ScalarExpr::Cast(*t, b(x)),
    }
}
