//! The built-in applications registered as tunable workloads, through the same open API a user
//! tunes their own computation with ([`Workload`], [`TuneInput`]): each app says what its
//! workload is (name, features, unit), how to build an input, where inputs come from (a path or
//! the built-in generators) and which input the selection cost is measured on.

use super::{App, AppInput, BuiltApp};
use crate::tune::features::cusp_group;
use crate::tune::inputs::{Scale, Set, sizes, spmv_matrices};
use crate::tune::{TuneInput, Workload};
use crate::{Result, SurgeError};
use std::path::Path;
use std::sync::Arc;

impl App {
    /// The app's workload: Surge's inferred features (plus the CUSP features for spmv), and
    /// rates in GFLOP/s (spmv) or Gelem/s (reduce, scan).
    pub fn workload(self) -> Workload {
        let w = Workload::new(self.name());
        match self {
            App::Spmv => w.with_group(cusp_group()).with_unit("GFLOP/s", 1e-9),
            App::Reduce | App::Scan => w.with_unit("Gelem/s", 1e-9),
            // Work: 3·n·k·d flops of distances per relabeling.
            App::Kmeans => w.with_unit("GFLOP/s", 1e-9),
        }
    }

    /// The generated inputs of the app (training and test sets are disjoint).
    pub fn generated_inputs(self, scale: Scale, set: Set) -> Result<Vec<TuneInput>> {
        match self {
            App::Spmv => spmv_matrices(scale, set)
                .into_iter()
                .map(|(n, m)| TuneInput::spmv(n, m))
                .collect(),
            App::Reduce | App::Scan => sizes(scale, set)
                .into_iter()
                .map(|n| TuneInput::sized(self, n))
                .collect(),
            App::Kmeans => kmeans_sizes(scale, set)
                .into_iter()
                .map(|n| TuneInput::sized(self, n))
                .collect(),
        }
    }

    /// Inputs from a path. For spmv: every `.mtx` file of a directory (or one file); files that
    /// cannot be used (complex values, malformed) are skipped and returned with the reason. For
    /// reduce and scan: a file of sizes (whitespace- or comma-separated, `#` comments), or a
    /// directory holding `sizes.txt`.
    pub fn inputs_from_path(self, path: &Path) -> Result<(Vec<TuneInput>, Vec<String>)> {
        match self {
            App::Spmv => matrices_from_path(path),
            App::Kmeans => points_from_path(path),
            App::Reduce | App::Scan => {
                let sizes = crate::tune::inputs::sizes_from_path(path)?;
                let inputs = sizes
                    .into_iter()
                    .map(|n| TuneInput::sized(self, n))
                    .collect::<Result<_>>()?;
                Ok((inputs, Vec::new()))
            }
        }
    }

    /// The input the selection cost is measured on: a generated input of about `rows` rows
    /// (spmv: a 2-D Laplacian) or elements (reduce, scan).
    pub fn selection_input(self, rows: usize) -> Result<TuneInput> {
        match self {
            App::Spmv => {
                let n = (rows as f64).sqrt().ceil() as usize;
                TuneInput::spmv(format!("laplacian_2d-{n}"), super::matgen::laplacian_2d(n))
            }
            App::Reduce | App::Scan => TuneInput::sized(self, rows),
            App::Kmeans => TuneInput::sized(self, rows.min(super::KMEANS_POINTS)),
        }
    }
}

/// Generated k-means point counts (D = 32, k = 10), log-spaced; the test set sits between the
/// training sizes. The dissertation's 25k–10M points, scaled down to 2 cores.
fn kmeans_sizes(scale: Scale, set: Set) -> Vec<usize> {
    let (lo, hi, step) = match scale {
        Scale::Small => (8.0, 14.0, 1.0),
        Scale::Full => (8.0, 18.0, 0.5),
    };
    let offset = if set == Set::Test { step / 2.0 } else { 0.0 };
    let mut v = Vec::new();
    let mut e: f64 = lo + offset;
    while e <= hi + 1e-9 {
        v.push(2f64.powf(e).round() as usize);
        e += step;
    }
    v
}

/// Every `.csv` and `.npy` file of a directory (or one file) as a k-means input.
fn points_from_path(path: &Path) -> Result<(Vec<TuneInput>, Vec<String>)> {
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut f: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| SurgeError::Input {
                input: path.display().to_string(),
                message: format!("cannot list the directory: {e}"),
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "csv" || e == "npy"))
            .collect();
        f.sort();
        f
    } else {
        vec![path.to_path_buf()]
    };
    let mut inputs = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        match BuiltApp::new(App::Kmeans, &AppInput::Matrix(f.clone())).and_then(|b| {
            let n = b.size.unwrap_or(0);
            kmeans_input(f.display().to_string(), b.computation, n)
        }) {
            Ok(i) => inputs.push(i),
            Err(e) => skipped.push(format!("skipping {}: {e}", f.display())),
        }
    }
    if inputs.is_empty() {
        return Err(SurgeError::Input {
            input: path.display().to_string(),
            message: "no usable points file (.csv, .npy)".into(),
        });
    }
    Ok((inputs, skipped))
}

/// A k-means relabeling input; its work is 3·n·k·d flops.
fn kmeans_input(name: String, c: crate::Computation, n: usize) -> Result<TuneInput> {
    let work = 3.0 * (n * super::KMEANS_K * super::KMEANS_DIM) as f64;
    Ok(App::Kmeans.workload().input(name, c)?.with_work(work))
}

fn matrices_from_path(path: &Path) -> Result<(Vec<TuneInput>, Vec<String>)> {
    let bad = |m: String| SurgeError::Input {
        input: path.display().to_string(),
        message: m,
    };
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut f: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| bad(format!("cannot list the directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
            .collect();
        f.sort();
        f
    } else {
        vec![path.to_path_buf()]
    };
    let mut inputs = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        match TuneInput::matrix_file(&f) {
            Ok(i) => inputs.push(i),
            Err(e) => skipped.push(format!("skipping {}: {e}", f.display())),
        }
    }
    if inputs.is_empty() {
        return Err(bad("no usable Matrix Market (.mtx) file".into()));
    }
    Ok((inputs, skipped))
}

impl TuneInput {
    /// An spmv input on `matrix` (x = all ones); its work is 2·nnz flops.
    pub fn spmv(name: impl Into<String>, matrix: crate::mtx::CsrMatrix) -> Result<TuneInput> {
        let x = vec![1.0; matrix.cols];
        let y = super::spmv_app(&matrix, &x)?;
        let work = 2.0 * matrix.nnz() as f64;
        Ok(App::Spmv
            .workload()
            .input(name, crate::Computation::new(&y)?)?
            .with_work(work)
            .with_matrix(Arc::new(matrix)))
    }

    /// An spmv input read from a Matrix Market file (named by the file name).
    pub fn matrix_file(path: &Path) -> Result<TuneInput> {
        let m = crate::mtx::read_mtx(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        TuneInput::spmv(name, m)
    }

    /// A reduce or scan input of `n` generated values (its work is `n` elements), or a k-means
    /// input of `n` generated points (3·n·k·d flops).
    pub fn sized(app: App, n: usize) -> Result<TuneInput> {
        let built = BuiltApp::new(app, &AppInput::Size(n))?;
        if app == App::Kmeans {
            return kmeans_input(format!("n={n}"), built.computation, n);
        }
        Ok(app
            .workload()
            .input(format!("n={n}"), built.computation)?
            .with_work(n as f64))
    }
}
