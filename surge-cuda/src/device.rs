//! A live GPU through cudarc: the [`Runtime`] that compiles with NVRTC, loads PTX modules and
//! launches on one stream.

use crate::args::{DevBuf, dev_dispatch};
use crate::runtime::{KArg, Runtime};
use crate::{CudaError, driver_err};
use cudarc::driver::result::memset_d8_async;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};
use std::sync::Arc;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cuda::CudaProgram;
use surge_codegen::ir::Elem;
use surge_codegen::target::CudaDevice;

/// An open CUDA device: its context, default stream, description and compile architecture.
#[derive(Debug, Clone)]
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

impl Runtime for Device {
    type Buf = DevBuf;
    type Words = CudaSlice<u64>;
    type Module = Arc<CudaModule>;
    type Func = CudaFunction;

    fn info(&self) -> &CudaDevice {
        &self.info
    }

    fn gpu(&self) -> Option<&Device> {
        Some(self)
    }

    fn max_blocks(&self) -> u32 {
        self.info.sm_count.max(1) * 32
    }

    fn load(&self, programs: &[CudaProgram]) -> Result<Vec<Arc<CudaModule>>, CudaError> {
        // Each thread compiles a program with NVRTC and loads it (the driver's PTX JIT runs in
        // the load): both are the slow part of a build, and both run on every core.
        let clock = std::time::Instant::now();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let modules = crate::parallel::map(programs, threads, |p| {
            let ptx = crate::compile(p, &self.arch)?;
            self.ctx
                .load_module((*ptx).clone())
                .map_err(driver_err("loading a PTX module"))
        })?;
        if std::env::var_os("SURGE_TRACE").is_some() {
            let bytes: usize = programs.iter().map(|p| p.source.len()).sum();
            eprintln!(
                "surge-cuda: {} programs ({} KiB of CUDA) compiled and loaded on {threads} threads in {:.3} s",
                programs.len(),
                bytes / 1024,
                clock.elapsed().as_secs_f64()
            );
        }
        Ok(modules)
    }

    fn function(&self, m: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, CudaError> {
        m.load_function(name)
            .map_err(driver_err(format!("loading kernel {name}")))
    }

    fn upload(&self, b: &Buffer) -> Result<DevBuf, CudaError> {
        DevBuf::upload(&self.stream, b)
    }

    fn zeros(&self, elem: Elem, n: usize) -> Result<DevBuf, CudaError> {
        DevBuf::zeros(&self.stream, elem, n)
    }

    fn fill(&self, b: &DevBuf, byte: u8) -> Result<(), CudaError> {
        let s = &self.stream;
        dev_dispatch!(b, d => {
            let bytes = d.num_bytes();
            let (ptr, _sync) = d.device_ptr(s);
            // SAFETY: `ptr` is the live allocation of `bytes` bytes of this buffer.
            unsafe { memset_d8_async(ptr, byte, bytes, s.cu_stream()) }
                .map_err(driver_err("filling a buffer"))?;
        });
        Ok(())
    }

    fn download(&self, b: &DevBuf, n: usize) -> Result<Buffer, CudaError> {
        b.download(&self.stream, n)
    }

    fn words(&self, v: &[u64]) -> Result<CudaSlice<u64>, CudaError> {
        let s = &self.stream;
        if v.is_empty() {
            s.alloc_zeros(1).map_err(driver_err("allocating"))
        } else {
            s.clone_htod(v).map_err(driver_err("uploading words"))
        }
    }

    fn read_words(&self, w: &CudaSlice<u64>) -> Result<Vec<u64>, CudaError> {
        self.stream
            .clone_dtoh(w)
            .map_err(driver_err("reading words"))
    }

    fn clear_words(&self, w: &CudaSlice<u64>) -> Result<(), CudaError> {
        let s = &self.stream;
        let (ptr, _sync) = w.device_ptr(s);
        // SAFETY: `ptr` is the live allocation of `w.len()` words.
        unsafe { memset_d8_async(ptr, 0, w.len() * 8, s.cu_stream()) }
            .map_err(driver_err("clearing words"))
    }

    fn launch(
        &self,
        f: &CudaFunction,
        name: &str,
        grid: u32,
        block: (u32, u32),
        args: &[KArg<'_, Self>],
    ) -> Result<(), CudaError> {
        let unused = 0i32;
        let mut b = self.stream.launch_builder(f);
        for a in args {
            match a {
                KArg::Buf(d, _) => d.push(&mut b),
                KArg::Words(w, _) => {
                    b.arg(*w);
                }
                KArg::U64(v) => {
                    b.arg(v);
                }
                KArg::Lit(l) => l.push(&mut b),
                KArg::Unused => {
                    b.arg(&unused);
                }
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the kernel's emitted parameter list (built from the same
        // phase plan); every buffer holds at least the elements the kernel writes, and every
        // read is bounds-checked on the device.
        unsafe { b.launch(cfg) }.map_err(driver_err(format!("launching {name}")))?;
        Ok(())
    }

    fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .map_err(driver_err("running the kernels"))
    }

    fn time_each(
        &self,
        reps: usize,
        step: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<Vec<f64>, CudaError> {
        let s = &self.stream;
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut events = Vec::with_capacity(reps + 1);
        events.push(s.record_event(flags).map_err(driver_err("event"))?);
        for _ in 0..reps {
            step()?;
            events.push(s.record_event(flags).map_err(driver_err("event"))?);
        }
        self.synchronize()?;
        events
            .windows(2)
            .map(|w| w[0].elapsed_ms(&w[1]).map(f64::from))
            .collect::<Result<Vec<f64>, _>>()
            .map_err(driver_err("event"))
    }
}
