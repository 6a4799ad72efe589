//! Generated GEMM kernels (`surge_codegen::gemm`) compiled, loaded and driven: `GemmKernels`
//! builds one library for a set of variants (one rustc call, cached like every kernel library)
//! and runs any of them on any shape. The blocked loops and the threads are here
//! (`driver.rs`); packing, macro- and micro-kernels are the generated code's.

mod driver;
#[cfg(test)]
mod tests;

use crate::CpuError;
use crate::native::compile::{self, Loaded};
use std::collections::HashMap;
use std::sync::Arc;
use surge_codegen::gemm::{self, GemmVariant, Kernel, kernel_symbol};

type PackFn = unsafe extern "C" fn(*const f64, usize, usize, usize, *mut f64);
type MacroFn =
    unsafe extern "C" fn(usize, usize, usize, *const f64, *const f64, *mut f64, usize, u32);

/// The three exported functions of one kernel.
#[derive(Clone, Copy)]
pub(crate) struct KernelFns {
    pub pack_a: PackFn,
    pub pack_b: PackFn,
    pub macro_kernel: MacroFn,
}

/// A row-major matrix operand: its buffer, rows, columns and leading dimension (≥ columns).
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a> {
    pub data: &'a [f64],
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

impl<'a> MatRef<'a> {
    /// A dense `rows × cols` matrix.
    pub fn new(data: &'a [f64], rows: usize, cols: usize) -> MatRef<'a> {
        MatRef {
            data,
            rows,
            cols,
            ld: cols,
        }
    }
}

/// The compiled kernels of a set of GEMM variants.
pub struct GemmKernels {
    _lib: Arc<Loaded>,
    fns: HashMap<Kernel, KernelFns>,
    variants: Vec<GemmVariant>,
}

impl std::fmt::Debug for GemmKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GemmKernels({} variants)", self.variants.len())
    }
}

impl GemmKernels {
    /// Emits, compiles (or finds in the kernel cache) and loads the kernels of `variants`.
    pub fn build(variants: &[GemmVariant]) -> Result<GemmKernels, CpuError> {
        let program = gemm::emit(variants)?;
        let lib = compile::load(&program)?;
        let mut fns = HashMap::new();
        for v in variants {
            let k = v.kernel();
            if fns.contains_key(&k) {
                continue;
            }
            fns.insert(k, resolve(&lib, &k)?);
        }
        Ok(GemmKernels {
            _lib: lib,
            fns,
            variants: variants.to_vec(),
        })
    }

    pub fn variants(&self) -> &[GemmVariant] {
        &self.variants
    }

    /// `C = A·B` with `variant` on `threads` threads: A is m×k, B k×n, C m×n (row-major,
    /// dense). Non-conforming shapes or buffer lengths are errors naming them.
    pub fn gemm(
        &self,
        variant: &GemmVariant,
        threads: usize,
        a: MatRef<'_>,
        b: MatRef<'_>,
        c: &mut [f64],
    ) -> Result<(), CpuError> {
        let ldc = b.cols;
        self.gemm_ld(variant, threads, a, b, c, ldc)
    }

    /// [`GemmKernels::gemm`] into a C of leading dimension `ldc`.
    pub fn gemm_ld(
        &self,
        variant: &GemmVariant,
        threads: usize,
        a: MatRef<'_>,
        b: MatRef<'_>,
        c: &mut [f64],
        ldc: usize,
    ) -> Result<(), CpuError> {
        self.gemm_of(variant, threads, a, driver::BOperand::rows(b), c, ldc)
    }

    /// `C = A·Btᵀ` with `variant` on `threads` threads: A is m×k, `bt` n×k (B stored by its
    /// columns: the rows of the user's second matrix), C m×n (row-major, dense). B's panels are
    /// packed from `bt` directly, so no transposed copy is made.
    pub fn gemm_bt(
        &self,
        variant: &GemmVariant,
        threads: usize,
        a: MatRef<'_>,
        bt: MatRef<'_>,
        c: &mut [f64],
    ) -> Result<(), CpuError> {
        let ldc = bt.rows;
        self.gemm_of(variant, threads, a, driver::BOperand::columns(bt), c, ldc)
    }

    fn gemm_of(
        &self,
        variant: &GemmVariant,
        threads: usize,
        a: MatRef<'_>,
        b: driver::BOperand<'_>,
        c: &mut [f64],
        ldc: usize,
    ) -> Result<(), CpuError> {
        let f = *self
            .fns
            .get(&variant.kernel())
            .ok_or_else(|| CpuError::UnknownVariant {
                id: variant.id(),
                known: self.variants.len(),
            })?;
        driver::check_shapes(a, b, c.len(), ldc)?;
        driver::run(f, variant, threads.max(1), a, b, c, ldc);
        Ok(())
    }
}

/// The functions of `kernel` in `lib`.
fn resolve(lib: &Loaded, kernel: &Kernel) -> Result<KernelFns, CpuError> {
    Ok(KernelFns {
        pack_a: symbol(lib, kernel, "pack_a")?,
        pack_b: symbol(lib, kernel, "pack_b")?,
        macro_kernel: symbol(lib, kernel, "macro")?,
    })
}

/// Function `what` of `kernel`, of type `T`.
fn symbol<T: Copy>(lib: &Loaded, kernel: &Kernel, what: &str) -> Result<T, CpuError> {
    let name = kernel_symbol(kernel, what);
    // SAFETY: symbols of the generated GEMM library, whose signatures `KernelFns` declares.
    unsafe { lib.lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| {
            CpuError::Kernel(format!(
                "{name} missing from {}: {e}",
                lib.library_path.display()
            ))
        })
}
