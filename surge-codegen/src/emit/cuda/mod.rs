//! The CUDA emitter: CUDA C++ for the variants of a computation (compiled by NVRTC in
//! `surge-cuda`). See `../README.md` (the emitters' README) for the anatomy of an emitted kernel.
//!
//! One [`CudaProgram`] holds, for every phase, a *shape* kernel (the phase's element count and,
//! for nested results, its row lengths) and one `extern "C" __global__` kernel per requested
//! variant. Element expressions are translated generically from the IR: input buffers, earlier
//! phases' results, `nest`/`split` rows, `index` (`at`), `gather`, `range`, `replicate`,
//! `reverse`, `striding`, element-wise `map`s and scalar lambda bodies.

mod checks;
mod deep;
mod elements;
mod fold;
mod inner;
mod keyed;
mod keyed_tuples;
mod lazy_keyed;
mod lazy_rows;
mod lazy_scan;
mod lowered;
mod phase;
mod render;
mod roots;
mod rows;
mod scan_bodies;
mod scatter_rows;
#[cfg(test)]
mod tests;
mod tuple_fold;
mod tuple_rows;
mod tuples;

pub use checks::{ERROR_WORDS, check, decode_error, decode_error_in};

use crate::CodegenError;
use crate::analysis::Analysis;
use crate::emit::cpu::ResultParts;
use crate::ir::{Computation, Elem, LiteralTable, NodeId, OpKind, Type};
use crate::variant::Variant;
use phase::PhaseCode;
use std::collections::BTreeMap;
use std::fmt::Write as _;

const PRELUDE: &str = include_str!("../../../templates/cuda/prelude.cu");

/// The expression sequences this emitter supports, besides a phase whose root is an element-wise
/// producer of a flat sequence of scalars (`gather`, `range`, `replicate`, `reverse`,
/// `striding`), emitted as a map over its elements.
pub const SUPPORTED: [&str; 7] = [
    "map",
    "map.reduce",
    "map.scan",
    "reduce",
    "scan",
    "reduce_by_key",
    "scatter",
];

/// A buffer or value a phase's kernels read, in kernel-parameter order.
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
    /// Entry `index` of the computation's literal table (`ir::literals`), an integer of type
    /// `elem` passed by value: `const T litK`. The host passes the value of the computation it
    /// runs, so the source does not change with sizes.
    Literal { index: usize, elem: Elem },
}

impl ArgSlot {
    /// The parameter's name in the kernel (`in0`, `ph1`, `lit2`); a nested phase result's
    /// offsets are `{name}_off`, and every buffer's length is `n_{name}`.
    pub fn name(&self) -> String {
        match self {
            ArgSlot::Input { buffer, .. } => format!("in{buffer}"),
            ArgSlot::Phase { phase, .. } => format!("ph{phase}"),
            ArgSlot::Literal { index, .. } => format!("lit{index}"),
        }
    }
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
    /// The type of the phase's value (a scalar is stored as one element, a flat sequence
    /// computed as one row, a root scan, as that row).
    pub ty: Type,
    pub sequence: String,
    pub args: Vec<ArgSlot>,
    pub output: OutputShape,
    /// `(args..., u64* shape, u64* surge_err)`: writes the phase's element count to `shape[0]`.
    pub shape_kernel: String,
    /// For nested results, `(args..., u64* lens, u64* surge_err)`: writes each row's length.
    pub rows_kernel: Option<String>,
    /// Set for the phases that store a value three levels deep (`deep.rs`).
    pub deep: Option<DeepPart>,
}

/// One of the phases that store a value three levels of sequences deep: the outer level, then
/// the rows (one phase of rows per component for tuples, read by later phases only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeepPart {
    /// The outer level: per element, a row of as many zeros (`u32`) as it has nested rows.
    Outer,
    /// Every nested row of every element in order (of one component, for tuples); `outer` is
    /// the phase of its outer level.
    Rows { outer: usize },
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
    /// Blocks launched however few the elements (a `reduce_by_key` of rows splits its
    /// positions and columns over them, not its runs); 0 for none.
    pub min_blocks: u32,
}

impl Launch {
    /// Grid size for `n` outer elements, capped at `max_blocks` (the loop is grid-stride).
    pub fn grid(&self, n: u64, max_blocks: u32) -> u32 {
        if self.single_group {
            return 1;
        }
        let groups = n.div_ceil(self.grain.max(1) as u64);
        let blocks = groups.div_ceil(self.groups_per_block.max(1) as u64);
        blocks
            .max(self.min_blocks as u64)
            .clamp(1, max_blocks.max(1) as u64) as u32
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
    /// Set when the result is stored in parts: the last `parts` phases, each run with the
    /// variant of the computation's final phase.
    pub result: Option<ResultParts>,
    /// Per phase of the program: the computation's phase whose variant it runs (the further
    /// parts of a result and its materialized level run the final phase's; all phases of a
    /// value three levels deep run its own).
    pub sources: Vec<usize>,
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

/// The kernel name of a variant in a phase: `surge_p{phase}_{16 hex digits of the id's hash}`.
pub fn kernel_name(phase: usize, variant: &Variant) -> String {
    let h = crate::ir::fnv1a128(variant.id().as_bytes());
    format!("surge_p{phase}_{:016x}", (h as u64) ^ ((h >> 64) as u64))
}

/// Whether a CUDA phase stores values of type `t`: numbers and booleans (as `u32`) in at most
/// three levels of sequences (three in two phases, `deep.rs`).
fn cuda_storable(t: &Type) -> bool {
    let mut t = t;
    let mut depth = 0;
    while let Type::Seq(i) = t {
        t = i;
        depth += 1;
    }
    depth <= 3 && t.as_scalar().is_some()
}

/// Emits one program with a kernel for every (phase, variant) in `variants`, where
/// `variants[p]` lists the variants of phase `p` (an empty list emits only the shape kernels).
///
/// A result that holds tuples is stored in parts, one phase per leaf of its type (the CPU
/// emitter's `split_parts`): the final phase is emitted once per part, each part with the
/// final phase's variants, and the host puts the parts together ([`CudaProgram::result`]).
pub fn emit(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Vec<Variant>],
) -> Result<CudaProgram, CodegenError> {
    let ty = &c.node(c.root).ty;
    let n = analysis.phases.len();
    if let Some(a2) = materialized(c, analysis) {
        return emit_program(c, &a2, &with_last_repeated(variants, analysis, 1), None, n);
    }
    if cuda_storable(ty) {
        return emit_program(c, analysis, variants, None, n);
    }
    let Some((c2, a2, parts)) = crate::emit::cpu::split_parts(c, analysis, cuda_storable) else {
        return Err(CodegenError::EmitVariant {
            what: "cuda program".into(),
            message: format!(
                "the CUDA emitter cannot store a result of type {ty} (numbers and booleans in at \
                 most three levels of sequences, and tuples of them, can)"
            ),
        });
    };
    let (a2, extra) = materialized_parts(&c2, a2, parts.parts);
    let lists = with_last_repeated(variants, analysis, parts.parts - 1 + extra);
    emit_program(&c2, &a2, &lists, Some(parts), n)
}

/// The parts of a result stored in parts (`split_parts`) that are scalar code over a root
/// `scan`, `scatter` or `reduce_by_key` (`(at(scatter(..), 0), r)`): that level is emitted first
/// as a phase of its own (before the parts, which stay last), then each part reads it, as
/// [`materialized`] does for one scalar result. Returns the analysis and the phases added.
fn materialized_parts(c: &Computation, a: Analysis, parts: usize) -> (Analysis, usize) {
    let first = a.phases.len() - parts;
    let outer = a.phases[first].levels.first().filter(|l| {
        let rows_of_tuples = tuple_rows::components(c, l.node).is_some();
        rows_of_tuples && matches!(l.op, OpKind::Scatter | OpKind::ReduceByKey)
    });
    let Some(level) = eager_level(c, &a.phases[first]).or(outer) else {
        return (a, 0);
    };
    let lazy = |p: &crate::analysis::Phase| {
        p.root != level.node && c.node(p.root).ty.as_scalar().is_some()
    };
    // Rows of tuples are stored per component (`tuple_rows.rs`), a value three levels deep in
    // parts (`deep.rs`), and read by the parts.
    let stored = tuple_rows::components(c, level.node).is_some()
        || deep::rows_phases(c, level.node).is_some();
    if !a.phases[first..].iter().any(lazy) && !stored {
        return (a, 0);
    }
    let mut phases = a.phases.clone();
    phases.insert(
        first,
        crate::analysis::Phase {
            root: level.node,
            diagonal: None,
            contraction: None,
            ..a.phases[first].clone()
        },
    );
    (Analysis { phases }, 1)
}

/// The one level of `phase` when it is a `scan`, `scatter` or `reduce_by_key`, which cannot be
/// read lazily, or its outer level when it is a `reduce`, `scan` or `reduce_by_key` of rows
/// whose combiner is a `map` (`roots::combined_rows`).
fn eager_level<'a>(
    c: &Computation,
    phase: &'a crate::analysis::Phase,
) -> Option<&'a crate::analysis::Level> {
    if roots::combined_rows(c, phase) {
        return phase.levels.first();
    }
    let [level] = phase.levels.as_slice() else {
        return None;
    };
    matches!(
        level.op,
        crate::ir::OpKind::Scan | crate::ir::OpKind::Scatter | crate::ir::OpKind::ReduceByKey
    )
    .then_some(level)
}

/// `variants` with the final phase's list repeated `extra` times for the program's further
/// phases (when it lists the final phase at all).
fn with_last_repeated(
    variants: &[Vec<Variant>],
    analysis: &Analysis,
    extra: usize,
) -> Vec<Vec<Variant>> {
    let mut lists = variants.to_vec();
    if lists.len() == analysis.phases.len() {
        let last = lists.last().cloned().unwrap_or_default();
        lists.extend(std::iter::repeat_n(last, extra));
    }
    lists
}

/// Scalar code over a root `scan`, `scatter` or `reduce_by_key` (`at(scan(x), k)`), or any code
/// over a root `reduce`, `scan` or `reduce_by_key` of rows: those
/// levels cannot be read lazily, so the final phase is emitted twice, first with the level
/// itself as its root (materialized), then with the scalar code as one element reading that
/// result; both run with the final phase's variant.
fn materialized(c: &Computation, analysis: &Analysis) -> Option<Analysis> {
    let last = analysis.final_phase();
    let level = eager_level(c, last)?;
    // Scalar code, or code storable as one value over a level three deep (which is stored in
    // parts) or over a reduce, scan or reduce_by_key of rows (`at(scan(rows), k)`: a row); a
    // result of tuples is split into parts first (`materialized_parts`).
    let eager = deep::rows_phases(c, level.node).is_some() || roots::combined_rows(c, last);
    let reads = c.node(last.root).ty.as_scalar().is_some()
        || (eager && cuda_storable(&c.node(last.root).ty));
    if last.root == level.node || !reads {
        return None;
    }
    let mut phases = analysis.phases.clone();
    let at = phases.len() - 1;
    phases.insert(
        at,
        crate::analysis::Phase {
            root: level.node,
            diagonal: None,
            contraction: None,
            ..last.clone()
        },
    );
    Some(Analysis { phases })
}

/// `analysis` with phase `p` repeated `times(p, phase)` times, its variant list (when listed)
/// and source phase with it: the phases that store one value in several (`deep.rs`,
/// `tuple_rows.rs`).
fn repeat_phases(
    analysis: &Analysis,
    variants: &[Vec<Variant>],
    sources: &[usize],
    times: impl Fn(usize, &crate::analysis::Phase) -> usize,
) -> (Analysis, Vec<Vec<Variant>>, Vec<usize>) {
    let mut phases = Vec::new();
    let mut lists = Vec::new();
    let mut from = Vec::new();
    for (p, phase) in analysis.phases.iter().enumerate() {
        for _ in 0..times(p, phase) {
            phases.push(phase.clone());
            if let Some(l) = variants.get(p) {
                lists.push(l.clone());
            }
            from.push(sources[p]);
        }
    }
    (Analysis { phases }, lists, from)
}

/// The program of `analysis`'s phases, the first `comp_phases` of them the computation's own
/// (the rest run with the final phase's variant), each phase whose value is three levels deep
/// emitted twice, or once and then once per component for tuples (`deep.rs`), and each earlier phase whose value is rows of tuples once per
/// component (`tuple_rows.rs`).
fn emit_program(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Vec<Variant>],
    result: Option<ResultParts>,
    comp_phases: usize,
) -> Result<CudaProgram, CodegenError> {
    let n = analysis.phases.len();
    let sources: Vec<usize> = (0..n).map(|p| p.min(comp_phases.max(1) - 1)).collect();
    let split = scan_bodies::split(c, analysis, variants, &sources);
    let (c, analysis, variants, sources) = match &split {
        Some((c2, a2, v2, s2)) => (c2, a2, v2.as_slice(), s2.clone()),
        None => (c, analysis, variants, sources),
    };
    let (analysis, variants, sources) = deep::expand(c, analysis, variants, &sources);
    let (analysis, variants, sources) = &tuple_rows::expand(c, &analysis, &variants, &sources);
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
    let tera = render::templates()?;
    let lits = LiteralTable::of(c);
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
        let parts = (deep::part(c, analysis, p), tuple_rows::part(c, analysis, p));
        let (code, plan) = match parts {
            (Some(part), _) => deep::phase(c, &roots, &lits, p, phase, part)?,
            (None, Some(j)) => tuple_rows::phase(c, &roots, &lits, p, phase, j)?,
            (None, None) => {
                let code = PhaseCode::translate(c, &roots, &lits, p, phase)?;
                let plan = code.plan(c, p, phase);
                (code, plan)
            }
        };
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
        result,
        sources: sources.clone(),
    })
}

/// C++ name of an element type: the prelude typedefs the IR's own names (`f64`, `u32`, ...).
pub fn cuda_type(e: Elem) -> &'static str {
    e.name()
}
