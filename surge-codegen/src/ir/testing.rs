//! A computation builder for unit tests: nodes are typed by the IR's own inference as they are
//! added, so tests state only operators and operands.

use crate::CodegenError;
use crate::data::Buffer;
use crate::ir::{
    BinaryOp, Computation, Elem, InputDecl, Lambda, Literal, Node, NodeId, Op, ScalarExpr, Type,
    Value, ValueInfo, interpret,
};

/// A computation under construction: nodes are typed by the IR's own inference as they are added.
#[derive(Default)]
pub(crate) struct B {
    pub c: Computation,
    pub bufs: Vec<Buffer>,
}

impl Default for Computation {
    fn default() -> Self {
        Computation {
            inputs: vec![],
            nodes: vec![],
            root: NodeId(0),
        }
    }
}

impl B {
    pub fn input(&mut self, name: &str, b: Buffer) -> NodeId {
        let buffer = self.c.inputs.len();
        self.c.inputs.push(InputDecl {
            name: name.into(),
            elem: b.elem(),
            len: b.len() as u64,
        });
        self.bufs.push(b);
        self.raw(
            Op::Input { buffer },
            Type::scalar_seq(self.c.inputs[buffer].elem),
        )
    }
    pub fn raw(&mut self, op: Op, ty: Type) -> NodeId {
        self.c.nodes.push(Node::new(op, ty));
        NodeId(self.c.nodes.len() as u64 - 1)
    }
    /// Adds `op`, typed by inference (panics with the typing error: use `typing_error` to see it).
    pub fn op(&mut self, op: Op) -> NodeId {
        let ty = self.infer(&op).unwrap_or_else(|e| panic!("{e}"));
        self.raw(op, ty)
    }
    pub fn infer(&self, op: &Op) -> Result<Type, crate::ir::IrError> {
        let mut infos: Vec<ValueInfo> = vec![];
        for n in &self.c.nodes {
            let info = match &n.op {
                Op::Input { buffer } => {
                    ValueInfo::input(self.c.inputs[*buffer].elem, self.c.inputs[*buffer].len)
                }
                Op::Param => ValueInfo::of_type(n.ty.clone()),
                op => crate::ir::infer(op, &|r| &infos[r.0 as usize])?,
            };
            infos.push(info);
        }
        crate::ir::infer(op, &|n| &infos[n.0 as usize]).map(|i| i.ty)
    }
    pub fn typing_error(&self, op: Op) -> String {
        self.infer(&op).unwrap_err().to_string()
    }
    pub fn konst(&mut self, l: Literal) -> NodeId {
        self.op(Op::Scalar {
            expr: ScalarExpr::Const(l),
        })
    }
    pub fn param(&mut self, ty: Type) -> NodeId {
        self.raw(Op::Param, ty)
    }
    /// `|a, b| a OP b` over element type `e`.
    pub fn binop(&mut self, op: BinaryOp, e: Elem) -> Lambda {
        let (a, b) = (self.param(Type::Scalar(e)), self.param(Type::Scalar(e)));
        let expr = ScalarExpr::Binary(
            op,
            Box::new(ScalarExpr::Value(a)),
            Box::new(ScalarExpr::Value(b)),
        );
        let body = self.op(Op::Scalar { expr });
        Lambda {
            params: vec![a, b],
            body,
        }
    }
    /// `map(|row| reduce(+, row), split(x, tile))` over `len` ones: per-tile sums.
    pub fn tiled_sum(len: usize, tile: u64) -> Computation {
        let mut b = B::default();
        let x = b.input("x", Buffer::F64(vec![1.0; len]));
        let t = b.konst(Literal::U64(tile));
        let rows = b.op(Op::Split { input: x, tile: t });
        let row = b.param(Type::scalar_seq(Elem::F64));
        let add = b.binop(BinaryOp::Add, Elem::F64);
        let sum = b.op(Op::Reduce {
            op: add,
            input: row,
            prefix: None,
        });
        let m = b.op(Op::Map {
            f: Lambda {
                params: vec![row],
                body: sum,
            },
            inputs: vec![rows],
        });
        b.with_root(m)
    }
    /// The computation with `root` as its result.
    pub fn with_root(mut self, root: NodeId) -> Computation {
        self.c.root = root;
        self.c
    }
    pub fn run(mut self, root: NodeId) -> Result<Value, CodegenError> {
        self.c.root = root;
        interpret(&self.c, &self.bufs)
    }
}
