//! Running a computation's variants on a [`Runtime`] (a live GPU, or the emulator).
//! [`DeviceKernels`] compiles and loads the kernels of many variants once; [`Prepared`] holds one
//! input set on the device (uploaded once, phase results allocated once) and launches a chosen
//! variant per phase: [`Prepared::run`] (checked), [`Prepared::time`] (launches only) and
//! [`Prepared::output`]. [`execute`] / [`execute_on`] are the one-shot path on top.
//!
//! Every kernel takes the device error record `u64 *surge_err` last; after each run the host
//! reads it and turns a failed device-side check into [`CudaError::Runtime`].

mod output;

use crate::CudaError;
use crate::args::LitArg;
use crate::device::Device;
use crate::runtime::{KArg, Runtime};
use std::collections::HashMap;
use surge_codegen::analysis::{analyze, check_buffers};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cpu::ResultParts;
use surge_codegen::emit::cuda::{
    ArgSlot, CudaProgram, ERROR_WORDS, Launch, PhasePlan, decode_error_in, emit,
};
use surge_codegen::ir::{Computation, literals, structure_difference};
use surge_codegen::variant::Variant;

/// One phase's result on the device: `len` elements (the flat total for nested results), `n`
/// outer elements, and for nested results the row offsets (device and host).
#[derive(Debug)]
struct PhaseResult<R: Runtime> {
    data: R::Buf,
    n: u64,
    len: u64,
    offsets: Option<(R::Words, Vec<u64>)>,
}

/// The variant list per phase: one per phase, or one for every phase.
fn per_phase(variants: &[Variant], phases: usize) -> Result<Vec<Vec<Variant>>, CudaError> {
    match variants.len() {
        n if n == phases => Ok(variants.iter().map(|v| vec![v.clone()]).collect()),
        1 => Ok(vec![variants.to_vec(); phases]),
        n => Err(CudaError::Input(format!(
            "{n} variants given for a computation of {phases} phases (give one per phase, or one for all)"
        ))),
    }
}

/// Runs `ir` on `buffers` with the given variants (one per phase, or one for all phases) on
/// GPU 0. No GPU is [`CudaError::Unavailable`].
pub fn execute(
    ir: &Computation,
    buffers: &[Buffer],
    variants: &[Variant],
) -> Result<Output, CudaError> {
    let dev = Device::open(0)?;
    execute_on(&dev, ir, buffers, variants)
}

/// [`execute`] on an open device: compile, upload, run (with the device-side checks), download.
pub fn execute_on<R: Runtime>(
    dev: &R,
    ir: &Computation,
    buffers: &[Buffer],
    variants: &[Variant],
) -> Result<Output, CudaError> {
    let analysis = analyze(ir)?;
    check_buffers(ir, buffers)?;
    let lists = per_phase(variants, analysis.phases.len())?;
    let k = DeviceKernels::build(dev, ir, &lists)?;
    let chosen: Vec<&Variant> = lists.iter().map(|l| &l[0]).collect();
    let p = k.prepare(buffers, &chosen)?;
    p.run(&chosen)?;
    p.output()
}

/// One variant's run by [`run_each`]: its phase, the variant and its result.
pub type EachResult = (usize, Variant, Result<Output, CudaError>);

/// Every variant of `lists[p]` for each phase `p`, with the other phases at their first variant:
/// compiled once, the input uploaded once, each combination run with its device-side checks
/// (what conformance, `surge run --all` and the random programs check). An input that cannot
/// be prepared (a check fails at the first variants) is every variant's error.
pub fn run_each<R: Runtime>(
    rt: &R,
    ir: &Computation,
    buffers: &[Buffer],
    lists: &[Vec<Variant>],
) -> Result<Vec<EachResult>, CudaError> {
    let k = DeviceKernels::build(rt, ir, lists)?;
    let firsts: Vec<&Variant> = lists.iter().map(|l| &l[0]).collect();
    let prepared = k.prepare_for(ir, buffers, &firsts);
    let mut out = Vec::new();
    for (p, vs) in lists.iter().enumerate() {
        for v in vs {
            let mut chosen = firsts.clone();
            chosen[p] = v;
            let r = match &prepared {
                Ok(pr) => pr.run(&chosen).and_then(|()| pr.output()),
                Err(e) => Err(e.clone()),
            };
            out.push((p, v.clone(), r));
        }
    }
    Ok(out)
}

/// The device error record's words (see [`surge_codegen::emit::cuda::ERROR_WORDS`]).
type ErrorRecord = [u64; ERROR_WORDS];

/// The error of a failed device-side check: the node's operator and the interpreter's message.
/// `None` when the record is clear.
pub fn runtime_error(ir: &Computation, rec: &[u64; ERROR_WORDS]) -> Option<CudaError> {
    let (node, message) = decode_error_in(ir, rec)?;
    let op = if (node.0 as usize) < ir.nodes.len() {
        ir.node(node).op.kind().name()
    } else {
        "kernel"
    };
    Some(CudaError::Runtime {
        op,
        node,
        loc: ir.loc(node),
        message,
    })
}

/// A loaded kernel and its name.
struct Kernel<R: Runtime> {
    f: R::Func,
    name: String,
}

/// The compiled and loaded kernels of many variants of one computation on one device (a GPU by
/// default, or any [`Runtime`]). Building emits the variants in chunks and compiles the chunks
/// on all cores at once (one module per chunk). [`DeviceKernels::prepare`] puts one input set on
/// the device.
pub struct DeviceKernels<R: Runtime = Device> {
    ir: Computation,
    rt: R,
    /// Every phase the program runs: the computation's, then (for a result stored in parts)
    /// one more per further part, run with the final phase's variant.
    plans: Vec<PhasePlan>,
    result: Option<ResultParts>,
    /// Per program phase: the computation's phase whose variant it runs.
    sources: Vec<usize>,
    /// Per phase: the shape kernel and, for nested results, the row-length kernel.
    shapes: Vec<(Kernel<R>, Option<Kernel<R>>)>,
    variants: Vec<Vec<Variant>>,
    kernels: HashMap<(usize, String), (Kernel<R>, Launch)>,
}

impl<R: Runtime> std::fmt::Debug for DeviceKernels<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceKernels")
            .field("runtime", &self.rt)
            .field("phases", &self.plans.len())
            .field("kernels", &self.kernels.len())
            .finish()
    }
}

impl<R: Runtime> DeviceKernels<R> {
    /// Compiles and loads `variants[p]` for every phase `p` of `ir` (list `p` may be empty only
    /// when nothing will run that phase).
    pub fn build(dev: &R, ir: &Computation, variants: &[Vec<Variant>]) -> Result<Self, CudaError> {
        let analysis = analyze(ir)?;
        let phases = analysis.phases.len();
        if variants.len() != phases {
            return Err(CudaError::Input(format!(
                "{} variant lists for a computation of {phases} phases",
                variants.len()
            )));
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let total: usize = variants.iter().map(Vec::len).sum();
        let per_chunk = total.div_ceil(threads).max(16);
        let mut chunks: Vec<Vec<Vec<Variant>>> = Vec::new();
        for (p, vs) in variants.iter().enumerate() {
            for c in vs.chunks(per_chunk) {
                let mut lists = vec![Vec::new(); phases];
                lists[p] = c.to_vec();
                chunks.push(lists);
            }
        }
        if chunks.is_empty() {
            chunks.push(vec![Vec::new(); phases]);
        }
        let mut programs = chunks
            .iter()
            .map(|lists| emit(ir, &analysis, lists))
            .collect::<Result<Vec<CudaProgram>, _>>()?;
        let modules = dev.load(&programs)?;
        let mut kernels = HashMap::new();
        let mut shapes = Vec::new();
        for (i, (prog, module)) in programs.iter().zip(&modules).enumerate() {
            let load = |name: &str| {
                Ok::<_, CudaError>(Kernel {
                    f: dev.function(module, name)?,
                    name: name.to_string(),
                })
            };
            if i == 0 {
                for plan in &prog.phases {
                    let rows = plan.rows_kernel.as_deref().map(load).transpose()?;
                    shapes.push((load(&plan.shape_kernel)?, rows));
                }
            } else if prog.phases != programs[0].phases {
                return Err(CudaError::Input(
                    "internal: the chunks of one computation emitted different phase plans".into(),
                ));
            }
            for k in &prog.kernels {
                kernels.insert((k.phase, k.variant.id()), (load(&k.name)?, k.launch));
            }
        }
        let first = programs.swap_remove(0);
        Ok(Self {
            ir: ir.clone(),
            rt: dev.clone(),
            plans: first.phases,
            result: first.result,
            sources: first.sources,
            shapes,
            variants: variants.to_vec(),
            kernels,
        })
    }

    /// The variants built for each phase.
    pub fn variants(&self) -> &[Vec<Variant>] {
        &self.variants
    }

    /// The runtime these kernels run on.
    pub fn runtime(&self) -> &R {
        &self.rt
    }

    /// The computation phase whose variant program phase `p` runs: itself, the final phase
    /// for the further parts of a result stored in parts, a deep value's for both its phases.
    fn variant_index(&self, p: usize) -> usize {
        self.sources
            .get(p)
            .copied()
            .unwrap_or(p)
            .min(self.variants.len().saturating_sub(1))
    }

    fn kernel(&self, p: usize, v: &Variant) -> Result<&(Kernel<R>, Launch), CudaError> {
        self.kernels
            .get(&(p, v.id()))
            .ok_or_else(|| CudaError::Input(format!("variant {v} was not built for phase {p}")))
    }

    /// Uploads `buffers` (one per computation input) once, sizes every phase's result (running
    /// the shape kernels, and each phase but the last once with `shape_with[p]` so later phases
    /// see its result) and allocates the results: what [`Prepared::run`] and [`Prepared::time`]
    /// reuse.
    pub fn prepare(
        &self,
        buffers: &[Buffer],
        shape_with: &[&Variant],
    ) -> Result<Prepared<'_, R>, CudaError> {
        self.prepare_for(&self.ir, buffers, shape_with)
    }

    /// [`DeviceKernels::prepare`] for `ir`, a computation of the structure these kernels were
    /// built for (the same IR up to input lengths and integer literal values, which kernels take
    /// as parameters: another split tile or range bound), on its `buffers`. Another structure is
    /// an error naming the first difference.
    pub fn prepare_for(
        &self,
        ir: &Computation,
        buffers: &[Buffer],
        shape_with: &[&Variant],
    ) -> Result<Prepared<'_, R>, CudaError> {
        self.prepare_reusing(ir, buffers, Vec::new(), shape_with)
    }

    /// [`DeviceKernels::prepare_for`] with some inputs already on the device: `kept[i]`, when
    /// present, is input `i` as an earlier [`Prepared::into_inputs`] gave it back, and the caller
    /// vouches that `buffers[i]` still holds what was uploaded (its length is checked). An
    /// iterative host loop (Lloyd's k-means) so uploads only what changed.
    pub fn prepare_reusing(
        &self,
        ir: &Computation,
        buffers: &[Buffer],
        mut kept: Vec<Option<(R::Buf, u64)>>,
        shape_with: &[&Variant],
    ) -> Result<Prepared<'_, R>, CudaError> {
        if let Some(diff) = structure_difference(&self.ir, ir) {
            return Err(CudaError::Input(format!(
                "these kernels were compiled for a computation of another structure: {diff}"
            )));
        }
        check_buffers(ir, buffers)?;
        if shape_with.len() != self.variants.len() {
            return Err(CudaError::Input(format!(
                "{} variants given for a computation of {} phases",
                shape_with.len(),
                self.variants.len()
            )));
        }
        let rt = &self.rt;
        let mut p = Prepared {
            k: self,
            inputs: buffers
                .iter()
                .enumerate()
                .map(|(i, b)| match kept.get_mut(i).and_then(Option::take) {
                    Some((d, len)) if len == b.len() as u64 => Ok(d),
                    _ => rt.upload(b),
                })
                .collect::<Result<Vec<_>, _>>()?,
            in_lens: buffers.iter().map(|b| b.len() as u64).collect(),
            lits: literals(ir).iter().map(|l| LitArg::of(l.value)).collect(),
            arg_lens: Vec::new(),
            phases: Vec::new(),
            names: self.plans.iter().map(arg_names).collect(),
            err: rt.words(&[0; ERROR_WORDS])?,
        };
        for (i, plan) in self.plans.iter().enumerate() {
            let lens = p.arg_lens_of(plan);
            p.arg_lens.push(lens);
            let (n, offsets) = p.shape(i)?;
            let total = offsets.as_ref().map_or(n, |o| *o.1.last().unwrap_or(&0));
            p.phases.push(PhaseResult {
                data: rt.zeros(plan.output.elem, total as usize)?,
                n,
                len: total,
                offsets,
            });
            // Later phases read this one's result; nothing reads the last one before `run`
            // (running it here too ran the H200's k-means recalculation twice per iteration).
            if i + 1 < self.plans.len() {
                p.launch_phase(i, shape_with[self.variant_index(i)])?;
                p.check()?;
            }
        }
        Ok(p)
    }
}

/// One input set on the device, ready to run any built variant: inputs uploaded once, phase
/// results and the error record allocated once. Launching does no allocation and no transfer,
/// so [`Prepared::time`] measures kernels only.
pub struct Prepared<'k, R: Runtime = Device> {
    k: &'k DeviceKernels<R>,
    inputs: Vec<R::Buf>,
    in_lens: Vec<u64>,
    /// The computation's literal table (`ArgSlot::Literal` parameters).
    lits: Vec<LitArg>,
    /// Per phase: the length parameters of its kernel arguments.
    arg_lens: Vec<Vec<u64>>,
    /// Per phase: the names of its kernel parameters (`in0`, `ph1_off`, ...), for messages.
    names: Vec<Vec<String>>,
    phases: Vec<PhaseResult<R>>,
    err: R::Words,
}

impl<R: Runtime> std::fmt::Debug for Prepared<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("inputs", &self.in_lens)
            .field("phases", &self.phases.len())
            .finish()
    }
}

/// The names of a phase's pointer parameters, in order (the emitter's, [`ArgSlot::name`]).
fn arg_names(plan: &PhasePlan) -> Vec<String> {
    let mut v = Vec::new();
    for a in &plan.args {
        match a {
            ArgSlot::Input { .. } => v.push(a.name()),
            ArgSlot::Phase { nested, .. } => {
                v.push(a.name());
                if *nested {
                    v.push(format!("{}_off", a.name()));
                }
            }
            ArgSlot::Literal { .. } => {}
        }
    }
    v
}

/// Timing of repeated launches, in milliseconds (CUDA events around each repetition).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceTiming {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// The sum of all repetitions (a tuner's sample of back-to-back runs).
    pub total_ms: f64,
    pub runs: usize,
}

impl DeviceTiming {
    /// Statistics of `ms` (at least one value).
    pub fn of(mut ms: Vec<f64>) -> DeviceTiming {
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let total_ms = if n == 0 { f64::NAN } else { ms.iter().sum() };
        let median_ms = match n {
            0 => f64::NAN,
            n if n % 2 == 1 => ms[n / 2],
            n => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
        };
        DeviceTiming {
            median_ms,
            min_ms: ms.first().copied().unwrap_or(f64::NAN),
            max_ms: ms.last().copied().unwrap_or(f64::NAN),
            total_ms,
            runs: n,
        }
    }
}

impl<R: Runtime> Prepared<'_, R> {
    /// The inputs on the device with their lengths, for a later
    /// [`DeviceKernels::prepare_reusing`] of the same structure.
    pub fn into_inputs(self) -> Vec<Option<(R::Buf, u64)>> {
        self.inputs
            .into_iter()
            .zip(self.in_lens)
            .map(|(b, n)| Some((b, n)))
            .collect()
    }

    fn arg_lens_of(&self, plan: &PhasePlan) -> Vec<u64> {
        let mut lens = Vec::new();
        for a in &plan.args {
            match a {
                ArgSlot::Input { buffer, .. } => lens.push(self.in_lens[*buffer]),
                ArgSlot::Phase { phase, .. } => {
                    let r = &self.phases[*phase];
                    lens.push(r.len);
                    lens.push(r.offsets.as_ref().map_or(0, |o| o.1.len() as u64));
                }
                ArgSlot::Literal { .. } => {}
            }
        }
        lens
    }

    /// Phase `p`'s input arguments: (pointer, length) per slot, offsets for nested ones.
    fn inputs_of(&self, p: usize) -> Vec<KArg<'_, R>> {
        let lens = &self.arg_lens[p];
        let names = &self.names[p];
        let mut out = Vec::new();
        let (mut k, mut n) = (0, 0);
        for a in &self.k.plans[p].args {
            match a {
                ArgSlot::Input { buffer, .. } => {
                    out.push(KArg::Buf(&self.inputs[*buffer], &names[n]));
                    out.push(KArg::U64(lens[k]));
                    k += 1;
                    n += 1;
                }
                ArgSlot::Phase { phase, nested, .. } => {
                    let r = &self.phases[*phase];
                    out.push(KArg::Buf(&r.data, &names[n]));
                    out.push(KArg::U64(lens[k]));
                    n += 1;
                    if *nested && let Some((o, _)) = &r.offsets {
                        out.push(KArg::Words(o, &names[n]));
                        out.push(KArg::U64(lens[k + 1]));
                        n += 1;
                    }
                    k += 2;
                }
                ArgSlot::Literal { index, .. } => out.push(KArg::Lit(self.lits[*index])),
            }
        }
        if out.is_empty() {
            out.push(KArg::Unused);
        }
        out
    }

    /// Phase `p`'s element count and, for nested results, its row offsets.
    #[allow(clippy::type_complexity)]
    fn shape(&self, p: usize) -> Result<(u64, Option<(R::Words, Vec<u64>)>), CudaError> {
        let rt = &self.k.rt;
        let (shape_k, rows_k) = &self.k.shapes[p];
        let shape = rt.words(&[0])?;
        let mut args = self.inputs_of(p);
        args.push(KArg::Words(&shape, "shape"));
        args.push(KArg::Words(&self.err, "surge_err"));
        // One thread writes shape[0] (cudarc's `for_num_elems(1)`: one block of 1024 threads).
        rt.launch(&shape_k.f, &shape_k.name, 1, (1024, 1), &args)?;
        self.check()?;
        let n = rt.read_words(&shape)?[0];
        let Some(rows_k) = rows_k else {
            return Ok((n, None));
        };
        let lens = rt.words(&vec![0; n.max(1) as usize])?;
        let mut args = self.inputs_of(p);
        args.push(KArg::Words(&lens, "lens"));
        args.push(KArg::Words(&self.err, "surge_err"));
        let threads = n.clamp(1, 1 << 20);
        let grid = threads.div_ceil(1024) as u32;
        rt.launch(&rows_k.f, &rows_k.name, grid, (1024, 1), &args)?;
        self.check()?;
        let l = rt.read_words(&lens)?;
        let mut off = Vec::with_capacity(n as usize + 1);
        let mut acc = 0u64;
        off.push(0);
        for x in &l[..n as usize] {
            acc += x;
            off.push(acc);
        }
        let d = rt.words(&off)?;
        Ok((n, Some((d, off))))
    }

    /// Launches `v`'s kernel for phase `p` (asynchronous).
    fn launch_phase(&self, p: usize, v: &Variant) -> Result<(), CudaError> {
        let (k, launch) = self.k.kernel(p, v)?;
        let r = &self.phases[p];
        let mut args = self.inputs_of(p);
        if matches!(args.as_slice(), [KArg::Unused]) {
            args.clear();
        }
        args.push(KArg::Buf(&r.data, "out"));
        if let Some((o, _)) = &r.offsets {
            args.push(KArg::Words(o, "out_off"));
        }
        args.push(KArg::Words(&self.err, "surge_err"));
        let grid = launch.grid(r.n, self.k.rt.max_blocks());
        self.k
            .rt
            .launch(&k.f, &k.name, grid, launch.block, &args)
            .map_err(|e| match e {
                CudaError::Fault {
                    kernel, message, ..
                } => CudaError::Fault {
                    kernel,
                    variant: Some(v.id()),
                    message,
                },
                e => e,
            })
    }

    /// Launches every phase with its variant (`variants[p]`), asynchronously, without checking.
    pub fn launch(&self, variants: &[&Variant]) -> Result<(), CudaError> {
        if variants.len() != self.k.variants.len() {
            return Err(CudaError::Input(format!(
                "{} variants given for a computation of {} phases",
                variants.len(),
                self.k.variants.len()
            )));
        }
        for p in 0..self.phases.len() {
            self.launch_phase(p, variants[self.k.variant_index(p)])?;
        }
        Ok(())
    }

    /// Waits for the device and returns the error a device-side check recorded, if any (the
    /// record is cleared).
    pub fn check(&self) -> Result<(), CudaError> {
        let rt = &self.k.rt;
        rt.synchronize()?;
        let words = rt.read_words(&self.err)?;
        let mut rec: ErrorRecord = [0; ERROR_WORDS];
        rec.copy_from_slice(&words[..ERROR_WORDS]);
        if let Some(e) = runtime_error(&self.k.ir, &rec) {
            rt.clear_words(&self.err)?;
            return Err(e);
        }
        Ok(())
    }

    /// Runs every phase with `variants[p]` and checks the device-side error record. The phase
    /// results are first filled with a sentinel (all bits set: NaN or -1), so a variant that
    /// writes nothing cannot pass for the previous one.
    pub fn run(&self, variants: &[&Variant]) -> Result<(), CudaError> {
        for r in &self.phases {
            self.k.rt.fill(&r.data, 0xff)?;
        }
        self.launch(variants)?;
        self.check()
    }

    /// Times `variants` (all phases, launches only): `warmup` untimed runs, then `reps` runs
    /// each timed on its own (CUDA events on a GPU); the median is what benchmarks report. A
    /// device-side check that fails in any run is returned as the error.
    pub fn time(
        &self,
        variants: &[&Variant],
        warmup: usize,
        reps: usize,
    ) -> Result<DeviceTiming, CudaError> {
        for _ in 0..warmup {
            self.launch(variants)?;
        }
        let ms = self
            .k
            .rt
            .time_each(reps.max(1), &mut || self.launch(variants))?;
        self.check()?;
        Ok(DeviceTiming::of(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_lists_per_phase() {
        let v: Variant = "cuda:h200/sequential.sequential/bx=64,by=1,lw=1,unroll1=0,unroll2=0"
            .parse()
            .unwrap();
        assert_eq!(per_phase(std::slice::from_ref(&v), 3).unwrap().len(), 3);
        let e = per_phase(&[v.clone(), v], 3).unwrap_err().to_string();
        assert!(e.contains("2 variants") && e.contains("3 phases"), "{e}");
    }
}
