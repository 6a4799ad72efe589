//! Surge's CUDA backend: NVRTC compilation of emitted CUDA C++ ([`compile`]), launches through
//! cudarc ([`execute`]), device properties ([`live_device`]) and the cuBLAS/cuSPARSE baselines
//! ([`baselines`]). Every CUDA library is loaded at run time, so everything builds and runs on
//! machines without a GPU or a CUDA toolkit, and a missing GPU is an error value, never a panic.
//!
//! For repeated runs (benchmarks, tuning) [`DeviceKernels::build`] compiles many variants once and
//! [`DeviceKernels::prepare`] uploads one input set into a [`Prepared`], whose
//! [`run`](Prepared::run) launches a variant per phase and checks the device error record,
//! [`time`](Prepared::time) times launches only with CUDA events and
//! [`output`](Prepared::output) downloads the result.
//!
//! Kernels check indices, nest offsets and empty reductions on the device (see
//! `surge-codegen/src/emit/README.md`); a failed check is [`CudaError::Runtime`] with the
//! interpreter's message ([`runtime_error`] decodes a record).

mod args;
mod compile;
mod device;
pub mod emu;
mod exec;
pub mod gemm;
#[cfg(test)]
mod literal_tests;
mod parallel;
pub mod runtime;

pub mod baselines;

pub use compile::{DEFAULT_ARCH, compile, compile_source, nvrtc_available};
pub use device::Device;
pub use emu::Emulator;
pub use exec::{
    DeviceKernels, DeviceTiming, EachResult, Prepared, execute, execute_on, run_each, runtime_error,
};
pub use runtime::Runtime;

use std::fmt;

/// The one public error type of `surge-cuda`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CudaError {
    /// A CUDA library could not be loaded (no driver, no GPU, no NVRTC).
    #[error("{library} is not available: {reason}")]
    Unavailable {
        library: &'static str,
        reason: String,
    },
    /// The emitter could not generate code (an unsupported phase or a malformed variant).
    #[error(transparent)]
    Codegen(#[from] surge_codegen::CodegenError),
    /// NVRTC rejected the program: the variants whose kernels failed, and NVRTC's log.
    #[error("NVRTC failed to compile {}: {message}\n--- NVRTC log ---\n{log}", variants_named(.variants))]
    Compile {
        variants: Vec<String>,
        message: String,
        log: String,
    },
    /// A device-side run-time check failed (an index out of range, bad nest offsets, a
    /// reduction of an empty row without a prefix): the node, its operator and the message the
    /// interpreter gives for the same failure.
    #[error("{} failed: {message}", surge_codegen::ir::site(.op, .loc.as_ref(), Some(*.node)))]
    Runtime {
        op: &'static str,
        node: surge_codegen::ir::NodeId,
        /// Where the user built the node.
        loc: Option<surge_codegen::ir::SourceLoc>,
        message: String,
    },
    /// The host C++ compiler rejected the emulated CUDA source (the emulator's header lacks a
    /// built-in the emitter used, or the emitter wrote code only NVRTC accepts).
    #[error("the CUDA emulator's C++ compiler failed: {message}\n--- compiler errors ---\n{log}")]
    HostCompile { message: String, log: String },
    /// The CUDA emulator caught what a GPU would do silently or wrongly: an out-of-bounds
    /// access, a barrier not every thread reaches, a collective naming an exited lane, a
    /// deadlock. The message names the block and thread.
    #[error("the CUDA emulator stopped {}: {message}", fault_site(.kernel, .variant.as_deref()))]
    Fault {
        kernel: String,
        variant: Option<String>,
        message: String,
    },
    /// A driver, cuBLAS or cuSPARSE call failed.
    #[error("{what}: {message}")]
    Driver { what: String, message: String },
    /// The inputs do not fit the computation or the variants.
    #[error("{0}")]
    Input(String),
}

fn fault_site(kernel: &str, variant: Option<&str>) -> String {
    match variant {
        Some(v) => format!("variant {v} (kernel {kernel})"),
        None => format!("kernel {kernel}"),
    }
}

fn variants_named(v: &[String]) -> String {
    if v.is_empty() {
        "the program (in shared code)".into()
    } else {
        format!("variant(s) {}", v.join(", "))
    }
}

pub(crate) fn driver_err(
    what: impl Into<String>,
) -> impl FnOnce(cudarc::driver::DriverError) -> CudaError {
    let what = what.into();
    move |e| CudaError::Driver {
        what,
        message: format!("{e:?}"),
    }
}

/// A dynamically loadable CUDA library and the file names searched for it, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// The driver API (`libcuda`), present only where an NVIDIA driver is installed.
    Driver,
    /// The runtime compiler. Debian ships only the versioned `libnvrtc.so.11.2`.
    Nvrtc,
}

impl Library {
    pub fn candidates(self) -> &'static [&'static str] {
        match self {
            Library::Driver => &["libcuda.so.1", "libcuda.so"],
            Library::Nvrtc => &["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.11.2"],
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Library::Driver => "the CUDA driver (libcuda)",
            Library::Nvrtc => "NVRTC (libnvrtc)",
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Loads the first loadable candidate of `lib` and returns its file name; the error lists what
/// was tried and why each failed.
pub fn probe(lib: Library) -> Result<&'static str, CudaError> {
    let mut reasons = Vec::new();
    for name in lib.candidates() {
        // SAFETY: loading a CUDA library runs its initializers, which have no preconditions on us;
        // the handle is dropped at once and no symbol is called.
        match unsafe { libloading::Library::new(*name) } {
            Ok(_) => return Ok(name),
            Err(e) => reasons.push(format!("{name}: {e}")),
        }
    }
    Err(CudaError::Unavailable {
        library: lib.name(),
        reason: reasons.join("; "),
    })
}

/// Properties of the live CUDA device `ordinal`, read through the driver API
/// (`cuDeviceGetAttribute`), as the description the variant space is built from. The name is the
/// built-in description's (`h200`, ...) when the device's marketing name contains one, else
/// `gpu{ordinal}`. No GPU or no driver is an error value.
pub fn live_device(ordinal: i32) -> Result<surge_codegen::target::CudaDevice, CudaError> {
    type Init = unsafe extern "C" fn(u32) -> i32;
    type Get = unsafe extern "C" fn(*mut i32, i32) -> i32;
    type Name = unsafe extern "C" fn(*mut std::ffi::c_char, i32, i32) -> i32;
    type Attr = unsafe extern "C" fn(*mut i32, i32, i32) -> i32;
    let file = probe(Library::Driver)?;
    let fail = |what: &str, code: i32| CudaError::Unavailable {
        library: Library::Driver.name(),
        reason: format!("{what} failed with CUresult {code}"),
    };
    // SAFETY: the driver library is loaded by its own file name; its initializers have no
    // preconditions on us.
    let lib = unsafe { libloading::Library::new(file) }.map_err(|e| CudaError::Unavailable {
        library: Library::Driver.name(),
        reason: e.to_string(),
    })?;
    let sym = |n: &[u8]| CudaError::Unavailable {
        library: Library::Driver.name(),
        reason: format!("missing symbol {}", String::from_utf8_lossy(n)),
    };
    // SAFETY: the symbol types are the CUDA driver API's documented C signatures, and every
    // pointer passed points to a live local of the right size.
    unsafe {
        let init: libloading::Symbol<'_, Init> = lib.get(b"cuInit").map_err(|_| sym(b"cuInit"))?;
        let get: libloading::Symbol<'_, Get> =
            lib.get(b"cuDeviceGet").map_err(|_| sym(b"cuDeviceGet"))?;
        let name: libloading::Symbol<'_, Name> = lib
            .get(b"cuDeviceGetName")
            .map_err(|_| sym(b"cuDeviceGetName"))?;
        let attr: libloading::Symbol<'_, Attr> = lib
            .get(b"cuDeviceGetAttribute")
            .map_err(|_| sym(b"cuDeviceGetAttribute"))?;
        let r = init(0);
        if r != 0 {
            return Err(fail("cuInit", r));
        }
        let mut dev = 0;
        let r = get(&mut dev, ordinal);
        if r != 0 {
            return Err(fail("cuDeviceGet", r));
        }
        let mut buf = [0 as std::ffi::c_char; 256];
        let r = name(buf.as_mut_ptr(), buf.len() as i32, dev);
        if r != 0 {
            return Err(fail("cuDeviceGetName", r));
        }
        let full = std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_string_lossy()
            .to_ascii_lowercase();
        let a = |code: i32, what: &str| -> Result<u32, CudaError> {
            let mut v = 0;
            let r = attr(&mut v, code, dev);
            if r != 0 {
                return Err(fail(what, r));
            }
            Ok(v as u32)
        };
        let short = surge_codegen::target::CudaDevice::builtin_names()
            .into_iter()
            .find(|b| {
                full.split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|w| w == *b)
            })
            .map(str::to_string)
            .unwrap_or_else(|| format!("gpu{ordinal}"));
        Ok(surge_codegen::target::CudaDevice {
            name: short,
            compute_capability: (
                a(75, "compute capability major")?,
                a(76, "compute capability minor")?,
            ),
            max_threads_per_block: a(1, "max threads per block")?,
            warp_size: a(10, "warp size")?,
            shared_memory_per_sm: a(81, "shared memory per SM")?,
            registers_per_sm: a(82, "registers per SM")?,
            sm_count: a(16, "SM count")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probing_never_panics_and_names_what_was_tried() {
        for lib in [Library::Driver, Library::Nvrtc] {
            if lib == Library::Driver {
                match live_device(0) {
                    Ok(d) => {
                        eprintln!("live device: {d:?}");
                        assert!(d.warp_size >= 32 && d.sm_count >= 1);
                    }
                    Err(e) => eprintln!("no live device: {e}"),
                }
            }
            match probe(lib) {
                Ok(name) => assert!(lib.candidates().contains(&name)),
                Err(CudaError::Unavailable { reason, .. }) => {
                    eprintln!("{lib} not found ({reason}); the error names every candidate");
                    for c in lib.candidates() {
                        assert!(reason.contains(c), "{reason}");
                    }
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        }
    }
}
