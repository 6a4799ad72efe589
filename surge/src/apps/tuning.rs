//! The built-in applications registered as tunable workloads, through the same open API a user
//! tunes their own computation with ([`Workload`], [`TuneInput`]): each app says what its
//! workload is (name, features, unit), how to build an input, where inputs come from (a path or
//! the built-in generators) and which input the selection cost is measured on.

use super::{App, AppInput, BuiltApp};
use crate::tune::features::cusp_group;
use crate::tune::inputs::{Scale, Set, files_in, log_sizes, sizes, spmv_matrices};
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
    match scale {
        Scale::Small => log_sizes(8.0, 14.0, 1.0, set),
        Scale::Full => log_sizes(8.0, 18.0, 0.5, set),
    }
}

/// Inputs made by `load` from each of `files`: those that fail are skipped with the reason,
/// and none at all is an error naming `path` and `what` it should hold.
fn inputs_from_files(
    path: &Path,
    files: Vec<std::path::PathBuf>,
    what: &str,
    load: impl Fn(&Path) -> Result<TuneInput>,
) -> Result<(Vec<TuneInput>, Vec<String>)> {
    let mut inputs = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        match load(&f) {
            Ok(i) => inputs.push(i),
            Err(e) => skipped.push(format!("skipping {}: {e}", f.display())),
        }
    }
    if inputs.is_empty() {
        return Err(SurgeError::Input {
            input: path.display().to_string(),
            message: format!("no usable {what}"),
        });
    }
    Ok((inputs, skipped))
}

/// Every `.csv` and `.npy` file of a directory (or one file) as a k-means input.
fn points_from_path(path: &Path) -> Result<(Vec<TuneInput>, Vec<String>)> {
    let files = files_in(path, &["csv", "npy"])?;
    inputs_from_files(path, files, "points file (.csv, .npy)", |f| {
        let b = BuiltApp::new(App::Kmeans, &AppInput::Matrix(f.to_path_buf()))?;
        kmeans_input(f.display().to_string(), b.computation, b.size.unwrap_or(0))
    })
}

/// A k-means relabeling input of `n` points; its work is 3·n·k·d flops (k·d: the centroids'
/// values, whatever the points' dimension).
fn kmeans_input(name: String, c: crate::Computation, n: usize) -> Result<TuneInput> {
    let centroids = c
        .ir()
        .inputs
        .iter()
        .find(|i| i.name == super::kmeans::program::CENTROIDS)
        .map_or(0, |i| i.len as usize);
    let work = 3.0 * (n * centroids) as f64;
    Ok(App::Kmeans.workload().input(name, c)?.with_work(work))
}

fn matrices_from_path(path: &Path) -> Result<(Vec<TuneInput>, Vec<String>)> {
    let files = files_in(path, &["mtx"])?;
    inputs_from_files(
        path,
        files,
        "Matrix Market (.mtx) file",
        TuneInput::matrix_file,
    )
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
