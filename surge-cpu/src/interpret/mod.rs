//! The reference interpreter: evaluates any valid IR computation sequentially, in plain Rust.
//!
//! It is the correctness oracle for every backend, so it favours obviousness over speed: every
//! sequence is materialized, every lambda call binds its parameters and re-evaluates its body.
//! Values that depend on no lambda parameter are computed once and cached; values inside a lambda
//! are recomputed on each call (the cache entries of the lambda's region are dropped on entry).

mod scalar;
mod value;

pub use value::Value;

use crate::CpuError;
use std::collections::HashMap;
use std::rc::Rc;
use surge_codegen::data::{Buffer, ScalarValue};
use surge_codegen::ir::{Computation, Lambda, NodeId, Op, ScalarExpr};

/// Evaluates `c` on the bound input `buffers` and returns the root's value.
pub fn interpret(c: &Computation, buffers: &[Buffer]) -> Result<Value, CpuError> {
    c.validate().map_err(surge_codegen::CodegenError::from)?;
    surge_codegen::analysis::check_buffers(c, buffers)?;
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
    let mut it = Interp {
        c,
        buffers,
        cache: vec![None; c.nodes.len()],
        region,
    };
    let v = it.eval(c.root)?;
    Ok(Rc::try_unwrap(v).unwrap_or_else(|rc| (*rc).clone()))
}

struct Interp<'a> {
    c: &'a Computation,
    buffers: &'a [Buffer],
    cache: Vec<Option<Rc<Value>>>,
    region: HashMap<NodeId, Vec<NodeId>>,
}

fn to_index(v: &Value, what: &str) -> Result<i128, String> {
    v.as_scalar()
        .and_then(ScalarValue::as_i128)
        .ok_or_else(|| format!("{what} is not an integer"))
}

impl Interp<'_> {
    fn err(&self, n: NodeId, message: impl Into<String>) -> CpuError {
        CpuError::Runtime {
            op: self.c.node(n).op.kind().name(),
            node: n,
            message: message.into(),
        }
    }

    fn seq(&mut self, n: NodeId) -> Result<Rc<Value>, CpuError> {
        let v = self.eval(n)?;
        match *v {
            Value::Seq(_) => Ok(v),
            _ => panic!("internal: validated node {n} is not a sequence"),
        }
    }

    fn int(&mut self, at: NodeId, n: NodeId, what: &str) -> Result<i128, CpuError> {
        let v = self.eval(n)?;
        to_index(&v, what).map_err(|m| self.err(at, m))
    }

    /// The common length of `seqs`, or an error naming the first input that differs.
    fn equal_lengths(&self, n: NodeId, seqs: &[Rc<Value>]) -> Result<usize, CpuError> {
        let lens: Vec<usize> = seqs
            .iter()
            .map(|s| s.as_seq().expect("sequence").len())
            .collect();
        match lens.iter().position(|l| *l != lens[0]) {
            Some(k) => Err(self.err(
                n,
                format!(
                    "input lengths differ: input 0 has length {}, input {k} has length {}",
                    lens[0], lens[k]
                ),
            )),
            None => Ok(lens[0]),
        }
    }

    fn call(&mut self, owner: NodeId, l: &Lambda, args: Vec<Value>) -> Result<Rc<Value>, CpuError> {
        if let Some(r) = self.region.get(&owner) {
            for n in r {
                self.cache[n.0 as usize] = None;
            }
        }
        for (p, a) in l.params.iter().zip(args) {
            self.cache[p.0 as usize] = Some(Rc::new(a));
        }
        self.eval(l.body)
    }

    fn scalar(&mut self, at: NodeId, e: &ScalarExpr) -> Result<ScalarValue, CpuError> {
        let r = match e {
            ScalarExpr::Const(l) => Ok((*l).into()),
            ScalarExpr::Value(n) => {
                let v = self.eval(*n)?;
                Ok(v.as_scalar().unwrap_or_else(|| {
                    panic!("internal: validated scalar leaf {n} is not a scalar")
                }))
            }
            ScalarExpr::Unary(op, a) => {
                let a = self.scalar(at, a)?;
                scalar::unary(*op, a)
            }
            ScalarExpr::Binary(op, a, b) => {
                let (a, b) = (self.scalar(at, a)?, self.scalar(at, b)?);
                scalar::binary(*op, a, b)
            }
            ScalarExpr::Fma(a, b, c) => {
                let (a, b, c) = (
                    self.scalar(at, a)?,
                    self.scalar(at, b)?,
                    self.scalar(at, c)?,
                );
                scalar::fma(a, b, c)
            }
            ScalarExpr::Select(c, a, b) => match self.scalar(at, c)? {
                ScalarValue::Bool(true) => self.scalar(at, a).map(Ok)?,
                ScalarValue::Bool(false) => self.scalar(at, b).map(Ok)?,
                other => Err(format!("select condition is {}", other.elem())),
            },
            ScalarExpr::Cast(to, a) => {
                let a = self.scalar(at, a)?;
                scalar::cast(*to, a)
            }
        };
        r.map_err(|m| self.err(at, m))
    }

    fn eval(&mut self, n: NodeId) -> Result<Rc<Value>, CpuError> {
        if let Some(v) = &self.cache[n.0 as usize] {
            return Ok(v.clone());
        }
        let c = self.c;
        let v = match &c.node(n).op {
            Op::Input { buffer } => Value::from_buffer(&self.buffers[*buffer]),
            Op::Param => panic!("internal: parameter {n} read outside its lambda"),
            Op::Scalar { expr } => Value::Scalar(self.scalar(n, expr)?),
            Op::Tuple { items } => Value::Tuple(
                items
                    .iter()
                    .map(|i| self.eval(*i).map(|v| (*v).clone()))
                    .collect::<Result<_, _>>()?,
            ),
            Op::Project { tuple, index } => match &*self.eval(*tuple)? {
                Value::Tuple(items) => items[*index].clone(),
                _ => panic!("internal: validated tuple {tuple} is not a tuple"),
            },
            Op::Index { seq, index } => {
                let s = self.seq(*seq)?;
                let s = s.as_seq().expect("sequence");
                let i = self.int(n, *index, "index")?;
                if i < 0 || i >= s.len() as i128 {
                    return Err(self.err(
                        n,
                        format!(
                            "index {i} is out of range for a sequence of length {}",
                            s.len()
                        ),
                    ));
                }
                s[i as usize].clone()
            }
            Op::Length { seq } => {
                let s = self.seq(*seq)?;
                Value::Scalar(ScalarValue::U64(s.as_seq().expect("sequence").len() as u64))
            }
            Op::Map { f, inputs } => {
                let seqs = inputs
                    .iter()
                    .map(|i| self.seq(*i))
                    .collect::<Result<Vec<_>, _>>()?;
                let len = self.equal_lengths(n, &seqs)?;
                let mut out = Vec::with_capacity(len);
                for i in 0..len {
                    let args = seqs
                        .iter()
                        .map(|s| s.as_seq().expect("sequence")[i].clone())
                        .collect();
                    out.push((*self.call(n, f, args)?).clone());
                }
                Value::Seq(out)
            }
            Op::Reduce { op, input, prefix } => {
                let s = self.seq(*input)?;
                let s = s.as_seq().expect("sequence");
                let (mut acc, rest) = match prefix {
                    Some(p) => ((*self.eval(*p)?).clone(), s),
                    None => match s.split_first() {
                        Some((first, rest)) => (first.clone(), rest),
                        None => {
                            return Err(
                                self.err(n, "reduction of an empty sequence without a prefix")
                            );
                        }
                    },
                };
                for x in rest {
                    acc = (*self.call(n, op, vec![acc, x.clone()])?).clone();
                }
                acc
            }
            Op::ReduceByKey {
                op,
                input,
                keys,
                prefix,
            } => {
                let s = self.seq(*input)?;
                let k = self.seq(*keys)?;
                let (s, k) = (s.as_seq().expect("sequence"), k.as_seq().expect("sequence"));
                if s.len() != k.len() {
                    return Err(self.err(
                        n,
                        format!(
                            "input has length {} but keys have length {}",
                            s.len(),
                            k.len()
                        ),
                    ));
                }
                let p = (*self.eval(*prefix)?).clone();
                let mut out = Vec::new();
                let mut i = 0;
                while i < s.len() {
                    let key = to_index(&k[i], "key").map_err(|m| self.err(n, m))?;
                    let mut acc = p.clone();
                    while i < s.len() && to_index(&k[i], "key").map_err(|m| self.err(n, m))? == key
                    {
                        acc = (*self.call(n, op, vec![acc, s[i].clone()])?).clone();
                        i += 1;
                    }
                    out.push(acc);
                }
                Value::Seq(out)
            }
            Op::Scan { op, input, prefix } => {
                let s = self.seq(*input)?;
                let s = s.as_seq().expect("sequence");
                let mut out = Vec::with_capacity(s.len());
                match prefix {
                    Some(p) => {
                        let mut acc = (*self.eval(*p)?).clone();
                        for (i, x) in s.iter().enumerate() {
                            out.push(acc.clone());
                            if i + 1 < s.len() {
                                acc = (*self.call(n, op, vec![acc, x.clone()])?).clone();
                            }
                        }
                    }
                    None => {
                        let mut acc: Option<Value> = None;
                        for x in s {
                            let next = match acc {
                                None => x.clone(),
                                Some(a) => (*self.call(n, op, vec![a, x.clone()])?).clone(),
                            };
                            out.push(next.clone());
                            acc = Some(next);
                        }
                    }
                }
                Value::Seq(out)
            }
            Op::Gather { source, indices } => {
                let s = self.seq(*source)?;
                let idx = self.seq(*indices)?;
                let s = s.as_seq().expect("sequence");
                let mut out = Vec::with_capacity(idx.as_seq().expect("sequence").len());
                for (pos, i) in idx.as_seq().expect("sequence").iter().enumerate() {
                    let i = to_index(i, "index").map_err(|m| self.err(n, m))?;
                    if i < 0 || i >= s.len() as i128 {
                        return Err(self.err(
                            n,
                            format!("index {i} at position {pos} is out of range for a source of length {}", s.len()),
                        ));
                    }
                    out.push(s[i as usize].clone());
                }
                Value::Seq(out)
            }
            Op::Scatter {
                source,
                indices,
                dest,
            } => {
                let s = self.seq(*source)?;
                let idx = self.seq(*indices)?;
                let (s, idx) = (
                    s.as_seq().expect("sequence"),
                    idx.as_seq().expect("sequence"),
                );
                if s.len() != idx.len() {
                    return Err(self.err(
                        n,
                        format!(
                            "source has length {} but indices have length {}",
                            s.len(),
                            idx.len()
                        ),
                    ));
                }
                let mut d = self.seq(*dest)?.as_seq().expect("sequence").to_vec();
                for (pos, (x, i)) in s.iter().zip(idx).enumerate() {
                    let i = to_index(i, "index").map_err(|m| self.err(n, m))?;
                    if i < 0 || i >= d.len() as i128 {
                        return Err(self.err(
                            n,
                            format!("index {i} at position {pos} is out of range for a destination of length {}", d.len()),
                        ));
                    }
                    d[i as usize] = x.clone();
                }
                Value::Seq(d)
            }
            Op::Range { start, end, stride } => {
                let elem = self.eval(*start)?.as_scalar().expect("scalar").elem();
                let a = self.int(n, *start, "start")?;
                let b = self.int(n, *end, "end")?;
                let s = match stride {
                    Some(s) => self.int(n, *s, "stride")?,
                    None => 1,
                };
                if s == 0 {
                    return Err(self.err(n, "stride is 0"));
                }
                let len = surge_codegen::ir::range_len(a, b, s);
                if len > (1 << 32) {
                    return Err(self.err(
                        n,
                        format!("range of {len} elements is too long for the interpreter"),
                    ));
                }
                let lit =
                    |v: i128| crate::interpret::scalar::cast(elem, ScalarValue::I64(v as i64));
                let mut out = Vec::with_capacity(len as usize);
                for k in 0..len as i128 {
                    out.push(Value::Scalar(lit(a + k * s).map_err(|m| self.err(n, m))?));
                }
                Value::Seq(out)
            }
            Op::Replicate { value, len } => {
                let l = self.int(n, *len, "length")?;
                if l < 0 {
                    return Err(self.err(n, format!("length {l} is negative")));
                }
                let v = self.eval(*value)?;
                Value::Seq(vec![(*v).clone(); l as usize])
            }
            Op::Zip { inputs } => {
                let seqs = inputs
                    .iter()
                    .map(|i| self.seq(*i))
                    .collect::<Result<Vec<_>, _>>()?;
                let len = self.equal_lengths(n, &seqs)?;
                Value::Seq(
                    (0..len)
                        .map(|i| {
                            Value::Tuple(
                                seqs.iter()
                                    .map(|s| s.as_seq().expect("sequence")[i].clone())
                                    .collect(),
                            )
                        })
                        .collect(),
                )
            }
            Op::Join { inputs } => {
                let seqs = inputs
                    .iter()
                    .map(|i| self.seq(*i))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut out: Vec<Vec<Value>> = vec![vec![]];
                for s in &seqs {
                    let s = s.as_seq().expect("sequence");
                    out = out
                        .into_iter()
                        .flat_map(|prefix| {
                            s.iter()
                                .map(move |x| [prefix.clone(), vec![x.clone()]].concat())
                        })
                        .collect();
                }
                Value::Seq(out.into_iter().map(Value::Tuple).collect())
            }
            Op::Split { input, tile }
            | Op::Striding {
                input,
                stride: tile,
            } => {
                let s = self.seq(*input)?;
                let s = s.as_seq().expect("sequence");
                let is_split = matches!(c.node(n).op, Op::Split { .. });
                let what = if is_split { "tile size" } else { "stride" };
                let k = self.int(n, *tile, what)?;
                if k <= 0 {
                    return Err(self.err(n, format!("{what} must be positive, got {k}")));
                }
                if is_split {
                    Value::Seq(
                        s.chunks(k as usize)
                            .map(|t| Value::Seq(t.to_vec()))
                            .collect(),
                    )
                } else {
                    Value::Seq(s.iter().step_by(k as usize).cloned().collect())
                }
            }
            Op::Reverse { input } => {
                let s = self.seq(*input)?;
                Value::Seq(
                    s.as_seq()
                        .expect("sequence")
                        .iter()
                        .rev()
                        .cloned()
                        .collect(),
                )
            }
            Op::Nest { input, offsets } => {
                let s = self.seq(*input)?;
                let off = self.seq(*offsets)?;
                let (s, off) = (
                    s.as_seq().expect("sequence"),
                    off.as_seq().expect("sequence"),
                );
                let off = off
                    .iter()
                    .map(|o| to_index(o, "offset"))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|m| self.err(n, m))?;
                check_offsets(&off, s.len()).map_err(|m| self.err(n, m))?;
                Value::Seq(
                    off.windows(2)
                        .map(|w| Value::Seq(s[w[0] as usize..w[1] as usize].to_vec()))
                        .collect(),
                )
            }
            Op::Transpose { input } => {
                let s = self.seq(*input)?;
                let rows: Vec<&[Value]> = s
                    .as_seq()
                    .expect("sequence")
                    .iter()
                    .map(|r| r.as_seq().expect("nested sequence"))
                    .collect();
                let width = rows.first().map_or(0, |r| r.len());
                if let Some(k) = rows.iter().position(|r| r.len() != width) {
                    return Err(self.err(
                        n,
                        format!("rows differ in length (row 0 has {width}, row {k} has {}); only uniform nesting transposes", rows[k].len()),
                    ));
                }
                Value::Seq(
                    (0..width)
                        .map(|j| Value::Seq(rows.iter().map(|r| r[j].clone()).collect()))
                        .collect(),
                )
            }
        };
        let v = Rc::new(v);
        self.cache[n.0 as usize] = Some(v.clone());
        Ok(v)
    }
}

/// Checks CSR offsets for a flat sequence of length `len`: at least one offset, non-decreasing,
/// all within `0..=len`. The message names the first offending position.
pub fn check_offsets(off: &[i128], len: usize) -> Result<(), String> {
    if off.is_empty() {
        return Err("offsets are empty; a nested sequence of n rows needs n + 1 offsets".into());
    }
    for (i, o) in off.iter().enumerate() {
        if *o < 0 || *o > len as i128 {
            return Err(format!(
                "offsets[{i}] = {o} is out of range for a sequence of length {len}"
            ));
        }
        if i > 0 && off[i - 1] > *o {
            return Err(format!(
                "offsets are not monotone: offsets[{}] = {} > offsets[{i}] = {o}",
                i - 1,
                off[i - 1]
            ));
        }
    }
    Ok(())
}
