//! Built-in applications, written with the DSEL as the dissertation writes them
//! (Listings 5.1, 5.3, 5.4), and the inputs they run on by default.

pub mod comd;
mod gemm;
pub mod gemm_tuning;
pub mod kmeans;
pub mod matgen;
mod reduce;
mod scan;
mod spmv;
mod tuning;

pub use gemm::{mat_mat, mat_mat_bt};
pub use reduce::{reduce_app, sum_input};
pub use scan::scan_app;
pub use spmv::spmv_app;

use crate::{Result, SurgeError};
use std::fmt;
use std::str::FromStr;

/// The built-in applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum App {
    /// Tiled parallel reduction (Listing 5.3): two `map.reduce` phases.
    Reduce,
    /// Tiled exclusive prefix sum (Listing 5.4): `map.reduce`, `map.scan`, `map.scan`.
    Scan,
    /// CSR sparse matrix-vector product (Listing 5.1): `map.reduce`.
    Spmv,
    /// k-means (Lloyd): relabeling (`map.reduce`) and Listing 5.5's recalculation
    /// (`reduce_by_key.map`), with the labels sorted on the host. As one computation (analyze,
    /// variants, tune) it is the relabeling, where the time goes.
    Kmeans,
}

impl App {
    pub const ALL: [App; 4] = [App::Reduce, App::Scan, App::Spmv, App::Kmeans];
    pub fn name(self) -> &'static str {
        match self {
            App::Reduce => "reduce",
            App::Scan => "scan",
            App::Spmv => "spmv",
            App::Kmeans => "kmeans",
        }
    }
}

impl fmt::Display for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for App {
    type Err = SurgeError;
    fn from_str(s: &str) -> Result<App> {
        App::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| {
            SurgeError::Usage(format!(
                "unknown application `{s}`; the built-in applications are reduce, scan, spmv, kmeans"
            ))
        })
    }
}

/// Tile size of the tiled reduction and scan (elements per tile of the first phase).
pub const DEFAULT_TILE: u64 = 4096;

/// Where an application's input comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum AppInput {
    /// The built-in default: a generated 256×256-grid Laplacian for spmv, 1M values for reduce/scan.
    Default,
    /// A file: Matrix Market for spmv, points (CSV or `.npy`) for kmeans.
    Matrix(std::path::PathBuf),
    /// A generated input of this many elements (reduce, scan).
    Size(usize),
}

/// Shape of an spmv input, after expanding symmetric storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MatrixShape {
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
}

/// An application built on its input, ready to analyze or run.
#[derive(Debug, Clone)]
pub struct BuiltApp {
    pub app: App,
    pub computation: crate::Computation,
    /// A human-readable name of the input.
    pub input_name: String,
    pub matrix: Option<MatrixShape>,
    /// Number of input elements for reduce and scan.
    pub size: Option<usize>,
}

/// The k-means relabeling on its input: a points file, or generated points (D = 32, k = 10,
/// seeded), from k-means++ centroids (k = 10, seed 1).
fn kmeans_built(input: &AppInput) -> Result<BuiltApp> {
    let (points, input_name) = match input {
        AppInput::Matrix(p) => (kmeans::Points::read(p)?, p.display().to_string()),
        AppInput::Size(n) => (
            kmeans::data::blobs(*n, KMEANS_DIM, KMEANS_K, 7),
            format!("{n} generated points (d = {KMEANS_DIM})"),
        ),
        AppInput::Default => (
            kmeans::data::blobs(KMEANS_POINTS, KMEANS_DIM, KMEANS_K, 7),
            format!("{KMEANS_POINTS} generated points (d = {KMEANS_DIM}, built-in)"),
        ),
    };
    let k = KMEANS_K.min(points.len());
    let init = kmeans::data::kmeans_plus_plus(&points, k, 1)?;
    let n = points.len();
    Ok(BuiltApp {
        app: App::Kmeans,
        computation: kmeans::program::relabel(points.data, init, points.d)?,
        input_name,
        matrix: None,
        size: Some(n),
    })
}

/// The k-means defaults: the dissertation's D = 32, k = 10, and 100k generated points.
pub const KMEANS_DIM: usize = 32;
pub const KMEANS_K: usize = 10;
pub const KMEANS_POINTS: usize = 100_000;

/// Default number of elements of the reduce and scan inputs.
pub const DEFAULT_SIZE: usize = 1 << 20;
/// Grid side of the default spmv matrix.
pub const DEFAULT_GRID: usize = 256;

impl BuiltApp {
    pub fn new(app: App, input: &AppInput) -> Result<BuiltApp> {
        match (app, input) {
            (App::Kmeans, _) => kmeans_built(input),
            (App::Spmv, AppInput::Size(_)) => Err(SurgeError::Usage(
                "spmv takes a Matrix Market file (--input FILE), not a size".into(),
            )),
            (App::Reduce | App::Scan, AppInput::Matrix(p)) => Err(SurgeError::Usage(format!(
                "{app} takes a size (--size N), not a matrix file ({})",
                p.display()
            ))),
            (App::Spmv, _) => {
                let (m, input_name) = match input {
                    AppInput::Matrix(p) => (crate::mtx::read_mtx(p)?, p.display().to_string()),
                    _ => (
                        matgen::laplacian_2d(DEFAULT_GRID),
                        format!("laplacian_2d {0}x{0} (built-in)", DEFAULT_GRID),
                    ),
                };
                let x = vec![1.0; m.cols];
                let y = spmv_app(&m, &x)?;
                let matrix = Some(MatrixShape {
                    rows: m.rows,
                    cols: m.cols,
                    nnz: m.nnz(),
                });
                Ok(BuiltApp {
                    app,
                    computation: crate::Computation::new(&y)?,
                    input_name,
                    matrix,
                    size: None,
                })
            }
            (App::Reduce | App::Scan, _) => {
                let n = match input {
                    AppInput::Size(n) => *n,
                    _ => DEFAULT_SIZE,
                };
                let s = crate::Seq::input("s", sum_input(n))?;
                let computation = match app {
                    App::Reduce => crate::Computation::new(&reduce_app(&s, DEFAULT_TILE)?)?,
                    _ => crate::Computation::new(&scan_app(&s, DEFAULT_TILE)?)?,
                };
                Ok(BuiltApp {
                    app,
                    computation,
                    input_name: format!("{n} generated values"),
                    matrix: None,
                    size: Some(n),
                })
            }
        }
    }
}
