//! Vendor `cblas_dgemm`s loaded at run time (nothing here is needed to build): Debian's MKL
//! 2020.4, the newest MKL (PyPI's `mkl` wheel, `libmkl_rt.so.3`), OpenBLAS and BLIS (Debian's
//! OpenMP builds). Each is found at its usual path or where an environment variable says.

use std::os::raw::c_int;
use std::path::PathBuf;

/// A vendor BLAS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vendor {
    /// Debian's `libmkl-dev` (2020.4), or `SURGE_MKL`.
    Mkl,
    /// The newest MKL: `SURGE_MKL_NEWEST`, else `~/.cache/surge/mkl-venv/lib/libmkl_rt.so.3`
    /// (`python3 -m venv ~/.cache/surge/mkl-venv && ~/.cache/surge/mkl-venv/bin/pip install mkl`).
    MklNewest,
    /// Debian's `libopenblas0-openmp`, or `SURGE_OPENBLAS`.
    Openblas,
    /// Debian's `libblis4-openmp`, or `SURGE_BLIS`.
    Blis,
}

impl Vendor {
    pub const ALL: [Vendor; 4] = [
        Vendor::Openblas,
        Vendor::MklNewest,
        Vendor::Mkl,
        Vendor::Blis,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Vendor::Mkl => "mkl",
            Vendor::MklNewest => "mkl-newest",
            Vendor::Openblas => "openblas",
            Vendor::Blis => "blis",
        }
    }

    /// How to get it, for the error when it is absent.
    fn install_hint(self) -> &'static str {
        match self {
            Vendor::Mkl => {
                "install Debian's non-free `libmkl-dev`, or set SURGE_MKL to libmkl_rt.so"
            }
            Vendor::MklNewest => {
                "`python3 -m venv ~/.cache/surge/mkl-venv && ~/.cache/surge/mkl-venv/bin/pip install mkl`, \
                 or set SURGE_MKL_NEWEST to its libmkl_rt.so.3"
            }
            Vendor::Openblas => "install Debian's `libopenblas0-openmp`, or set SURGE_OPENBLAS",
            Vendor::Blis => "install Debian's `libblis4-openmp`, or set SURGE_BLIS",
        }
    }

    fn candidates(self) -> Vec<PathBuf> {
        let lib = "/usr/lib/x86_64-linux-gnu";
        let env = |v: &str| std::env::var_os(v).map(PathBuf::from);
        let mut out: Vec<PathBuf> = Vec::new();
        match self {
            Vendor::Mkl => {
                out.extend(env("SURGE_MKL"));
                out.push(format!("{lib}/libmkl_rt.so").into());
            }
            Vendor::MklNewest => {
                out.extend(env("SURGE_MKL_NEWEST"));
                if let Some(home) = env("HOME") {
                    out.push(home.join(".cache/surge/mkl-venv/lib/libmkl_rt.so.3"));
                }
            }
            Vendor::Openblas => {
                out.extend(env("SURGE_OPENBLAS"));
                out.push(format!("{lib}/openblas-openmp/libopenblas.so.0").into());
                out.push(format!("{lib}/openblas-pthread/libopenblas.so.0").into());
            }
            Vendor::Blis => {
                out.extend(env("SURGE_BLIS"));
                out.push(format!("{lib}/blis-openmp/libblis.so.4").into());
                out.push(format!("{lib}/blis-pthread/libblis.so.4").into());
            }
        }
        out
    }
}

impl std::str::FromStr for Vendor {
    type Err = String;
    fn from_str(s: &str) -> Result<Vendor, String> {
        Vendor::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| format!("unknown BLAS `{s}`; use mkl, mkl-newest, openblas or blis"))
    }
}

/// `cblas_dgemm` (LP64), as MKL declares it too.
pub(crate) use super::mkl::Dgemm;
type SetThreads = unsafe extern "C" fn(c_int);

/// A loaded vendor BLAS.
#[derive(Debug)]
pub struct Blas {
    pub vendor: Vendor,
    pub path: PathBuf,
    lib: libloading::Library,
    dgemm: Dgemm,
}

impl Blas {
    /// Loads `vendor` (an error naming the paths tried and how to install it when absent).
    pub fn open(vendor: Vendor) -> Result<Blas, String> {
        let mut tried = Vec::new();
        for p in vendor.candidates() {
            if !p.exists() {
                tried.push(format!("{} (absent)", p.display()));
                continue;
            }
            // SAFETY: loading a BLAS runs its initializers, which are sound to run.
            let lib = match unsafe { libloading::Library::new(&p) } {
                Ok(l) => l,
                Err(e) => {
                    tried.push(format!("{}: {e}", p.display()));
                    continue;
                }
            };
            // SAFETY: `cblas_dgemm`'s C prototype (LP64).
            let dgemm = unsafe { lib.get::<Dgemm>(b"cblas_dgemm").map(|s| *s) };
            match dgemm {
                Ok(dgemm) => {
                    return Ok(Blas {
                        vendor,
                        path: p,
                        lib,
                        dgemm,
                    });
                }
                Err(e) => tried.push(format!("{}: {e}", p.display())),
            }
        }
        Err(format!(
            "{} is not available ({}): {}",
            vendor.name(),
            vendor.install_hint(),
            tried.join("; ")
        ))
    }

    /// Sets the library's thread count (each vendor's own call).
    pub fn set_threads(&self, n: usize) {
        let name: &[u8] = match self.vendor {
            Vendor::Mkl | Vendor::MklNewest => b"MKL_Set_Num_Threads",
            Vendor::Openblas => b"openblas_set_num_threads",
            Vendor::Blis => b"bli_thread_set_num_threads",
        };
        // SAFETY: each is `void f(int)`.
        if let Ok(f) = unsafe { self.lib.get::<SetThreads>(name) } {
            unsafe { f(n as c_int) };
        }
    }

    /// `C = A·B` for dense row-major `m×k` and `k×n` matrices.
    pub fn dgemm(
        &self,
        mnk: (usize, usize, usize),
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
    ) -> Result<(), String> {
        row_major_dgemm(self.dgemm, mnk, a, b, c)
    }

    /// Waits for the library's OpenMP workers to stop spinning (see `Mkl::settle`), so that
    /// what is timed next has the cores to itself.
    pub fn settle(&self) {
        super::mkl::settle_openmp();
    }
}

/// Checks the buffers and calls `f` for `C = A·B` (row-major, dense, no transposes).
pub(crate) fn row_major_dgemm(
    f: Dgemm,
    (m, n, k): (usize, usize, usize),
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
) -> Result<(), String> {
    if a.len() != m * k || b.len() != k * n || c.len() != m * n {
        return Err(format!(
            "dgemm {m}x{k}·{k}x{n}: got buffers of {}, {} and {}",
            a.len(),
            b.len(),
            c.len()
        ));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    const ROW_MAJOR: c_int = 101;
    const NO_TRANS: c_int = 111;
    // SAFETY: sizes checked above; leading dimensions are at least 1.
    unsafe {
        f(
            ROW_MAJOR,
            NO_TRANS,
            NO_TRANS,
            m as c_int,
            n as c_int,
            k as c_int,
            1.0,
            a.as_ptr(),
            k.max(1) as c_int,
            b.as_ptr(),
            n as c_int,
            0.0,
            c.as_mut_ptr(),
            n as c_int,
        )
    };
    Ok(())
}
