//! Vendor baselines through cudarc: cuSPARSE CSR SpMV (`cusparseSpMV`) and cuBLAS reductions
//! (`dasum`, and `ddot` with a vector of ones for a signed sum). Each returns the result and the
//! mean time of one call in milliseconds (CUDA events), or an error value without a GPU.

use crate::device::Device;
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

/// Median milliseconds of one call of `f` over `reps` calls (at least one), each between two
/// CUDA events on the device's stream. Callers warm up first.
pub(crate) fn time(
    dev: &Device,
    reps: usize,
    mut f: impl FnMut() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut events = vec![
        dev.stream
            .record_event(flags)
            .map_err(driver_err("event"))?,
    ];
    for _ in 0..reps.max(1) {
        f()?;
        events.push(
            dev.stream
                .record_event(flags)
                .map_err(driver_err("event"))?,
        );
    }
    let ms = events
        .windows(2)
        .map(|w| w[0].elapsed_ms(&w[1]).map(f64::from))
        .collect::<Result<Vec<f64>, _>>()
        .map_err(driver_err("event"))?;
    Ok(crate::DeviceTiming::of(ms).median_ms)
}

/// cuBLAS reductions of one vector (see [`cublas_sum`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CublasSum {
    /// Σ|x| (`dasum`).
    pub asum: f64,
    /// Σx (`ddot(x, ones)`).
    pub sum: f64,
    /// Median milliseconds of one `dasum` (reads x once: the traffic of a sum).
    pub asum_ms: f64,
    /// Median milliseconds of one `ddot` (reads x and the ones: twice the traffic).
    pub dot_ms: f64,
}

/// Sum of |x| with cuBLAS `dasum` and sum of x with `ddot(x, ones)`, each timed over `reps`
/// calls after one warm-up call.
pub fn cublas_sum(dev: &Device, x: &[f64], reps: usize) -> Result<CublasSum, CudaError> {
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
        let dot_ms = time(dev, reps, || {
            let mut r = 0.0;
            check_blas(
                "cublasDdot",
                blas::cublasDdot_v2(h, n, px as *const f64, 1, po as *const f64, 1, &mut r),
            )
        })?;
        let asum_ms = time(dev, reps, || {
            let mut r = 0.0;
            check_blas(
                "cublasDasum",
                blas::cublasDasum_v2(h, n, px as *const f64, 1, &mut r),
            )
        })?;
        Ok(CublasSum {
            asum,
            sum,
            asum_ms,
            dot_ms,
        })
    }
}

/// `C = A·B` with cuBLAS `dgemm`, all matrices column-major (`a` is m×k, `b` is k×n, the result
/// m×n, leading dimensions m, k, m), timed over `reps` calls after one warm-up call. Returns
/// `(C, milliseconds per call)`.
#[allow(clippy::too_many_arguments)]
pub fn cublas_dgemm(
    dev: &Device,
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    b: &[f64],
    reps: usize,
) -> Result<(Vec<f64>, f64), CudaError> {
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
    // SAFETY: probing only loads the library.
    need(unsafe { blas::is_culib_present() }, "cuBLAS (libcublas)")?;
    if a.len() != m * k || b.len() != k * n {
        return Err(CudaError::Input(format!(
            "cublas_dgemm: a has {} entries for {m}x{k}, b has {} for {k}x{n}",
            a.len(),
            b.len()
        )));
    }
    let dim = |x: usize| {
        i32::try_from(x.max(1))
            .map_err(|_| CudaError::Input(format!("cublas_dgemm: dimension {x} exceeds i32")))
    };
    let cfg = GemmConfig {
        transa: blas::cublasOperation_t::CUBLAS_OP_N,
        transb: blas::cublasOperation_t::CUBLAS_OP_N,
        m: dim(m)?,
        n: dim(n)?,
        k: dim(k)?,
        alpha: 1.0f64,
        lda: dim(m)?,
        ldb: dim(k)?,
        beta: 0.0f64,
        ldc: dim(m)?,
    };
    if m == 0 || n == 0 {
        return Ok((Vec::new(), 0.0));
    }
    let s = &dev.stream;
    let e = || driver_err("cublas_dgemm: device memory");
    // k = 0: C = 0 (cuBLAS with beta = 0 writes zeros); pad so every pointer is valid.
    let da: CudaSlice<f64> = s.clone_htod(&pad(a)).map_err(e())?;
    let db: CudaSlice<f64> = s.clone_htod(&pad(b)).map_err(e())?;
    let mut dc: CudaSlice<f64> = s.alloc_zeros(m * n).map_err(e())?;
    let blas_h = CudaBlas::new(s.clone()).map_err(|e| CudaError::Driver {
        what: "cublasCreate".into(),
        message: format!("{e:?}"),
    })?;
    let call = |dc: &mut CudaSlice<f64>| {
        // SAFETY: a is m×k (lda = m), b is k×n (ldb = k), c is m×n (ldc = m), all live
        // device allocations of at least those sizes.
        unsafe { blas_h.gemm(cfg, &da, &db, dc) }.map_err(|e| CudaError::Driver {
            what: "cublasDgemm".into(),
            message: format!("{e:?}"),
        })
    };
    call(&mut dc)?;
    let ms = time(dev, reps, || call(&mut dc))?;
    let c = s.clone_dtoh(&dc).map_err(e())?;
    Ok((c, ms))
}

/// `C = A·B` on the host, column-major like [`cublas_dgemm`] (the check of its result).
pub fn host_dgemm(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for j in 0..n {
        for p in 0..k {
            let bpj = b[j * k + p];
            for i in 0..m {
                c[j * m + i] += a[p * m + i] * bpj;
            }
        }
    }
    c
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_dgemm_is_column_major() {
        // A = [1 2; 3 4] (column-major [1, 3, 2, 4]), B = [5; 6].
        assert_eq!(
            host_dgemm(2, 1, 2, &[1.0, 3.0, 2.0, 4.0], &[5.0, 6.0]),
            [17.0, 39.0]
        );
    }

    /// GPU 0; these tests are ignored unless asked for, and then a missing GPU fails them.
    fn device() -> Device {
        Device::open(0).unwrap_or_else(|e| panic!("no CUDA device: {e}"))
    }

    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn cublas_dgemm_matches_the_host() {
        let dev = device();
        let (m, n, k) = (67, 45, 33);
        let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 11) as f64 * 0.5).collect();
        let (c, ms) = cublas_dgemm(&dev, m, n, k, &a, &b, 10).unwrap();
        assert!(ms > 0.0);
        // Small integers and halves: every product and sum is exact.
        assert_eq!(c, host_dgemm(m, n, k, &a, &b));
    }

    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn cublas_sum_and_copy_bandwidth() {
        let dev = device();
        let x: Vec<f64> = (0..100_000).map(|i| (i % 9) as f64 - 4.0).collect();
        let r = cublas_sum(&dev, &x, 10).unwrap();
        assert_eq!(r.sum, x.iter().sum::<f64>());
        assert_eq!(r.asum, x.iter().map(|v| v.abs()).sum::<f64>());
        assert!(r.asum_ms > 0.0 && r.dot_ms > 0.0);
        assert!(copy_bandwidth(&dev, 1 << 26, 10).unwrap() > 1.0);
    }
}
