//! Native CPU execution: the emitted Rust kernels (one `rustc`-compiled library per computation
//! and variant set) driven by rayon skeletons that realize each variant's schedule and policy.

pub mod compile;
pub mod diagonal;
pub mod skeleton;

use crate::CpuError;
use compile::Loaded;
use skeleton::{LevelPlan, LoopSchedule, for_chunks, pool};
use std::collections::HashMap;
use std::sync::Arc;
use surge_codegen::analysis::{analyze, check_buffers};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cpu::{CpuProgram, EmitOptions, Inner, PhaseAbi, Shape, emit, phase_slot};
use surge_codegen::ir::{Computation, Elem, NodeId};
use surge_codegen::passes;
use surge_codegen::policy::PValue;
use surge_codegen::schedule::ScheduleElem;
use surge_codegen::target::{CpuMachine, Platform};
use surge_codegen::variant::Variant;

#[repr(C)]
#[derive(Clone, Copy)]
struct Buf {
    ptr: *const u8,
    len: usize,
}
// SAFETY: slots point at buffers that outlive every kernel call made with them; kernels only read
// through them.
unsafe impl Send for Buf {}
unsafe impl Sync for Buf {}

type OuterFn = unsafe extern "C" fn(*const Buf, *mut usize) -> i32;
type ElemsFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u8) -> i32;
type LensFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u64) -> i32;
type RowsFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u8, *const u64) -> i32;
type InnerLensFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u64) -> i32;
type PartialFn = unsafe extern "C" fn(*const Buf, usize, usize, usize, *mut u8) -> i32;
type CombineFn = unsafe extern "C" fn(*const Buf, usize, *const u8, *const u8, *mut u8) -> i32;
type FinishFn = unsafe extern "C" fn(*const Buf, usize, *const u8, *mut u8) -> i32;
type ChunkFn = unsafe extern "C" fn(*const Buf, usize, usize, usize, u8, *const u8, *mut u8) -> i32;
type DiagFn = unsafe extern "C" fn(*const Buf, *const Buf, usize, usize, *mut u8) -> i32;
type TakeErrorFn = unsafe extern "C" fn(*mut u8, usize) -> usize;

/// The resolved functions of one phase in one module.
#[derive(Debug, Clone, Copy)]
struct PhaseFns {
    outer: OuterFn,
    elems: Option<ElemsFn>,
    lens: Option<LensFn>,
    rows: Option<RowsFn>,
    inner_lens: Option<InnerLensFn>,
    partial: Option<PartialFn>,
    combine: Option<CombineFn>,
    finish: Option<FinishFn>,
    chunk: Option<ChunkFn>,
    diag: Option<DiagFn>,
}

/// Raw pointers handed to worker threads; the skeleton guarantees disjoint writes.
#[derive(Clone, Copy)]
struct Shared<T>(T);
// SAFETY: used only for buffers that outlive the parallel region, with disjoint writes.
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

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
    /// Per module, per phase.
    fns: Arc<Vec<Vec<PhaseFnsDebug>>>,
    take_error: TakeErrorFnDebug,
}

#[derive(Clone, Copy)]
struct PhaseFnsDebug(PhaseFns);
impl std::fmt::Debug for PhaseFnsDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PhaseFns")
    }
}
#[derive(Clone, Copy)]
struct TakeErrorFnDebug(TakeErrorFn);
impl std::fmt::Debug for TakeErrorFnDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("surge_take_error")
    }
}

/// The CPU variants of a computation's final phase on `machine`: the computation's variants
/// (each applies its schedule and parameters to every phase).
pub fn variants(ir: &Computation, machine: &CpuMachine) -> Result<Vec<Variant>, CpuError> {
    let analysis = analyze(ir)?;
    let phases = passes::run(&analysis, &Platform::Cpu(machine.clone()))?;
    let last = phases.last().expect("an analysis has at least one phase");
    Ok(last
        .spaces
        .iter()
        .flat_map(|s| s.variants.iter().cloned())
        .collect())
}

/// The default variant: the outer level independent, every inner level sequential and
/// unrolled, all cores, static schedule with the largest chunk (what a careful programmer
/// writes first).
pub fn default_variant(variants: &[Variant]) -> Option<&Variant> {
    let score = |v: &Variant| -> (i64, i64, i64, i64, i64) {
        let elems = v.schedule.elems();
        let shape = i64::from(elems.first() == Some(&ScheduleElem::Independent))
            + elems
                .iter()
                .skip(1)
                .filter(|e| **e == ScheduleElem::Sequential)
                .count() as i64;
        let int = |k: &str| match v.get(k) {
            Some(PValue::Int(i)) => *i,
            _ => 0,
        };
        let sched = i64::from(v.get("sched1") == Some(&PValue::Str("static".into())));
        let unroll: i64 = (1..=4).map(|d| int(&format!("unroll{d}"))).sum();
        (shape, int("threads"), sched, int("chunk1"), unroll)
    };
    variants.iter().max_by_key(|v| score(v))
}

fn sym<T: Copy>(lib: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: the generated runtime exports these names with these signatures (ABI 1).
    unsafe { lib.get::<T>(name.as_bytes()).ok().map(|s| *s) }
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
        let program = emit(ir, &analysis, variants, options)?;
        let lib = compile::load(&program)?;
        let mut fns = Vec::new();
        for m in &program.modules {
            let mut per_phase = Vec::new();
            for (pi, _) in program.phases.iter().enumerate() {
                let p = format!("m{}_p{pi}_", m.index);
                let outer = sym::<OuterFn>(&lib.lib, &format!("{p}outer")).ok_or_else(|| {
                    CpuError::Compile {
                        variants: m.variants.clone(),
                        message: format!("the kernel library lacks {p}outer"),
                        source_path: Some(lib.source_path.clone()),
                    }
                })?;
                per_phase.push(PhaseFnsDebug(PhaseFns {
                    outer,
                    elems: sym(&lib.lib, &format!("{p}elems")),
                    lens: sym(&lib.lib, &format!("{p}lens")),
                    rows: sym(&lib.lib, &format!("{p}rows")),
                    inner_lens: sym(&lib.lib, &format!("{p}inner_lens")),
                    partial: sym(&lib.lib, &format!("{p}partial")),
                    combine: sym(&lib.lib, &format!("{p}combine")),
                    finish: sym(&lib.lib, &format!("{p}finish")),
                    chunk: sym(&lib.lib, &format!("{p}chunk")),
                    diag: sym(&lib.lib, &format!("{p}diag")),
                }));
            }
            fns.push(per_phase);
        }
        let take_error = sym::<TakeErrorFn>(&lib.lib, "surge_take_error")
            .expect("surge_take_error in a checked library");
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
            take_error: TakeErrorFnDebug(take_error),
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

    /// The error of a failed kernel call, read on the thread that made it.
    fn error(&self) -> CpuError {
        let mut buf = vec![0u8; 4096];
        // SAFETY: the buffer holds `cap` bytes.
        let n = unsafe { (self.take_error.0)(buf.as_mut_ptr(), buf.len()) };
        buf.truncate(n.min(4096));
        let msg = String::from_utf8_lossy(&buf).into_owned();
        if let Some(rest) = msg.strip_prefix("SURGE|")
            && let Some((node, message)) = rest.split_once('|')
            && let Ok(node) = node.parse::<u64>()
            && (node as usize) < self.ir.nodes.len()
        {
            let node = NodeId(node);
            return CpuError::Runtime {
                op: self.ir.node(node).op.kind().name(),
                node,
                message: message.to_string(),
            };
        }
        CpuError::Kernel(msg)
    }

    fn check(&self, status: i32) -> Result<(), CpuError> {
        if status == 0 {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Runs `variant` on `buffers` (one per computation input, checked against the declarations).
    pub fn run(&self, variant: &Variant, buffers: &[Buffer]) -> Result<Output, CpuError> {
        self.run_with(&self.ir, variant, buffers)
    }

    /// Runs `variant` for another computation of the same structure (the same IR up to input
    /// lengths: the kernels do not depend on them), on its `buffers`.
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
        let same_structure = ir.root == self.ir.root
            && ir.nodes == self.ir.nodes
            && ir.inputs.len() == self.ir.inputs.len()
            && ir
                .inputs
                .iter()
                .zip(&self.ir.inputs)
                .all(|(a, b)| a.name == b.name && a.elem == b.elem);
        if !same_structure {
            return Err(CpuError::Invalid(surge_codegen::CodegenError::Input {
                input: "(computation)".into(),
                message: "these kernels were compiled for a computation of another structure"
                    .into(),
            }));
        }
        check_buffers(ir, buffers)?;
        let resolved = self.resolve(variant)?;
        let (m, plan) = (resolved.0, &resolved.1);
        let inputs = buffers.len();
        let mut slots: Vec<Buf> = buffers
            .iter()
            .map(|b| Buf {
                ptr: buffer_ptr(b),
                len: b.len(),
            })
            .collect();
        slots.resize(
            self.program.slots,
            Buf {
                ptr: std::ptr::NonNull::<u64>::dangling().as_ptr() as *const u8,
                len: 0,
            },
        );
        let pool = pool(plan.threads);
        ws.phases.resize_with(self.program.phases.len(), || None);
        ws.layouts.resize_with(self.program.phases.len(), || None);
        ws.last = None;
        for (pi, abi) in self.program.phases.iter().enumerate() {
            let fns = self.fns[m][pi].0;
            let layout = match (&abi.diagonal, plan.diagonals, fns.diag) {
                (Some(pat), true, Some(_)) => match (&ws.layouts[pi], key) {
                    (Some((k, l)), Some(key)) if *k == key => l.clone(),
                    _ => {
                        let l = diagonal::inspect(pat, buffers).map(Arc::new);
                        if let Some(key) = key {
                            ws.layouts[pi] = Some((key, l.clone()));
                        }
                        l
                    }
                },
                _ => None,
            };
            let reuse = ws.phases[pi].take();
            let r = self.run_phase(&pool, abi, &fns, &slots, plan, reuse, layout.as_deref())?;
            let s = phase_slot(inputs, pi);
            slots[s] = Buf {
                ptr: buffer_ptr(&r.0),
                len: r.0.len(),
            };
            if let Some(off) = &r.1 {
                slots[s + 1] = Buf {
                    ptr: off.as_ptr() as *const u8,
                    len: off.len(),
                };
            }
            ws.phases[pi] = Some(r);
        }
        let abi = self.program.phases.last().expect("a phase");
        ws.last = Some((abi.whole, abi.shape));
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn run_phase(
        &self,
        pool: &rayon::ThreadPool,
        abi: &PhaseAbi,
        f: &PhaseFns,
        slots: &[Buf],
        plan: &HostPlan,
        reuse: Option<PhaseResult>,
        layout: Option<&diagonal::DiagonalLayout>,
    ) -> Result<PhaseResult, CpuError> {
        let (old_data, old_offsets) = match reuse {
            Some((d, o)) => (Some(d), o),
            None => (None, None),
        };
        let alloc = |elem: Elem, n: usize, old: Option<Buffer>| match old {
            Some(b) if b.elem() == elem && b.len() == n => b,
            _ => Buffer::zeroed(elem, n),
        };
        let bufs = Shared(slots.as_ptr());
        let mut n = 0usize;
        // SAFETY: slots are valid for the duration of the call.
        self.check(unsafe { (f.outer)(bufs.0, &mut n) })?;
        // Level plans: a whole reduce/scan has one element and its level 1 is the inner level.
        let (outer, inner) = if abi.whole {
            (LevelPlan::Sequential, plan.levels[0])
        } else {
            (
                plan.levels[0],
                plan.levels.get(1).copied().unwrap_or(LevelPlan::Sequential),
            )
        };
        let outer_parallel = matches!(outer, LevelPlan::Parallel { .. });
        let coop = abi.inner.is_some()
            && matches!(inner, LevelPlan::Parallel { .. })
            && (!outer_parallel || plan.nesting);
        let threads = plan.threads;
        let acc_zero = [0u64; 1];
        let _ = acc_zero;
        match abi.shape {
            Shape::Flat => {
                let out = alloc(abi.elem, n, old_data);
                let optr = Shared(buffer_ptr(&out) as *mut u8);
                let size = abi.elem.size_bytes();
                let elems = f.elems.expect("elems of a flat phase");
                if let (Some(l), Some(diag), false) = (layout, f.diag, coop)
                    && l.rows == n
                {
                    self.run_diagonal(pool, l, diag, elems, bufs, optr, n, outer, threads)?;
                    return Ok((out, None));
                }
                for_chunks::<CpuError>(pool, n, outer, threads, &|lo, hi| {
                    let (b, o) = (bufs, optr);
                    if !coop {
                        // SAFETY: chunks are disjoint and within the output.
                        return self.check(unsafe { elems(b.0, lo, hi, o.0) });
                    }
                    // Long inner sequences run cooperatively; runs of short ones in one call.
                    let long = self.long_rows(f, b, lo, hi, inner)?;
                    let mut start = lo;
                    for (i, m) in long {
                        if start < i {
                            // SAFETY: a disjoint range of the output.
                            self.check(unsafe { elems(b.0, start, i, o.0) })?;
                        }
                        let r = self.cooperative_reduce(pool, f, b, i, m, inner, threads)?;
                        let fin = f.finish.expect("finish");
                        // SAFETY: `r` holds one accumulator; `i` is in range.
                        self.check(unsafe { fin(b.0, i, &r as *const u64 as *const u8, o.0) })?;
                        start = i + 1;
                    }
                    if start < hi {
                        // SAFETY: as above.
                        self.check(unsafe { elems(b.0, start, hi, o.0) })?;
                    }
                    let _ = size;
                    Ok(())
                })?;
                Ok((out, None))
            }
            Shape::Nested => {
                let mut lens = vec![0u64; n];
                let lptr = Shared(lens.as_mut_ptr());
                let lens_fn = f.lens.expect("lens of a nested phase");
                for_chunks::<CpuError>(pool, n, outer, threads, &|lo, hi| {
                    let (b, l) = (bufs, lptr);
                    // SAFETY: disjoint chunks of `lens`.
                    self.check(unsafe { lens_fn(b.0, lo, hi, l.0) })
                })?;
                let mut offsets = old_offsets.unwrap_or_default();
                offsets.clear();
                let mut total = 0u64;
                offsets.push(0);
                for l in &lens {
                    total += l;
                    offsets.push(total);
                }
                let data = alloc(abi.elem, total as usize, old_data);
                let dptr = Shared(buffer_ptr(&data) as *mut u8);
                let optr = Shared(offsets.as_ptr());
                let rows = f.rows.expect("rows of a nested phase");
                let size = abi.elem.size_bytes();
                for_chunks::<CpuError>(pool, n, outer, threads, &|lo, hi| {
                    let (b, d, o) = (bufs, dptr, optr);
                    if !coop {
                        // SAFETY: rows `lo..hi` are disjoint ranges of `data` by `offsets`.
                        return self.check(unsafe { rows(b.0, lo, hi, d.0, o.0) });
                    }
                    let long = self.long_rows(f, b, lo, hi, inner)?;
                    let mut start = lo;
                    for (i, m) in long {
                        if start < i {
                            // SAFETY: rows `start..i` are disjoint ranges of `data`.
                            self.check(unsafe { rows(b.0, start, i, d.0, o.0) })?;
                        }
                        // SAFETY: offsets[i] is within `data`.
                        let row = Shared(unsafe { d.0.add(offsets[i] as usize * size) });
                        self.cooperative_row(pool, abi, f, b, i, m, row, inner, threads)?;
                        start = i + 1;
                    }
                    if start < hi {
                        // SAFETY: as above.
                        self.check(unsafe { rows(b.0, start, hi, d.0, o.0) })?;
                    }
                    Ok(())
                })?;
                Ok((data, Some(offsets)))
            }
        }
    }

    /// Elements of `lo..hi` whose inner sequence is long enough to split across the inner
    /// level's chunks (at least two chunks), with their lengths.
    fn long_rows(
        &self,
        f: &PhaseFns,
        b: Shared<*const Buf>,
        lo: usize,
        hi: usize,
        inner: LevelPlan,
    ) -> Result<Vec<(usize, usize)>, CpuError> {
        let LevelPlan::Parallel { chunk, .. } = inner else {
            return Ok(vec![]);
        };
        let mut lens = vec![0u64; hi - lo];
        // SAFETY: `lens` holds `hi - lo` values.
        self.check(unsafe { (f.inner_lens.expect("inner_lens"))(b.0, lo, hi, lens.as_mut_ptr()) })?;
        let min = 2 * chunk.max(1) as u64;
        Ok(lens
            .iter()
            .enumerate()
            .filter(|(_, m)| **m >= min)
            .map(|(k, m)| (lo + k, *m as usize))
            .collect())
    }

    /// The reduction of element `i`'s inner sequence (`m` elements) from partial reductions
    /// over the inner level's chunks, combined in order.
    #[allow(clippy::too_many_arguments)]
    fn cooperative_reduce(
        &self,
        pool: &rayon::ThreadPool,
        f: &PhaseFns,
        b: Shared<*const Buf>,
        i: usize,
        m: usize,
        inner: LevelPlan,
        threads: usize,
    ) -> Result<u64, CpuError> {
        let partials = self.partials(pool, f, b, i, m, inner, threads)?;
        self.fold(f, b, i, &partials)
    }

    #[allow(clippy::too_many_arguments)]
    fn partials(
        &self,
        pool: &rayon::ThreadPool,
        f: &PhaseFns,
        b: Shared<*const Buf>,
        i: usize,
        m: usize,
        inner: LevelPlan,
        threads: usize,
    ) -> Result<Vec<u64>, CpuError> {
        let LevelPlan::Parallel { chunk, .. } = inner else {
            panic!("internal: partials of a sequential level")
        };
        let chunk = chunk.max(1);
        let mut parts = vec![0u64; m.div_ceil(chunk)];
        let pptr = Shared(parts.as_mut_ptr());
        let partial = f.partial.expect("partial");
        // The schedule deals out chunk indices, so partial `c` is always chunk `c`.
        for_chunks::<CpuError>(pool, parts.len(), by_chunk(inner), threads, &|c0, c1| {
            let (p, b) = (pptr, b);
            for c in c0..c1 {
                let (a, e) = (c * chunk, ((c + 1) * chunk).min(m));
                // SAFETY: slot `c` is this chunk's own.
                self.check(unsafe { partial(b.0, i, a, e, p.0.add(c) as *mut u8) })?;
            }
            Ok(())
        })?;
        Ok(parts)
    }

    fn fold(
        &self,
        f: &PhaseFns,
        b: Shared<*const Buf>,
        i: usize,
        parts: &[u64],
    ) -> Result<u64, CpuError> {
        let combine = f.combine.expect("combine");
        let mut acc = parts[0];
        for p in &parts[1..] {
            let mut out = 0u64;
            // SAFETY: accumulators are stored in u64 slots.
            self.check(unsafe {
                combine(
                    b.0,
                    i,
                    &acc as *const u64 as *const u8,
                    p as *const u64 as *const u8,
                    &mut out as *mut u64 as *mut u8,
                )
            })?;
            acc = out;
        }
        Ok(acc)
    }

    /// Writes row `i` (`m` elements) cooperatively: a two-pass scan, or a parallel inner map.
    #[allow(clippy::too_many_arguments)]
    fn cooperative_row(
        &self,
        pool: &rayon::ThreadPool,
        abi: &PhaseAbi,
        f: &PhaseFns,
        b: Shared<*const Buf>,
        i: usize,
        m: usize,
        row: Shared<*mut u8>,
        inner: LevelPlan,
        threads: usize,
    ) -> Result<(), CpuError> {
        let LevelPlan::Parallel { chunk, .. } = inner else {
            panic!("internal: a cooperative row of a sequential level")
        };
        let chunk = chunk.max(1);
        let chunk_fn = f.chunk.expect("chunk");
        let carries: Vec<Option<u64>> = if abi.inner == Some(Inner::Scan) {
            let parts = self.partials(pool, f, b, i, m, inner, threads)?;
            let mut carries = vec![None];
            let mut acc: Option<u64> = None;
            for p in &parts[..parts.len() - 1] {
                acc = Some(match acc {
                    None => *p,
                    Some(a) => self.fold(f, b, i, &[a, *p])?,
                });
                carries.push(acc);
            }
            carries
        } else {
            vec![None; m.div_ceil(chunk)]
        };
        for_chunks::<CpuError>(pool, carries.len(), by_chunk(inner), threads, &|c0, c1| {
            let (r, b) = (row, b);
            for (ci, carry) in carries.iter().enumerate().take(c1).skip(c0) {
                let (a, e) = (ci * chunk, ((ci + 1) * chunk).min(m));
                let carry = *carry;
                let c = carry.unwrap_or(0);
                // SAFETY: positions a..e of the row are this chunk's own.
                self.check(unsafe {
                    chunk_fn(
                        b.0,
                        i,
                        a,
                        e,
                        u8::from(carry.is_some()),
                        &c as *const u64 as *const u8,
                        r.0,
                    )
                })?;
            }
            Ok(())
        })
    }
}

impl NativeKernels {
    /// A flat phase over a diagonal layout: runs of regular blocks through `diag`, the other rows
    /// through `elems`, the outer level's schedule applied to blocks.
    #[allow(clippy::too_many_arguments)]
    fn run_diagonal(
        &self,
        pool: &rayon::ThreadPool,
        l: &diagonal::DiagonalLayout,
        diag: DiagFn,
        elems: ElemsFn,
        bufs: Shared<*const Buf>,
        out: Shared<*mut u8>,
        n: usize,
        outer: LevelPlan,
        threads: usize,
    ) -> Result<(), CpuError> {
        use diagonal::BLOCK;
        let mut dia = vec![Buf {
            ptr: l.offsets.as_ptr() as *const u8,
            len: l.offsets.len(),
        }];
        dia.extend(l.values.iter().map(|b| Buf {
            ptr: buffer_ptr(b),
            len: b.len(),
        }));
        let dia = Shared(dia.as_ptr());
        let by_block = match outer {
            LevelPlan::Parallel { schedule, chunk } => LevelPlan::Parallel {
                schedule,
                chunk: chunk.div_ceil(BLOCK).max(1),
            },
            s => s,
        };
        let diagonal = |q: usize| l.diagonal.get(q).copied().unwrap_or(false);
        for_chunks::<CpuError>(pool, n.div_ceil(BLOCK), by_block, threads, &|blo, bhi| {
            let (b, d, o) = (bufs, dia, out);
            let mut q = blo;
            while q < bhi {
                let kind = diagonal(q);
                let mut e = q + 1;
                while e < bhi && diagonal(e) == kind {
                    e += 1;
                }
                // SAFETY: blocks `q..e` are a disjoint part of the output; diagonal blocks are
                // within the layout's copies.
                self.check(unsafe {
                    if kind {
                        diag(b.0, d.0, q, e, o.0)
                    } else {
                        elems(b.0, q * BLOCK, (e * BLOCK).min(n), o.0)
                    }
                })?;
                if kind {
                    // The irregular rows of these blocks, over the diag kernel's placeholders.
                    // Consecutive ones (a grid row's last and the next one's first) in one call.
                    let first = l.fixups.partition_point(|&r| r < q * BLOCK);
                    let last = l.fixups.partition_point(|&r| r < e * BLOCK);
                    let rows = &l.fixups[first..last];
                    let mut i = 0;
                    while i < rows.len() {
                        let mut j = i + 1;
                        while j < rows.len() && rows[j] == rows[j - 1] + 1 {
                            j += 1;
                        }
                        // SAFETY: rows `rows[i]..=rows[j - 1]` are inside blocks `q..e`.
                        self.check(unsafe { elems(b.0, rows[i], rows[j - 1] + 1, o.0) })?;
                        i = j;
                    }
                }
                q = e;
            }
            Ok(())
        })
    }
}

type PhaseResult = (Buffer, Option<Vec<u64>>);

/// Phase results of the last run, reused by the next (see [`NativeKernels::run_in`]), and the
/// data layouts of keyed inputs (see [`NativeKernels::run_in_keyed`]).
#[derive(Debug, Default)]
pub struct Workspace {
    phases: Vec<Option<PhaseResult>>,
    last: Option<(bool, Shape)>,
    layouts: Vec<Option<(u64, Option<Arc<diagonal::DiagonalLayout>>)>>,
}

impl Workspace {
    /// The diagonal layout kept for phase `phase`, if one was built for a keyed run.
    pub fn diagonal_layout(&self, phase: usize) -> Option<&diagonal::DiagonalLayout> {
        self.layouts.get(phase)?.as_ref()?.1.as_deref()
    }
    /// The last run's result (a copy; the buffers stay for reuse).
    pub fn output(&self) -> Option<Output> {
        let (whole, shape) = self.last?;
        let (data, offsets) = self.phases.last()?.as_ref()?;
        Some(to_output(whole, shape, data.clone(), offsets.clone()))
    }
    /// The last run's result, moved out.
    pub fn take_output(&mut self) -> Option<Output> {
        let (whole, shape) = self.last.take()?;
        let (data, offsets) = self.phases.last_mut()?.take()?;
        Some(to_output(whole, shape, data, offsets))
    }
}

fn to_output(whole: bool, shape: Shape, data: Buffer, offsets: Option<Vec<u64>>) -> Output {
    match (whole, shape, offsets) {
        (true, Shape::Flat, _) => Output::Scalar(data.get(0).expect("one scalar")),
        (true, Shape::Nested, _) => Output::Seq(data),
        (false, Shape::Flat, _) => Output::Seq(data),
        (false, Shape::Nested, Some(offsets)) => Output::Nested { data, offsets },
        (false, Shape::Nested, None) => panic!("internal: nested phase without offsets"),
    }
}

/// The host-side reading of a CPU variant's parameters.
#[derive(Debug, Clone)]
struct HostPlan {
    threads: usize,
    nesting: bool,
    /// `layout1 = diagonals`.
    diagonals: bool,
    levels: Vec<LevelPlan>,
}

impl HostPlan {
    fn of(v: &Variant) -> Result<HostPlan, CpuError> {
        let bad = |m: String| CpuError::UnknownVariant {
            id: format!("{v} ({m})"),
            known: 0,
        };
        let int = |k: &str| match v.get(k) {
            Some(PValue::Int(i)) if *i > 0 => Ok(*i as usize),
            Some(other) => Err(bad(format!("`{k}` = {other} is not a positive integer"))),
            None => Err(bad(format!("missing `{k}`"))),
        };
        let threads = int("threads")?;
        let nesting = v.get("nesting") == Some(&PValue::Int(1));
        let mut levels = Vec::new();
        for (d, e) in v.schedule.elems().iter().enumerate() {
            let d = d + 1;
            levels.push(match e {
                ScheduleElem::Sequential => LevelPlan::Sequential,
                _ => {
                    let schedule = match v.get(&format!("sched{d}")) {
                        Some(PValue::Str(s)) if s == "static" => LoopSchedule::Static,
                        Some(PValue::Str(s)) if s == "dynamic" => LoopSchedule::Dynamic,
                        Some(PValue::Str(s)) if s == "guided" => LoopSchedule::Guided,
                        other => {
                            return Err(bad(format!(
                                "`sched{d}` = {other:?} is not static, dynamic or guided"
                            )));
                        }
                    };
                    LevelPlan::Parallel {
                        schedule,
                        chunk: int(&format!("chunk{d}"))?,
                    }
                }
            });
        }
        let diagonals = match v.get("layout1") {
            None => false,
            Some(PValue::Str(s)) if s == "rows" => false,
            Some(PValue::Str(s)) if s == "diagonals" => true,
            Some(other) => {
                return Err(bad(format!("`layout1` = {other} is not rows or diagonals")));
            }
        };
        Ok(HostPlan {
            threads,
            nesting,
            diagonals,
            levels,
        })
    }
}

/// The plan of an inner level restated over chunk indices (one index per `chunk` elements).
fn by_chunk(inner: LevelPlan) -> LevelPlan {
    match inner {
        LevelPlan::Parallel { schedule, .. } => LevelPlan::Parallel { schedule, chunk: 1 },
        s => s,
    }
}

fn buffer_ptr(b: &Buffer) -> *const u8 {
    match b {
        Buffer::F32(v) => v.as_ptr() as *const u8,
        Buffer::F64(v) => v.as_ptr() as *const u8,
        Buffer::I32(v) => v.as_ptr() as *const u8,
        Buffer::I64(v) => v.as_ptr() as *const u8,
        Buffer::U32(v) => v.as_ptr() as *const u8,
        Buffer::U64(v) => v.as_ptr() as *const u8,
    }
}

/// Element type check used by callers that allocate outputs.
pub fn storable(e: Elem) -> bool {
    Elem::STORABLE.contains(&e)
}
