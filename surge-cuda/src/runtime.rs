//! What running emitted CUDA needs from a device: memory, compiled modules, launches, timing.
//! Two runtimes implement it: [`Device`](crate::Device), a live GPU through cudarc, and
//! [`Emulator`](crate::emu::Emulator), the same source compiled for the host and run with
//! CUDA's execution model. [`DeviceKernels`](crate::DeviceKernels) and
//! [`Prepared`](crate::Prepared) hold the host side (shape kernels, row offsets, argument
//! order, the error record) once, over either; so the emulator checks that host side too.

use crate::CudaError;
use crate::args::LitArg;
use std::fmt;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cuda::CudaProgram;
use surge_codegen::ir::Elem;
use surge_codegen::target::CudaDevice;

/// One kernel argument, in parameter order.
#[derive(Debug)]
pub enum KArg<'a, R: Runtime> {
    /// A buffer and its parameter's name (`in0`, `out`, ...).
    Buf(&'a R::Buf, &'a str),
    /// A buffer of `u64` words (shape, row lengths and offsets, the error record).
    Words(&'a R::Words, &'a str),
    /// A by-value `u64`.
    U64(u64),
    /// A by-value integer literal in its own type.
    Lit(LitArg),
    /// The placeholder `int unused` of a kernel without other parameters.
    Unused,
}

/// A place emitted CUDA runs: a GPU, or the emulator.
pub trait Runtime: fmt::Debug + Clone + Send + Sync {
    /// A buffer of one of the IR's element types.
    type Buf: fmt::Debug + Send + Sync;
    /// A buffer of `u64` words.
    type Words: fmt::Debug + Send + Sync;
    /// One compiled program (NVRTC's PTX module, or the emulator's host library).
    type Module: Send + Sync;
    /// A kernel of a loaded module.
    type Func: Send + Sync;

    /// The device description variants are generated for.
    fn info(&self) -> &CudaDevice;
    /// The live GPU this runtime is (`None` for the emulator): what vendor baselines need.
    fn gpu(&self) -> Option<&crate::Device> {
        None
    }
    /// The grid-size cap of a launch (the grid-stride loops cover the rest).
    fn max_blocks(&self) -> u32;
    /// Compiles and loads `programs` (independent programs, compiled in parallel).
    fn load(&self, programs: &[CudaProgram]) -> Result<Vec<Self::Module>, CudaError>;
    /// Kernel `name` of module `m`.
    fn function(&self, m: &Self::Module, name: &str) -> Result<Self::Func, CudaError>;

    fn upload(&self, b: &Buffer) -> Result<Self::Buf, CudaError>;
    /// `n` elements of `elem` (allocated with at least one element), zeroed.
    fn zeros(&self, elem: Elem, n: usize) -> Result<Self::Buf, CudaError>;
    /// Sets every byte of `b` to `byte`.
    fn fill(&self, b: &Self::Buf, byte: u8) -> Result<(), CudaError>;
    /// The first `n` elements of `b`.
    fn download(&self, b: &Self::Buf, n: usize) -> Result<Buffer, CudaError>;
    /// Words with the values `v` (at least one word is allocated).
    fn words(&self, v: &[u64]) -> Result<Self::Words, CudaError>;
    fn read_words(&self, w: &Self::Words) -> Result<Vec<u64>, CudaError>;
    fn clear_words(&self, w: &Self::Words) -> Result<(), CudaError>;

    /// Launches `f` on `grid` blocks of `block` threads (possibly asynchronously).
    fn launch(
        &self,
        f: &Self::Func,
        name: &str,
        grid: u32,
        block: (u32, u32),
        args: &[KArg<'_, Self>],
    ) -> Result<(), CudaError>;
    /// Waits for every launch.
    fn synchronize(&self) -> Result<(), CudaError>;
    /// Runs `step` `reps` times, timing each run in milliseconds (CUDA events on a GPU, the
    /// host clock in the emulator).
    fn time_each(
        &self,
        reps: usize,
        step: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<Vec<f64>, CudaError>;
}
