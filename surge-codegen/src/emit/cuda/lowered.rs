//! Prints the backend-neutral element lowering ([`crate::emit::lower`]) as CUDA C++: lengths as
//! `u64` expressions, the element as a template over the index placeholder `@I@`, checks as
//! `surge_*` helpers that record the node's error and return a safe value (a gathered index out
//! of range reads 0 without loading).

use super::cuda_type;
use super::elements::{Env, I, SeqV, Tr};
use crate::CodegenError;
use crate::emit::lower::{Check, Flat, Operand, Step, X};
use crate::ir::{Elem, NodeId};

/// An evaluated operand: a flat sequence or a scalar expression.
enum Arg {
    Seq(SeqV),
    Scalar(String),
}

struct Printer {
    args: Vec<Arg>,
    node: u64,
    elem: Elem,
}

impl Printer {
    fn seq(&self, k: usize) -> &SeqV {
        match &self.args[k] {
            Arg::Seq(s) => s,
            Arg::Scalar(_) => panic!("internal: lowered operand {k} is not a sequence"),
        }
    }

    fn scalar(&self, k: usize) -> &str {
        match &self.args[k] {
            Arg::Scalar(s) => s,
            Arg::Seq(_) => panic!("internal: lowered operand {k} is not a scalar"),
        }
    }

    /// `x` as a C++ expression over `@I@`.
    fn print(&self, x: &X) -> String {
        let node = self.node;
        match x {
            X::Index => I.to_string(),
            X::Len(k) => self.seq(*k).len.clone(),
            X::At(k, j) => match &**j {
                X::Index => self.seq(*k).at.clone(),
                X::Checked(Check::Gather { index, source }) => {
                    let s = self.seq(*source);
                    format!(
                        "surge_gather<{}>((i64)({}), {I}, {}, {node}, surge_err, [&](u64 surge_k{}) {{ return {}; }})",
                        cuda_type(self.elem),
                        self.print(index),
                        s.len,
                        node,
                        s.at(&format!("surge_k{node}"))
                    )
                }
                j => self.seq(*k).at(&self.print(j)),
            },
            X::Value(k) => self.scalar(*k).to_string(),
            X::Mirror { len, i } => format!("{} - 1 - {}", self.print(len), self.print(i)),
            X::Scale { i, k } => format!("{} * {}", self.print(i), self.print(k)),
            X::DivCeil(a, b) => {
                let (a, b) = (self.print(a), self.print(b));
                format!("(({a} + {b} - 1) / {b})")
            }
            X::Checked(Check::Positive { value, what }) => {
                let code = match what {
                    Step::Tile => 0,
                    Step::Stride => 1,
                };
                format!(
                    "surge_positive((i64)({}), {code}, {node}, surge_err)",
                    self.scalar(*value)
                )
            }
            X::Checked(Check::Length { value }) => {
                format!(
                    "surge_len((i64)({}), {node}, surge_err)",
                    self.scalar(*value)
                )
            }
            X::Checked(Check::Gather { .. }) => {
                panic!("internal: a gathered index is read only through its source")
            }
            X::RangeLen { start, end, stride } => {
                let (a, b, s) = (self.scalar(*start), self.scalar(*end), self.stride(*stride));
                format!(
                    "(({s}) > 0 ? (({a}) < ({b}) ? (u64)((({b}) - ({a}) + ({s}) - 1) / ({s})) : 0ULL) \
                     : (({a}) > ({b}) ? (u64)((({a}) - ({b}) - ({s}) - 1) / (-({s}))) : 0ULL))"
                )
            }
            X::RangeAt { start, stride } => {
                let t = cuda_type(self.elem);
                let (a, s) = (self.scalar(*start), self.stride(*stride));
                format!("(({t})(({a}) + ({t}){I} * ({s})))")
            }
        }
    }

    fn stride(&self, stride: Option<usize>) -> String {
        match stride {
            Some(k) => format!("surge_stride({}, {}, surge_err)", self.scalar(k), self.node),
            None => "1".into(),
        }
    }
}

impl Tr<'_> {
    /// Node `n`, an element-wise operator lowered by `emit::lower`, as a flat sequence.
    pub(super) fn lowered(
        &self,
        n: NodeId,
        f: &Flat,
        elem: Elem,
        env: &Env,
    ) -> Result<SeqV, CodegenError> {
        self.lowered_with(n, f, None, elem, env)
    }

    /// [`lowered`](Self::lowered) with operand 0 given (`first`) instead of translated: the
    /// row numbers of a nested source, whose rows the result then maps.
    pub(super) fn lowered_with(
        &self,
        n: NodeId,
        f: &Flat,
        first: Option<SeqV>,
        elem: Elem,
        env: &Env,
    ) -> Result<SeqV, CodegenError> {
        let args = f
            .operands
            .iter()
            .enumerate()
            .map(|(k, o)| match o {
                Operand::Seq(_) if k == 0 && first.is_some() => {
                    Ok(Arg::Seq(first.clone().expect("checked")))
                }
                Operand::Seq(m) => self.seq(*m, env).map(Arg::Seq),
                Operand::Value(m) | Operand::Int(m) => self.scalar(*m, env).map(Arg::Scalar),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let p = Printer {
            args,
            node: n.0,
            elem,
        };
        Ok(SeqV {
            len: p.print(&f.len),
            at: p.print(&f.at),
            elem,
        })
    }
}
