//! Prints the backend-neutral element lowering ([`crate::emit::lower`]) as CPU element code:
//! lengths and indices as `usize` Rust expressions, checks as `chk_*` calls that fail with the
//! interpreter's message, elements read through the operands' lazy sequences.

use super::code::{Code, Env, Gen, R, SeqCode, keep_index_check, quote, rust_ty};
use crate::emit::lower::{Check, Flat, Operand, X};
use crate::ir::{Elem, NodeId};
use std::rc::Rc;

/// An evaluated operand.
enum Arg<'a> {
    Seq(Rc<SeqCode<'a>>),
    Value(Code<'a>),
    /// An `i128` expression.
    Int(String),
}

/// Prints one lowered node's expressions.
struct Printer<'a> {
    args: Vec<Arg<'a>>,
    op: String,
    node: u64,
    /// The element type of a flat result (`range` needs it).
    elem: Option<Elem>,
}

impl<'a> Printer<'a> {
    fn seq(&self, k: usize) -> &Rc<SeqCode<'a>> {
        match &self.args[k] {
            Arg::Seq(s) => s,
            _ => panic!("internal: lowered operand {k} is not a sequence"),
        }
    }

    fn value(&self, k: usize) -> &Code<'a> {
        match &self.args[k] {
            Arg::Value(c) => c,
            _ => panic!("internal: lowered operand {k} is not a value"),
        }
    }

    /// Value operand `k` as an `i128` expression.
    fn int(&self, k: usize) -> String {
        match &self.args[k] {
            Arg::Int(s) => s.clone(),
            _ => panic!("internal: lowered operand {k} is not an integer"),
        }
    }

    /// `x` as a Rust expression, with `i` the element index.
    fn index(&self, x: &X, i: &str) -> R<String> {
        let (op, node) = (&self.op, self.node);
        Ok(match x {
            X::Index => i.to_string(),
            X::Len(k) => self.seq(*k).len.clone(),
            X::At(..) | X::Value(_) => match self.code(x, i)? {
                Code::Scalar(s, _) => s,
                _ => panic!("internal: a lowered index reads a non-scalar"),
            },
            X::Mirror { len, i: j } => {
                format!("(({}) - 1 - ({}))", self.index(len, i)?, self.index(j, i)?)
            }
            X::Scale { i: j, k } => format!("(({}) * {})", self.index(j, i)?, self.index(k, i)?),
            X::DivCeil(a, b) => format!("({}).div_ceil({})", self.index(a, i)?, self.index(b, i)?),
            X::Checked(Check::Positive { value, what }) => format!(
                "chk_positive({}, {}, {op}, {node})",
                self.int(*value),
                quote(what.name())
            ),
            X::Checked(Check::Length { value }) => {
                format!("chk_len({}, {op}, {node})", self.int(*value))
            }
            X::Checked(Check::Gather { index, source }) => format!(
                "chk_gather(({}) as i128, {i}, {}, {op}, {node})",
                self.index(index, i)?,
                self.seq(*source).len
            ),
            X::RangeLen { start, end, stride } => format!(
                "range_len({}, {}, {}, {op}, {node})",
                self.int(*start),
                self.int(*end),
                self.stride(*stride)
            ),
            X::RangeAt { start, stride } => format!(
                "((({}) + ({i}) as i128 * ({})) as i64 as {})",
                self.int(*start),
                self.stride(*stride),
                rust_ty(self.elem.expect("a range's element type"))
            ),
        })
    }

    fn stride(&self, stride: Option<usize>) -> String {
        stride.map_or_else(|| "1i128".to_string(), |k| self.int(k))
    }

    /// `x` as element code (an element of an operand, a value operand, or a scalar).
    fn code(&self, x: &X, i: &str) -> R<Code<'a>> {
        match x {
            X::At(k, j) => {
                let idx = self.index(j, i)?;
                Ok(keep_index_check(self.seq(*k).at(&idx)?, &idx))
            }
            X::Value(k) => Ok(self.value(*k).clone()),
            other => Ok(Code::Scalar(
                self.index(other, i)?,
                self.elem.expect("a scalar element's type"),
            )),
        }
    }
}

impl<'a> Gen<'a> {
    /// Node `n`, an element-wise operator lowered by `emit::lower`, as a lazy sequence.
    pub(super) fn lowered(&self, n: NodeId, f: Flat, env: &Env<'a>) -> R<Code<'a>> {
        let mut args = Vec::new();
        let mut checks = Vec::new();
        for o in &f.operands {
            args.push(match o {
                Operand::Seq(m) => {
                    let s = self.seq(*m, env)?;
                    checks.extend(s.checks.clone());
                    Arg::Seq(s)
                }
                Operand::Value(m) => Arg::Value(self.eval(*m, env)?),
                Operand::Int(m) => Arg::Int(self.int(*m, env)?),
            });
        }
        let p = Printer {
            args,
            op: quote(self.op_name(n)),
            node: n.0,
            elem: self.flat_elem(n),
        };
        let len = p.index(&f.len, "")?;
        let at = f.at;
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len,
            checks,
            elem: Box::new(move |i| p.code(&at, i)),
        })))
    }
}
