//! Intel MKL through `libmkl_rt.so`, loaded with libloading: the inspector-executor sparse BLAS
//! (`mkl_sparse_d_create_csr`, `mkl_sparse_set_mv_hint`, `mkl_sparse_optimize`, `mkl_sparse_d_mv`)
//! and `cblas_dgemm`. The newest MKL the machine has is loaded first (PyPI's `mkl` wheel, see
//! `candidates`), else Debian's non-free `libmkl-dev`.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::OnceLock;

/// Why MKL cannot be used, or what it reported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MklError {
    #[error(
        "MKL is not available: {0} (install Debian's non-free `libmkl-dev`, or set SURGE_MKL to the path of libmkl_rt.so)"
    )]
    Unavailable(String),
    #[error("MKL {call} returned status {status}")]
    Status { call: &'static str, status: c_int },
    #[error("MKL input: {0}")]
    Input(String),
}

type SparseMatrix = *mut c_void;

#[repr(C)]
#[derive(Clone, Copy)]
struct MatrixDescr {
    kind: c_int,
    mode: c_int,
    diag: c_int,
}

const SPARSE_INDEX_BASE_ZERO: c_int = 0;
const SPARSE_OPERATION_NON_TRANSPOSE: c_int = 10;
const SPARSE_MATRIX_TYPE_GENERAL: c_int = 20;
const SPARSE_FILL_MODE_LOWER: c_int = 40;
const SPARSE_DIAG_NON_UNIT: c_int = 50;

const GENERAL: MatrixDescr = MatrixDescr {
    kind: SPARSE_MATRIX_TYPE_GENERAL,
    mode: SPARSE_FILL_MODE_LOWER,
    diag: SPARSE_DIAG_NON_UNIT,
};

type CreateCsr = unsafe extern "C" fn(
    *mut SparseMatrix,
    c_int,
    c_int,
    c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
    *mut f64,
) -> c_int;
type SetMvHint = unsafe extern "C" fn(SparseMatrix, c_int, MatrixDescr, c_int) -> c_int;
type Optimize = unsafe extern "C" fn(SparseMatrix) -> c_int;
type Mv =
    unsafe extern "C" fn(c_int, f64, SparseMatrix, MatrixDescr, *const f64, f64, *mut f64) -> c_int;
type Destroy = unsafe extern "C" fn(SparseMatrix) -> c_int;
type SetThreads = unsafe extern "C" fn(c_int);
/// `cblas_dgemm`'s C prototype (LP64).
pub(crate) type Dgemm = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    f64,
    *const f64,
    c_int,
    *const f64,
    c_int,
    f64,
    *mut f64,
    c_int,
);

/// The loaded library.
#[derive(Debug)]
pub struct Mkl {
    lib: libloading::Library,
    pub path: String,
}

/// Where MKL is looked for, in order: `SURGE_MKL`, the newest MKL (`SURGE_MKL_NEWEST`, else
/// PyPI's `mkl` wheel in `~/.cache/surge/mkl-venv`: the strongest reference this machine can
/// get), then Debian's `libmkl-dev` (2020.4) and oneAPI's usual path.
fn candidates() -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(p) = std::env::var("SURGE_MKL") {
        v.push(p);
    }
    if let Ok(p) = std::env::var("SURGE_MKL_NEWEST") {
        v.push(p);
    }
    if let Ok(home) = std::env::var("HOME") {
        v.push(format!("{home}/.cache/surge/mkl-venv/lib/libmkl_rt.so.3"));
    }
    v.extend(
        [
            "libmkl_rt.so",
            "/usr/lib/x86_64-linux-gnu/libmkl_rt.so",
            "/opt/intel/oneapi/mkl/latest/lib/intel64/libmkl_rt.so",
        ]
        .map(String::from),
    );
    v
}

impl Mkl {
    /// Loads MKL once per process.
    pub fn get() -> Result<&'static Mkl, MklError> {
        static M: OnceLock<Result<Mkl, MklError>> = OnceLock::new();
        M.get_or_init(|| {
            let mut tried = Vec::new();
            for p in candidates() {
                // SAFETY: loading MKL runs its initializers, which are sound to run.
                match unsafe { libloading::Library::new(&p) } {
                    Ok(lib) => {
                        let m = Mkl { lib, path: p };
                        m.sym::<Mv>("mkl_sparse_d_mv")?;
                        return Ok(m);
                    }
                    Err(e) => tried.push(format!("{p}: {e}")),
                }
            }
            Err(MklError::Unavailable(format!("tried {}", tried.join("; "))))
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    fn sym<T: Copy>(&self, name: &str) -> Result<T, MklError> {
        // SAFETY: the declared types match MKL's C prototypes (LP64 interface).
        unsafe {
            self.lib
                .get::<T>(name.as_bytes())
                .map(|s| *s)
                .map_err(|e| MklError::Unavailable(format!("{} lacks {name}: {e}", self.path)))
        }
    }

    /// Waits until MKL's OpenMP workers have stopped spinning. After a parallel call they
    /// busy-wait for `KMP_BLOCKTIME` (200 ms unless the environment says otherwise) before they
    /// sleep, taking a core from whatever is timed next: a benchmark calls this after timing MKL
    /// and before timing anything else, so the next measurement has the machine to itself.
    pub fn settle(&self) {
        settle_openmp();
    }

    /// MKL's own version string (`mkl_get_version_string`), e.g. "Intel(R) oneAPI Math Kernel
    /// Library Version 2026.2-Product Build ...": reports name the MKL they timed. `None` when
    /// the library does not say.
    pub fn version(&self) -> Option<String> {
        type GetVersion = unsafe extern "C" fn(*mut std::ffi::c_char, c_int);
        let f: GetVersion = self.sym("mkl_get_version_string").ok()?;
        let mut buf = [0u8; 256];
        // SAFETY: MKL writes at most `len` bytes, NUL-terminated, into the buffer.
        unsafe {
            f(
                buf.as_mut_ptr() as *mut std::ffi::c_char,
                buf.len() as c_int,
            )
        };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let v = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        (!v.is_empty()).then_some(v)
    }

    /// Sets MKL's thread count.
    pub fn set_threads(&self, n: usize) -> Result<(), MklError> {
        let f: SetThreads = self.sym("MKL_Set_Num_Threads")?;
        // SAFETY: plain setter.
        unsafe { f(n as c_int) };
        Ok(())
    }

    /// `C = A·B` for row-major `m×k` and `k×n` matrices.
    pub fn dgemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
    ) -> Result<(), MklError> {
        let f: Dgemm = self.sym("cblas_dgemm")?;
        super::blas::row_major_dgemm(f, (m, n, k), a, b, c).map_err(MklError::Input)
    }
}

/// An MKL sparse matrix handle, optimized for repeated `y = A·x`.
#[derive(Debug)]
pub struct MklCsr {
    mkl: &'static Mkl,
    handle: SparseMatrix,
    rows: usize,
    cols: usize,
    // MKL keeps pointers into these arrays.
    _offsets: Vec<c_int>,
    _cols: Vec<c_int>,
    _values: Vec<f64>,
}

fn check(call: &'static str, status: c_int) -> Result<(), MklError> {
    if status == 0 {
        Ok(())
    } else {
        Err(MklError::Status { call, status })
    }
}

impl MklCsr {
    /// Creates and optimizes (`mkl_sparse_set_mv_hint` + `mkl_sparse_optimize`, as a fair user
    /// would for repeated products) a CSR matrix.
    pub fn new(
        rows: usize,
        cols: usize,
        row_offsets: &[u64],
        col_indices: &[u32],
        values: &[f64],
        expected_calls: usize,
    ) -> Result<MklCsr, MklError> {
        let mkl = Mkl::get()?;
        let too_big = |what: &str, n: usize| {
            MklError::Input(format!("{what} = {n} does not fit MKL's 32-bit integers"))
        };
        if row_offsets.len() != rows + 1 || col_indices.len() != values.len() {
            return Err(MklError::Input("inconsistent CSR arrays".into()));
        }
        let offsets: Vec<c_int> = row_offsets
            .iter()
            .map(|&o| c_int::try_from(o).map_err(|_| too_big("an offset", o as usize)))
            .collect::<Result<_, _>>()?;
        let cols_i: Vec<c_int> = col_indices
            .iter()
            .map(|&c| c_int::try_from(c).map_err(|_| too_big("a column index", c as usize)))
            .collect::<Result<_, _>>()?;
        let mut values = values.to_vec();
        let mut offsets = offsets;
        let mut cols_i = cols_i;
        let create: CreateCsr = mkl.sym("mkl_sparse_d_create_csr")?;
        let hint: SetMvHint = mkl.sym("mkl_sparse_set_mv_hint")?;
        let optimize: Optimize = mkl.sym("mkl_sparse_optimize")?;
        let mut handle: SparseMatrix = std::ptr::null_mut();
        let (r, c) = (
            c_int::try_from(rows).map_err(|_| too_big("rows", rows))?,
            c_int::try_from(cols).map_err(|_| too_big("cols", cols))?,
        );
        let ends = offsets.as_mut_ptr().wrapping_add(1);
        // SAFETY: arrays are kept alive in the returned struct; sizes checked above.
        unsafe {
            check(
                "mkl_sparse_d_create_csr",
                create(
                    &mut handle,
                    SPARSE_INDEX_BASE_ZERO,
                    r,
                    c,
                    offsets.as_mut_ptr(),
                    ends,
                    cols_i.as_mut_ptr(),
                    values.as_mut_ptr(),
                ),
            )?;
        }
        let m = MklCsr {
            mkl,
            handle,
            rows,
            cols,
            _offsets: offsets,
            _cols: cols_i,
            _values: values,
        };
        // SAFETY: a valid handle.
        unsafe {
            check(
                "mkl_sparse_set_mv_hint",
                hint(
                    m.handle,
                    SPARSE_OPERATION_NON_TRANSPOSE,
                    GENERAL,
                    expected_calls.min(i32::MAX as usize) as c_int,
                ),
            )?;
            check("mkl_sparse_optimize", optimize(m.handle))?;
        }
        Ok(m)
    }

    /// `y = A·x`.
    pub fn mv(&self, x: &[f64], y: &mut [f64]) -> Result<(), MklError> {
        if x.len() != self.cols || y.len() != self.rows {
            return Err(MklError::Input(format!(
                "x has {} entries and y {}, the matrix is {}x{}",
                x.len(),
                y.len(),
                self.rows,
                self.cols
            )));
        }
        let mv: Mv = self.mkl.sym("mkl_sparse_d_mv")?;
        // SAFETY: sizes checked above; the handle is valid.
        unsafe {
            check(
                "mkl_sparse_d_mv",
                mv(
                    SPARSE_OPERATION_NON_TRANSPOSE,
                    1.0,
                    self.handle,
                    GENERAL,
                    x.as_ptr(),
                    0.0,
                    y.as_mut_ptr(),
                ),
            )
        }
    }
}

impl Drop for MklCsr {
    fn drop(&mut self) {
        if let Ok(d) = self.mkl.sym::<Destroy>("mkl_sparse_destroy") {
            // SAFETY: the handle was created by MKL and is destroyed once.
            unsafe { d(self.handle) };
        }
    }
}

// SAFETY: MKL handles may be used from any thread (not concurrently; `mv` takes `&self` but MKL's
// executor is thread-safe for concurrent reads of an optimized matrix).
unsafe impl Send for MklCsr {}
unsafe impl Sync for MklCsr {}

/// Sleeps until OpenMP workers that spin `KMP_BLOCKTIME` ms (200 unless the environment says
/// otherwise) after a parallel call have gone to sleep (see [`Mkl::settle`]).
pub fn settle_openmp() {
    let ms = std::env::var("KMP_BLOCKTIME")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(200)
        .min(1000);
    if ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(ms + 50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkl_names_its_version() {
        let mkl =
            Mkl::get().unwrap_or_else(|e| panic!("MKL is required (.ci/run installs it): {e}"));
        let v = mkl.version().expect("libmkl_rt says its version");
        assert!(v.contains("Math Kernel Library"), "{v}");
    }

    #[test]
    fn mkl_spmv_and_dgemm() {
        // MKL is a test requirement (`.ci/run` installs Debian's libmkl-dev): its absence fails.
        let m = MklCsr::new(2, 3, &[0, 2, 3], &[0, 2, 1], &[1.0, 2.0, 3.0], 10)
            .unwrap_or_else(|e| panic!("MKL is required for this test (.ci/run installs it): {e}"));
        let mut y = vec![0.0; 2];
        m.mv(&[1.0, 10.0, 100.0], &mut y).unwrap();
        assert_eq!(y, vec![201.0, 30.0]);
        assert!(m.mv(&[1.0], &mut y).is_err());
        let mut c = vec![0.0; 4];
        Mkl::get()
            .unwrap()
            .dgemm(
                2,
                2,
                2,
                &[1.0, 2.0, 3.0, 4.0],
                &[5.0, 6.0, 7.0, 8.0],
                &mut c,
            )
            .unwrap();
        assert_eq!(c, vec![19.0, 22.0, 43.0, 50.0]);
    }
}
