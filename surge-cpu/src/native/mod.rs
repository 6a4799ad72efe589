//! Native CPU execution: the emitted Rust kernels (one `rustc`-compiled library per computation
//! and variant set) driven by rayon skeletons that realize each variant's schedule and policy.
//!
//! See `README.md` beside this file for what each module holds.

mod abi;
pub mod balance;
pub mod bcsr;
mod bcsr_run;
#[cfg(test)]
mod bcsr_tests;
#[cfg(test)]
mod cache_tests;
pub mod compile;
mod contraction;
mod cooperative;
mod deep;
pub mod diagonal;
pub(crate) mod hot_team;
mod kept;
pub mod lanes;
mod plan;
mod run;
mod runs;
pub mod sell;
mod sell_run;
pub mod skeleton;
mod workspace;

pub use workspace::Workspace;

use crate::CpuError;
use abi::LibraryFns;
use compile::Loaded;
use plan::HostPlan;
use std::collections::HashMap;
use std::sync::Arc;
use surge_codegen::analysis::{analyze, check_buffers};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cpu::{CpuProgram, EmitOptions, emit};
use surge_codegen::gemm;
use surge_codegen::ir::{Computation, Elem, literal_values, structure_difference};
use surge_codegen::variant::Variant;
use surge_codegen::variant_set::{VariantSet, cpu_default};

/// The compiled variants of one computation.
#[derive(Debug, Clone)]
pub struct NativeKernels {
    ir: Computation,
    program: Arc<CpuProgram>,
    lib: Arc<Loaded>,
    variants: Vec<Variant>,
    /// Per variant (same order): its module and host plan, resolved once at build time so a run
    /// neither formats the variant id nor searches the modules.
    resolved: Vec<Option<(usize, HostPlan)>>,
    /// Variant id → index into `variants`, for variants that are not borrowed from `variants`.
    by_id: HashMap<String, usize>,
    /// The library's functions: per module, per phase, and its error reader.
    fns: Arc<LibraryFns>,
    /// The GEMM kernels of the variants of a dense contraction's GEMM family, if any.
    gemm: Option<Arc<contraction::GemmFamily>>,
}

impl NativeKernels {
    /// Emits, compiles (or loads from the cache) the given variants of `ir`.
    pub fn build(ir: &Computation, variants: &[Variant]) -> Result<NativeKernels, CpuError> {
        Self::build_with(ir, variants, &EmitOptions::default())
    }

    /// [`NativeKernels::build`] with emitter options (tests poison a variant with them).
    pub fn build_with(
        ir: &Computation,
        variants: &[Variant],
        options: &EmitOptions,
    ) -> Result<NativeKernels, CpuError> {
        let analysis = analyze(ir)?;
        let (family, native): (Vec<Variant>, Vec<Variant>) =
            variants.iter().cloned().partition(gemm::is_gemm);
        // A GEMM-only list still gets a library of the phase's own default variant (not the
        // GEMM family's, which is the computation's default), so that every `NativeKernels` has
        // one (it is what `program()` shows).
        let native = match (native.is_empty(), variants.first()) {
            (true, Some(v)) => {
                let set = VariantSet::new(&analysis, &v.platform)?;
                let own: Vec<Variant> = set
                    .variants()
                    .iter()
                    .filter(|v| !gemm::is_gemm(v))
                    .cloned()
                    .collect();
                let default = cpu_default(&own).unwrap_or(set.default_variant());
                vec![default.clone()]
            }
            _ => native,
        };
        let program = emit(ir, &analysis, &native, options)?;
        let lib = compile::load(&program)?;
        let mut k = Self::assemble(ir, variants, program, lib)?;
        if !family.is_empty() {
            k.gemm = Some(Arc::new(contraction::GemmFamily::build(
                &analysis, &family,
            )?));
        }
        Ok(k)
    }

    /// The kernels of `variants` of `ir` from `program`, loaded as `lib`.
    pub(super) fn assemble(
        ir: &Computation,
        variants: &[Variant],
        program: CpuProgram,
        lib: Arc<Loaded>,
    ) -> Result<NativeKernels, CpuError> {
        let fns = LibraryFns::load(&program, &lib)?;
        let resolved = variants
            .iter()
            .map(|v| Some((program.module_of(&v.id())?, HostPlan::of(v).ok()?)))
            .collect();
        let by_id = variants
            .iter()
            .enumerate()
            .map(|(i, v)| (v.id(), i))
            .collect();
        Ok(NativeKernels {
            ir: ir.clone(),
            program: Arc::new(program),
            lib,
            variants: variants.to_vec(),
            resolved,
            by_id,
            fns: Arc::new(fns),
            gemm: None,
        })
    }

    pub fn program(&self) -> &CpuProgram {
        &self.program
    }
    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }
    /// Whether building compiled (false: the library came from the disk cache).
    pub fn compiled(&self) -> bool {
        self.lib.compiled
    }
    pub fn source_path(&self) -> &std::path::Path {
        &self.lib.source_path
    }

    /// The module and host plan of `variant`: by address when it is one of [`Self::variants`]
    /// (what benchmarks and the tuner pass), else by id.
    fn resolve(
        &self,
        variant: &Variant,
    ) -> Result<std::borrow::Cow<'_, (usize, HostPlan)>, CpuError> {
        let index = match self.variants.iter().position(|v| std::ptr::eq(v, variant)) {
            Some(i) => Some(i),
            None => self.by_id.get(&variant.id()).copied(),
        };
        if let Some(Some(r)) = index.map(|i| &self.resolved[i]) {
            return Ok(std::borrow::Cow::Borrowed(r));
        }
        let m = self
            .program
            .module_of(&variant.id())
            .ok_or_else(|| CpuError::UnknownVariant {
                id: variant.id(),
                known: self.variants.len(),
            })?;
        Ok(std::borrow::Cow::Owned((m, HostPlan::of(variant)?)))
    }

    /// Runs `variant` on `buffers` (one per computation input, checked against the declarations).
    pub fn run(&self, variant: &Variant, buffers: &[Buffer]) -> Result<Output, CpuError> {
        self.run_with(&self.ir, variant, buffers)
    }

    /// Runs `variant` for another computation of the same structure (the same IR up to input
    /// lengths and integer literal values, which the kernels take as arguments: another split
    /// tile or range bound), on its `buffers`. A computation of another structure is an error
    /// naming the first difference.
    pub fn run_with(
        &self,
        ir: &Computation,
        variant: &Variant,
        buffers: &[Buffer],
    ) -> Result<Output, CpuError> {
        let mut ws = Workspace::default();
        self.run_in(ir, variant, buffers, &mut ws)?;
        Ok(ws.take_output().expect("a finished run has an output"))
    }

    /// [`NativeKernels::run_with`] into a reusable workspace: phase results are written into the
    /// buffers of the previous run when their sizes match (no allocation, no page faults: what
    /// repeated runs in benchmarks and the tuner use). The result is [`Workspace::output`].
    pub fn run_in(
        &self,
        ir: &Computation,
        variant: &Variant,
        buffers: &[Buffer],
        ws: &mut Workspace,
    ) -> Result<(), CpuError> {
        self.run_in_keyed(ir, variant, buffers, None, ws)
    }

    /// [`NativeKernels::run_in`] for inputs that `key` identifies: the caller promises that
    /// runs with the same key have the same, unchanged `buffers` (an immutable computation's id).
    /// Data layouts built from the inputs (`layout1 = diagonals`) are then kept in `ws` and
    /// reused; without a key they are rebuilt for every run.
    pub fn run_in_keyed(
        &self,
        ir: &Computation,
        variant: &Variant,
        buffers: &[Buffer],
        key: Option<u64>,
        ws: &mut Workspace,
    ) -> Result<(), CpuError> {
        self.check_structure(ir)?;
        check_buffers(ir, buffers)?;
        if let (true, Some(g)) = (gemm::is_gemm(variant), &self.gemm) {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            return g.run(ir, variant, buffers, threads, ws);
        }
        let resolved = self.resolve(variant)?;
        let lits = literal_values(ir);
        self.run_phases(resolved.0, &resolved.1, buffers, &lits, key, ws)
    }
}

impl NativeKernels {
    /// Whether `ir` has the structure these kernels were compiled for (else an error naming the
    /// difference).
    fn check_structure(&self, ir: &Computation) -> Result<(), CpuError> {
        if std::ptr::eq(ir, &self.ir) {
            return Ok(());
        }
        match structure_difference(&self.ir, ir) {
            None => Ok(()),
            Some(diff) => Err(CpuError::Invalid(surge_codegen::CodegenError::Input {
                input: "(computation)".into(),
                message: format!(
                    "these kernels were compiled for a computation of another structure: {diff}"
                ),
            })),
        }
    }
}

/// Element type check used by callers that allocate outputs.
pub fn storable(e: Elem) -> bool {
    Elem::STORABLE.contains(&e)
}
