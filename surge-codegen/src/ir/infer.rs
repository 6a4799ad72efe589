//! What typing knows about a value ([`ValueInfo`]) and the judgements every operator family's
//! typing rule shares ([`Typing`]). The rules themselves live with their operators in `ops/`;
//! the validator and the DSEL (which types each operator as it is built, so errors surface at
//! the call that caused them) run them through [`infer`](super::infer).

use super::{Elem, IrError, Lambda, Literal, NodeId, OpKind, Type};
use std::fmt::Display;

/// What is known about a value before anything runs: its type, its length when it is a sequence
/// of statically known length, and its value when it is a constant scalar.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueInfo {
    pub ty: Type,
    pub len: Option<u64>,
    pub konst: Option<Literal>,
}

impl ValueInfo {
    pub fn of_type(ty: Type) -> Self {
        ValueInfo {
            ty,
            len: None,
            konst: None,
        }
    }
    pub fn input(elem: Elem, len: u64) -> Self {
        ValueInfo {
            ty: Type::scalar_seq(elem),
            len: Some(len),
            konst: None,
        }
    }
}

/// The typing context of one operator: what is known about the nodes it refers to, and the
/// shared judgements (a sequence's item type, an integer operand, a lambda's signature) whose
/// messages every family's typing rule uses.
pub struct Typing<'a, 'b> {
    pub kind: OpKind,
    info: &'b dyn Fn(NodeId) -> &'a ValueInfo,
}

impl std::fmt::Debug for Typing<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typing")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl<'a, 'b> Typing<'a, 'b> {
    pub fn new(kind: OpKind, info: &'b dyn Fn(NodeId) -> &'a ValueInfo) -> Self {
        Typing { kind, info }
    }

    /// What is known about node `n`.
    pub fn info(&self, n: NodeId) -> &'a ValueInfo {
        (self.info)(n)
    }

    /// An error of this operator.
    pub fn err(&self, message: impl Into<String>) -> IrError {
        IrError::new(self.kind.name(), message)
    }

    /// The item type of sequence `n`.
    pub fn seq_item(&self, n: NodeId, what: &str) -> Result<Type, IrError> {
        match &self.info(n).ty {
            Type::Seq(t) => Ok((**t).clone()),
            other => Err(self.err(format!("{what} must be a sequence, got {other}"))),
        }
    }

    /// The item types of a non-empty list of input sequences (`map`, `zip`, `join`).
    pub fn input_items(&self, inputs: &[NodeId]) -> Result<Vec<Type>, IrError> {
        if inputs.is_empty() {
            return Err(self.err("needs at least one input sequence"));
        }
        inputs
            .iter()
            .enumerate()
            .map(|(i, n)| self.seq_item(*n, &format!("input {i}")))
            .collect()
    }

    /// The element type of integer scalar `n`.
    pub fn int_scalar(&self, n: NodeId, what: &str) -> Result<Elem, IrError> {
        match &self.info(n).ty {
            Type::Scalar(e) if e.is_integer() => Ok(*e),
            other => Err(self.err(format!("{what} must be an integer scalar, got {other}"))),
        }
    }

    /// The element type of a flat sequence of integers `n`.
    pub fn int_seq(&self, n: NodeId, what: &str) -> Result<Elem, IrError> {
        match &self.info(n).ty {
            Type::Seq(t) => match **t {
                Type::Scalar(e) if e.is_integer() => Ok(e),
                ref other => Err(self.err(format!(
                    "{what} must have an integer element type, got {other}"
                ))),
            },
            other => Err(self.err(format!(
                "{what} must be a sequence of integers, got {other}"
            ))),
        }
    }

    /// The value of `n` when it is a constant integer.
    pub fn konst_int(&self, n: NodeId) -> Option<i128> {
        self.info(n).konst.and_then(Literal::as_integer)
    }

    /// Checks a lambda's parameter types and returns its result type.
    pub fn lambda(&self, l: &Lambda, params: &[Type], what: &str) -> Result<Type, IrError> {
        if l.params.len() != params.len() {
            return Err(self.err(format!(
                "{what} takes {} parameter(s), got {}",
                params.len(),
                l.params.len()
            )));
        }
        for (i, (p, want)) in l.params.iter().zip(params).enumerate() {
            let got = &self.info(*p).ty;
            if got != want {
                return Err(self.err(format!(
                    "{what} parameter {i} has type {got}, expected {want}"
                )));
            }
        }
        Ok(self.info(l.body).ty.clone())
    }

    /// The common static length of the sequences `ns` whose lengths are known, or an error
    /// naming the first two that differ.
    /// Operand `a` (a singular noun: "input") and operand `b` (a plural one: "keys") have the
    /// same length when both are known; the message is [`lengths_differ`]'s.
    pub fn pair_lengths(&self, a: (NodeId, &str), b: (NodeId, &str)) -> Result<(), IrError> {
        match (self.info(a.0).len, self.info(b.0).len) {
            (Some(la), Some(lb)) if la != lb => Err(self.err(lengths_differ(a.1, la, b.1, lb))),
            _ => Ok(()),
        }
    }

    pub fn same_lengths(&self, ns: &[NodeId], what: &str) -> Result<Option<u64>, IrError> {
        let mut known: Option<(usize, u64)> = None;
        for (i, n) in ns.iter().enumerate() {
            if let Some(len) = self.info(*n).len {
                match known {
                    Some((j, l)) if l != len => {
                        return Err(self.err(format!(
                            "{what} lengths differ: {what} {j} has length {l}, {what} {i} has length {len}"
                        )));
                    }
                    None => known = Some((i, len)),
                    _ => {}
                }
            }
        }
        Ok(known.map(|(_, l)| l))
    }
}

/// Two operands that must be equally long are not, as a sentence: "the input has length 3 but
/// the keys have length 2" (`a` singular, `b` plural). Typing and the interpreter share it.
pub fn lengths_differ(a: &str, la: impl Display, b: &str, lb: impl Display) -> String {
    format!("the {a} has length {la} but the {b} have length {lb}")
}

/// Number of elements of `range(a, b, s)` (Python semantics).
pub fn range_len(a: i128, b: i128, s: i128) -> u64 {
    if s > 0 && a < b {
        ((b - a + s - 1) / s) as u64
    } else if s < 0 && a > b {
        ((a - b + (-s) - 1) / (-s)) as u64
    } else {
        0
    }
}
