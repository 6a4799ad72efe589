//! Lowering a [`Program`] to IR the way the DSEL does: one node per operator and per scalar
//! operation (literals are their own `scalar` nodes), one `input` node per buffer, tuple results
//! as `tuple` nodes, and every node typed by the IR's own inference as it is added.

use super::program::{Expr, Lam, Program};
use std::collections::HashMap;
use surge_codegen::ir::{
    self, Computation, InputDecl, IrError, Lambda, Node, NodeId, Op, ScalarExpr, ValueInfo,
};

/// The IR of `p`, or the typing error of its first ill-typed node (the generator then discards
/// the program).
pub fn lower(p: &Program) -> Result<Computation, IrError> {
    let mut b = Builder {
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
    let root = b.expr(&p.root)?;
    b.c.root = root;
    Ok(b.c)
}

struct Builder {
    c: Computation,
    infos: Vec<ValueInfo>,
    inputs: HashMap<usize, NodeId>,
    vars: HashMap<u32, NodeId>,
}

fn v(n: NodeId) -> Box<ScalarExpr> {
    Box::new(ScalarExpr::Value(n))
}

impl Builder {
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
        let body = self.expr(&l.body);
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
        e.as_ref().map(|e| self.expr(e)).transpose()
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
            Expr::Lit(l) => self.scalar(ScalarExpr::Const(*l))?,
            Expr::Un(op, a) => {
                let a = self.expr(a)?;
                self.scalar(ScalarExpr::Unary(*op, v(a)))?
            }
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.scalar(ScalarExpr::Binary(*op, v(a), v(b)))?
            }
            Expr::Fma(a, b, c) => {
                let (a, b, c) = (self.expr(a)?, self.expr(b)?, self.expr(c)?);
                self.scalar(ScalarExpr::Fma(v(a), v(b), v(c)))?
            }
            Expr::Select(c, a, b) => {
                let (c, a, b) = (self.expr(c)?, self.expr(a)?, self.expr(b)?);
                self.scalar(ScalarExpr::Select(v(c), v(a), v(b)))?
            }
            Expr::Cast(to, a) => {
                let a = self.expr(a)?;
                self.scalar(ScalarExpr::Cast(*to, v(a)))?
            }
            Expr::Tuple(items) => {
                let items = self.all(items)?;
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
                let (input, keys, prefix) = (self.expr(s)?, self.expr(k)?, self.expr(p)?);
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
                let (value, len) = (self.expr(x)?, self.expr(n)?);
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
