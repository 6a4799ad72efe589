//! The CUDA emitter: CUDA C++ for the variants of a computation (compiled by NVRTC in
//! `surge-cuda`). See `README.md` next to this file for the anatomy of an emitted kernel.
//!
//! One [`CudaProgram`] holds, for every phase, a *shape* kernel (the phase's element count and,
//! for nested results, its row lengths) and one `extern "C" __global__` kernel per requested
//! variant. Element expressions are translated generically from the IR: input buffers, earlier
//! phases' results, `nest`/`split` rows, `index` (`at`), `gather`, `range`, `replicate`,
//! `reverse`, `striding`, element-wise `map`s and scalar lambda bodies.

use crate::CodegenError;
use crate::analysis::{Analysis, Phase};
use crate::ir::{
    BinaryOp, Computation, Elem, Literal, NodeId, Op, OpKind, ScalarExpr, Type, UnaryOp,
};
use crate::policy::PValue;
use crate::schedule::ScheduleElem;
use crate::target::Platform;
use crate::variant::Variant;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

const PRELUDE: &str = include_str!("../../templates/cuda/prelude.cu");
const KERNEL: &str = include_str!("../../templates/cuda/kernel.cu.tera");
const SHAPE: &str = include_str!("../../templates/cuda/shape.cu.tera");

/// Placeholders in element templates: the element index and the row index.
const I: &str = "@I@";
const R: &str = "@R@";

/// The expression sequences this emitter supports.
pub const SUPPORTED: [&str; 3] = ["map", "map.reduce", "map.scan"];

/// A buffer a phase's kernels read, in kernel-parameter order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgSlot {
    /// Input buffer `buffer` of the computation: parameters `const T* inB, u64 n_inB`.
    Input { buffer: usize, elem: Elem },
    /// The result of an earlier phase: `const T* phK, u64 n_phK` and, when nested,
    /// `const u64* phK_off, u64 n_phK_off` (row offsets, `rows + 1` entries).
    Phase {
        phase: usize,
        elem: Elem,
        nested: bool,
    },
}

/// The result of one phase: `n` elements, or `n` rows stored flat with offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputShape {
    pub elem: Elem,
    pub nested: bool,
}

/// What the host needs to run one phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhasePlan {
    pub phase: usize,
    pub root: NodeId,
    pub sequence: String,
    pub args: Vec<ArgSlot>,
    pub output: OutputShape,
    /// `(args..., u64* shape, u64* surge_err)`: writes the phase's element count to `shape[0]`.
    pub shape_kernel: String,
    /// For nested results, `(args..., u64* lens, u64* surge_err)`: writes each row's length.
    pub rows_kernel: Option<String>,
}

/// How to launch one variant's kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// Block shape `(bx, by)`.
    pub block: (u32, u32),
    /// Execution resources (threads, logical warps or block rows) per block.
    pub groups_per_block: u32,
    /// Elements per resource per step of the grid-stride loop.
    pub grain: u32,
    /// A sequential outer level: one block, one resource does all elements.
    pub single_group: bool,
}

impl Launch {
    /// Grid size for `n` outer elements, capped at `max_blocks` (the loop is grid-stride).
    pub fn grid(&self, n: u64, max_blocks: u32) -> u32 {
        if self.single_group {
            return 1;
        }
        let groups = n.div_ceil(self.grain.max(1) as u64);
        let blocks = groups.div_ceil(self.groups_per_block.max(1) as u64);
        blocks.clamp(1, max_blocks.max(1) as u64) as u32
    }
}

/// One emitted kernel: the variant it realizes and its (unique) name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaKernel {
    pub phase: usize,
    pub variant: Variant,
    pub name: String,
    pub launch: Launch,
}

/// CUDA C++ source for all requested variants of a computation, and how to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaProgram {
    pub source: String,
    pub phases: Vec<PhasePlan>,
    pub kernels: Vec<CudaKernel>,
}

impl CudaProgram {
    /// The kernel of `variant` in `phase`, if it was emitted.
    pub fn kernel(&self, phase: usize, variant: &Variant) -> Option<&CudaKernel> {
        self.kernels
            .iter()
            .find(|k| k.phase == phase && &k.variant == variant)
    }
    /// A stable hash of the source (keys module caches).
    pub fn hash(&self) -> u128 {
        crate::ir::fnv1a128(self.source.as_bytes())
    }
}

/// The device error record every kernel takes as its last parameter, `u64 *surge_err`:
/// [`ERROR_WORDS`] words, `[node << 8 | code, a, b, c]`, all zero while no check has failed. The
/// first failing thread claims word 0 with `atomicCAS` and writes the values; the codes are the
/// `SURGE_*` constants of `templates/cuda/prelude.cu`.
pub const ERROR_WORDS: usize = 4;

/// The run-time check codes of the emitted kernels (`SURGE_*` in `prelude.cu`).
pub mod check {
    /// A gather index out of range: a = index, b = position, c = source length.
    pub const GATHER: u64 = 1;
    /// An `index`/`at` out of range: a = index, c = length.
    pub const INDEX: u64 = 2;
    /// A nest offset outside the flat sequence: a = offset, b = its position, c = flat length.
    pub const OFFSET_RANGE: u64 = 3;
    /// Decreasing nest offsets: a = offsets\[b\], c = offsets\[b + 1\].
    pub const OFFSET_ORDER: u64 = 4;
    /// A nest without offsets.
    pub const OFFSETS_EMPTY: u64 = 5;
    /// A reduction without a prefix over an empty row.
    pub const EMPTY_REDUCE: u64 = 6;
    /// A tile size (b = 0) or stride (b = 1) that is not positive: a = the value.
    pub const NOT_POSITIVE: u64 = 7;
    /// A range with stride 0.
    pub const STRIDE_ZERO: u64 = 8;
    /// A negative replicate length: a = the length.
    pub const NEGATIVE_LEN: u64 = 9;
    /// A map's inputs differ in length: a = input 0's length, b = the input, c = its length.
    pub const EQUAL_LEN: u64 = 10;
}

/// Decodes a device error record: the failing node and the message the interpreter (and the CPU
/// backend) gives for the same failure. `None` when no check failed (word 0 is zero); an unknown
/// code still names its node.
pub fn decode_error(rec: &[u64; ERROR_WORDS]) -> Option<(NodeId, String)> {
    if rec[0] == 0 {
        return None;
    }
    let (node, code) = (NodeId(rec[0] >> 8), rec[0] & 0xff);
    let (a, b, c) = (rec[1] as i64, rec[2] as i64, rec[3] as i64);
    let message = match code {
        check::GATHER => {
            format!("index {a} at position {b} is out of range for a source of length {c}")
        }
        check::INDEX => format!("index {a} is out of range for a sequence of length {c}"),
        check::OFFSET_RANGE => {
            format!("offsets[{b}] = {a} is out of range for a sequence of length {c}")
        }
        check::OFFSET_ORDER => format!(
            "offsets are not monotone: offsets[{b}] = {a} > offsets[{}] = {c}",
            b + 1
        ),
        check::OFFSETS_EMPTY => {
            "offsets are empty; a nested sequence of n rows needs n + 1 offsets".into()
        }
        check::EMPTY_REDUCE => "reduction of an empty sequence without a prefix".into(),
        check::NOT_POSITIVE => format!(
            "{} must be positive, got {a}",
            if b == 0 { "tile size" } else { "stride" }
        ),
        check::STRIDE_ZERO => "stride is 0".into(),
        check::NEGATIVE_LEN => format!("length {a} is negative"),
        check::EQUAL_LEN => {
            format!("input lengths differ: input 0 has length {a}, input {b} has length {c}")
        }
        other => format!("run-time check {other} failed (values {a}, {b}, {c})"),
    };
    Some((node, message))
}

/// The kernel name of a variant in a phase: `surge_p{phase}_{16 hex digits of the id's hash}`.
pub fn kernel_name(phase: usize, variant: &Variant) -> String {
    let h = crate::ir::fnv1a128(variant.id().as_bytes());
    format!("surge_p{phase}_{:016x}", (h as u64) ^ ((h >> 64) as u64))
}

/// Emits one program with a kernel for every (phase, variant) in `variants`, where
/// `variants[p]` lists the variants of phase `p` (an empty list emits only the shape kernels).
pub fn emit(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Vec<Variant>],
) -> Result<CudaProgram, CodegenError> {
    if variants.len() > analysis.phases.len() {
        return Err(CodegenError::EmitVariant {
            what: "cuda program".into(),
            message: format!(
                "{} variant lists for {} phases",
                variants.len(),
                analysis.phases.len()
            ),
        });
    }
    let roots: BTreeMap<NodeId, usize> = analysis
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| (p.root, i))
        .collect();
    let tera = templates()?;
    let mut source = String::new();
    let _ = writeln!(
        source,
        "// Surge CUDA program: {} phase(s), expression sequences {}.\n// Generated by surge-codegen; \
         each kernel is headed by the id of the variant it realizes.\n",
        analysis.phases.len(),
        analysis.expression_sequence()
    );
    source.push_str(PRELUDE);
    let mut phases = Vec::new();
    let mut kernels = Vec::new();
    for (p, phase) in analysis.phases.iter().enumerate() {
        let code = PhaseCode::translate(c, &roots, p, phase)?;
        let plan = code.plan(p, phase);
        source.push('\n');
        source.push_str(&code.render_shape(&tera, &plan)?);
        for v in variants.get(p).map(Vec::as_slice).unwrap_or(&[]) {
            let (text, launch) = code.render_kernel(&tera, p, v)?;
            source.push('\n');
            source.push_str(&text);
            kernels.push(CudaKernel {
                phase: p,
                variant: v.clone(),
                name: kernel_name(p, v),
                launch,
            });
        }
        phases.push(plan);
    }
    Ok(CudaProgram {
        source,
        phases,
        kernels,
    })
}

fn templates() -> Result<tera::Tera, CodegenError> {
    let mut t = tera::Tera::default();
    t.autoescape_on(vec![]);
    t.add_raw_templates(vec![("kernel", KERNEL), ("shape", SHAPE)])
        .map_err(|e| CodegenError::EmitVariant {
            what: "cuda templates".into(),
            message: format!("{e:?}"),
        })?;
    Ok(t)
}

/// C++ name of an element type: the prelude typedefs the IR's own names (`f64`, `u32`, ...).
pub fn cuda_type(e: Elem) -> &'static str {
    e.name()
}

fn literal(l: Literal) -> String {
    match l {
        Literal::F64(b) => {
            let v = f64::from_bits(b);
            if v.is_finite() {
                format!("{v:?}")
            } else {
                format!("__longlong_as_double(0x{b:016x}LL)")
            }
        }
        Literal::F32(b) => {
            let v = f32::from_bits(b);
            if v.is_finite() {
                format!("{v:?}f")
            } else {
                format!("__int_as_float(0x{b:08x})")
            }
        }
        Literal::I32(v) => format!("((i32){}LL)", v),
        Literal::I64(v) if v == i64::MIN => "((i64)(-9223372036854775807LL - 1))".into(),
        Literal::I64(v) => format!("((i64){v}LL)"),
        Literal::U32(v) => format!("((u32){v}u)"),
        Literal::U64(v) => format!("((u64){v}ULL)"),
        Literal::Bool(v) => v.to_string(),
    }
}

/// A flat sequence: its length and its element `@I@` as C++ expressions.
#[derive(Debug, Clone)]
struct SeqV {
    len: String,
    at: String,
    elem: Elem,
}

impl SeqV {
    fn at(&self, i: &str) -> String {
        self.at.replace(I, &format!("({i})"))
    }
}

/// A nested sequence: its row count, and row `@R@` as (begin, length) into a flat sequence.
#[derive(Debug, Clone)]
struct RowsV {
    rows: String,
    begin: String,
    len: String,
    /// A run-time check of row `@R@` (a `bool` expression that records the error when false);
    /// a row that fails it is read as empty.
    ok: Option<String>,
    flat: SeqV,
}

impl RowsV {
    /// Row `r` (known to be below `rows` when `r_ok` is true) as a flat sequence.
    fn row(&self, r: &str, r_ok: Option<String>) -> SeqV {
        let sub = |t: &str| t.replace(R, &format!("({r})"));
        let ok: Vec<String> = r_ok
            .into_iter()
            .chain(self.ok.as_ref().map(|o| sub(o)))
            .collect();
        let (begin, len) = if ok.is_empty() {
            (sub(&self.begin), sub(&self.len))
        } else {
            let ok = ok.join(" && ");
            (
                format!("(({ok}) ? {} : 0ULL)", sub(&self.begin)),
                format!("(({ok}) ? {} : 0ULL)", sub(&self.len)),
            )
        };
        SeqV {
            len,
            at: self.flat.at(&format!("{begin} + {I}")),
            elem: self.flat.elem,
        }
    }
}

#[derive(Debug, Clone)]
enum Bound {
    Scalar(String),
    Seq(SeqV),
}

type Env = HashMap<NodeId, Bound>;

/// The IR → C++ expression translator of one phase.
struct Tr<'a> {
    c: &'a Computation,
    roots: &'a BTreeMap<NodeId, usize>,
    phase: usize,
    sequence: String,
    args: RefCell<Vec<ArgSlot>>,
}

impl Tr<'_> {
    fn unsupported(&self, n: NodeId, what: &str) -> CodegenError {
        CodegenError::EmitVariant {
            what: format!("phase {} ({})", self.phase, self.sequence),
            message: format!(
                "the CUDA emitter cannot translate `{}` ({n}) {what}",
                self.c.node(n).op.kind()
            ),
        }
    }

    fn ty(&self, n: NodeId) -> &Type {
        &self.c.node(n).ty
    }

    fn arg(&self, slot: ArgSlot) -> String {
        let mut args = self.args.borrow_mut();
        if !args.contains(&slot) {
            args.push(slot.clone());
        }
        match slot {
            ArgSlot::Input { buffer, .. } => format!("in{buffer}"),
            ArgSlot::Phase { phase, .. } => format!("ph{phase}"),
        }
    }

    /// An earlier phase's result, when `n` is one (and not the phase being emitted).
    fn phase_result(&self, n: NodeId) -> Option<(usize, Elem, bool)> {
        let &k = self.roots.get(&n)?;
        if k >= self.phase {
            return None;
        }
        let ty = self.ty(n);
        let nested = ty.depth() == 2;
        let mut t = ty;
        while let Type::Seq(inner) = t {
            t = inner;
        }
        Some((k, t.as_scalar()?, nested))
    }

    fn scalar(&self, n: NodeId, env: &Env) -> Result<String, CodegenError> {
        if let Some(b) = env.get(&n) {
            return match b {
                Bound::Scalar(s) => Ok(s.clone()),
                Bound::Seq(_) => Err(self.unsupported(n, "as a scalar (it is a sequence)")),
            };
        }
        match &self.c.node(n).op {
            Op::Scalar { expr } => self.expr(expr, env),
            Op::Index { seq, index } => {
                let i = self.scalar(*index, env)?;
                match self.ty(*seq).depth() {
                    1 => {
                        let s = self.seq(*seq, env)?;
                        Ok(format!(
                            "surge_index<{}>((i64)({i}), {}, {}, surge_err, [&](u64 surge_k) {{ return {}; }})",
                            cuda_type(s.elem),
                            s.len,
                            n.0,
                            s.at("surge_k")
                        ))
                    }
                    _ => Err(self.unsupported(n, "to a scalar (it indexes a nested sequence)")),
                }
            }
            Op::Length { seq } => match self.ty(*seq).depth() {
                1 => Ok(self.seq(*seq, env)?.len),
                _ => Ok(self.rows(*seq, env)?.rows),
            },
            Op::Project { tuple, index } => match &self.c.node(*tuple).op {
                Op::Tuple { items } if *index < items.len() => self.scalar(items[*index], env),
                _ => Err(self.unsupported(n, "(a projection of a computed tuple)")),
            },
            _ => Err(self.unsupported(n, "as a scalar in an element expression")),
        }
    }

    fn elem_of(&self, e: &ScalarExpr) -> Result<Elem, CodegenError> {
        crate::ir::infer_scalar(e, &|n| self.ty(n).clone()).map_err(|m| CodegenError::EmitVariant {
            what: format!("phase {} ({})", self.phase, self.sequence),
            message: m,
        })
    }

    fn expr(&self, e: &ScalarExpr, env: &Env) -> Result<String, CodegenError> {
        let t = self.elem_of(e)?;
        Ok(match e {
            ScalarExpr::Const(l) => literal(*l),
            ScalarExpr::Value(n) => self.scalar(*n, env)?,
            ScalarExpr::Unary(op, a) => {
                let ta = self.elem_of(a)?;
                let a = self.expr(a, env)?;
                match (op, ta) {
                    (UnaryOp::Neg, _) => format!("(-{a})"),
                    (UnaryOp::Not, _) => format!("(!{a})"),
                    (UnaryOp::Abs, Elem::F32) => format!("fabsf({a})"),
                    (UnaryOp::Abs, Elem::F64) => format!("fabs({a})"),
                    (UnaryOp::Abs, Elem::I32) => format!("abs({a})"),
                    (UnaryOp::Abs, Elem::I64) => format!("llabs({a})"),
                    (UnaryOp::Abs, _) => a,
                    (UnaryOp::Sqrt, Elem::F32) => format!("sqrtf({a})"),
                    (UnaryOp::Exp, Elem::F32) => format!("expf({a})"),
                    (UnaryOp::Log, Elem::F32) => format!("logf({a})"),
                    (UnaryOp::Sqrt, _) => format!("sqrt((f64)({a}))"),
                    (UnaryOp::Exp, _) => format!("exp((f64)({a}))"),
                    (UnaryOp::Log, _) => format!("log((f64)({a}))"),
                }
            }
            ScalarExpr::Binary(op, a, b) => {
                let ta = self.elem_of(a)?;
                let (a, b) = (self.expr(a, env)?, self.expr(b, env)?);
                match (op, ta) {
                    (BinaryOp::Min, Elem::F32) => format!("fminf({a}, {b})"),
                    (BinaryOp::Max, Elem::F32) => format!("fmaxf({a}, {b})"),
                    (BinaryOp::Min, Elem::F64) => format!("fmin({a}, {b})"),
                    (BinaryOp::Max, Elem::F64) => format!("fmax({a}, {b})"),
                    (BinaryOp::Min, _) => format!("surge_min({a}, {b})"),
                    (BinaryOp::Max, _) => format!("surge_max({a}, {b})"),
                    (BinaryOp::Rem, Elem::F32) => format!("fmodf({a}, {b})"),
                    (BinaryOp::Rem, Elem::F64) => format!("fmod({a}, {b})"),
                    (op, _) => format!("({a} {} {b})", op.symbol()),
                }
            }
            ScalarExpr::Fma(a, b, c) => {
                let (a, b, c) = (self.expr(a, env)?, self.expr(b, env)?, self.expr(c, env)?);
                match t {
                    Elem::F32 => format!("fmaf({a}, {b}, {c})"),
                    Elem::F64 => format!("fma({a}, {b}, {c})"),
                    _ => format!("({a} * {b} + {c})"),
                }
            }
            ScalarExpr::Select(c, a, b) => format!(
                "({} ? {} : {})",
                self.expr(c, env)?,
                self.expr(a, env)?,
                self.expr(b, env)?
            ),
            ScalarExpr::Cast(e, a) => format!("(({})({}))", cuda_type(*e), self.expr(a, env)?),
        })
    }

    /// A flat sequence (depth 1) as a length and an element template.
    fn seq(&self, n: NodeId, env: &Env) -> Result<SeqV, CodegenError> {
        if let Some(b) = env.get(&n) {
            return match b {
                Bound::Seq(s) => Ok(s.clone()),
                Bound::Scalar(_) => Err(self.unsupported(n, "as a sequence (it is a scalar)")),
            };
        }
        if let Some((k, elem, false)) = self.phase_result(n) {
            let a = self.arg(ArgSlot::Phase {
                phase: k,
                elem,
                nested: false,
            });
            return Ok(SeqV {
                len: format!("n_{a}"),
                at: format!("{a}[{I}]"),
                elem,
            });
        }
        let elem_ty = |n: NodeId| match self.ty(n) {
            Type::Seq(t) => t.as_scalar(),
            _ => None,
        };
        let elem =
            elem_ty(n).ok_or_else(|| self.unsupported(n, "(not a flat sequence of scalars)"))?;
        match &self.c.node(n).op {
            Op::Input { buffer } => {
                let a = self.arg(ArgSlot::Input {
                    buffer: *buffer,
                    elem,
                });
                Ok(SeqV {
                    len: format!("n_{a}"),
                    at: format!("{a}[{I}]"),
                    elem,
                })
            }
            Op::Gather { source, indices } => {
                // Checked: an index out of range records the error and reads 0.
                let s = self.seq(*source, env)?;
                let ix = self.seq(*indices, env)?;
                Ok(SeqV {
                    len: ix.len.clone(),
                    at: format!(
                        "surge_gather<{}>((i64)({}), {I}, {}, {}, surge_err, [&](u64 surge_k) {{ return {}; }})",
                        cuda_type(elem),
                        ix.at,
                        s.len,
                        n.0,
                        s.at("surge_k")
                    ),
                    elem,
                })
            }
            Op::Map { f, inputs } => {
                let ins = inputs
                    .iter()
                    .map(|i| self.seq(*i, env))
                    .collect::<Result<Vec<_>, _>>()?;
                if ins.is_empty() {
                    return Err(self.unsupported(n, "(a map without inputs)"));
                }
                let mut inner = env.clone();
                for (p, s) in f.params.iter().zip(&ins) {
                    inner.insert(*p, Bound::Scalar(s.at.clone()));
                }
                let lens: Vec<String> = ins.iter().map(|s| s.len.clone()).collect();
                Ok(SeqV {
                    len: equal_lengths(&lens, n),
                    at: self.scalar(f.body, &inner)?,
                    elem,
                })
            }
            Op::Range { start, end, stride } => {
                let (a, b) = (self.scalar(*start, env)?, self.scalar(*end, env)?);
                let s = match stride {
                    Some(s) => format!(
                        "surge_stride({}, {}, surge_err)",
                        self.scalar(*s, env)?,
                        n.0
                    ),
                    None => "1".into(),
                };
                let t = cuda_type(elem);
                Ok(SeqV {
                    len: format!(
                        "(({s}) > 0 ? (({a}) < ({b}) ? (u64)((({b}) - ({a}) + ({s}) - 1) / ({s})) : 0ULL) \
                         : (({a}) > ({b}) ? (u64)((({a}) - ({b}) - ({s}) - 1) / (-({s}))) : 0ULL))"
                    ),
                    at: format!("(({t})(({a}) + ({t}){I} * ({s})))"),
                    elem,
                })
            }
            Op::Replicate { value, len } => Ok(SeqV {
                len: format!(
                    "surge_len((i64)({}), {}, surge_err)",
                    self.scalar(*len, env)?,
                    n.0
                ),
                at: self.scalar(*value, env)?,
                elem,
            }),
            Op::Reverse { input } => {
                let s = self.seq(*input, env)?;
                Ok(SeqV {
                    len: s.len.clone(),
                    at: s.at(&format!("{} - 1 - {I}", s.len)),
                    elem,
                })
            }
            Op::Striding { input, stride } => {
                let s = self.seq(*input, env)?;
                let st = format!(
                    "surge_positive((i64)({}), 1, {}, surge_err)",
                    self.scalar(*stride, env)?,
                    n.0
                );
                Ok(SeqV {
                    len: format!("(({} + {st} - 1) / {st})", s.len),
                    at: s.at(&format!("{I} * {st}")),
                    elem,
                })
            }
            Op::Index { seq, index } if self.ty(*seq).depth() == 2 => {
                let r = self.rows(*seq, env)?;
                let i = self.scalar(*index, env)?;
                let row = format!(
                    "surge_row_index((i64)({i}), {}, {}, surge_err)",
                    r.rows, n.0
                );
                let ok = format!("{row} < {}", r.rows);
                Ok(r.row(&row, Some(ok)))
            }
            _ => Err(self.unsupported(n, "as a flat sequence")),
        }
    }

    /// A nested sequence (depth 2) as rows over a flat sequence.
    fn rows(&self, n: NodeId, env: &Env) -> Result<RowsV, CodegenError> {
        if let Some((k, elem, true)) = self.phase_result(n) {
            let a = self.arg(ArgSlot::Phase {
                phase: k,
                elem,
                nested: true,
            });
            return Ok(RowsV {
                rows: format!("(n_{a}_off - 1)"),
                begin: format!("{a}_off[{R}]"),
                len: format!("({a}_off[{R} + 1] - {a}_off[{R}])"),
                ok: None,
                flat: SeqV {
                    len: format!("n_{a}"),
                    at: format!("{a}[{I}]"),
                    elem,
                },
            });
        }
        match &self.c.node(n).op {
            Op::Nest { input, offsets } => {
                // Checked: no offsets, and rows outside the flat sequence or reversed, record the
                // error (the rows read as empty).
                let flat = self.seq(*input, env)?;
                let off = self.seq(*offsets, env)?;
                let (lo, hi) = (off.at(R), off.at(&format!("{R} + 1")));
                let (b, e) = (format!("(u64)({lo})"), format!("(u64)({hi})"));
                Ok(RowsV {
                    rows: format!("surge_nest_rows({}, {}, surge_err)", off.len, n.0),
                    len: format!("({e} - {b})"),
                    ok: Some(format!(
                        "surge_segment_ok((i64)({lo}), (i64)({hi}), {R}, {}, {}, surge_err)",
                        flat.len, n.0
                    )),
                    begin: b,
                    flat,
                })
            }
            Op::Split { input, tile } => {
                let flat = self.seq(*input, env)?;
                let t = format!(
                    "surge_positive((i64)({}), 0, {}, surge_err)",
                    self.scalar(*tile, env)?,
                    n.0
                );
                let begin = format!("({R} * {t})");
                Ok(RowsV {
                    rows: format!("(({} + {t} - 1) / {t})", flat.len),
                    len: format!("surge_min({t}, {} - {begin})", flat.len),
                    begin,
                    ok: None,
                    flat,
                })
            }
            _ => Err(self.unsupported(n, "as a nested sequence")),
        }
    }
}

/// The common length of a map's inputs: input 0's, checked against every other input's (a
/// difference is recorded and the shorter length used, so nothing reads past an input).
fn equal_lengths(lens: &[String], node: NodeId) -> String {
    let checks: Vec<String> = lens
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, l)| {
            format!(
                "surge_equal_len({}, {l}, {k}, {}, surge_err)",
                lens[0], node.0
            )
        })
        .collect();
    match checks.as_slice() {
        [] => lens[0].clone(),
        [one] => one.clone(),
        _ => checks
            .iter()
            .skip(1)
            .fold(checks[0].clone(), |a, b| format!("surge_min({a}, {b})")),
    }
}

/// The inner level of a phase.
#[derive(Debug, Clone)]
enum Inner {
    /// `map` with a scalar body: the output element.
    None { result: String, elem: Elem },
    Reduce {
        /// The reduce node (named by the empty-row check when there is no prefix).
        node: NodeId,
        seq: SeqV,
        op_body: String,
        ident: String,
        prefix: Option<String>,
        result: String,
        out_elem: Elem,
    },
    Scan {
        seq: SeqV,
        op_body: String,
        ident: String,
        prefix: Option<String>,
    },
}

/// A phase translated once; its kernels differ only in schedule and policy.
#[derive(Debug, Clone)]
struct PhaseCode {
    phase: usize,
    sequence: String,
    args: Vec<ArgSlot>,
    n_expr: String,
    bind: Vec<String>,
    inner: Inner,
}

/// The identity of a binary operator lambda `|a, b| a ⊕ b` for ⊕ in + * min max && ||.
fn identity(c: &Computation, params: &[NodeId], body: NodeId, elem: Elem) -> Option<String> {
    let Op::Scalar {
        expr: ScalarExpr::Binary(op, x, y),
    } = &c.node(body).op
    else {
        return None;
    };
    let (ScalarExpr::Value(x), ScalarExpr::Value(y)) = (&**x, &**y) else {
        return None;
    };
    let [a, b] = params else { return None };
    if !((x == a && y == b) || (x == b && y == a)) {
        return None;
    }
    let t = cuda_type(elem);
    let (lo, hi) = match elem {
        Elem::F32 => (
            "(-__int_as_float(0x7f800000))",
            "__int_as_float(0x7f800000)",
        ),
        Elem::F64 => (
            "(-__longlong_as_double(0x7ff0000000000000LL))",
            "__longlong_as_double(0x7ff0000000000000LL)",
        ),
        Elem::I32 => ("((i32)0x80000000)", "((i32)0x7fffffff)"),
        Elem::I64 => (
            "((i64)0x8000000000000000ULL)",
            "((i64)0x7fffffffffffffffLL)",
        ),
        Elem::U32 => ("0u", "0xffffffffu"),
        Elem::U64 => ("0ULL", "0xffffffffffffffffULL"),
        Elem::Bool => ("false", "true"),
    };
    Some(match op {
        BinaryOp::Add | BinaryOp::Or => format!("(({t})0)"),
        BinaryOp::Mul | BinaryOp::And => format!("(({t})1)"),
        BinaryOp::Min => hi.to_string(),
        BinaryOp::Max => lo.to_string(),
        _ => return None,
    })
}

impl PhaseCode {
    fn translate(
        c: &Computation,
        roots: &BTreeMap<NodeId, usize>,
        p: usize,
        phase: &Phase,
    ) -> Result<PhaseCode, CodegenError> {
        let sequence = phase.expression_sequence();
        let tr = Tr {
            c,
            roots,
            phase: p,
            sequence: sequence.clone(),
            args: RefCell::new(Vec::new()),
        };
        let unsupported = || CodegenError::EmitVariant {
            what: format!("phase {p} ({sequence})"),
            message: format!(
                "the CUDA emitter supports the expression sequences {}, not `{sequence}`",
                SUPPORTED.join(", ")
            ),
        };
        if !SUPPORTED.contains(&sequence.as_str()) {
            return Err(unsupported());
        }
        let Op::Map { f, inputs } = &c.node(phase.root).op else {
            return Err(unsupported());
        };
        // Outer level: bind the map's parameters to row i of each input.
        let mut env = Env::new();
        let mut bind = Vec::new();
        let mut lens = Vec::new();
        for (k, (param, input)) in f.params.iter().zip(inputs).enumerate() {
            match c.node(*input).ty.depth() {
                2 => {
                    let rows = tr.rows(*input, &env)?;
                    let b = rows.begin.replace(R, "i");
                    let l = rows.len.replace(R, "i");
                    if let Some(ok) = &rows.ok {
                        // A row that fails its check is read as empty.
                        bind.push(format!("const bool ok{k} = {};", ok.replace(R, "i")));
                        bind.push(format!("const u64 b{k} = ok{k} ? {b} : 0ULL;"));
                        bind.push(format!("const u64 l{k} = ok{k} ? {l} : 0ULL;"));
                    } else {
                        bind.push(format!("const u64 b{k} = {b};"));
                        bind.push(format!("const u64 l{k} = {l};"));
                    }
                    env.insert(
                        *param,
                        Bound::Seq(SeqV {
                            len: format!("l{k}"),
                            at: rows.flat.at(&format!("b{k} + {I}")),
                            elem: rows.flat.elem,
                        }),
                    );
                    lens.push(rows.rows);
                }
                1 => {
                    let s = tr.seq(*input, &env)?;
                    bind.push(format!("const {} v{k} = {};", cuda_type(s.elem), s.at("i")));
                    env.insert(*param, Bound::Scalar(format!("v{k}")));
                    lens.push(s.len);
                }
                _ => return Err(tr.unsupported(*input, "as a map input")),
            }
        }
        if lens.is_empty() {
            return Err(unsupported());
        }
        let n_expr = equal_lengths(&lens, phase.root);
        let inner =
            match phase.levels.get(1) {
                None => {
                    let elem =
                        c.node(f.body).ty.as_scalar().ok_or_else(|| {
                            tr.unsupported(f.body, "as a map body (not a scalar)")
                        })?;
                    Inner::None {
                        result: tr.scalar(f.body, &env)?,
                        elem,
                    }
                }
                Some(level) => {
                    let node = level.node;
                    let (op, input, prefix) = match &c.node(node).op {
                        Op::Reduce { op, input, prefix } | Op::Scan { op, input, prefix } => {
                            (op, *input, *prefix)
                        }
                        _ => return Err(unsupported()),
                    };
                    let seq = tr.seq(input, &env)?;
                    let [a, b] = op.params.as_slice() else {
                        return Err(tr.unsupported(node, "(its operator does not take two values)"));
                    };
                    let mut op_env = env.clone();
                    op_env.insert(*a, Bound::Scalar("a".into()));
                    op_env.insert(*b, Bound::Scalar("b".into()));
                    let op_body = tr.scalar(op.body, &op_env)?;
                    let ident = identity(c, &op.params, op.body, seq.elem).ok_or_else(|| {
                    CodegenError::EmitVariant {
                        what: format!("phase {p} ({sequence})"),
                        message: format!(
                            "the operator of `{}` ({node}) has no identity the CUDA emitter knows \
                             (supported: |a, b| a + b, a * b, min, max, &&, ||)",
                            level.op
                        ),
                    }
                })?;
                    let prefix = prefix.map(|x| tr.scalar(x, &env)).transpose()?;
                    if level.op == OpKind::Scan {
                        if f.body != node {
                            return Err(tr.unsupported(
                            f.body,
                            "as the body of a map over scans (the body must be the scan itself)",
                        ));
                        }
                        Inner::Scan {
                            seq,
                            op_body,
                            ident,
                            prefix,
                        }
                    } else {
                        let out_elem = c.node(f.body).ty.as_scalar().ok_or_else(|| {
                            tr.unsupported(f.body, "as a map body (not a scalar)")
                        })?;
                        let mut res_env = env.clone();
                        res_env.insert(node, Bound::Scalar("acc".into()));
                        Inner::Reduce {
                            node,
                            result: tr.scalar(f.body, &res_env)?,
                            seq,
                            op_body,
                            ident,
                            prefix,
                            out_elem,
                        }
                    }
                }
            };
        let args = tr.args.borrow().clone();
        Ok(PhaseCode {
            phase: p,
            sequence,
            args,
            n_expr,
            bind,
            inner,
        })
    }

    fn output(&self) -> OutputShape {
        match &self.inner {
            Inner::None { elem, .. } => OutputShape {
                elem: *elem,
                nested: false,
            },
            Inner::Reduce { out_elem, .. } => OutputShape {
                elem: *out_elem,
                nested: false,
            },
            Inner::Scan { seq, .. } => OutputShape {
                elem: seq.elem,
                nested: true,
            },
        }
    }

    fn plan(&self, p: usize, phase: &Phase) -> PhasePlan {
        let output = self.output();
        PhasePlan {
            phase: p,
            root: phase.root,
            sequence: self.sequence.clone(),
            args: self.args.clone(),
            output,
            shape_kernel: format!("surge_p{p}_shape"),
            rows_kernel: output.nested.then(|| format!("surge_p{p}_rows")),
        }
    }

    /// The kernel parameters for the phase's inputs.
    fn params(&self) -> String {
        let mut v = Vec::new();
        for a in &self.args {
            match a {
                ArgSlot::Input { buffer, elem } => {
                    v.push(format!(
                        "const {} *__restrict__ in{buffer}, const u64 n_in{buffer}",
                        cuda_type(*elem)
                    ));
                }
                ArgSlot::Phase {
                    phase,
                    elem,
                    nested,
                } => {
                    v.push(format!(
                        "const {} *__restrict__ ph{phase}, const u64 n_ph{phase}",
                        cuda_type(*elem)
                    ));
                    if *nested {
                        v.push(format!(
                            "const u64 *__restrict__ ph{phase}_off, const u64 n_ph{phase}_off"
                        ));
                    }
                }
            }
        }
        v.join(", ")
    }

    fn render_shape(&self, tera: &tera::Tera, plan: &PhasePlan) -> Result<String, CodegenError> {
        let mut ctx = tera::Context::new();
        ctx.insert("phase", &self.phase);
        ctx.insert("sequence", &self.sequence);
        ctx.insert("shape_name", &plan.shape_kernel);
        ctx.insert("rows_name", &plan.rows_kernel);
        ctx.insert("nested", &plan.output.nested);
        let params = self.params();
        ctx.insert(
            "params",
            if params.is_empty() {
                "int unused"
            } else {
                &params
            },
        );
        ctx.insert("n_expr", &self.n_expr);
        ctx.insert("bind", &self.bind);
        if let Inner::Scan { seq, .. } = &self.inner {
            ctx.insert("len_expr", &seq.len);
        }
        tera.render("shape", &ctx)
            .map_err(|e| CodegenError::EmitVariant {
                what: format!("phase {} ({})", self.phase, self.sequence),
                message: format!("shape template: {e:?}"),
            })
    }

    fn render_kernel(
        &self,
        tera: &tera::Tera,
        p: usize,
        v: &Variant,
    ) -> Result<(String, Launch), CodegenError> {
        let id = v.id();
        let bad = |m: String| CodegenError::Variant {
            id: id.clone(),
            message: m,
        };
        if !matches!(v.platform, Platform::Cuda(_)) {
            return Err(bad("not a CUDA variant".into()));
        }
        let levels = if matches!(self.inner, Inner::None { .. }) {
            1
        } else {
            2
        };
        if v.schedule.depth() != levels {
            return Err(bad(format!(
                "its schedule `{}` has {} levels but phase {p} ({}) has {levels}",
                v.schedule,
                v.schedule.depth(),
                self.sequence
            )));
        }
        let int = |k: &str| -> Result<i64, CodegenError> {
            match v.get(k) {
                Some(PValue::Int(i)) => Ok(*i),
                Some(other) => Err(bad(format!("parameter `{k}` = {other} is not an integer"))),
                None => Err(bad(format!("parameter `{k}` is missing"))),
            }
        };
        let text = |k: &str| -> Option<String> {
            match v.get(k) {
                Some(PValue::Str(s)) => Some(s.clone()),
                _ => None,
            }
        };
        let (bx, by, lw) = (int("bx")?, int("by")?, int("lw")?);
        if !(32..=1024).contains(&bx) || bx % 32 != 0 || !(1..=32).contains(&by) || bx * by > 1024 {
            return Err(bad(format!(
                "block shape {bx}x{by} (bx must be a multiple of 32, at most 1024 threads)"
            )));
        }
        if !(1..=32).contains(&lw) || lw & (lw - 1) != 0 {
            return Err(bad(format!(
                "logical warp size {lw} is not a power of two ≤ 32"
            )));
        }
        let s = v.schedule.elems();
        let outer = s[0];
        let inner_elem = s.get(1).copied();
        let (grain, unroll1) = match outer {
            ScheduleElem::Independent => (int("grain1")?, 1),
            _ => (1, if int("unroll1")? != 0 { 4 } else { 1 }),
        };
        if !(1..=64).contains(&grain) {
            return Err(bad(format!("grain1 = {grain} is out of range 1..=64")));
        }
        let res1 = text("res1");
        let res2 = text("res2");
        let res = match (inner_elem, &res1, &res2) {
            (Some(ScheduleElem::Cooperative), Some(a), Some(b)) if a != b => {
                return Err(bad(format!(
                    "res1 = {a} and res2 = {b}: a cooperative inner level runs on the outer level's resource"
                )));
            }
            (Some(ScheduleElem::Cooperative), _, Some(b)) => b.clone(),
            (Some(ScheduleElem::Cooperative), _, None) => {
                return Err(bad("parameter `res2` is missing".into()));
            }
            (_, Some(a), _) => a.clone(),
            (_, None, _) => "thread".into(),
        };
        if outer == ScheduleElem::Cooperative {
            return Err(bad(
                "a cooperative outer map level has no CUDA realization".into()
            ));
        }
        if inner_elem != Some(ScheduleElem::Cooperative) && res != "thread" {
            return Err(bad(format!(
                "a sequential inner level runs on one thread, not a {res} (res1 must be thread)"
            )));
        }
        let (groups_per_block, lanes) = match res.as_str() {
            "thread" => ((bx * by) as u32, 1),
            "warp" => {
                if lw == 1 || by != 1 {
                    return Err(bad(format!(
                        "warp execution needs lw > 1 and by = 1 (lw = {lw}, by = {by})"
                    )));
                }
                ((bx * by / lw) as u32, lw)
            }
            "block" => (by as u32, bx),
            other => return Err(bad(format!("unknown execution resource `{other}`"))),
        };
        let mut ctx = tera::Context::new();
        ctx.insert("id", &id);
        ctx.insert("name", &kernel_name(p, v));
        ctx.insert("phase", &p);
        ctx.insert("sequence", &self.sequence);
        ctx.insert("bx", &bx);
        ctx.insert("by", &by);
        ctx.insert("lw", &lw);
        ctx.insert("threads", &(bx * by));
        ctx.insert("lanes", &lanes);
        ctx.insert("groups_per_block", &groups_per_block);
        ctx.insert("grain", &grain);
        ctx.insert("outer", outer.name());
        ctx.insert("res", &res);
        ctx.insert("unroll1", &unroll1);
        ctx.insert("n_expr", &self.n_expr);
        ctx.insert("bind", &self.bind);
        let mut params = self.params();
        if !params.is_empty() {
            params.push_str(", ");
        }
        let (inner, t) = match &self.inner {
            Inner::None { result, elem } => {
                ctx.insert("result", result);
                ("none", *elem)
            }
            Inner::Reduce {
                node,
                seq,
                op_body,
                ident,
                prefix,
                result,
                out_elem,
            } => {
                ctx.insert("node", &node.0);
                ctx.insert("result", result);
                ctx.insert("len_expr", &seq.len);
                ctx.insert("elem_expr", &seq.at("j"));
                ctx.insert("op_body", op_body);
                ctx.insert("ident", ident);
                ctx.insert("prefix", prefix);
                let _ = out_elem;
                ("reduce", seq.elem)
            }
            Inner::Scan {
                seq,
                op_body,
                ident,
                prefix,
            } => {
                ctx.insert("len_expr", &seq.len);
                ctx.insert("elem_expr", &seq.at("j"));
                ctx.insert("op_body", op_body);
                ctx.insert("ident", ident);
                ctx.insert("prefix", prefix);
                ("scan", seq.elem)
            }
        };
        let out = self.output();
        let _ = write!(params, "{} *__restrict__ out", cuda_type(out.elem));
        if out.nested {
            params.push_str(", const u64 *__restrict__ out_off");
        }
        params.push_str(", u64 *__restrict__ surge_err");
        ctx.insert("params", &params);
        ctx.insert("inner", inner);
        ctx.insert("t", cuda_type(t));
        if let Some(e) = inner_elem {
            ctx.insert("sched2", e.name());
            let unroll2 = if e == ScheduleElem::Sequential && int("unroll2")? != 0 {
                4
            } else {
                1
            };
            ctx.insert("unroll2", &unroll2);
            if e == ScheduleElem::Cooperative {
                let algo_key = if inner == "scan" { "scan2" } else { "reduce2" };
                let algo = match (res.as_str(), text(algo_key).as_deref()) {
                    ("block", Some("raking")) => "raking",
                    ("block", Some("warp_reductions" | "warp_scans")) => "warps",
                    ("block", other) => {
                        return Err(bad(format!(
                            "parameter `{algo_key}` = {other:?} is not a block algorithm"
                        )));
                    }
                    _ => "raking",
                };
                ctx.insert("algo", algo);
                let sg = if inner == "scan" {
                    int("scan_grain2")?
                } else {
                    1
                };
                if !(1..=16).contains(&sg) {
                    return Err(bad(format!("scan_grain2 = {sg} is out of range 1..=16")));
                }
                ctx.insert("scan_grain", &sg);
            }
        } else {
            ctx.insert("sched2", "none");
        }
        let src = tera
            .render("kernel", &ctx)
            .map_err(|e| CodegenError::EmitVariant {
                what: format!("kernel for variant {id}"),
                message: format!("template: {e:?}"),
            })?;
        Ok((
            src,
            Launch {
                block: (bx as u32, by as u32),
                groups_per_block,
                grain: grain as u32,
                single_group: outer == ScheduleElem::Sequential,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::ir::{InputDecl, Lambda, Node};
    use crate::passes;

    fn node(op: Op, ty: Type) -> Node {
        Node { op, ty }
    }

    /// `map(|row| reduce(+, row), split(s, 4))` built by hand.
    fn tiled_sum() -> Computation {
        use Type::*;
        let f = || Scalar(Elem::F64);
        Computation {
            inputs: vec![InputDecl {
                name: "s".into(),
                elem: Elem::F64,
                len: 10,
            }],
            nodes: vec![
                node(Op::Input { buffer: 0 }, Type::scalar_seq(Elem::F64)),
                node(
                    Op::Scalar {
                        expr: ScalarExpr::Const(Literal::U64(4)),
                    },
                    Scalar(Elem::U64),
                ),
                node(
                    Op::Split {
                        input: NodeId(0),
                        tile: NodeId(1),
                    },
                    Type::seq(Type::scalar_seq(Elem::F64)),
                ),
                node(Op::Param, Type::scalar_seq(Elem::F64)),
                node(Op::Param, f()),
                node(Op::Param, f()),
                node(
                    Op::Scalar {
                        expr: ScalarExpr::Binary(
                            BinaryOp::Add,
                            Box::new(ScalarExpr::Value(NodeId(4))),
                            Box::new(ScalarExpr::Value(NodeId(5))),
                        ),
                    },
                    f(),
                ),
                node(
                    Op::Reduce {
                        op: Lambda {
                            params: vec![NodeId(4), NodeId(5)],
                            body: NodeId(6),
                        },
                        input: NodeId(3),
                        prefix: None,
                    },
                    f(),
                ),
                node(
                    Op::Map {
                        f: Lambda {
                            params: vec![NodeId(3)],
                            body: NodeId(7),
                        },
                        inputs: vec![NodeId(2)],
                    },
                    Type::scalar_seq(Elem::F64),
                ),
            ],
            root: NodeId(8),
        }
    }

    #[test]
    fn emits_every_variant_with_its_id() {
        let c = tiled_sum();
        let a = analyze(&c).unwrap();
        let platform = Platform::from_names("cuda", Some("h200")).unwrap();
        let pv = passes::run(&a, &platform).unwrap();
        let vs: Vec<Vec<Variant>> = pv
            .iter()
            .map(|p| p.spaces.iter().flat_map(|s| s.variants.clone()).collect())
            .collect();
        let prog = emit(&c, &a, &vs).unwrap();
        assert_eq!(prog.kernels.len(), vs[0].len());
        for k in &prog.kernels {
            assert!(
                prog.source
                    .contains(&format!("// variant: {}\n", k.variant))
            );
            assert!(prog.source.contains(&k.name));
        }
        let mut names: Vec<_> = prog.kernels.iter().map(|k| &k.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), prog.kernels.len());
        assert_eq!(
            prog.phases[0].args,
            [ArgSlot::Input {
                buffer: 0,
                elem: Elem::F64
            }]
        );
        assert!(prog.source.contains("in0[(b0 + (j))]"));
    }

    #[test]
    fn kernels_carry_the_run_time_checks() {
        let c = tiled_sum();
        let a = analyze(&c).unwrap();
        let v: Variant =
            "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=1,res1=warp,res2=warp"
                .parse()
                .unwrap();
        let prog = emit(&c, &a, &[vec![v]]).unwrap();
        let k = &prog.source[prog.source.find("// variant: ").unwrap()..];
        assert!(k.contains("u64 *__restrict__ surge_err)"), "{k}");
        // The reduce (node 7) has no prefix: an empty row is an error, not the identity.
        assert!(
            k.contains("if (len == 0 && lane == 0) surge_fail(surge_err, 7, SURGE_EMPTY_REDUCE"),
            "{k}"
        );
        // The split's tile size (node 2) is checked.
        assert!(
            k.contains("surge_positive((i64)(((u64)4ULL)), 0, 2, surge_err)"),
            "{k}"
        );
        assert!(prog.source.contains("u64 *shape, u64 *surge_err)"));
    }

    #[test]
    fn error_records_decode_to_the_interpreters_messages() {
        assert_eq!(decode_error(&[0; ERROR_WORDS]), None);
        let rec = |node: u64, code: u64, a: i64, b: i64, c: i64| {
            [(node << 8) | code, a as u64, b as u64, c as u64]
        };
        let cases = [
            (
                rec(12, check::GATHER, 7, 1, 3),
                "index 7 at position 1 is out of range for a source of length 3",
            ),
            (
                rec(3, check::GATHER, -2, 0, 3),
                "index -2 at position 0 is out of range for a source of length 3",
            ),
            (
                rec(4, check::INDEX, 9, 0, 5),
                "index 9 is out of range for a sequence of length 5",
            ),
            (
                rec(5, check::OFFSET_RANGE, 11, 2, 10),
                "offsets[2] = 11 is out of range for a sequence of length 10",
            ),
            (
                rec(5, check::OFFSET_ORDER, 6, 3, 4),
                "offsets are not monotone: offsets[3] = 6 > offsets[4] = 4",
            ),
            (
                rec(5, check::OFFSETS_EMPTY, 0, 0, 0),
                "offsets are empty; a nested sequence of n rows needs n + 1 offsets",
            ),
            (
                rec(9, check::EMPTY_REDUCE, 0, 0, 0),
                "reduction of an empty sequence without a prefix",
            ),
            (
                rec(2, check::NOT_POSITIVE, 0, 0, 0),
                "tile size must be positive, got 0",
            ),
            (
                rec(2, check::NOT_POSITIVE, -3, 1, 0),
                "stride must be positive, got -3",
            ),
            (rec(2, check::STRIDE_ZERO, 0, 0, 0), "stride is 0"),
            (
                rec(2, check::NEGATIVE_LEN, -1, 0, 0),
                "length -1 is negative",
            ),
            (
                rec(6, check::EQUAL_LEN, 4, 1, 3),
                "input lengths differ: input 0 has length 4, input 1 has length 3",
            ),
        ];
        for (r, want) in cases {
            let (node, msg) = decode_error(&r).unwrap();
            assert_eq!(node, NodeId(r[0] >> 8));
            assert_eq!(msg, want);
        }
        // The prelude's codes are the ones decoded.
        for (name, code) in [
            ("SURGE_GATHER", check::GATHER),
            ("SURGE_INDEX", check::INDEX),
            ("SURGE_OFFSET_RANGE", check::OFFSET_RANGE),
            ("SURGE_OFFSET_ORDER", check::OFFSET_ORDER),
            ("SURGE_OFFSETS_EMPTY", check::OFFSETS_EMPTY),
            ("SURGE_EMPTY_REDUCE", check::EMPTY_REDUCE),
            ("SURGE_NOT_POSITIVE", check::NOT_POSITIVE),
            ("SURGE_STRIDE_ZERO", check::STRIDE_ZERO),
            ("SURGE_NEGATIVE_LEN", check::NEGATIVE_LEN),
            ("SURGE_EQUAL_LEN", check::EQUAL_LEN),
        ] {
            let def = format!("#define {name} {code}ULL");
            assert!(PRELUDE.contains(&def), "{def}");
        }
    }

    #[test]
    fn unsupported_sequences_and_bad_variants_are_named() {
        let mut c = tiled_sum();
        // Make the reduction a max-with-2 (no identity).
        c.nodes[6].op = Op::Scalar {
            expr: ScalarExpr::Binary(
                BinaryOp::Sub,
                Box::new(ScalarExpr::Value(NodeId(4))),
                Box::new(ScalarExpr::Value(NodeId(5))),
            ),
        };
        let a = analyze(&c).unwrap();
        let e = emit(&c, &a, &[]).unwrap_err().to_string();
        assert!(e.contains("map.reduce") && e.contains("identity"), "{e}");
        let c = tiled_sum();
        let a = analyze(&c).unwrap();
        let v: Variant = "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=1,res1=warp,res2=block,reduce2=raking"
            .parse()
            .unwrap();
        let e = emit(&c, &a, &[vec![v.clone()]]).unwrap_err().to_string();
        assert!(e.contains(&v.id()) && e.contains("res2"), "{e}");
        let v: Variant = "cuda:h200/independent/bx=128,by=1,lw=1,grain1=1,res1=thread"
            .parse()
            .unwrap();
        let e = emit(&c, &a, &[vec![v]]).unwrap_err().to_string();
        assert!(e.contains("levels"), "{e}");
    }
}
