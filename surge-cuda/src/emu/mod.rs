//! The CUDA emulator: emitted CUDA run on the host with CUDA's execution model, so CUDA
//! variants are checked on machines without a GPU.
//!
//! The exact source NVRTC compiles is compiled by the host C++ compiler with our header
//! `surge-cuda/emu/surge_emu.h` ([`compile`]), which defines the built-ins the emitter uses:
//! a grid's blocks run in parallel on rayon ([`launch`]), a block's threads as fibers switched at
//! barriers and warp collectives, warps of 32 in lock step at every `__shfl*_sync`, `__shared__`
//! memory per block, host atomics, and global parameters as bounds-checked pointers. Device
//! memory is host memory ([`buffer`]). What a GPU would do silently or wrongly (an
//! out-of-bounds access, a barrier not every thread reaches, a shuffle naming an exited lane, a
//! deadlock) is [`CudaError::Fault`] naming the kernel, block and thread.
//!
//! [`Emulator`] is a [`Runtime`], so [`DeviceKernels`](crate::DeviceKernels) and
//! [`Prepared`](crate::Prepared) run on it exactly as on a GPU. Timings are host time, never a
//! GPU's: they are labelled emulated wherever they are shown.

mod buffer;
pub mod compile;
mod launch;
#[cfg(test)]
mod tests;

use crate::CudaError;
use crate::runtime::{KArg, Runtime};
pub use buffer::HostBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cuda::CudaProgram;
use surge_codegen::ir::Elem;
use surge_codegen::target::CudaDevice;

/// The device name the emulator describes by default (variant ids read `cuda:h200/...`).
pub const DEFAULT_DEVICE: &str = "h200";

/// The emulator's default grid-size cap. Kernels are grid-stride loops, correct for any grid;
/// a GPU's cap (32 blocks per SM) gives every group one element on the inputs tests use, which
/// leaves the loop-carried paths unrun: a raking reduction without its closing barrier passed
/// every SpMV variant at the GPU's cap and fails at this one (measured; see the README).
pub const EMULATED_MAX_BLOCKS: u32 = 4;

/// The emulator, describing a CUDA device (its variant space is that device's).
#[derive(Debug, Clone)]
pub struct Emulator {
    info: CudaDevice,
    /// Serializes launches and host accesses to emulated memory (one stream).
    stream: Arc<Mutex<()>>,
}

/// A compiled emulator library.
#[derive(Debug)]
pub struct Module(Arc<compile::Library>);

/// A kernel's entry in a loaded library.
#[derive(Debug)]
pub struct Func {
    entry: launch::Entry,
    _lib: Arc<compile::Library>,
}

impl Emulator {
    /// The emulator describing `info`.
    pub fn new(info: CudaDevice) -> Emulator {
        Emulator {
            info,
            stream: Arc::new(Mutex::new(())),
        }
    }

    /// The emulator describing the built-in device `name` (`h200`, `k40c`, ...).
    pub fn of(name: &str) -> Result<Emulator, CudaError> {
        Ok(Emulator::new(CudaDevice::builtin(name)?))
    }

    /// Compiles (or finds in the cache) hand-written CUDA `source` whose kernels are each
    /// followed by `SURGE_EMU_ENTRY(name)`; global parameters are `SURGE_PTR(T)`.
    pub fn module(&self, source: &str) -> Result<Module, CudaError> {
        compile::load_source(source).map(Module)
    }

    /// [`Runtime::launch`] with `shared_bytes` of dynamic shared memory per block (what a
    /// kernel declares with `SURGE_DYNAMIC_SHARED(T, name)`).
    pub fn launch_shared(
        &self,
        f: &Func,
        name: &str,
        grid: u32,
        block: (u32, u32),
        shared_bytes: u64,
        args: &[KArg<'_, Self>],
    ) -> Result<(), CudaError> {
        let _s = self.lock();
        launch::run(f.entry, name, (grid, block, shared_bytes), args)
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for Emulator {
    fn default() -> Emulator {
        Emulator::of(DEFAULT_DEVICE).expect("the default device is built in")
    }
}

impl Runtime for Emulator {
    type Buf = HostBuf;
    type Words = HostBuf;
    type Module = Module;
    type Func = Func;

    fn info(&self) -> &CudaDevice {
        &self.info
    }

    fn max_blocks(&self) -> u32 {
        EMULATED_MAX_BLOCKS
    }

    fn load(&self, programs: &[CudaProgram]) -> Result<Vec<Module>, CudaError> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        crate::parallel::map(programs, threads, |p| compile::load(p).map(Module))
    }

    fn function(&self, m: &Module, name: &str) -> Result<Func, CudaError> {
        let symbol = format!("{name}__surge_emu");
        // SAFETY: every kernel of an emitted program is followed by `SURGE_EMU_ENTRY(name)`,
        // which defines this symbol with the `Entry` signature.
        let entry = unsafe { m.0.lib.get::<launch::Entry>(symbol.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| {
                CudaError::Input(format!(
                    "kernel {name} has no emulator entry in {}: {e}",
                    m.0.source_path.display()
                ))
            })?;
        Ok(Func {
            entry,
            _lib: m.0.clone(),
        })
    }

    fn upload(&self, b: &Buffer) -> Result<HostBuf, CudaError> {
        let _s = self.lock();
        HostBuf::upload(b)
    }

    fn zeros(&self, elem: Elem, n: usize) -> Result<HostBuf, CudaError> {
        HostBuf::zeros(elem, n)
    }

    fn fill(&self, b: &HostBuf, byte: u8) -> Result<(), CudaError> {
        let _s = self.lock();
        b.fill(byte);
        Ok(())
    }

    fn download(&self, b: &HostBuf, n: usize) -> Result<Buffer, CudaError> {
        let _s = self.lock();
        b.download(n)
    }

    fn words(&self, v: &[u64]) -> Result<HostBuf, CudaError> {
        Ok(HostBuf::words(v))
    }

    fn read_words(&self, w: &HostBuf) -> Result<Vec<u64>, CudaError> {
        let _s = self.lock();
        Ok(w.read_words())
    }

    fn clear_words(&self, w: &HostBuf) -> Result<(), CudaError> {
        self.fill(w, 0)
    }

    fn launch(
        &self,
        f: &Func,
        name: &str,
        grid: u32,
        block: (u32, u32),
        args: &[KArg<'_, Self>],
    ) -> Result<(), CudaError> {
        self.launch_shared(f, name, grid, block, 0, args)
    }

    fn synchronize(&self) -> Result<(), CudaError> {
        Ok(())
    }

    fn time_each(
        &self,
        reps: usize,
        step: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<Vec<f64>, CudaError> {
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                step()?;
                Ok(t.elapsed().as_secs_f64() * 1e3)
            })
            .collect()
    }
}
