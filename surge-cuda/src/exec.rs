//! Running a computation's variants on a live GPU through cudarc: upload, one launch per phase
//! (after its shape kernel), download.

use crate::{CudaError, driver_err};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use surge_codegen::analysis::{analyze, check_buffers};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cuda::{ArgSlot, CudaProgram, emit};
use surge_codegen::ir::Computation;
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

/// A device buffer of one of the IR's element types.
#[derive(Debug)]
pub(crate) enum DevBuf {
    F32(CudaSlice<f32>),
    F64(CudaSlice<f64>),
    I32(CudaSlice<i32>),
    I64(CudaSlice<i64>),
    U32(CudaSlice<u32>),
    U64(CudaSlice<u64>),
}

macro_rules! dev_dispatch {
    ($self:expr, $v:ident => $body:expr) => {
        match $self {
            DevBuf::F32($v) => $body,
            DevBuf::F64($v) => $body,
            DevBuf::I32($v) => $body,
            DevBuf::I64($v) => $body,
            DevBuf::U32($v) => $body,
            DevBuf::U64($v) => $body,
        }
    };
}

impl DevBuf {
    pub(crate) fn upload(s: &Arc<CudaStream>, b: &Buffer) -> Result<DevBuf, CudaError> {
        let e = driver_err("uploading an input");
        // Empty buffers are allocated with one element so every pointer is valid.
        macro_rules! up {
            ($V:ident, $v:expr) => {
                DevBuf::$V(if $v.is_empty() {
                    s.alloc_zeros(1).map_err(e)?
                } else {
                    s.clone_htod($v.as_slice()).map_err(e)?
                })
            };
        }
        Ok(match b {
            Buffer::F32(v) => up!(F32, v),
            Buffer::F64(v) => up!(F64, v),
            Buffer::I32(v) => up!(I32, v),
            Buffer::I64(v) => up!(I64, v),
            Buffer::U32(v) => up!(U32, v),
            Buffer::U64(v) => up!(U64, v),
        })
    }

    fn zeros(
        s: &Arc<CudaStream>,
        elem: surge_codegen::ir::Elem,
        n: usize,
    ) -> Result<DevBuf, CudaError> {
        use surge_codegen::ir::Elem;
        let e = driver_err("allocating a phase result");
        let n = n.max(1);
        Ok(match elem {
            Elem::F32 => DevBuf::F32(s.alloc_zeros(n).map_err(e)?),
            Elem::F64 => DevBuf::F64(s.alloc_zeros(n).map_err(e)?),
            Elem::I32 => DevBuf::I32(s.alloc_zeros(n).map_err(e)?),
            Elem::I64 => DevBuf::I64(s.alloc_zeros(n).map_err(e)?),
            Elem::U32 => DevBuf::U32(s.alloc_zeros(n).map_err(e)?),
            Elem::U64 => DevBuf::U64(s.alloc_zeros(n).map_err(e)?),
            Elem::Bool => return Err(CudaError::Input("a phase result of type bool".into())),
        })
    }

    fn download(&self, s: &Arc<CudaStream>, n: usize) -> Result<Buffer, CudaError> {
        let e = driver_err("downloading a result");
        Ok(match self {
            DevBuf::F32(d) => Buffer::F32(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::F64(d) => Buffer::F64(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::I32(d) => Buffer::I32(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::I64(d) => Buffer::I64(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::U32(d) => Buffer::U32(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::U64(d) => Buffer::U64(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
        })
    }

    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        dev_dispatch!(self, d => { b.arg(d); })
    }
}

/// One phase's result on the device.
#[derive(Debug)]
struct PhaseResult {
    data: DevBuf,
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

/// [`execute`] on an open device.
pub fn execute_on(
    dev: &Device,
    ir: &Computation,
    buffers: &[Buffer],
    variants: &[Variant],
) -> Result<Output, CudaError> {
    let analysis = analyze(ir)?;
    check_buffers(ir, buffers)?;
    let lists = per_phase(variants, analysis.phases.len())?;
    let program = emit(ir, &analysis, &lists)?;
    run_program(dev, &program, buffers, &lists)
}

pub(crate) fn run_program(
    dev: &Device,
    program: &CudaProgram,
    buffers: &[Buffer],
    lists: &[Vec<Variant>],
) -> Result<Output, CudaError> {
    let ptx = crate::compile(program, &dev.arch)?;
    let module = dev
        .ctx
        .load_module((*ptx).clone())
        .map_err(driver_err("loading the PTX module"))?;
    let s = &dev.stream;
    let inputs = buffers
        .iter()
        .map(|b| DevBuf::upload(s, b))
        .collect::<Result<Vec<_>, _>>()?;
    let in_lens: Vec<u64> = buffers.iter().map(|b| b.len() as u64).collect();
    let max_blocks = dev.info.sm_count.max(1) * 32;
    let mut results: Vec<PhaseResult> = Vec::new();
    for plan in &program.phases {
        let p = plan.phase;
        // Kernel arguments for the phase's inputs: (pointer, length) pairs.
        let mut lens: Vec<u64> = Vec::new();
        for a in &plan.args {
            match a {
                ArgSlot::Input { buffer, .. } => lens.push(in_lens[*buffer]),
                ArgSlot::Phase { phase, .. } => {
                    let r = &results[*phase];
                    lens.push(r.len);
                    lens.push(r.offsets.as_ref().map_or(0, |o| o.1.len() as u64));
                }
            }
        }
        let push_args = |b: &mut LaunchArgs<'_>, lens: &'_ [u64]| {
            let _ = (b, lens);
        };
        let _ = push_args;
        macro_rules! args {
            ($b:expr) => {{
                let mut k = 0;
                for a in &plan.args {
                    match a {
                        ArgSlot::Input { buffer, .. } => {
                            inputs[*buffer].push(&mut $b);
                            $b.arg(&lens[k]);
                            k += 1;
                        }
                        ArgSlot::Phase { phase, nested, .. } => {
                            let r = &results[*phase];
                            r.data.push(&mut $b);
                            $b.arg(&lens[k]);
                            if *nested {
                                if let Some((o, _)) = &r.offsets {
                                    $b.arg(o);
                                }
                                $b.arg(&lens[k + 1]);
                            }
                            k += 2;
                        }
                    }
                }
            }};
        }
        let func = |name: &str| {
            module
                .load_function(name)
                .map_err(driver_err(format!("loading kernel {name}")))
        };
        // Shape: the element count.
        let mut shape: CudaSlice<u64> = s.alloc_zeros(1).map_err(driver_err("allocating"))?;
        {
            let f = func(&plan.shape_kernel)?;
            let mut b = s.launch_builder(&f);
            if plan.args.is_empty() {
                b.arg(&0i32);
            }
            args!(b);
            b.arg(&mut shape);
            // SAFETY: the argument list matches the emitted kernel's parameters (built from
            // the same plan); one thread writes shape[0].
            unsafe { b.launch(LaunchConfig::for_num_elems(1)) }
                .map_err(driver_err(format!("launching {}", plan.shape_kernel)))?;
        }
        let n = s
            .clone_dtoh(&shape)
            .map_err(driver_err("reading the shape"))?[0];
        let offsets = if let Some(rows) = &plan.rows_kernel {
            let mut dl: CudaSlice<u64> = s
                .alloc_zeros(n.max(1) as usize)
                .map_err(driver_err("allocating"))?;
            let f = func(rows)?;
            let mut b = s.launch_builder(&f);
            if plan.args.is_empty() {
                b.arg(&0i32);
            }
            args!(b);
            b.arg(&mut dl);
            // SAFETY: as above; the kernel writes lens[0..n] (n read back from the shape kernel).
            unsafe { b.launch(LaunchConfig::for_num_elems(n.clamp(1, 1 << 20) as u32)) }
                .map_err(driver_err(format!("launching {rows}")))?;
            let l = s
                .clone_dtoh(&dl)
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
            Some((d, off))
        } else {
            None
        };
        let total = offsets.as_ref().map_or(n, |o| *o.1.last().unwrap_or(&0));
        let mut out = DevBuf::zeros(s, plan.output.elem, total as usize)?;
        for v in lists.get(p).map(Vec::as_slice).unwrap_or(&[]) {
            let k = program.kernel(p, v).ok_or_else(|| {
                CudaError::Input(format!("variant {v} was not emitted for phase {p}"))
            })?;
            let f = func(&k.name)?;
            let mut b = s.launch_builder(&f);
            args!(b);
            dev_dispatch!(&mut out, d => { b.arg(d); });
            if let Some((o, _)) = &offsets {
                b.arg(o);
            }
            let cfg = LaunchConfig {
                grid_dim: (k.launch.grid(n, max_blocks), 1, 1),
                block_dim: (k.launch.block.0, k.launch.block.1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: arguments match the kernel's emitted parameter list; the output holds
            // `total` elements, the kernel writes only indices below it.
            unsafe { b.launch(cfg) }.map_err(driver_err(format!("launching variant {v}")))?;
        }
        s.synchronize()
            .map_err(driver_err(format!("running phase {p}")))?;
        results.push(PhaseResult {
            data: out,
            len: total,
            offsets,
        });
    }
    let last = results
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
