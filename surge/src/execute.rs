//! Running a computation natively: `execute(&computation, &Target::cpu())` with the default
//! variant, or a chosen one through [`Kernels`], which compiles every variant once and keeps
//! them loaded (what `surge run --all`, `surge bench` and the tuner use).

use crate::{Computation, Result, SurgeError};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::target::{CpuMachine, CudaDevice, Platform};
use surge_codegen::variant::Variant;
use surge_codegen::variant_set::cpu_default;
use surge_cpu::native::NativeKernels;
pub use surge_cpu::native::Workspace;
use surge_cuda::Runtime as _;

/// Where a computation runs: this CPU or a GPU of this machine.
///
/// A `Target` is a live executor; a [`Platform`] is the hardware *description* variants are
/// generated for, which may name hardware that is not here (`surge variants --device k40c`,
/// NVRTC-compiling for an H200 on a laptop). The relation is one-way: every target has a
/// platform ([`Target::platform`]: the CPU's own description, or the one read from the GPU), and
/// everything that enumerates variants for a target goes through it.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The host CPU (rustc-compiled kernels, rayon skeletons).
    Cpu(CpuMachine),
    /// CUDA device `ordinal`.
    Cuda(usize),
    /// The CUDA emulator (`surge_cuda::Emulator`), describing this device: CUDA variants run on
    /// the host with CUDA's execution model, for checking them where there is no GPU. Its
    /// timings are host time, not a GPU's.
    CudaEmulated(CudaDevice),
}

impl Target {
    /// This machine's CPU.
    pub fn cpu() -> Target {
        Target::Cpu(CpuMachine::detect())
    }
    /// CUDA device `ordinal`.
    pub fn cuda(ordinal: usize) -> Target {
        Target::Cuda(ordinal)
    }
    /// The CUDA emulator, describing the default device (an H200: variant ids `cuda:h200/...`).
    pub fn cuda_emulated() -> Target {
        Target::CudaEmulated(surge_cuda::Emulator::default().info().clone())
    }
    /// The platform this target runs variants of: the CPU's description, or GPU `ordinal`'s as
    /// its driver reports it (no GPU is an error value that says why).
    pub fn platform(&self) -> Result<Platform> {
        Ok(match self {
            Target::Cpu(m) => Platform::Cpu(m.clone()),
            Target::Cuda(i) => Platform::Cuda(surge_cuda::live_device(*i as i32)?),
            Target::CudaEmulated(d) => Platform::Cuda(d.clone()),
        })
    }
    /// `cpu`, `cuda` or `cuda-emu`: what runs here (tuning-store keys; an emulated run is never
    /// taken for a GPU's). Emulated CUDA runs the `cuda:` variants.
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Cpu(_) => "cpu",
            Target::Cuda(_) => "cuda",
            Target::CudaEmulated(_) => "cuda-emu",
        }
    }
}

/// The compiled variants of one computation on one target.
#[derive(Debug, Clone)]
pub struct Kernels {
    inner: NativeKernels,
}

impl Kernels {
    /// Enumerates the computation's variants on `target` and compiles all of them (one rustc
    /// call, cached on disk under `$SURGE_CACHE` or the user cache directory).
    pub fn build(c: &Computation, target: &Target) -> Result<Kernels> {
        cpu_machine(target)?;
        let set = c.variants(&target.platform()?)?;
        Self::build_variants(c, set.variants())
    }

    /// [`build`](Self::build) once per computation structure and target in this process: a
    /// later call with a computation of the same structure (other input sizes, other data)
    /// returns the kernels already built, without enumerating the variants or emitting source
    /// again (about 0.1 s for the 124 variants of the k-means relabeling on this machine, which
    /// is what an iterative host loop calling a library function would otherwise pay per call).
    pub fn shared(c: &Computation, target: &Target) -> Result<std::sync::Arc<Kernels>> {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex, OnceLock};
        type Table = Mutex<HashMap<(u128, String), Arc<Kernels>>>;
        static BUILT: OnceLock<Table> = OnceLock::new();
        let key = (c.ir().structure_hash(), format!("{target:?}"));
        let table = BUILT.get_or_init(Default::default);
        if let Some(k) = table.lock().expect("kernel table").get(&key) {
            return Ok(k.clone());
        }
        // Built outside the lock: two threads may both build, the second insert wins.
        let k = Arc::new(Kernels::build(c, target)?);
        table.lock().expect("kernel table").insert(key, k.clone());
        Ok(k)
    }

    /// Compiles just `variants`.
    pub fn build_variants(c: &Computation, variants: &[Variant]) -> Result<Kernels> {
        Ok(Kernels {
            inner: NativeKernels::build(c.ir(), variants)?,
        })
    }

    pub fn variants(&self) -> &[Variant] {
        self.inner.variants()
    }

    /// The default variant of the compiled ones (see
    /// [`surge_codegen::variant_set::cpu_default`]).
    pub fn default_variant(&self) -> &Variant {
        cpu_default(self.inner.variants()).expect("a computation has variants")
    }

    /// The compiled variant with this id, or an error naming it.
    pub fn variant(&self, id: &str) -> Result<&Variant> {
        self.inner
            .variants()
            .iter()
            .find(|v| v.id() == id)
            .ok_or_else(|| {
                SurgeError::Usage(format!(
                    "unknown variant `{id}`; `surge variants APP --platform cpu` lists the {} valid ones",
                    self.inner.variants().len()
                ))
            })
    }

    /// Runs `variant` on `c`: the computation these kernels were built for, or any other of the
    /// same structure (the same program on inputs of other sizes, e.g. another matrix).
    pub fn run(&self, c: &Computation, variant: &Variant) -> Result<Output> {
        Ok(self.inner.run_with(c.ir(), variant, c.buffers())?)
    }

    /// Runs `variant` on `c`'s program with `buffers` in place of `c`'s own (the same number,
    /// element types and lengths as its declarations, checked): repeated runs whose input
    /// values change between runs (an iterative solver's `x`) without building a new
    /// `Computation` each time.
    pub fn run_buffers(
        &self,
        c: &Computation,
        variant: &Variant,
        buffers: &[Buffer],
    ) -> Result<Output> {
        Ok(self.inner.run_with(c.ir(), variant, buffers)?)
    }

    /// [`Kernels::run_buffers`] into a reusable workspace, for repeated runs in which only a
    /// gathered vector changes (an iterative solver's `x` in `A x`): the data layouts a variant
    /// builds (`layout1 = diagonals`, SELL, BCSR, validated rows) are built once from the other
    /// inputs, whose values must not change between the runs of one workspace, and read only the
    /// length of the gathered vector. Give each matrix its own workspace.
    pub fn run_buffers_in(
        &self,
        c: &Computation,
        variant: &Variant,
        buffers: &[Buffer],
        ws: &mut Workspace,
    ) -> Result<()> {
        Ok(self
            .inner
            .run_in_keyed(c.ir(), variant, buffers, Some(c.id()), ws)?)
    }

    /// Runs `variant` on `c` into a reusable workspace (no allocation after the first run; the
    /// result is `ws.output()`): for repeated runs. Data layouts a variant builds from `c`'s
    /// inputs (`layout1 = diagonals`) are kept in `ws` for the next run on `c`.
    pub fn run_in(&self, c: &Computation, variant: &Variant, ws: &mut Workspace) -> Result<()> {
        Ok(self
            .inner
            .run_in_keyed(c.ir(), variant, c.buffers(), Some(c.id()), ws)?)
    }

    /// Runs `variant` on other buffers of the same shape (checked against the declarations:
    /// their number, element types and lengths). Float values are not checked: NaN and
    /// infinities pass through as IEEE values, as they do through `Seq::input` and the
    /// interpreter (README, "Non-finite values").
    pub fn run_on(&self, variant: &Variant, buffers: &[Buffer]) -> Result<Output> {
        Ok(self.inner.run(variant, buffers)?)
    }

    /// Where the generated source is kept.
    pub fn source_path(&self) -> &std::path::Path {
        self.inner.source_path()
    }
    /// Whether building compiled (false: the library came from the disk cache).
    pub fn compiled(&self) -> bool {
        self.inner.compiled()
    }
    /// The emitted program.
    pub fn program(&self) -> &surge_codegen::emit::cpu::CpuProgram {
        self.inner.program()
    }
}

fn cpu_machine(target: &Target) -> Result<&CpuMachine> {
    match target {
        Target::Cpu(m) => Ok(m),
        Target::Cuda(i) => Err(SurgeError::Usage(format!(
            "CUDA device {i}: `Kernels` compiles CPU variants; run CUDA variants with `execute`"
        ))),
        Target::CudaEmulated(_) => Err(SurgeError::Usage(
            "the CUDA emulator: `Kernels` compiles CPU variants; run CUDA variants with `execute`"
                .into(),
        )),
    }
}

/// Runs `c` on a CUDA target (a GPU or the emulator): every phase at its default variant, or,
/// with `id`, the phase that has that variant runs it and the others their default.
fn cuda_execute(c: &Computation, target: &Target, id: Option<&str>) -> Result<Option<Output>> {
    match target {
        Target::Cpu(_) => Ok(None),
        Target::Cuda(i) => cuda_execute_on(&surge_cuda::Device::open(*i)?, c, id).map(Some),
        Target::CudaEmulated(d) => {
            cuda_execute_on(&surge_cuda::Emulator::new(d.clone()), c, id).map(Some)
        }
    }
}

/// One CUDA variant per phase of `c` on the device `rt` describes: with `id`, the phase that
/// has that variant runs it and the others their default; without, every default.
pub(crate) fn cuda_chosen<R: surge_cuda::Runtime>(
    rt: &R,
    c: &Computation,
    id: Option<&str>,
) -> Result<Vec<Variant>> {
    let set = c.variants(&Platform::Cuda(rt.info().clone()))?;
    Ok(match id {
        None => set.defaults(),
        Some(id) => {
            let (phase, v) = set.find_in_phases(id).ok_or_else(|| {
                SurgeError::Usage(format!(
                    "unknown CUDA variant `{id}`; `surge variants APP --platform cuda` lists the valid ones"
                ))
            })?;
            set.combination(phase, v)
        }
    })
}

fn cuda_execute_on<R: surge_cuda::Runtime>(
    rt: &R,
    c: &Computation,
    id: Option<&str>,
) -> Result<Output> {
    let chosen = cuda_chosen(rt, c, id)?;
    Ok(surge_cuda::execute_on(rt, c.ir(), c.buffers(), &chosen)?)
}

/// The CUDA variants of each phase of `c` on a device described by `info` (pure codegen: no
/// GPU needed to list them).
pub fn cuda_variant_lists(
    info: &surge_codegen::target::CudaDevice,
    c: &Computation,
) -> Result<Vec<Vec<Variant>>> {
    Ok(c.variants(&Platform::Cuda(info.clone()))?.phases().to_vec())
}

/// Runs `c` on `target` with its default variant. A CUDA target without a GPU is an
/// `Err(SurgeError::Cuda(CudaError::Unavailable))` that says why.
pub fn execute(c: &Computation, target: &Target) -> Result<Output> {
    if let Some(out) = cuda_execute(c, target, None)? {
        return Ok(out);
    }
    let set = c.variants(&target.platform()?)?;
    let v = set.default_variant().clone();
    let k = Kernels::build_variants(c, std::slice::from_ref(&v))?;
    k.run(c, &v)
}

/// Runs `c` on `target` with the variant `id` (as `surge variants` prints it).
pub fn execute_variant(c: &Computation, target: &Target, id: &str) -> Result<Output> {
    if let Some(out) = cuda_execute(c, target, Some(id))? {
        return Ok(out);
    }
    let set = c.variants(&target.platform()?)?;
    let v = set
        .find(id)
        .ok_or_else(|| {
            SurgeError::Usage(format!(
                "unknown variant `{id}`; `surge variants APP --platform cpu` lists the {} valid ones",
                set.variants().len()
            ))
        })?
        .clone();
    let k = Kernels::build_variants(c, std::slice::from_ref(&v))?;
    k.run(c, &v)
}

/// Runs `c` with `variant` and writes a flat result into `out` (which must have the result's
/// element type and length).
pub fn execute_into(c: &Computation, target: &Target, id: &str, out: &mut Buffer) -> Result<()> {
    match execute_variant(c, target, id)? {
        Output::Seq(b) if b.elem() == out.elem() && b.len() == out.len() => {
            *out = b;
            Ok(())
        }
        Output::Seq(b) => Err(SurgeError::Input {
            input: "out".into(),
            message: format!(
                "the result is {} {} values but the output buffer holds {} {} values",
                b.len(),
                b.elem(),
                out.len(),
                out.elem()
            ),
        }),
        other => Err(SurgeError::Input {
            input: "out".into(),
            message: format!(
                "the result is not a flat sequence ({}); use `execute`",
                match other {
                    Output::Scalar(_) => "a scalar",
                    _ => "a nested sequence",
                }
            ),
        }),
    }
}
