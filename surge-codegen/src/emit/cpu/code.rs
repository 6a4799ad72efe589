//! Fused element code: every IR value in a phase becomes either a Rust scalar expression or a
//! *lazy sequence* (a length expression plus a function from an index expression to element
//! code). Producers such as `gather`, `zip`, `nest` and inner `map`s are therefore never
//! materialized: their elements are computed where the consumer reads them (the fusion groups of
//! the analysis), and only reductions and scans become loops.

use crate::CodegenError;
use crate::ir::{Computation, Elem, Lambda, NodeId, Op, Type};
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

pub(super) type R<T> = Result<T, CodegenError>;

/// Generated code for one IR value.
#[derive(Clone)]
pub(super) enum Code<'a> {
    /// A Rust expression of the element type.
    Scalar(String, Elem),
    Seq(Rc<SeqCode<'a>>),
    Tuple(Vec<Code<'a>>),
    /// A Rust expression evaluating to a whole tuple of this (IR) type (a reduction over
    /// tuples computed into a local): read whole, it is printed once; a projection reads a field
    /// of it.
    Value(String, Type),
}

type ElemFn<'a> = dyn Fn(&str) -> R<Code<'a>> + 'a;

/// A lazy sequence.
pub(super) struct SeqCode<'a> {
    /// A slice expression whose `[k]` is element `k` (when the sequence is contiguous memory):
    /// consumers index it with `k < len` so the compiler drops the bounds checks.
    pub slice: Option<String>,
    /// A `usize` expression.
    pub len: String,
    /// Statements to run before iterating (length agreement, offset checks); they `fail` with
    /// the interpreter's message when the data is invalid.
    pub checks: Vec<String>,
    pub elem: Box<ElemFn<'a>>,
}

impl<'a> SeqCode<'a> {
    pub fn at(&self, i: &str) -> R<Code<'a>> {
        (self.elem)(i)
    }
}

/// Parameter bindings (persistent: closures keep the environment they were built in).
pub(super) type Env<'a> = Rc<HashMap<NodeId, Code<'a>>>;

pub(super) fn bind<'a>(
    env: &Env<'a>,
    binds: impl IntoIterator<Item = (NodeId, Code<'a>)>,
) -> Env<'a> {
    let mut m = (**env).clone();
    m.extend(binds);
    Rc::new(m)
}

/// Translates IR nodes of one computation into element code.
pub(super) struct Gen<'a> {
    pub c: &'a Computation,
    /// `unroll` flag per reduce/scan node (from the variant's `unroll<d>` parameters).
    pub unroll: HashMap<NodeId, bool>,
    fresh: Rc<Cell<usize>>,
    /// The computation's integer literals, read from the literal table (`scalar.rs`).
    pub(super) lits: Rc<crate::ir::LiteralTable>,
    /// Per-run memoization (`values.rs`): the run id's slot, the current phase's prefix and the
    /// `static` cells its memoized values need (emitted at the top of the phase).
    pub(super) memo: Rc<std::cell::RefCell<Memo>>,
    free: std::cell::OnceCell<Vec<std::collections::BTreeSet<NodeId>>>,
}

/// See [`Gen::memo`].
#[derive(Default)]
pub(super) struct Memo {
    pub run_slot: Option<usize>,
    pub prefix: String,
    pub statics: Vec<String>,
    /// Tile-width specialization (`spec.rs`): Some while a flat root map's body is emitted,
    /// with the splits specialized so far.
    pub spec: Option<Vec<super::spec::SpecTile>>,
    /// The `LaneCells` sites used so far while `spec` is Some (`jam/lanes.rs`): `f64`, `f32`.
    pub lane_sites: [usize; 2],
}

pub(super) fn rust_ty(e: Elem) -> &'static str {
    e.name()
}

/// A Rust string literal.
pub(super) fn quote(s: &str) -> String {
    format!("{s:?}")
}

impl<'a> Gen<'a> {
    pub fn new(c: &'a Computation, unroll: HashMap<NodeId, bool>) -> Self {
        Gen {
            c,
            unroll,
            fresh: Rc::new(Cell::new(0)),
            lits: Rc::new(crate::ir::LiteralTable::of(c)),
            memo: Rc::default(),
            free: std::cell::OnceCell::new(),
        }
    }

    fn clone_gen(&self) -> Gen<'a> {
        Gen {
            c: self.c,
            unroll: self.unroll.clone(),
            fresh: self.fresh.clone(),
            lits: self.lits.clone(),
            memo: self.memo.clone(),
            free: self.free.clone(),
        }
    }

    /// Where the host passes the run id (memoization is off until set).
    pub fn set_run_slot(&self, slot: usize) {
        self.memo.borrow_mut().run_slot = Some(slot);
    }

    /// Whether node `n` depends on no lambda parameter (only on buffers and literals).
    pub(super) fn closed(&self, n: NodeId) -> bool {
        self.free.get_or_init(|| self.c.free_params())[n.0 as usize].is_empty()
    }

    /// A fresh local name.
    pub fn name(&self, base: &str) -> String {
        let k = self.fresh.get();
        self.fresh.set(k + 1);
        format!("{base}{k}")
    }

    pub(super) fn op_name(&self, n: NodeId) -> &'static str {
        self.c.node(n).op.kind().name()
    }

    pub fn unsupported(&self, n: NodeId, message: impl Into<String>) -> CodegenError {
        CodegenError::Emit {
            backend: "cpu",
            op: self.op_name(n),
            node: n,
            loc: self.c.loc(n),
            message: message.into(),
        }
    }

    /// `fail("gather", 12, msg)`: the runtime error of node `n` (a panic caught at the kernel
    /// boundary and returned to the host as that node's error).
    pub fn fail(&self, n: NodeId, msg_expr: &str) -> String {
        format!("fail({}, {}, {msg_expr})", quote(self.op_name(n)), n.0)
    }

    pub fn elem_of(&self, n: NodeId) -> Option<Elem> {
        match &self.c.node(n).ty {
            Type::Scalar(e) => Some(*e),
            _ => None,
        }
    }

    pub fn seq(&self, n: NodeId, env: &Env<'a>) -> R<Rc<SeqCode<'a>>> {
        match self.eval(n, env)? {
            Code::Seq(s) => Ok(s),
            _ => panic!("internal: validated node {n} is not a sequence"),
        }
    }

    pub fn scalar(&self, n: NodeId, env: &Env<'a>) -> R<(String, Elem)> {
        match self.eval(n, env)? {
            Code::Scalar(s, e) => Ok((s, e)),
            _ => Err(self.unsupported(n, "a tuple where a scalar is expected")),
        }
    }

    /// An integer scalar as an `i128` expression.
    pub(super) fn int(&self, n: NodeId, env: &Env<'a>) -> R<String> {
        let (s, _) = self.scalar(n, env)?;
        Ok(format!("(({s}) as i128)"))
    }

    /// Applies a binary lambda to two scalar expressions (which should be plain names: the
    /// body may mention a parameter more than once).
    pub fn apply2(&self, f: &Lambda, a: &str, b: &str, elem: Elem, env: &Env<'a>) -> R<String> {
        let env = bind(
            env,
            [
                (f.params[0], Code::Scalar(a.to_string(), elem)),
                (f.params[1], Code::Scalar(b.to_string(), elem)),
            ],
        );
        Ok(self.scalar(f.body, &env)?.0)
    }

    pub fn eval(&self, n: NodeId, env: &Env<'a>) -> R<Code<'a>> {
        if let Some(c) = env.get(&n) {
            return Ok(c.clone());
        }
        let c = self.c;
        if let Some(f) = crate::emit::lower::flat(&c.node(n).op) {
            return self.lowered(n, f, env);
        }
        match &c.node(n).op {
            Op::Input { buffer } => self.input(n, *buffer),
            Op::Param => panic!("internal: parameter {n} used outside its lambda"),
            Op::Scalar { expr } => self.shared_scalar(n, expr, env),
            Op::Tuple { items } => self.shared_tuple(n, items, env),
            Op::Project { tuple, index } => match self.eval(*tuple, env)? {
                Code::Tuple(mut items) => Ok(items.swap_remove(*index)),
                Code::Value(w, Type::Tuple(ts)) => Ok(super::values::from_value(
                    format!("({w}).{index}"),
                    &ts[*index],
                )),
                _ => panic!("internal: validated tuple {tuple} is not a tuple"),
            },
            Op::Index { seq, index } => self.index(n, *seq, *index, env),
            Op::Length { seq } => {
                let s = self.seq(*seq, env)?;
                let len = Code::Scalar(format!("(({}) as u64)", s.len), Elem::U64);
                Ok(with_checks(len, &s.checks))
            }
            Op::Map { f, inputs } => self.map(n, f, inputs, env),
            Op::Reduce { op, input, prefix } => self.reduce(n, op, *input, *prefix, env),
            Op::Zip { inputs } => self.zip(n, inputs, env),
            Op::Split { input, tile } => self.split(n, *input, *tile, env),
            Op::Join { inputs } => self.join(inputs, env),
            Op::Nest { input, offsets } => self.nest(n, *input, *offsets, env),
            Op::Scan { op, input, prefix } => self.scan_value(op, *input, *prefix, env),
            Op::ReduceByKey {
                op,
                input,
                keys,
                prefix,
            } => self.reduce_by_key_value(n, op, (*input, *keys, *prefix), env),
            Op::Scatter {
                source,
                indices,
                dest,
            } => self.scatter_value(n, (*source, *indices, *dest), env),
            Op::Transpose { input } => self.transpose(n, *input, env),
            Op::Gather { .. }
            | Op::Range { .. }
            | Op::Replicate { .. }
            | Op::Reverse { .. }
            | Op::Striding { .. } => unreachable!("internal: {n} is lowered by emit::lower"),
        }
    }

    /// Input buffer `buffer`: the slice `b<buffer>`.
    fn input(&self, n: NodeId, buffer: usize) -> R<Code<'a>> {
        let elem = self.elem_of_seq(n);
        let b = format!("b{buffer}");
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: Some(b.clone()),
            len: format!("{b}.len()"),
            checks: vec![],
            elem: Box::new(move |i| Ok(Code::Scalar(format!("{b}[{i}]"), elem))),
        })))
    }

    /// `seq[index]`, the index checked.
    fn index(&self, n: NodeId, seq: NodeId, index: NodeId, env: &Env<'a>) -> R<Code<'a>> {
        let s = self.seq(seq, env)?;
        let i = self.int(index, env)?;
        let chk = format!(
            "chk_index({i}, {}, {}, {})",
            s.len,
            quote(self.op_name(n)),
            n.0
        );
        Ok(with_checks(keep_index_check(s.at(&chk)?, &chk), &s.checks))
    }

    /// An inner `map`: its body evaluated per element over its inputs' elements.
    fn map(&self, n: NodeId, f: &Lambda, inputs: &[NodeId], env: &Env<'a>) -> R<Code<'a>> {
        let (ins, checks) = self.equal_inputs(n, inputs, env)?;
        let len = ins[0].len.clone();
        let g = self.clone_gen();
        let f = f.clone();
        let env = env.clone();
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len,
            checks,
            elem: Box::new(move |i| {
                let binds = f
                    .params
                    .iter()
                    .zip(&ins)
                    .map(|(p, s)| Ok((*p, s.at(i)?)))
                    .collect::<R<Vec<_>>>()?;
                g.eval(f.body, &bind(&env, binds))
            }),
        })))
    }

    /// `zip`: tuples of the inputs' elements, the lengths checked equal.
    /// The input sequences of a `map` or `zip`, with their checks and the check that their
    /// lengths agree.
    pub(super) fn equal_inputs(
        &self,
        n: NodeId,
        inputs: &[NodeId],
        env: &Env<'a>,
    ) -> R<(Vec<Rc<SeqCode<'a>>>, Vec<String>)> {
        let ins: Vec<Rc<SeqCode<'a>>> =
            inputs.iter().map(|i| self.seq(*i, env)).collect::<R<_>>()?;
        let mut checks: Vec<String> = ins.iter().flat_map(|s| s.checks.clone()).collect();
        checks.extend(self.equal_lengths(n, &ins));
        Ok((ins, checks))
    }

    fn zip(&self, n: NodeId, inputs: &[NodeId], env: &Env<'a>) -> R<Code<'a>> {
        let (ins, checks) = self.equal_inputs(n, inputs, env)?;
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len: ins[0].len.clone(),
            checks,
            elem: Box::new(move |i| {
                Ok(Code::Tuple(ins.iter().map(|s| s.at(i)).collect::<R<_>>()?))
            }),
        })))
    }

    /// `split`: tiles (subslices of contiguous memory), the tile size checked positive.
    fn split(&self, n: NodeId, input: NodeId, tile: NodeId, env: &Env<'a>) -> R<Code<'a>> {
        let s = self.seq(input, env)?;
        let t = self.int(tile, env)?;
        let buffer = matches!(self.c.node(input).op, Op::Input { .. });
        let spec = self.spec_tile(buffer, &self.scalar(tile, env)?.0, &s.len);
        // The tile size is checked once, where the consumer runs the split's checks, and read
        // from a local by every tile after that. The length checks the tile size itself, so it
        // holds wherever it is read. Specialized (`spec.rs`), an expansion with `W > 0` runs
        // only where the tile is `W` and every tile is full.
        let name = self.name("t");
        let mut chk = format!(
            "chk_positive({t}, {}, {}, {})",
            quote("tile size"),
            quote(self.op_name(n)),
            n.0
        );
        if spec {
            chk = format!("(if W != 0 {{ W }} else {{ {chk} }})");
        }
        let mut checks = s.checks.clone();
        checks.push(format!("let {name}: usize = {chk};"));
        let len = format!("({}).div_ceil({chk})", s.len);
        let t = name;
        let g = self.clone_gen();
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len,
            checks,
            elem: Box::new(move |i| {
                let s = s.clone();
                let start = format!("(({i}) * {t})");
                let mut rlen = format!("({t}).min(({}) - {start})", s.len);
                if spec {
                    rlen = format!("(if W != 0 {{ W }} else {{ {rlen} }})");
                }
                if let Some(base) = &s.slice
                    && let Code::Scalar(_, e) = s.at("0")?
                {
                    let tile = g.name("tile");
                    let t2 = tile.clone();
                    return Ok(Code::Seq(Rc::new(SeqCode {
                        slice: Some(tile.clone()),
                        len: format!("{tile}.len()"),
                        checks: vec![format!("let {tile} = &{base}[{start}..{start} + {rlen}];")],
                        elem: Box::new(move |k| Ok(Code::Scalar(in_bounds(&t2, k), e))),
                    })));
                }
                Ok(Code::Seq(Rc::new(SeqCode {
                    slice: None,
                    len: rlen,
                    checks: vec![],
                    elem: Box::new(move |k| s.at(&format!("({start} + {k})"))),
                })))
            }),
        })))
    }

    /// `join`: the Cartesian product of the inputs as tuples, in mixed radix.
    fn join(&self, inputs: &[NodeId], env: &Env<'a>) -> R<Code<'a>> {
        let ins: Vec<Rc<SeqCode<'a>>> =
            inputs.iter().map(|i| self.seq(*i, env)).collect::<R<_>>()?;
        let checks: Vec<String> = ins.iter().flat_map(|s| s.checks.clone()).collect();
        let len = ins
            .iter()
            .map(|s| format!("({})", s.len))
            .collect::<Vec<_>>()
            .join(" * ");
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len,
            checks,
            elem: Box::new(move |i| {
                // Mixed radix, the last input varying fastest.
                let mut items = Vec::new();
                for (k, s) in ins.iter().enumerate() {
                    let inner: Vec<String> = ins[k + 1..]
                        .iter()
                        .map(|t| format!("({})", t.len))
                        .collect();
                    let div = if inner.is_empty() {
                        "1".to_string()
                    } else {
                        inner.join(" * ")
                    };
                    items.push(s.at(&format!("((({i}) / ({div})) % ({}))", s.len))?);
                }
                Ok(Code::Tuple(items))
            }),
        })))
    }

    /// `nest`: rows between consecutive checked offsets (subslices of contiguous memory).
    fn nest(&self, n: NodeId, input: NodeId, offsets: NodeId, env: &Env<'a>) -> R<Code<'a>> {
        let s = self.seq(input, env)?;
        let off = self.seq(offsets, env)?;
        let mut checks = s.checks.clone();
        checks.extend(off.checks.clone());
        let name = quote(self.op_name(n));
        let node = n.0;
        checks.push(format!(
            "chk_nonempty_offsets({}, {name}, {node});",
            off.len
        ));
        let len = format!("(({}) - 1)", off.len);
        let g = self.clone_gen();
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len,
            checks,
            elem: Box::new(move |i| {
                let a = g.name("lo");
                let b = g.name("hi");
                let (oa, ob) = match (off.at(i)?, off.at(&format!("(({i}) + 1)"))?) {
                    (Code::Scalar(x, _), Code::Scalar(y, _)) => (x, y),
                    _ => panic!("internal: offsets are not scalars"),
                };
                let s = s.clone();
                let a2 = a.clone();
                let mut checks = vec![format!(
                    "let ({a}, {b}) = chk_segment(({oa}) as i128, ({ob}) as i128, {i}, {}, {name}, {node});",
                    s.len
                )];
                if let Some(base) = &s.slice {
                    // Contiguous rows become subslices: one check per row.
                    let row = g.name("row");
                    checks.push(format!("let {row} = &{base}[{a}..{b}];"));
                    let r2 = row.clone();
                    let elem = s.at("0").map(|c| match c {
                        Code::Scalar(_, e) => Some(e),
                        _ => None,
                    })?;
                    if let Some(e) = elem {
                        return Ok(Code::Seq(Rc::new(SeqCode {
                            slice: Some(row.clone()),
                            len: format!("{row}.len()"),
                            checks,
                            elem: Box::new(move |k| Ok(Code::Scalar(in_bounds(&r2, k), e))),
                        })));
                    }
                }
                Ok(Code::Seq(Rc::new(SeqCode {
                    slice: None,
                    len: format!("({b} - {a})"),
                    checks,
                    elem: Box::new(move |k| s.at(&format!("({a2} + {k})"))),
                })))
            }),
        })))
    }

    /// The element type of node `n` when it is a flat sequence of scalars.
    pub(super) fn flat_elem(&self, n: NodeId) -> Option<Elem> {
        match &self.c.node(n).ty {
            Type::Seq(t) => t.as_scalar(),
            _ => None,
        }
    }

    fn elem_of_seq(&self, n: NodeId) -> Elem {
        self.flat_elem(n)
            .unwrap_or_else(|| panic!("internal: {n} is not a flat sequence of scalars"))
    }

    fn equal_lengths(&self, n: NodeId, ins: &[Rc<SeqCode<'a>>]) -> Vec<String> {
        ins.iter()
            .enumerate()
            .skip(1)
            .map(|(k, s)| {
                format!(
                    "chk_equal_len({}, {}, {k}, {}, {});",
                    ins[0].len,
                    s.len,
                    quote(self.op_name(n)),
                    n.0
                )
            })
            .collect()
    }

    /// A sequential reduction as a block expression. With `unroll`, four accumulators run over
    /// four contiguous quarters of the input and are combined in order, which needs only
    /// associativity (the contract of every reduction operator).
    fn reduce(
        &self,
        n: NodeId,
        op: &Lambda,
        input: NodeId,
        prefix: Option<NodeId>,
        env: &Env<'a>,
    ) -> R<Code<'a>> {
        let Some(elem) = self.elem_of(n) else {
            return self.reduce_value(n, op, input, prefix, env);
        };
        let s = self.seq(input, env)?;
        let ty = rust_ty(elem);
        let len = self.name("n");
        let k = self.name("k");
        let x = self.name("x");
        let acc = self.name("acc");
        let mut out = String::from("{\n");
        for c in &s.checks {
            out.push_str(c);
            out.push('\n');
        }
        out.push_str(&format!("let {len}: usize = {};\n", s.len));
        let (init, start) = match prefix {
            Some(p) => (self.scalar(p, env)?.0, "0".to_string()),
            None => {
                out.push_str(&format!(
                    "if {len} == 0 {{ {}; }}\n",
                    self.fail(n, "\"reduction of an empty sequence without a prefix\"")
                ));
                (scalar_of(s.at("0")?), "1".to_string())
            }
        };
        out.push_str(&format!("let mut {acc}: {ty} = {init};\n"));
        let step = |a: &str, idx: &str| -> R<String> {
            let e = scalar_of(s.at(idx)?);
            let body = self.apply2(op, a, &x, elem, env)?;
            Ok(format!("{{ let {x}: {ty} = {e}; {a} = {body}; }}"))
        };
        if self.unroll.get(&n).copied().unwrap_or(false) {
            let q = self.name("q");
            let lanes: Vec<String> = (1..4).map(|_| self.name("lane")).collect();
            let mut fast = format!("let {q} = {len} / 4;\n");
            for (li, l) in lanes.iter().enumerate() {
                let e = scalar_of(s.at(&format!("({} * {q})", li + 1))?);
                fast.push_str(&format!("let mut {l}: {ty} = {e};\n"));
            }
            // Quarter 0 runs in the accumulator itself, interleaved with the other three.
            if start == "0" {
                fast.push_str(&step(&acc, "0")?);
                fast.push('\n');
            }
            let mut lane_loop = step(&acc, &k)?;
            lane_loop.push('\n');
            for (li, l) in lanes.iter().enumerate() {
                lane_loop.push_str(&step(l, &format!("({} * {q} + {k})", li + 1))?);
                lane_loop.push('\n');
            }
            fast.push_str(&format!("for {k} in 1..{q} {{\n{lane_loop}}}\n"));
            fast.push_str(&format!(
                "for {k} in (4 * {q})..{len} {{\n{}\n}}\n",
                step(&lanes[2], &k)?
            ));
            for l in &lanes {
                let comb = self.apply2(op, &acc, l, elem, env)?;
                fast.push_str(&format!("{acc} = {comb};\n"));
            }
            let slow = format!("for {k} in {start}..{len} {{\n{}\n}}\n", step(&acc, &k)?);
            out.push_str(&format!("if {len} >= 8 {{\n{fast}}} else {{\n{slow}}}\n"));
        } else {
            out.push_str(&format!(
                "for {k} in {start}..{len} {{\n{}\n}}\n",
                step(&acc, &k)?
            ));
        }
        out.push_str(&format!("{acc}\n}}"));
        Ok(Code::Scalar(out, elem))
    }
}

pub(super) fn scalar_of(c: Code<'_>) -> String {
    match c {
        Code::Scalar(s, _) => s,
        _ => panic!("internal: element is not a scalar"),
    }
}

/// `code` preceded by `checks` (which may bind names the code uses).
pub(super) fn with_checks<'a>(code: Code<'a>, checks: &[String]) -> Code<'a> {
    if checks.is_empty() {
        return code;
    }
    match code {
        Code::Scalar(s, e) => Code::Scalar(format!("{{ {} {s} }}", checks.join(" ")), e),
        Code::Tuple(items) => {
            Code::Tuple(items.into_iter().map(|c| with_checks(c, checks)).collect())
        }
        Code::Value(w, t) => Code::Value(format!("{{ {} {w} }}", checks.join(" ")), t),
        Code::Seq(sc) => {
            let mut all = checks.to_vec();
            all.extend(sc.checks.iter().cloned());
            let len = sc.len.clone();
            Code::Seq(Rc::new(SeqCode {
                slice: None,
                len,
                checks: all,
                elem: Box::new(move |i| sc.at(i)),
            }))
        }
    }
}

/// An element read at checked index `idx` (`chk_gather(..)`, `chk_index(..)`), keeping the check
/// where the element's code does not use the index: every element of a `replicate` is its value,
/// so `gather(&replicate(v, 1), &[4])` must still fail on index 4 (found by the random programs).
pub(super) fn keep_index_check<'a>(code: Code<'a>, idx: &str) -> Code<'a> {
    if !idx.contains("chk_") {
        return code;
    }
    match code {
        Code::Scalar(s, e) if s.contains(idx) => Code::Scalar(s, e),
        Code::Value(s, t) if s.contains(idx) => Code::Value(s, t),
        Code::Tuple(items) => Code::Tuple(
            items
                .into_iter()
                .map(|c| keep_index_check(c, idx))
                .collect(),
        ),
        other => with_checks(other, &[format!("let _ = {idx};")]),
    }
}

/// Element `k` of the subslice `slice`, unchecked. Only for row and tile subslices, whose
/// elements are asked for at positions below their own `len` by construction: the loops this
/// emitter writes run to that `len`, zipped rows are checked to be of equal length, and the host
/// range passed to `partial`/`chunk` is checked against the row length on entry. Data-dependent
/// positions (gather, index) are checked before they get here, so a bad input is still an error.
fn in_bounds(slice: &str, k: &str) -> String {
    format!("(unsafe {{ *{slice}.get_unchecked({k}) }})")
}

/// Statements as indented lines of a function body.
pub(super) fn lines(stmts: &[String]) -> String {
    stmts
        .iter()
        .map(|s| format!("        {s}\n"))
        .collect::<String>()
}
