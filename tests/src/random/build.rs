//! Lowering a [`Program`] to IR the way the DSEL's `Computation::new` does, so that the printed
//! DSEL source builds the same IR: nodes in post-order of their references (operands, then a
//! lambda's parameters and body), scalar operations inlined into one expression tree per
//! `scalar` node, one `input` node per buffer, a tuple-valued result (a lambda's, a prefix, a
//! `replicate` value, the root) re-tupled from its fields, and every node typed by the IR's own
//! inference as it is added.

use super::program::{Expr, Lam, Program};
use std::collections::HashMap;
use surge_codegen::ir::{
    self, Computation, InputDecl, IrError, Lambda, Node, NodeId, Op, ScalarExpr, Type, ValueInfo,
};

/// The IR of `p`, or the typing error of its first ill-typed node (the generator then discards
/// the program).
pub fn lower(p: &Program) -> Result<Computation, IrError> {
    let mut b = Builder {
        p,
        c: Computation {
            inputs: p
                .inputs
                .iter()
                .enumerate()
                .map(|(k, buf)| InputDecl {
                    name: format!("in{k}"),
                    elem: buf.elem(),
                    len: buf.len() as u64,
                })
                .collect(),
            nodes: vec![],
            root: NodeId(0),
        },
        infos: vec![],
        inputs: HashMap::new(),
        vars: HashMap::new(),
    };
    let root = b.value(&p.root)?;
    b.c.root = root;
    Ok(b.c)
}

struct Builder<'p> {
    p: &'p Program,
    c: Computation,
    infos: Vec<ValueInfo>,
    inputs: HashMap<usize, NodeId>,
    vars: HashMap<u32, NodeId>,
}

impl Builder<'_> {
    fn push(&mut self, op: Op, info: ValueInfo) -> NodeId {
        self.c.nodes.push(Node::new(op, info.ty.clone()));
        self.infos.push(info);
        NodeId(self.c.nodes.len() as u64 - 1)
    }

    fn op(&mut self, op: Op) -> Result<NodeId, IrError> {
        let n = NodeId(self.c.nodes.len() as u64);
        let info = ir::infer(&op, &|r| &self.infos[r.0 as usize]).map_err(|e| e.at(n))?;
        Ok(self.push(op, info))
    }

    fn scalar(&mut self, expr: ScalarExpr) -> Result<NodeId, IrError> {
        self.op(Op::Scalar { expr })
    }

    fn lambda(&mut self, l: &Lam) -> Result<Lambda, IrError> {
        let mut saved = Vec::new();
        let mut params = Vec::new();
        for p in &l.params {
            let n = self.push(Op::Param, ValueInfo::of_type(p.ty.clone()));
            saved.push((p.id, self.vars.insert(p.id, n)));
            params.push(n);
        }
        let body = self.value(&l.body);
        for (id, old) in saved.into_iter().rev() {
            match old {
                Some(o) => self.vars.insert(id, o),
                None => self.vars.remove(&id),
            };
        }
        Ok(Lambda {
            params,
            body: body?,
        })
    }

    fn opt(&mut self, e: &Option<Box<Expr>>) -> Result<Option<NodeId>, IrError> {
        e.as_ref().map(|e| self.value(e)).transpose()
    }

    /// `e` where the DSEL turns a symbolic value into a node (`Sym::to_node`): a tuple-typed
    /// value that is not a tuple expression is re-tupled from its fields.
    fn value(&mut self, e: &Expr) -> Result<NodeId, IrError> {
        let n = self.expr(e)?;
        match (e, super::types::type_of(e, &self.p.inputs)) {
            (Expr::Tuple(_), _) => Ok(n),
            (_, Type::Tuple(ts)) => {
                let items = (0..ts.len())
                    .map(|index| self.op(Op::Project { tuple: n, index }))
                    .collect::<Result<_, _>>()?;
                self.op(Op::Tuple { items })
            }
            _ => Ok(n),
        }
    }

    /// A scalar operation as an expression tree: nested operations and literals inlined, other
    /// operands (parameters, reductions, `at`, `len`) as node leaves.
    fn tree(&mut self, e: &Expr) -> Result<ScalarExpr, IrError> {
        let mut t = |e: &Expr| self.tree(e).map(Box::new);
        Ok(match e {
            Expr::Lit(l) => ScalarExpr::Const(*l),
            Expr::Un(op, a) => ScalarExpr::Unary(*op, t(a)?),
            Expr::Bin(op, a, b) => ScalarExpr::Binary(*op, t(a)?, t(b)?),
            Expr::Fma(a, b, c) => ScalarExpr::Fma(t(a)?, t(b)?, t(c)?),
            Expr::Select(c, a, b) => ScalarExpr::Select(t(c)?, t(a)?, t(b)?),
            Expr::Cast(to, a) => ScalarExpr::Cast(*to, t(a)?),
            other => ScalarExpr::Value(self.expr(other)?),
        })
    }

    fn all(&mut self, es: &[Expr]) -> Result<Vec<NodeId>, IrError> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn expr(&mut self, e: &Expr) -> Result<NodeId, IrError> {
        Ok(match e {
            Expr::Input(k) => match self.inputs.get(k) {
                Some(n) => *n,
                None => {
                    let d = &self.c.inputs[*k];
                    let info = ValueInfo::input(d.elem, d.len);
                    let n = self.push(Op::Input { buffer: *k }, info);
                    self.inputs.insert(*k, n);
                    n
                }
            },
            Expr::Var(x) => *self
                .vars
                .get(&x.id)
                .unwrap_or_else(|| panic!("internal: variable v{} is not bound", x.id)),
            Expr::Lit(_)
            | Expr::Un(..)
            | Expr::Bin(..)
            | Expr::Fma(..)
            | Expr::Select(..)
            | Expr::Cast(..) => {
                let expr = self.tree(e)?;
                self.scalar(expr)?
            }
            Expr::Tuple(items) => {
                let items = items
                    .iter()
                    .map(|i| self.value(i))
                    .collect::<Result<_, _>>()?;
                self.op(Op::Tuple { items })?
            }
            Expr::Proj(t, index) => {
                let tuple = self.expr(t)?;
                self.op(Op::Project {
                    tuple,
                    index: *index,
                })?
            }
            Expr::Index(s, i) => {
                let (seq, index) = (self.expr(s)?, self.expr(i)?);
                self.op(Op::Index { seq, index })?
            }
            Expr::Length(s) => {
                let seq = self.expr(s)?;
                self.op(Op::Length { seq })?
            }
            Expr::Map(f, inputs) => {
                let inputs = self.all(inputs)?;
                let f = self.lambda(f)?;
                self.op(Op::Map { f, inputs })?
            }
            Expr::Reduce(l, s, p) | Expr::Scan(l, s, p) => {
                let input = self.expr(s)?;
                let prefix = self.opt(p)?;
                let op = self.lambda(l)?;
                self.op(match e {
                    Expr::Reduce(..) => Op::Reduce { op, input, prefix },
                    _ => Op::Scan { op, input, prefix },
                })?
            }
            Expr::ReduceByKey(l, s, k, p) => {
                let (input, keys, prefix) = (self.expr(s)?, self.expr(k)?, self.value(p)?);
                let op = self.lambda(l)?;
                self.op(Op::ReduceByKey {
                    op,
                    input,
                    keys,
                    prefix,
                })?
            }
            Expr::Gather(s, i) => {
                let (source, indices) = (self.expr(s)?, self.expr(i)?);
                self.op(Op::Gather { source, indices })?
            }
            Expr::Scatter(s, i, d) => {
                let (source, indices, dest) = (self.expr(s)?, self.expr(i)?, self.expr(d)?);
                self.op(Op::Scatter {
                    source,
                    indices,
                    dest,
                })?
            }
            Expr::Range(a, b, s) => {
                let (start, end) = (self.expr(a)?, self.expr(b)?);
                let stride = self.opt(s)?;
                self.op(Op::Range { start, end, stride })?
            }
            Expr::Replicate(x, n) => {
                let (value, len) = (self.value(x)?, self.expr(n)?);
                self.op(Op::Replicate { value, len })?
            }
            Expr::Zip(items) => {
                let inputs = self.all(items)?;
                self.op(Op::Zip { inputs })?
            }
            Expr::Join(items) => {
                let inputs = self.all(items)?;
                self.op(Op::Join { inputs })?
            }
            Expr::Split(s, t) => {
                let (input, tile) = (self.expr(s)?, self.expr(t)?);
                self.op(Op::Split { input, tile })?
            }
            Expr::Striding(s, t) => {
                let (input, stride) = (self.expr(s)?, self.expr(t)?);
                self.op(Op::Striding { input, stride })?
            }
            Expr::Reverse(s) => {
                let input = self.expr(s)?;
                self.op(Op::Reverse { input })?
            }
            Expr::Nest(s, o) => {
                let (input, offsets) = (self.expr(s)?, self.expr(o)?);
                self.op(Op::Nest { input, offsets })?
            }
            Expr::Transpose(s) => {
                let input = self.expr(s)?;
                self.op(Op::Transpose { input })?
            }
        })
    }
}
