//! The reference interpreter: evaluates any valid IR computation sequentially, in plain Rust.
//!
//! It is the correctness oracle for every backend, so it favours obviousness over speed: every
//! sequence is materialized, every lambda call binds its parameters and re-evaluates its body.
//! Values that depend on no lambda parameter are computed once and cached; values inside a lambda
//! are recomputed on each call (the cache entries of the lambda's region are dropped on entry).
//! Each operator's semantics is its family's `eval` in `ir/ops/`; this file is the engine.

use super::ops::{self, Eval, Failure, arith as scalar};
use super::value::Value;
use super::{Computation, Lambda, NodeId, Op, ScalarExpr};
use crate::CodegenError;
use crate::data::{Buffer, ScalarValue};
use std::collections::HashMap;
use std::rc::Rc;

/// Evaluates `c` on the bound input `buffers` and returns the root's value.
pub fn interpret(c: &Computation, buffers: &[Buffer]) -> Result<Value, CodegenError> {
    c.validate()?;
    super::check_buffers(c, buffers)?;
    let mut it = Interp {
        c,
        buffers,
        cache: vec![None; c.nodes.len()],
        region: regions(c),
    };
    // Every data-parallel operator that depends on no lambda parameter is evaluated once, up
    // front, whether or not the result reads its value (an untaken `select` branch, a `map` over
    // no elements): the backends compute such values as phases of their own, so an error in one
    // is an error of the program everywhere (README, "Semantics worth knowing"). Operands come
    // before their users in node order.
    let free = c.free_params();
    for (i, n) in c.nodes.iter().enumerate() {
        if free[i].is_empty() && n.op.kind().is_data_parallel() {
            it.value(NodeId(i as u64))?;
        }
    }
    let v = it.value(c.root)?;
    Ok(Rc::try_unwrap(v).unwrap_or_else(|rc| (*rc).clone()))
}

/// For each lambda-owning node, the nodes whose values depend on its parameters (recomputed on
/// every call).
fn regions(c: &Computation) -> HashMap<NodeId, Vec<NodeId>> {
    let free = c.free_params();
    let mut owner: HashMap<NodeId, NodeId> = HashMap::new();
    for (i, n) in c.nodes.iter().enumerate() {
        for l in n.op.lambdas() {
            for p in &l.params {
                owner.insert(*p, NodeId(i as u64));
            }
        }
    }
    let mut region: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for (i, fr) in free.iter().enumerate() {
        let mut owners: Vec<NodeId> = fr.iter().map(|p| owner[p]).collect();
        owners.dedup();
        for o in owners {
            if !matches!(c.nodes[i].op, Op::Param) {
                region.entry(o).or_default().push(NodeId(i as u64));
            }
        }
    }
    region
}

struct Interp<'a> {
    c: &'a Computation,
    buffers: &'a [Buffer],
    cache: Vec<Option<Rc<Value>>>,
    region: HashMap<NodeId, Vec<NodeId>>,
}

impl Interp<'_> {
    /// A failure of node `n` as the crate's error.
    fn fail(&self, n: NodeId, f: Failure) -> CodegenError {
        match f {
            Failure::Here(message) => CodegenError::Eval {
                op: self.c.node(n).op.kind().name(),
                node: n,
                loc: self.c.loc(n),
                message,
            },
            Failure::Operand(e) => e,
        }
    }

    fn compute(&mut self, n: NodeId) -> Result<Value, CodegenError> {
        let c = self.c;
        match &c.node(n).op {
            Op::Input { buffer } => Ok(Value::from_buffer(&self.buffers[*buffer])),
            Op::Param => panic!("internal: parameter {n} read outside its lambda"),
            op => ops::eval(self, n, op).map_err(|f| self.fail(n, f)),
        }
    }
}

impl Eval for Interp<'_> {
    fn value(&mut self, n: NodeId) -> Result<Rc<Value>, CodegenError> {
        if let Some(v) = &self.cache[n.0 as usize] {
            return Ok(v.clone());
        }
        let v = Rc::new(self.compute(n)?);
        self.cache[n.0 as usize] = Some(v.clone());
        Ok(v)
    }

    fn scalar(&mut self, e: &ScalarExpr) -> Result<ScalarValue, Failure> {
        Ok(match e {
            ScalarExpr::Const(l) => (*l).into(),
            ScalarExpr::Value(n) => self
                .value(*n)?
                .as_scalar()
                .unwrap_or_else(|| panic!("internal: validated scalar leaf {n} is not a scalar")),
            ScalarExpr::Unary(op, a) => {
                let a = self.scalar(a)?;
                scalar::unary(*op, a)?
            }
            ScalarExpr::Binary(op, a, b) => {
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                scalar::binary(*op, a, b)?
            }
            ScalarExpr::Fma(a, b, c) => {
                let (a, b, c) = (self.scalar(a)?, self.scalar(b)?, self.scalar(c)?);
                scalar::fma(a, b, c)?
            }
            ScalarExpr::Select(c, a, b) => match self.scalar(c)? {
                ScalarValue::Bool(true) => self.scalar(a)?,
                ScalarValue::Bool(false) => self.scalar(b)?,
                other => return Err(format!("select condition is {}", other.elem()).into()),
            },
            ScalarExpr::Cast(to, a) => {
                let a = self.scalar(a)?;
                scalar::cast(*to, a)?
            }
        })
    }

    fn call(&mut self, owner: NodeId, l: &Lambda, args: Vec<Value>) -> Result<Value, Failure> {
        if let Some(r) = self.region.get(&owner) {
            for n in r {
                self.cache[n.0 as usize] = None;
            }
        }
        for (p, a) in l.params.iter().zip(args) {
            self.cache[p.0 as usize] = Some(Rc::new(a));
        }
        Ok((*self.value(l.body)?).clone())
    }
}
