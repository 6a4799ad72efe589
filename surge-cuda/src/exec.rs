//! Running a computation's variants on a live GPU through cudarc. [`DeviceKernels`] compiles
//! (NVRTC, chunks in parallel) and loads the kernels of many variants once; [`Prepared`] holds one
//! input set on the device (uploaded once, phase results allocated once) and launches a chosen
//! variant per phase: [`Prepared::run`] (checked), [`Prepared::time`] (CUDA events, launches
//! only) and [`Prepared::output`]. [`execute`] / [`execute_on`] are the one-shot path on top.
//!
//! Every kernel takes the device error record `u64 *surge_err` last; after each run the host
//! reads it and turns a failed device-side check into [`CudaError::Runtime`].

use crate::args::{DevBuf, LitArg, dev_dispatch};
use crate::{CudaError, driver_err};
use cudarc::driver::result::memset_d8_async;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchArgs, LaunchConfig,
    PushKernelArg,
};
use std::collections::HashMap;
use std::sync::Arc;
use surge_codegen::analysis::{analyze, check_buffers};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cuda::{
    ArgSlot, CudaProgram, ERROR_WORDS, Launch, PhasePlan, decode_error, emit,
};
use surge_codegen::ir::{Computation, literals, structure_difference};
use surge_codegen::target::CudaDevice;
use surge_codegen::variant::Variant;

/// An open CUDA device: its context, default stream, description and compile architecture.
#[derive(Debug)]
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: CudaDevice,
    /// `compute_XY` of the device.
    pub arch: String,
}

impl Device {
    /// Opens device `ordinal`. No driver library or no GPU is [`CudaError::Unavailable`]
    /// (checked before cudarc is asked, since cudarc panics without a driver library).
    pub fn open(ordinal: usize) -> Result<Device, CudaError> {
        // SAFETY: probing loads the driver library by name and drops it; no symbol is called.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(CudaError::Unavailable {
                library: crate::Library::Driver.name(),
                reason: "no libcuda found: this machine has no NVIDIA driver (no GPU)".into(),
            });
        }
        let info = crate::live_device(ordinal as i32)?;
        let ctx = CudaContext::new(ordinal).map_err(|e| CudaError::Unavailable {
            library: crate::Library::Driver.name(),
            reason: format!("cannot open device {ordinal}: {e:?}"),
        })?;
        let stream = ctx.default_stream();
        let (maj, min) = info.compute_capability;
        Ok(Device {
            ctx,
            stream,
            arch: format!("compute_{maj}{min}"),
            info,
        })
    }
}

/// One phase's result on the device: `len` elements (the flat total for nested results), `n`
/// outer elements, and for nested results the row offsets (device and host).
#[derive(Debug)]
struct PhaseResult {
    data: DevBuf,
    n: u64,
    len: u64,
    offsets: Option<(CudaSlice<u64>, Vec<u64>)>,
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
pub fn execute_on(
    dev: &Device,
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

/// The device error record's words (see [`surge_codegen::emit::cuda::ERROR_WORDS`]).
type ErrorRecord = [u64; ERROR_WORDS];

/// The error of a failed device-side check: the node's operator and the interpreter's message.
/// `None` when the record is clear.
pub fn runtime_error(ir: &Computation, rec: &[u64; ERROR_WORDS]) -> Option<CudaError> {
    let (node, message) = decode_error(rec)?;
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

/// The compiled and loaded kernels of many variants of one computation on one device. Building
/// emits the variants in chunks and compiles the chunks with NVRTC on all cores at once (one
/// module per chunk). [`DeviceKernels::prepare`] puts one input set on the device.
#[derive(Debug)]
pub struct DeviceKernels {
    ir: Computation,
    stream: Arc<CudaStream>,
    max_blocks: u32,
    plans: Vec<PhasePlan>,
    /// Per phase: the shape kernel and, for nested results, the row-length kernel.
    shapes: Vec<(CudaFunction, Option<CudaFunction>)>,
    variants: Vec<Vec<Variant>>,
    kernels: HashMap<(usize, String), (CudaFunction, Launch)>,
}

impl DeviceKernels {
    /// Compiles and loads `variants[p]` for every phase `p` of `ir` (list `p` may be empty only
    /// when nothing will run that phase).
    pub fn build(
        dev: &Device,
        ir: &Computation,
        variants: &[Vec<Variant>],
    ) -> Result<DeviceKernels, CudaError> {
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
        let ptx = compile_all(&programs, &dev.arch, threads)?;
        let mut kernels = HashMap::new();
        let mut shapes = Vec::new();
        for (i, (prog, ptx)) in programs.iter().zip(ptx).enumerate() {
            let module = dev
                .ctx
                .load_module((*ptx).clone())
                .map_err(driver_err("loading a PTX module"))?;
            let load = |name: &str| {
                module
                    .load_function(name)
                    .map_err(driver_err(format!("loading kernel {name}")))
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
        Ok(DeviceKernels {
            ir: ir.clone(),
            stream: dev.stream.clone(),
            max_blocks: dev.info.sm_count.max(1) * 32,
            plans: programs.swap_remove(0).phases,
            shapes,
            variants: variants.to_vec(),
            kernels,
        })
    }

    /// The variants built for each phase.
    pub fn variants(&self) -> &[Vec<Variant>] {
        &self.variants
    }

    fn kernel(&self, p: usize, v: &Variant) -> Result<&(CudaFunction, Launch), CudaError> {
        self.kernels
            .get(&(p, v.id()))
            .ok_or_else(|| CudaError::Input(format!("variant {v} was not built for phase {p}")))
    }

    /// Uploads `buffers` (one per computation input) once, sizes every phase's result (running
    /// the shape kernels, and each phase once with `shape_with[p]` so later phases see its
    /// result) and allocates the results: what [`Prepared::run`] and [`Prepared::time`] reuse.
    pub fn prepare(
        &self,
        buffers: &[Buffer],
        shape_with: &[&Variant],
    ) -> Result<Prepared<'_>, CudaError> {
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
    ) -> Result<Prepared<'_>, CudaError> {
        if let Some(diff) = structure_difference(&self.ir, ir) {
            return Err(CudaError::Input(format!(
                "these kernels were compiled for a computation of another structure: {diff}"
            )));
        }
        check_buffers(ir, buffers)?;
        if shape_with.len() != self.plans.len() {
            return Err(CudaError::Input(format!(
                "{} variants given for a computation of {} phases",
                shape_with.len(),
                self.plans.len()
            )));
        }
        let s = &self.stream;
        let mut p = Prepared {
            k: self,
            inputs: buffers
                .iter()
                .map(|b| DevBuf::upload(s, b))
                .collect::<Result<Vec<_>, _>>()?,
            in_lens: buffers.iter().map(|b| b.len() as u64).collect(),
            lits: literals(ir).iter().map(|l| LitArg::of(l.value)).collect(),
            arg_lens: Vec::new(),
            phases: Vec::new(),
            err: s
                .alloc_zeros(ERROR_WORDS)
                .map_err(driver_err("allocating the error record"))?,
        };
        for (i, plan) in self.plans.iter().enumerate() {
            let lens = p.arg_lens_of(plan);
            p.arg_lens.push(lens);
            let (n, offsets) = p.shape(i)?;
            let total = offsets.as_ref().map_or(n, |o| *o.1.last().unwrap_or(&0));
            p.phases.push(PhaseResult {
                data: DevBuf::zeros(s, plan.output.elem, total as usize)?,
                n,
                len: total,
                offsets,
            });
            p.launch_phase(i, shape_with[i])?;
            p.check()?;
        }
        Ok(p)
    }
}

/// Compiles every program, on up to `threads` threads (NVRTC programs are independent).
fn compile_all(
    programs: &[CudaProgram],
    arch: &str,
    threads: usize,
) -> Result<Vec<Arc<cudarc::nvrtc::Ptx>>, CudaError> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<_, CudaError>>>> =
        programs.iter().map(|_| Default::default()).collect();
    std::thread::scope(|sc| {
        for _ in 0..threads.min(programs.len()).max(1) {
            sc.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(prog) = programs.get(i) else { break };
                    let r = crate::compile(prog, arch);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err(CudaError::Input("a compile thread panicked".into())))
        })
        .collect()
}

/// One input set on the device, ready to run any built variant: inputs uploaded once, phase
/// results and the error record allocated once. Launching does no allocation and no transfer,
/// so [`Prepared::time`] measures kernels only.
#[derive(Debug)]
pub struct Prepared<'k> {
    k: &'k DeviceKernels,
    inputs: Vec<DevBuf>,
    in_lens: Vec<u64>,
    /// The computation's literal table (`ArgSlot::Literal` parameters).
    lits: Vec<LitArg>,
    /// Per phase: the length parameters of its kernel arguments.
    arg_lens: Vec<Vec<u64>>,
    phases: Vec<PhaseResult>,
    err: CudaSlice<u64>,
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

impl Prepared<'_> {
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

    /// Pushes phase `p`'s input arguments: (pointer, length) per slot, offsets for nested ones.
    fn push_inputs<'a>(&'a self, p: usize, b: &mut LaunchArgs<'a>) {
        let lens = &self.arg_lens[p];
        let mut k = 0;
        for a in &self.k.plans[p].args {
            match a {
                ArgSlot::Input { buffer, .. } => {
                    self.inputs[*buffer].push(b);
                    b.arg(&lens[k]);
                    k += 1;
                }
                ArgSlot::Phase { phase, nested, .. } => {
                    let r = &self.phases[*phase];
                    r.data.push(b);
                    b.arg(&lens[k]);
                    if *nested && let Some((o, _)) = &r.offsets {
                        b.arg(o);
                        b.arg(&lens[k + 1]);
                    }
                    k += 2;
                }
                ArgSlot::Literal { index, .. } => self.lits[*index].push(b),
            }
        }
    }

    /// Phase `p`'s element count and, for nested results, its row offsets.
    #[allow(clippy::type_complexity)]
    fn shape(&self, p: usize) -> Result<(u64, Option<(CudaSlice<u64>, Vec<u64>)>), CudaError> {
        let s = &self.k.stream;
        let plan = &self.k.plans[p];
        let (shape_fn, rows_fn) = &self.k.shapes[p];
        let shape: CudaSlice<u64> = s.alloc_zeros(1).map_err(driver_err("allocating"))?;
        {
            let mut b = s.launch_builder(shape_fn);
            if plan.args.is_empty() {
                b.arg(&0i32);
            }
            self.push_inputs(p, &mut b);
            b.arg(&shape);
            b.arg(&self.err);
            // SAFETY: the argument list matches the emitted shape kernel's parameters (built
            // from the same plan); one thread writes shape[0].
            unsafe { b.launch(LaunchConfig::for_num_elems(1)) }
                .map_err(driver_err(format!("launching {}", plan.shape_kernel)))?;
        }
        self.check()?;
        let n = s
            .clone_dtoh(&shape)
            .map_err(driver_err("reading the shape"))?[0];
        let Some(rows_fn) = rows_fn else {
            return Ok((n, None));
        };
        let lens: CudaSlice<u64> = s
            .alloc_zeros(n.max(1) as usize)
            .map_err(driver_err("allocating"))?;
        {
            let mut b = s.launch_builder(rows_fn);
            if plan.args.is_empty() {
                b.arg(&0i32);
            }
            self.push_inputs(p, &mut b);
            b.arg(&lens);
            b.arg(&self.err);
            // SAFETY: as above; the kernel writes lens[0..n] (n read back from the shape kernel).
            unsafe { b.launch(LaunchConfig::for_num_elems(n.clamp(1, 1 << 20) as u32)) }
                .map_err(driver_err("launching the row-length kernel"))?;
        }
        self.check()?;
        let l = s
            .clone_dtoh(&lens)
            .map_err(driver_err("reading row lengths"))?;
        let mut off = Vec::with_capacity(n as usize + 1);
        let mut acc = 0u64;
        off.push(0);
        for x in &l[..n as usize] {
            acc += x;
            off.push(acc);
        }
        let d = s
            .clone_htod(&off)
            .map_err(driver_err("uploading offsets"))?;
        Ok((n, Some((d, off))))
    }

    /// Launches `v`'s kernel for phase `p` (asynchronous).
    fn launch_phase(&self, p: usize, v: &Variant) -> Result<(), CudaError> {
        let (f, launch) = self.k.kernel(p, v)?;
        let r = &self.phases[p];
        let s = &self.k.stream;
        let mut b = s.launch_builder(f);
        self.push_inputs(p, &mut b);
        r.data.push(&mut b);
        if let Some((o, _)) = &r.offsets {
            b.arg(o);
        }
        b.arg(&self.err);
        let cfg = LaunchConfig {
            grid_dim: (launch.grid(r.n, self.k.max_blocks), 1, 1),
            block_dim: (launch.block.0, launch.block.1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the kernel's emitted parameter list (the same plan); the
        // result holds `len` elements (at least one) and the kernel writes only indices below
        // it; every read is bounds-checked on the device.
        unsafe { b.launch(cfg) }.map_err(driver_err(format!("launching variant {v}")))?;
        Ok(())
    }

    /// Launches every phase with its variant (`variants[p]`), asynchronously, without checking.
    pub fn launch(&self, variants: &[&Variant]) -> Result<(), CudaError> {
        if variants.len() != self.phases.len() {
            return Err(CudaError::Input(format!(
                "{} variants given for a computation of {} phases",
                variants.len(),
                self.phases.len()
            )));
        }
        for (p, v) in variants.iter().enumerate() {
            self.launch_phase(p, v)?;
        }
        Ok(())
    }

    /// Waits for the device and returns the error a device-side check recorded, if any (the
    /// record is cleared).
    pub fn check(&self) -> Result<(), CudaError> {
        let s = &self.k.stream;
        s.synchronize().map_err(driver_err("running the kernels"))?;
        let words = s
            .clone_dtoh(&self.err)
            .map_err(driver_err("reading the error record"))?;
        let mut rec: ErrorRecord = [0; ERROR_WORDS];
        rec.copy_from_slice(&words[..ERROR_WORDS]);
        if let Some(e) = runtime_error(&self.k.ir, &rec) {
            let (ptr, _sync) = self.err.device_ptr(s);
            // SAFETY: `ptr` is the live error record of ERROR_WORDS words.
            unsafe { memset_d8_async(ptr, 0, ERROR_WORDS * 8, s.cu_stream()) }
                .map_err(driver_err("clearing the error record"))?;
            return Err(e);
        }
        Ok(())
    }

    /// Runs every phase with `variants[p]` and checks the device-side error record. The phase
    /// results are first filled with a sentinel (all bits set: NaN or -1), so a variant that
    /// writes nothing cannot pass for the previous one.
    pub fn run(&self, variants: &[&Variant]) -> Result<(), CudaError> {
        let s = &self.k.stream;
        for r in &self.phases {
            dev_dispatch!(&r.data, d => {
                let bytes = d.num_bytes();
                let (ptr, _sync) = d.device_ptr(s);
                // SAFETY: `ptr` is the live allocation of `bytes` bytes of this result.
                unsafe { memset_d8_async(ptr, 0xff, bytes, s.cu_stream()) }
                    .map_err(driver_err("filling a result"))?;
            });
        }
        self.launch(variants)?;
        self.check()
    }

    /// Times `variants` (all phases, launches only): `warmup` untimed runs, then `reps` runs
    /// each between two CUDA events; the median is what benchmarks report. A device-side check
    /// that fails in any run is returned as the error.
    pub fn time(
        &self,
        variants: &[&Variant],
        warmup: usize,
        reps: usize,
    ) -> Result<DeviceTiming, CudaError> {
        let s = &self.k.stream;
        for _ in 0..warmup {
            self.launch(variants)?;
        }
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut events = Vec::with_capacity(reps.max(1) + 1);
        events.push(s.record_event(flags).map_err(driver_err("event"))?);
        for _ in 0..reps.max(1) {
            self.launch(variants)?;
            events.push(s.record_event(flags).map_err(driver_err("event"))?);
        }
        self.check()?;
        let ms = events
            .windows(2)
            .map(|w| w[0].elapsed_ms(&w[1]).map(f64::from))
            .collect::<Result<Vec<f64>, _>>()
            .map_err(driver_err("event"))?;
        Ok(DeviceTiming::of(ms))
    }

    /// Downloads the last phase's result.
    pub fn output(&self) -> Result<Output, CudaError> {
        let s = &self.k.stream;
        let last = self
            .phases
            .last()
            .ok_or_else(|| CudaError::Input("a computation without phases".into()))?;
        let data = last.data.download(s, last.len as usize)?;
        Ok(match &last.offsets {
            Some((_, off)) => Output::Nested {
                data,
                offsets: off.clone(),
            },
            None => Output::Seq(data),
        })
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
