//! The CPU emitter: Rust source for the variants of a computation, compiled by `rustc` into one
//! `cdylib` in `surge-cpu` and driven there by rayon skeletons. See `README.md` here.

mod bcsr;
mod code;
mod deep;
mod diagonal;
mod folds;
mod inner;
mod jam;
mod keyed_rows;
mod lanes;
mod lowered;
mod packed;
mod phase;
mod prefetch;
mod result;
mod runs;
mod scalar;
mod sell;
mod shared;
mod spec;
mod values;

use crate::CodegenError;
use crate::analysis::{Analysis, BlockedPattern, DiagonalPattern, Phase};
use crate::ir::{Computation, Elem, NodeId};
use crate::variant::Variant;
use code::{Gen, R};
pub use packed::{Packing, packing};
use phase::emit_phase;
pub use result::{ResultParts, split_parts, storable};
pub use scalar::literal_slot;
use serde::Serialize;
use std::collections::HashMap;

const RUNTIME: &str = include_str!("../../../templates/cpu/runtime.rs");
/// The SELL kernels' explicit SIMD paths (`sell.rs`): generic helpers, compiled only where a
/// kernel instantiates them.
const SELL_SIMD: &str = include_str!("../../../templates/cpu/sell_simd.rs");
/// The `lanes` kernels' helpers (`lanes.rs`), generic like `SELL_SIMD`'s.
const LANES_SIMD: &str = include_str!("../../../templates/cpu/lanes_simd.rs");
const PHASE: &str = include_str!("../../../templates/cpu/phase.rs.tera");
const PROGRAM: &str = include_str!("../../../templates/cpu/program.rs.tera");

/// Words (`u64`) of the host's accumulator slot for cooperative reductions and scans: room for
/// a tuple of up to four scalars (argmin's `(f64, u32)`, a `(count, sum)`).
pub const ACC_SLOT_WORDS: usize = 4;

/// How a phase's result is laid out in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// One scalar per outer element (`elems`).
    Flat,
    /// One sequence per outer element, stored flat with offsets (`lens`, then `rows`).
    Nested,
    /// A sequence of `depth` (three or more) levels, stored flat with one level of offsets per
    /// level above the innermost rows (`lens`, `sublens` per level, then `deep_rows`;
    /// `deep.rs`).
    Deep { depth: usize },
}

/// What the cooperative inner level of a phase is, when the skeleton can run it in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Inner {
    /// `partial`/`combine` over chunks, then `finish`.
    Reduce,
    /// `partial`/`combine` over chunks, then `chunk` with the carried prefix (two-pass scan).
    Scan,
    /// `chunk` over disjoint ranges of the row.
    Map,
    /// A root `reduce_by_key`: `runs` over chunks of the input, joined with `combine`.
    Runs,
}

/// The host-side contract of one phase's exported functions (`m<k>_p<phase>_<fn>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseAbi {
    pub root: NodeId,
    pub expression_sequence: String,
    pub shape: Shape,
    /// Element type of the output.
    pub elem: Elem,
    /// The root is itself a `reduce` (result: a scalar) or `scan` (result: one flat sequence):
    /// there is one outer element, and schedule level 1 is the inner level.
    pub whole: bool,
    pub inner: Option<Inner>,
    /// Accumulator type of the inner reduce/scan.
    pub acc: Option<Elem>,
    /// Set when the phase also exports `diag`, its kernel over blocks of diagonally stored rows.
    pub diagonal: Option<DiagonalPattern>,
    /// Set when the phase also exports `bcsr<r>x<c>` (`policy::bcsr`), its kernels over
    /// register-blocked rows: the blocked form of `diagonal`'s pattern.
    pub bcsr: Option<BlockedPattern>,
    /// Set when the result's elements are tuples or booleans stored as `u64` words
    /// (`packed.rs`): `elem` is then `U64`, and each element takes `width()` of them.
    pub packed: Option<Packing>,
}

impl PhaseAbi {
    /// Words (elements of `elem`) per element of the result.
    pub fn width(&self) -> usize {
        self.packed.as_ref().map_or(1, Packing::width)
    }
}

/// One compiled module: the functions shared by every variant with the same code-shaping
/// parameters (the `unroll<d>` flags; thread counts and loop schedules live in the host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Module {
    pub index: usize,
    pub variants: Vec<String>,
    /// 1-based, inclusive line range of the module in the source.
    pub lines: (usize, usize),
}

/// The emitted program for a computation and a set of CPU variants.
#[derive(Debug, Clone, Serialize)]
pub struct CpuProgram {
    pub source: String,
    pub modules: Vec<Module>,
    pub phases: Vec<PhaseAbi>,
    /// Buffer slots: the inputs, then (data, offsets) per phase, then the literal table, then
    /// the run id.
    pub slots: usize,
    /// The slot of the literal table: the computation's integer literals as `u64` bits
    /// (`ir::literal_values`), `literals` of them. The host passes the values of the computation
    /// it runs, so one program serves every computation of its structure.
    pub literal_slot: usize,
    pub literals: usize,
    /// The slot of the run id (one `u64`, unique per run, never 0): values that depend only on
    /// the run's buffers are computed once per run (`memo` in the runtime).
    pub run_slot: usize,
    /// Set when the result is put together from the last phases (tuples, booleans; see
    /// `result.rs`): its type and how many phases are its parts.
    pub result: Option<ResultParts>,
}

impl CpuProgram {
    /// A library of kernels that no computation's phases describe (the GEMM kernels,
    /// `crate::gemm`): compiled and loaded by the same cache, with no slots or phases.
    pub fn library(source: String, modules: Vec<Module>) -> CpuProgram {
        CpuProgram {
            source,
            modules,
            phases: Vec::new(),
            slots: 0,
            literal_slot: 0,
            literals: 0,
            run_slot: 0,
            result: None,
        }
    }

    /// The module implementing `variant_id`.
    pub fn module_of(&self, variant_id: &str) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.variants.iter().any(|v| v == variant_id))
    }
    /// Variant ids of the modules whose lines contain `line`.
    pub fn variants_at_line(&self, line: usize) -> Vec<String> {
        self.modules
            .iter()
            .filter(|m| m.lines.0 <= line && line <= m.lines.1)
            .flat_map(|m| m.variants.clone())
            .collect()
    }
}

/// Slot of phase `k`'s data (its offsets follow).
pub fn phase_slot(inputs: usize, k: usize) -> usize {
    inputs + 2 * k
}

/// Test hook: emit `poison` (a deliberately undefined template variable) into the module of one
/// variant, so a test can check that compile errors name the variant.
#[derive(Debug, Clone, Default)]
pub struct EmitOptions {
    pub poison_variant: Option<String>,
}

/// Emits the program for `variants` (CPU variants of `c`'s phases).
pub fn emit(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Variant],
    options: &EmitOptions,
) -> Result<CpuProgram, CodegenError> {
    match result::split_phases(c, analysis) {
        Some(s) => emit_program(&s.c, &s.a, variants, options, (s.result, &s.assemblies)),
        None => emit_program(c, analysis, variants, options, (None, &[])),
    }
}

/// The program of `c` whose result is `result`'s parts, or its root; `assemblies`: its earlier
/// phases stored in parts (`result.rs`).
fn emit_program(
    c: &Computation,
    analysis: &Analysis,
    variants: &[Variant],
    options: &EmitOptions,
    (result, assemblies): (Option<ResultParts>, &[result::Assembly]),
) -> Result<CpuProgram, CodegenError> {
    // Group variants by their code-shaping parameters.
    let mut keys: Vec<(Vec<bool>, Vec<String>)> = Vec::new();
    for v in variants {
        if !matches!(v.platform, crate::target::Platform::Cpu(_)) {
            return Err(CodegenError::Variant {
                id: v.id(),
                message: "not a CPU variant".into(),
            });
        }
        let key = crate::params::CpuParams::of(v)?.unroll_flags();
        match keys.iter_mut().find(|k| k.0 == key) {
            Some(k) => k.1.push(v.id()),
            None => keys.push((key, vec![v.id()])),
        }
    }
    if keys.is_empty() {
        // Still emit one module so the phase ABI is known.
        keys.push((vec![false; 4], vec![]));
    }
    let inputs = c.inputs.len();
    let mut modules_src = Vec::new();
    let mut phases_abi = Vec::new();
    for (mi, (key, ids)) in keys.iter().enumerate() {
        let mut src = String::new();
        for (pi, phase) in analysis.phases.iter().enumerate() {
            let unroll: HashMap<NodeId, bool> = phase
                .levels
                .iter()
                .enumerate()
                .map(|(d, l)| (l.node, key.get(d).copied().unwrap_or(false)))
                .collect();
            let g = Gen::new(c, unroll);
            g.set_run_slot(literal_slot(inputs, analysis.phases.len()) + 1);
            let prefix = format!("m{mi}_p{pi}_");
            let (text, abi) = emit_phase(&g, (analysis, assemblies), pi, phase, inputs, &prefix)?;
            src.push_str(&text);
            if mi == 0 {
                phases_abi.push(abi);
            }
        }
        if options
            .poison_variant
            .as_ref()
            .is_some_and(|p| ids.contains(p))
        {
            src.push_str("\nconst POISON: f64 = surge_undefined_template_variable;\n");
        }
        modules_src.push((mi, ids.clone(), src));
    }
    let mut ctx = tera::Context::new();
    ctx.insert("hash", &format!("{:032x}", c.structure_hash()));
    ctx.insert("runtime", &format!("{RUNTIME}{SELL_SIMD}{LANES_SIMD}"));
    let ms: Vec<serde_json::Value> = modules_src
        .iter()
        .map(|(i, ids, src)| serde_json::json!({"index": i, "variants": ids, "code": src}))
        .collect();
    ctx.insert("modules", &ms);
    ctx.insert(
        "sequences",
        &analysis
            .phases
            .iter()
            .map(Phase::expression_sequence)
            .collect::<Vec<_>>(),
    );
    let source = render(PROGRAM, &ctx)?;
    // Module line ranges, from the markers the template writes.
    let lines: Vec<&str> = source.lines().collect();
    let mut modules = Vec::new();
    for (mi, ids, _) in &modules_src {
        let marker = format!("// ---- module m{mi} ----");
        let start = lines.iter().position(|l| *l == marker).map_or(0, |p| p + 1);
        let end_marker = format!("// ---- end of module m{mi} ----");
        let end = lines
            .iter()
            .position(|l| *l == end_marker)
            .map_or(lines.len(), |p| p + 1);
        modules.push(Module {
            index: *mi,
            variants: ids.clone(),
            lines: (start, end),
        });
    }
    Ok(CpuProgram {
        source,
        modules,
        phases: phases_abi,
        slots: literal_slot(inputs, analysis.phases.len()) + 2,
        literal_slot: literal_slot(inputs, analysis.phases.len()),
        literals: crate::ir::literals(c).len(),
        run_slot: literal_slot(inputs, analysis.phases.len()) + 1,
        result,
    })
}

fn render(template: &str, ctx: &tera::Context) -> R<String> {
    tera::Tera::one_off(template, ctx, false).map_err(|e| {
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            msg.push_str(&format!(": {s}"));
            src = s.source();
        }
        CodegenError::Emit {
            backend: "cpu",
            op: "template",
            node: NodeId(0),
            loc: None,
            message: msg,
        }
    })
}
