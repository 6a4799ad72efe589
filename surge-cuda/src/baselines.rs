//! Vendor baselines through cudarc: cuSPARSE CSR SpMV (`cusparseSpMV`) and cuBLAS reductions
//! (`dasum`, and `ddot` with a vector of ones for a signed sum). Each returns the result and the
//! mean time of one call in milliseconds (CUDA events), or an error value without a GPU.

use crate::exec::Device;
use crate::{CudaError, driver_err};
use cudarc::cublas::sys as blas;
use cudarc::cusparse::sys as sp;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

fn check_sparse(what: &str, s: sp::cusparseStatus_t) -> Result<(), CudaError> {
    if s == sp::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Driver {
            what: what.to_string(),
            message: format!("{s:?}"),
        })
    }
}

fn check_blas(what: &str, s: blas::cublasStatus_t) -> Result<(), CudaError> {
    if s == blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Driver {
            what: what.to_string(),
            message: format!("{s:?}"),
        })
    }
}

fn need(present: bool, library: &'static str) -> Result<(), CudaError> {
    if present {
        Ok(())
    } else {
        Err(CudaError::Unavailable {
            library,
            reason: "library not found on the library path".into(),
        })
    }
}

/// A CSR matrix on the host (`i32` indices as cuSPARSE's CSR format wants them).
#[derive(Debug, Clone)]
pub struct Csr<'a> {
    pub rows: usize,
    pub cols: usize,
    pub row_offsets: &'a [i32],
    pub col_indices: &'a [i32],
    pub values: &'a [f64],
}

/// `y = A x` with cuSPARSE (`CUSPARSE_SPMV_ALG_DEFAULT`), timed over `reps` calls after one
/// warm-up. Returns `(y, milliseconds per call)`.
pub fn cusparse_spmv(
    dev: &Device,
    a: &Csr<'_>,
    x: &[f64],
    reps: usize,
) -> Result<(Vec<f64>, f64), CudaError> {
    // SAFETY: probing only loads the library.
    need(unsafe { sp::is_culib_present() }, "cuSPARSE (libcusparse)")?;
    if x.len() != a.cols || a.row_offsets.len() != a.rows + 1 {
        return Err(CudaError::Input(format!(
            "cusparse_spmv: x has {} entries for {} columns, {} row offsets for {} rows",
            x.len(),
            a.cols,
            a.row_offsets.len(),
            a.rows
        )));
    }
    let s = &dev.stream;
    let e = || driver_err("cusparse_spmv: device memory");
    let nnz = a.values.len();
    let mut off: CudaSlice<i32> = s.clone_htod(a.row_offsets).map_err(e())?;
    let mut col: CudaSlice<i32> = s.clone_htod(&pad(a.col_indices)).map_err(e())?;
    let mut val: CudaSlice<f64> = s.clone_htod(&pad(a.values)).map_err(e())?;
    let mut dx: CudaSlice<f64> = s.clone_htod(&pad(x)).map_err(e())?;
    let mut dy: CudaSlice<f64> = s.alloc_zeros(a.rows.max(1)).map_err(e())?;
    let (alpha, beta) = (1.0f64, 0.0f64);
    let ms;
    // SAFETY: every pointer is a live device allocation of the declared size and type; the
    // descriptors and handle are destroyed before the allocations are dropped.
    unsafe {
        let mut h: sp::cusparseHandle_t = std::ptr::null_mut();
        check_sparse("cusparseCreate", sp::cusparseCreate(&mut h))?;
        check_sparse(
            "cusparseSetStream",
            sp::cusparseSetStream(h, dev.stream.cu_stream() as _),
        )?;
        let (po, _g1) = off.device_ptr_mut(s);
        let (pc, _g2) = col.device_ptr_mut(s);
        let (pv, _g3) = val.device_ptr_mut(s);
        let (px, _g4) = dx.device_ptr_mut(s);
        let (py, _g5) = dy.device_ptr_mut(s);
        let mut m: sp::cusparseSpMatDescr_t = std::ptr::null_mut();
        check_sparse(
            "cusparseCreateCsr",
            sp::cusparseCreateCsr(
                &mut m,
                a.rows as i64,
                a.cols as i64,
                nnz as i64,
                po as *mut _,
                pc as *mut _,
                pv as *mut _,
                sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                sp::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                sp::cudaDataType::CUDA_R_64F,
            ),
        )?;
        let mut vx: sp::cusparseDnVecDescr_t = std::ptr::null_mut();
        let mut vy: sp::cusparseDnVecDescr_t = std::ptr::null_mut();
        check_sparse(
            "cusparseCreateDnVec",
            sp::cusparseCreateDnVec(
                &mut vx,
                a.cols as i64,
                px as *mut _,
                sp::cudaDataType::CUDA_R_64F,
            ),
        )?;
        check_sparse(
            "cusparseCreateDnVec",
            sp::cusparseCreateDnVec(
                &mut vy,
                a.rows as i64,
                py as *mut _,
                sp::cudaDataType::CUDA_R_64F,
            ),
        )?;
        let op = sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
        let alg = sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT;
        let mut size = 0usize;
        check_sparse(
            "cusparseSpMV_bufferSize",
            sp::cusparseSpMV_bufferSize(
                h,
                op,
                &alpha as *const f64 as *const _,
                m,
                vx,
                &beta as *const f64 as *const _,
                vy,
                sp::cudaDataType::CUDA_R_64F,
                alg,
                &mut size,
            ),
        )?;
        let mut work: CudaSlice<u8> = s.alloc_zeros(size.max(1)).map_err(e())?;
        let (pw, _g6) = work.device_ptr_mut(s);
        let call = || {
            sp::cusparseSpMV(
                h,
                op,
                &alpha as *const f64 as *const _,
                m,
                vx,
                &beta as *const f64 as *const _,
                vy,
                sp::cudaDataType::CUDA_R_64F,
                alg,
                pw as *mut _,
            )
        };
        check_sparse("cusparseSpMV", call())?;
        ms = time(dev, reps, || check_sparse("cusparseSpMV", call()))?;
        sp::cusparseDestroySpMat(m);
        sp::cusparseDestroyDnVec(vx);
        sp::cusparseDestroyDnVec(vy);
        sp::cusparseDestroy(h);
    }
    let mut y = s.clone_dtoh(&dy).map_err(e())?;
    y.truncate(a.rows);
    Ok((y, ms))
}

fn pad<T: Copy + Default>(v: &[T]) -> Vec<T> {
    if v.is_empty() {
        vec![T::default()]
    } else {
        v.to_vec()
    }
}

/// Mean milliseconds of `f` over `reps` calls, timed with CUDA events on the device's stream.
pub(crate) fn time(
    dev: &Device,
    reps: usize,
    mut f: impl FnMut() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = dev
        .stream
        .record_event(flags)
        .map_err(driver_err("event"))?;
    let reps = reps.max(1);
    for _ in 0..reps {
        f()?;
    }
    let end = dev
        .stream
        .record_event(flags)
        .map_err(driver_err("event"))?;
    end.synchronize().map_err(driver_err("event"))?;
    let ms = start.elapsed_ms(&end).map_err(driver_err("event"))?;
    Ok(ms as f64 / reps as f64)
}

/// Sum of |x| with cuBLAS `dasum` and sum of x with `ddot(x, ones)`: `(asum, sum, ms per ddot)`.
pub fn cublas_sum(dev: &Device, x: &[f64], reps: usize) -> Result<(f64, f64, f64), CudaError> {
    // SAFETY: probing only loads the library.
    need(unsafe { blas::is_culib_present() }, "cuBLAS (libcublas)")?;
    let s = &dev.stream;
    let e = || driver_err("cublas_sum: device memory");
    let n = x.len() as i32;
    let dx: CudaSlice<f64> = s.clone_htod(&pad(x)).map_err(e())?;
    let ones: CudaSlice<f64> = s.clone_htod(&vec![1.0; x.len().max(1)]).map_err(e())?;
    let blas_h = cudarc::cublas::CudaBlas::new(s.clone()).map_err(|e| CudaError::Driver {
        what: "cublasCreate".into(),
        message: format!("{e:?}"),
    })?;
    let h = *blas_h.handle();
    let (mut asum, mut sum) = (0.0f64, 0.0f64);
    // SAFETY: the pointers are live device allocations of `n` doubles; results are host scalars
    // (cuBLAS' default host pointer mode), written before the calls return.
    unsafe {
        let (px, _g1) = dx.device_ptr(s);
        let (po, _g2) = ones.device_ptr(s);
        check_blas(
            "cublasDasum",
            blas::cublasDasum_v2(h, n, px as *const f64, 1, &mut asum),
        )?;
        check_blas(
            "cublasDdot",
            blas::cublasDdot_v2(h, n, px as *const f64, 1, po as *const f64, 1, &mut sum),
        )?;
        let ms = time(dev, reps, || {
            let mut r = 0.0;
            check_blas(
                "cublasDdot",
                blas::cublasDdot_v2(h, n, px as *const f64, 1, po as *const f64, 1, &mut r),
            )
        })?;
        Ok((asum, sum, ms))
    }
}

/// Device-to-device copy bandwidth in GB/s (read + write bytes), measured with `bytes`-sized
/// buffers: the reference for bandwidth-bound kernels.
pub fn copy_bandwidth(dev: &Device, bytes: usize, reps: usize) -> Result<f64, CudaError> {
    let s = &dev.stream;
    let n = (bytes / 8).max(1);
    let a: CudaSlice<f64> = s.alloc_zeros(n).map_err(driver_err("allocating"))?;
    let mut b: CudaSlice<f64> = s.alloc_zeros(n).map_err(driver_err("allocating"))?;
    s.memcpy_dtod(&a, &mut b).map_err(driver_err("copy"))?;
    let ms = time(dev, reps, || {
        s.memcpy_dtod(&a, &mut b).map_err(driver_err("copy"))
    })?;
    Ok(2.0 * (n * 8) as f64 / (ms * 1e-3) / 1e9)
}
