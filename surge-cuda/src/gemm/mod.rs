//! The one-sided-factorizations paper's DGEMM kernels (`surge_codegen::gemm::cuda`) on a
//! [`Runtime`]: [`GemmKernels::build`] compiles a set of them (NVRTC on a GPU, the host C++
//! compiler in the emulator; a few programs of many kernels), [`GemmKernels::upload`] puts A and
//! B on the device once, [`GemmKernels::run`] launches one kernel (one block per tile of C),
//! [`GemmKernels::time`] times launches with CUDA events, [`GemmKernels::result`] downloads C.
//! [`tune`] times a sample of kernels on a GPU against cuBLAS `dgemm`. Column-major, like cuBLAS:
//! A is m×k, B is k×n, C is m×n, leading dimensions m, k, m. See `README.md`.

mod tune;

pub use tune::{GemmTuning, KernelTime, SLOW_FACTOR, operand, tune};

use crate::runtime::{KArg, Runtime};
use crate::{CudaError, args::LitArg};
use std::collections::HashMap;
use surge_codegen::data::Buffer;
use surge_codegen::gemm::cuda::{OsfKernel, programs};
use surge_codegen::ir::Elem;

/// The most kernels per NVRTC program: NVRTC costs about 100 ms per program, and programs
/// compile in parallel, one per core.
pub const KERNELS_PER_PROGRAM: usize = 64;

/// Kernels per program for `kernels` kernels: spread over every core, at most
/// [`KERNELS_PER_PROGRAM`] (a kernel of the paper's space costs NVRTC 0.1 to 2 s: its loops are
/// unrolled in full).
pub fn per_program(kernels: usize) -> usize {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    kernels.div_ceil(threads).clamp(1, KERNELS_PER_PROGRAM)
}

/// Compiled DGEMM kernels on a runtime.
#[allow(missing_debug_implementations)]
pub struct GemmKernels<R: Runtime> {
    rt: R,
    funcs: HashMap<OsfKernel, R::Func>,
    order: Vec<OsfKernel>,
    _modules: Vec<R::Module>,
}

/// A, B and C on the device for one problem size.
#[allow(missing_debug_implementations)]
pub struct Operands<R: Runtime> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    a: R::Buf,
    b: R::Buf,
    c: R::Buf,
}

/// `e` with the kernel's id and parameters in its message.
fn naming(k: &OsfKernel, e: CudaError) -> CudaError {
    match e {
        CudaError::Fault {
            kernel, message, ..
        } => CudaError::Fault {
            kernel,
            variant: Some(k.id()),
            message,
        },
        CudaError::Driver { what, message } => CudaError::Driver {
            what: format!("DGEMM kernel {} ({what})", k.id()),
            message,
        },
        other => other,
    }
}

fn as_i32(what: &str, x: usize) -> Result<i32, CudaError> {
    i32::try_from(x).map_err(|_| CudaError::Input(format!("DGEMM: {what} = {x} exceeds i32")))
}

impl<R: Runtime> GemmKernels<R> {
    /// Compiles and loads `kernels` on `rt`, `per_program` kernels per program.
    pub fn build(rt: &R, kernels: &[OsfKernel], per_program: usize) -> Result<Self, CudaError> {
        let progs = programs(kernels, per_program)?;
        let cuda: Vec<_> = progs.iter().map(|p| p.to_cuda()).collect();
        let modules = rt.load(&cuda)?;
        let mut funcs = HashMap::new();
        let mut order = Vec::new();
        for (p, m) in progs.iter().zip(&modules) {
            for k in &p.kernels {
                if funcs.contains_key(k) {
                    continue;
                }
                let f = rt.function(m, &k.name()).map_err(|e| naming(k, e))?;
                funcs.insert(*k, f);
                order.push(*k);
            }
        }
        Ok(GemmKernels {
            rt: rt.clone(),
            funcs,
            order,
            _modules: modules,
        })
    }

    /// The compiled kernels, in the order given to [`build`](Self::build) (duplicates once).
    pub fn kernels(&self) -> &[OsfKernel] {
        &self.order
    }

    pub fn runtime(&self) -> &R {
        &self.rt
    }

    /// Uploads `a` (m×k) and `b` (k×n), column-major, and allocates C (m×n).
    pub fn upload(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &[f64],
        b: &[f64],
    ) -> Result<Operands<R>, CudaError> {
        if a.len() != m * k || b.len() != k * n {
            return Err(CudaError::Input(format!(
                "DGEMM: a has {} entries for {m}x{k}, b has {} for {k}x{n}",
                a.len(),
                b.len()
            )));
        }
        for (what, x) in [("m", m), ("n", n), ("k", k)] {
            as_i32(what, x)?;
        }
        Ok(Operands {
            m,
            n,
            k,
            a: self.rt.upload(&Buffer::F64(a.to_vec()))?,
            b: self.rt.upload(&Buffer::F64(b.to_vec()))?,
            c: self.rt.zeros(Elem::F64, m * n)?,
        })
    }

    /// Launches `kernel` on `ops` (without waiting): one block of `DIM_X x DIM_Y` threads per
    /// tile of C on a GPU; in the emulator at most its grid cap, the blocks walking the tiles.
    pub fn launch(&self, ops: &Operands<R>, kernel: &OsfKernel) -> Result<(), CudaError> {
        let f = self.funcs.get(kernel).ok_or_else(|| {
            CudaError::Input(format!("DGEMM kernel {} was not built", kernel.id()))
        })?;
        let tiles = kernel.tiles(ops.m, ops.n);
        if tiles == 0 {
            return Ok(());
        }
        let cap = if self.rt.gpu().is_some() {
            i32::MAX as u32
        } else {
            self.rt.max_blocks()
        };
        let grid = tiles.min(u64::from(cap)) as u32;
        let (m, n, k) = (ops.m as i32, ops.n as i32, ops.k as i32);
        let ld = |x: i32| LitArg::I32(x.max(1));
        let args = [
            KArg::Lit(LitArg::I32(m)),
            KArg::Lit(LitArg::I32(n)),
            KArg::Lit(LitArg::I32(k)),
            KArg::Buf(&ops.a, "A"),
            KArg::Lit(ld(m)),
            KArg::Buf(&ops.b, "B"),
            KArg::Lit(ld(k)),
            KArg::Buf(&ops.c, "C"),
            KArg::Lit(ld(m)),
        ];
        self.rt
            .launch(f, &kernel.name(), grid, (kernel.dim_x, kernel.dim_y), &args)
            .map_err(|e| naming(kernel, e))
    }

    /// [`launch`](Self::launch) and wait for it.
    pub fn run(&self, ops: &Operands<R>, kernel: &OsfKernel) -> Result<(), CudaError> {
        self.launch(ops, kernel)?;
        self.rt.synchronize().map_err(|e| naming(kernel, e))
    }

    /// The median of `reps` launches of `kernel`, in milliseconds (CUDA events on a GPU, host
    /// time in the emulator), after one untimed launch.
    pub fn time(
        &self,
        ops: &Operands<R>,
        kernel: &OsfKernel,
        reps: usize,
    ) -> Result<f64, CudaError> {
        self.run(ops, kernel)?;
        let mut ms = self
            .rt
            .time_each(reps.max(1), &mut || self.launch(ops, kernel))
            .map_err(|e| naming(kernel, e))?;
        ms.sort_by(f64::total_cmp);
        Ok(ms[ms.len() / 2])
    }

    /// C, column-major (m×n).
    pub fn result(&self, ops: &Operands<R>) -> Result<Vec<f64>, CudaError> {
        match self.rt.download(&ops.c, ops.m * ops.n)? {
            Buffer::F64(v) => Ok(v),
            other => Err(CudaError::Input(format!(
                "internal: C downloaded as {:?}",
                other.elem()
            ))),
        }
    }
}

/// `C = A·B` (column-major) with one kernel on `rt`: compile, upload, run, download.
pub fn dgemm<R: Runtime>(
    rt: &R,
    kernel: &OsfKernel,
    (m, n, k): (usize, usize, usize),
    a: &[f64],
    b: &[f64],
) -> Result<Vec<f64>, CudaError> {
    let ks = GemmKernels::build(rt, std::slice::from_ref(kernel), 1)?;
    let ops = ks.upload(m, n, k, a, b)?;
    ks.run(&ops, kernel)?;
    ks.result(&ops)
}

/// The largest `|c - reference|` relative to the rounding bound of each entry,
/// `sum_p |a_ip| |b_pj|` (column-major operands of `C = A·B`): under 1e-12 for a correct
/// kernel whatever the signs of the data (the bound is computed on the host, O(m n k)).
pub fn max_rel_error(
    (m, n, k): (usize, usize, usize),
    a: &[f64],
    b: &[f64],
    c: &[f64],
    reference: &[f64],
) -> f64 {
    let abs = |v: &[f64]| v.iter().map(|x| x.abs()).collect::<Vec<f64>>();
    let bound = crate::baselines::host_dgemm(m, n, k, &abs(a), &abs(b));
    c.iter()
        .zip(reference)
        .zip(&bound)
        .map(|((x, r), s)| {
            let d = (x - r).abs();
            if d == 0.0 {
                0.0
            } else {
                d / s.max(f64::MIN_POSITIVE)
            }
        })
        .fold(
            if c.len() == reference.len() {
                0.0
            } else {
                f64::INFINITY
            },
            f64::max,
        )
}

#[cfg(test)]
mod tests;
