//! The operators, one file per family. Each family file holds, for its operators, the typing
//! rule (`infer`), the run-time checks with their messages, and the reference semantics (`eval`)
//! that the interpreter runs and every backend is checked against. The operator list itself
//! (operands, names, which family) is [`Op`]/[`OpKind`] in `op.rs`.
//!
//! | family | operators |
//! | --- | --- |
//! | `values` | `scalar`, `tuple`, `project`, `length` |
//! | `map` | `map` |
//! | `fold` | `reduce`, `reduce_by_key`, `scan` |
//! | `indexing` | `index`, `gather`, `scatter` |
//! | `generate` | `range`, `replicate` |
//! | `reshape` | `zip`, `join`, `split`, `striding`, `reverse`, `nest`, `transpose` |

pub(crate) mod arith;
mod fold;
mod generate;
mod indexing;
mod map;
mod reshape;
mod values;

pub use indexing::out_of_range;
pub use reshape::check_offsets;

use super::infer::{Typing, ValueInfo};
use super::value::Value;
use super::{Family, IrError, Lambda, NodeId, Op, ScalarExpr};
use crate::CodegenError;
use crate::data::ScalarValue;
use std::rc::Rc;

/// Infers the [`ValueInfo`] of `op` given the infos of the nodes it refers to.
/// `Input` and `Param` are leaves whose info the caller knows; asking for them is an error.
pub fn infer<'a>(op: &Op, info: &dyn Fn(NodeId) -> &'a ValueInfo) -> Result<ValueInfo, IrError> {
    let t = Typing::new(op.kind(), info);
    match op.kind().family() {
        Family::Leaf => Err(t.err("leaf nodes carry their own type; nothing to infer")),
        Family::Values => values::infer(&t, op),
        Family::Map => map::infer(&t, op),
        Family::Fold => fold::infer(&t, op),
        Family::Indexing => indexing::infer(&t, op),
        Family::Generate => generate::infer(&t, op),
        Family::Reshape => reshape::infer(&t, op),
    }
}

/// Why evaluating a node failed: a check of this node (its message), or an operand's failure.
#[derive(Debug)]
pub enum Failure {
    Here(String),
    Operand(CodegenError),
}

impl From<String> for Failure {
    fn from(m: String) -> Self {
        Failure::Here(m)
    }
}

impl From<&str> for Failure {
    fn from(m: &str) -> Self {
        Failure::Here(m.to_string())
    }
}

impl From<CodegenError> for Failure {
    fn from(e: CodegenError) -> Self {
        Failure::Operand(e)
    }
}

/// What a family's reference semantics asks of the interpreter.
pub trait Eval {
    /// The value of node `n`.
    fn value(&mut self, n: NodeId) -> Result<Rc<Value>, CodegenError>;
    /// The value of scalar expression `e`.
    fn scalar(&mut self, e: &ScalarExpr) -> Result<ScalarValue, Failure>;
    /// Applies lambda `l` of operator node `owner` to `args`.
    fn call(&mut self, owner: NodeId, l: &Lambda, args: Vec<Value>) -> Result<Value, Failure>;

    /// The elements of sequence node `n`.
    fn seq(&mut self, n: NodeId) -> Result<Rc<Value>, CodegenError> {
        let v = self.value(n)?;
        match *v {
            Value::Seq(_) => Ok(v),
            _ => panic!("internal: validated node {n} is not a sequence"),
        }
    }
    /// The value of integer node `n`; `what` names it in the message when it is not one.
    fn int(&mut self, n: NodeId, what: &str) -> Result<i128, Failure> {
        let v = self.value(n)?;
        Ok(to_index(&v, what)?)
    }
}

/// An integer value as `i128`, or a message naming `what` is not an integer.
pub fn to_index(v: &Value, what: &str) -> Result<i128, String> {
    v.as_scalar()
        .and_then(ScalarValue::as_i128)
        .ok_or_else(|| format!("{what} is not an integer"))
}

/// The elements of an evaluated sequence.
fn items(v: &Value) -> &[Value] {
    v.as_seq().expect("internal: validated value is a sequence")
}

/// Evaluates operator node `n` (`op`) by its family's reference semantics.
pub fn eval(ev: &mut dyn Eval, n: NodeId, op: &Op) -> Result<Value, Failure> {
    match op.kind().family() {
        Family::Leaf => panic!("internal: leaf node {n} is evaluated by the interpreter itself"),
        Family::Values => values::eval(ev, n, op),
        Family::Map => map::eval(ev, n, op),
        Family::Fold => fold::eval(ev, n, op),
        Family::Indexing => indexing::eval(ev, op),
        Family::Generate => generate::eval(ev, op),
        Family::Reshape => reshape::eval(ev, op),
    }
}

/// The common length of `seqs`, or a message naming the first input that differs.
fn equal_lengths(seqs: &[Rc<Value>]) -> Result<usize, String> {
    let lens: Vec<usize> = seqs.iter().map(|s| items(s).len()).collect();
    match lens.iter().position(|l| *l != lens[0]) {
        Some(k) => Err(format!(
            "input lengths differ: input 0 has length {}, input {k} has length {}",
            lens[0], lens[k]
        )),
        None => Ok(lens[0]),
    }
}

/// Evaluates every node of `ns` as a sequence.
fn seqs(ev: &mut dyn Eval, ns: &[NodeId]) -> Result<Vec<Rc<Value>>, CodegenError> {
    ns.iter().map(|i| ev.seq(*i)).collect()
}

fn unexpected(family: &str, op: &Op) -> ! {
    panic!(
        "internal: `{}` dispatched to the {family} family",
        op.kind()
    )
}

#[cfg(test)]
mod tests;
