//! What `surge bench gemm` times beside Surge's variants: each vendor BLAS found on the machine
//! and the GEMM crates a Rust user would otherwise pick (`gemm`, `matrixmultiply`).

use surge_cpu::baseline::blas::{Blas, Vendor};

/// A reference GEMM.
#[derive(Debug)]
pub enum Peer {
    Blas(Blas),
    /// The `gemm` crate (0.18) on rayon.
    GemmCrate,
    /// The `matrixmultiply` crate (0.3, its own threads).
    Matrixmultiply,
}

impl Peer {
    pub fn name(&self) -> String {
        match self {
            Peer::Blas(b) => b.vendor.name().to_string(),
            Peer::GemmCrate => "gemm-crate".into(),
            Peer::Matrixmultiply => "matrixmultiply".into(),
        }
    }

    /// The library's path, for the report (crates: none).
    pub fn path(&self) -> Option<String> {
        match self {
            Peer::Blas(b) => Some(b.path.display().to_string()),
            _ => None,
        }
    }

    /// Prepares the peer to run on `threads` threads.
    pub fn set_threads(&self, threads: usize) {
        match self {
            Peer::Blas(b) => b.set_threads(threads),
            Peer::Matrixmultiply => {
                // matrixmultiply reads its thread count from the environment at first use.
                // SAFETY: set before the peer runs, from the single benchmark thread.
                unsafe { std::env::set_var("MATMUL_NUM_THREADS", threads.to_string()) };
            }
            Peer::GemmCrate => {}
        }
    }

    /// `C = A·B` (row-major, dense).
    pub fn run(
        &self,
        threads: usize,
        (m, n, k): (usize, usize, usize),
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
    ) -> Result<(), String> {
        match self {
            Peer::Blas(blas) => blas.dgemm((m, n, k), a, b, c),
            Peer::GemmCrate => {
                let par = if threads > 1 {
                    gemm::Parallelism::Rayon(threads)
                } else {
                    gemm::Parallelism::None
                };
                // SAFETY: dense row-major buffers of m·k, k·n and m·n values (the caller's).
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        c.as_mut_ptr(),
                        1,
                        n as isize,
                        false,
                        a.as_ptr(),
                        1,
                        k as isize,
                        b.as_ptr(),
                        1,
                        n as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        par,
                    )
                };
                Ok(())
            }
            Peer::Matrixmultiply => {
                // SAFETY: as above.
                unsafe {
                    matrixmultiply::dgemm(
                        m,
                        k,
                        n,
                        1.0,
                        a.as_ptr(),
                        k as isize,
                        1,
                        b.as_ptr(),
                        n as isize,
                        1,
                        0.0,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    )
                };
                Ok(())
            }
        }
    }

    /// After a vendor BLAS has run, waits for its OpenMP workers to sleep (see `Mkl::settle`).
    pub fn settle(&self) {
        if let Peer::Blas(b) = self {
            b.settle();
        }
    }
}

/// The peers `--vs` names (`all`: every vendor found and both crates; a vendor named but absent
/// is an error saying how to install it). Returns the peers and the absent vendors' reasons.
pub fn peers(vs: &[String]) -> Result<(Vec<Peer>, Vec<String>), String> {
    let all = vs.is_empty() || vs.iter().any(|v| v == "all");
    let mut out = Vec::new();
    let mut absent = Vec::new();
    let vendors: Vec<Vendor> = if all {
        Vendor::ALL.to_vec()
    } else {
        vs.iter()
            .filter(|v| !matches!(v.as_str(), "gemm-crate" | "matrixmultiply"))
            .map(|v| {
                v.parse::<Vendor>().map_err(|_| {
                    format!(
                        "unknown GEMM reference `{v}`; use all, openblas, mkl, mkl-newest, blis, \
                         gemm-crate or matrixmultiply"
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    for v in vendors {
        match Blas::open(v) {
            Ok(b) => out.push(Peer::Blas(b)),
            Err(e) if all => absent.push(e),
            Err(e) => return Err(e),
        }
    }
    if all || vs.iter().any(|v| v == "gemm-crate") {
        out.push(Peer::GemmCrate);
    }
    if all || vs.iter().any(|v| v == "matrixmultiply") {
        out.push(Peer::Matrixmultiply);
    }
    Ok((out, absent))
}
