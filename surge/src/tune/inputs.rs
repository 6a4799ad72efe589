//! Where the built-in apps' tuning inputs come from: files (a list of sizes) or built-in
//! deterministic generators of diverse inputs (sparse matrices, sizes), so `surge tune` works
//! out of the box. Which app takes which is the app's registration (`surge::apps::App`).
//! Generated training and test sets use different parameters and seeds, so they are disjoint.

use super::tune_err;
use crate::apps::matgen;
use crate::mtx::CsrMatrix;
use crate::{Result, SurgeError};
use std::path::Path;

/// How large the generated inputs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Up to a few thousand rows or ~2M elements: for tests and quick runs (seconds).
    Small,
    /// Up to ~10^5 rows or ~4M elements, plus two DRAM-sized stencils of 1.2M rows (training;
    /// 0.5M in the test set): for real tuning. The big stencils put the 1M-row matrices users
    /// tune for (and the selection cost is measured on) inside the training range, and teach
    /// the memory-bound regime, where the diagonal layout wins.
    Full,
}

/// Which generated set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    Training,
    Test,
}

/// Generated spmv matrices: stencils, banded, variable-band, scattered-band, power-law,
/// block-diagonal, arrowhead, random; a wide spread of rows (10^2..10^5, and two
/// stencils of ~10^6 at full scale) and row lengths (1..~100, power-law tails far beyond).
///
/// Every family reaches down to a few hundred rows (a few thousand nonzeros), irregular ones
/// included: below about 10 µs a run is dominated by the cost of waking a second thread, and
/// the model can only learn that size outweighs structure there if the small end holds
/// irregular matrices too, not just stencils.
pub fn spmv_matrices(scale: Scale, set: Set) -> Vec<(String, CsrMatrix)> {
    let big = scale == Scale::Full;
    let test = set == Set::Test;
    let s = if test { 1000 } else { 0 };
    let mut out: Vec<(String, CsrMatrix)> = Vec::new();
    let pick = |small: &[usize], full: &[usize]| if big { full.to_vec() } else { small.to_vec() };
    let grids = match (big, test) {
        (false, false) => vec![12, 30],
        (false, true) => vec![20, 45],
        (true, false) => vec![16, 24, 64, 160, 300, 1100],
        (true, true) => vec![20, 40, 100, 220, 700],
    };
    for n in &grids {
        out.push((format!("laplacian_2d-{n}"), matgen::laplacian_2d(*n)));
        out.push((format!("stencil_2d_9pt-{n}"), matgen::stencil_2d_9pt(*n)));
    }
    for n in pick(&[6, 11], &[6, 8, 20, 40])
        .iter()
        .map(|n| n + usize::from(test))
    {
        out.push((format!("stencil_3d_7pt-{n}"), matgen::stencil_3d_7pt(n)));
    }
    let widths: &[usize] = if test {
        &[2, 5, 12, 30, 90]
    } else {
        &[1, 3, 8, 20, 60]
    };
    for rows in pick(&[600, 2500], &[300, 1000, 20000, 100000]) {
        for &w in widths {
            let rows = rows + s / 10;
            out.push((
                format!("banded-{rows}-hw{w}"),
                matgen::banded(rows, w, 7 + s as u64),
            ));
        }
    }
    // Skyline profiles: banded in shape, but with a diagonal-layout fill-in of about 1.5, which
    // moves the point where one thread on the diagonal layout stops beating two on rows.
    let skylines: &[usize] = if test { &[5, 15] } else { &[4, 10, 25] };
    for rows in pick(&[900], &[400, 1200, 4000, 30000]) {
        let rows = rows + s / 5;
        for &w in skylines {
            out.push((
                format!("variable_band-{rows}-hw{w}"),
                matgen::variable_band(rows, w, (rows + w) as u64),
            ));
        }
    }
    let alphas: &[f64] = if test { &[1.3, 2.0] } else { &[1.6, 2.8] };
    // 1000 rows at full scale: where one thread stops winning on irregular rows (a 2-core
    // machine's crossover sits between 400 and 2000 such rows, and real matrices of 1000-2000
    // irregular rows were mispredicted without these).
    for rows in pick(&[800, 3000], &[400, 1000, 2000, 30000]) {
        for min_len in [1usize, 4, 16] {
            for &a in alphas {
                out.push((
                    format!("power_law-{rows}-min{min_len}-a{a}"),
                    matgen::power_law(rows + s, min_len, a, (rows + min_len) as u64 + s as u64),
                ));
            }
        }
    }
    // Locally irregular matrices (finite elements, circuits, chemical processes after a
    // bandwidth-reducing ordering): their diagonals are sparsely filled, so they look neither
    // like `banded` (where one thread on the diagonal layout wins up to ~10^4 nonzeros) nor like
    // `power_law`/`random` (whose fill-ins are in the hundreds). Without them, real matrices of
    // 500-2000 rows with a fill-in of 2-100 took the banded label and lost up to 2x to a second
    // thread.
    let bands: &[(usize, usize)] = if test {
        &[(6, 4), (40, 10), (150, 5), (20, 24)]
    } else {
        &[(10, 6), (60, 6), (30, 16), (300, 8)]
    };
    for rows in pick(&[700], &[600, 1500, 5000, 20000]) {
        let rows = rows + s / 3;
        for &(w, k) in bands {
            out.push((
                format!("scattered_band-{rows}-hw{w}-k{k}"),
                matgen::scattered_band(rows, w, k, (rows * 17 + w * 5 + k) as u64),
            ));
        }
    }
    let blocks: &[(usize, usize)] = match (big, test) {
        (false, false) => &[(300, 2), (60, 8), (12, 48)],
        (false, true) => &[(200, 3), (40, 12), (8, 64)],
        (true, false) => &[
            (5000, 2),
            (1000, 8),
            (200, 32),
            (40, 128),
            (100, 4),
            (20, 24),
        ],
        (true, true) => &[
            (3000, 4),
            (600, 12),
            (100, 48),
            (30, 160),
            (150, 3),
            (12, 40),
        ],
    };
    for &(b, bs) in blocks {
        out.push((
            format!("block_diagonal-{b}x{bs}"),
            matgen::block_diagonal(b, bs, 3),
        ));
    }
    let arrows: &[(usize, usize)] = match (big, test) {
        (false, false) => &[(500, 1), (2000, 3)],
        (false, true) => &[(900, 2), (3000, 1)],
        (true, false) => &[(400, 1), (2000, 1), (20000, 2), (50000, 8)],
        (true, true) => &[(700, 2), (5000, 3), (30000, 1)],
    };
    for &(rows, dense) in arrows {
        out.push((
            format!("arrowhead-{rows}-d{dense}"),
            matgen::arrowhead(rows, dense, 5),
        ));
    }
    let per_rows: &[usize] = if test {
        &[3, 7, 10, 24, 70]
    } else {
        &[2, 5, 12, 32, 100]
    };
    for rows in pick(&[700, 2000], &[300, 1000, 3000, 10000, 50000]) {
        for &k in per_rows {
            // Keep the dense-ish random matrices small: their generation is quadratic in k.
            let rows = if k >= 64 { rows.min(5000) } else { rows } + s / 7;
            out.push((
                format!("random-{rows}-k{k}"),
                matgen::random(rows, rows, k, (rows * 131 + k) as u64 + s as u64),
            ));
        }
    }
    out
}

/// Generated reduce/scan sizes, log-spaced; the test set sits between the training sizes.
pub fn sizes(scale: Scale, set: Set) -> Vec<usize> {
    let (lo, hi, step) = match scale {
        Scale::Small => (6.0, 21.0, 0.5),
        Scale::Full => (8.0, 22.0, 0.5),
    };
    // Half steps: the training set mixes multiples of the tile (uniform nesting) and others.
    log_sizes(lo, hi, step, set)
}

/// Sizes 2^lo, 2^(lo + step), .. up to 2^hi; the test set's sit halfway between the training
/// set's, so the two are disjoint.
pub fn log_sizes(lo: f64, hi: f64, step: f64, set: Set) -> Vec<usize> {
    let offset = if set == Set::Test { step / 2.0 } else { 0.0 };
    let mut v = Vec::new();
    let mut e: f64 = lo + offset;
    while e <= hi + 1e-9 {
        v.push(2f64.powf(e).round() as usize);
        e += step;
    }
    v
}

/// The files of a directory whose extension is one of `exts`, sorted; or the path itself when
/// it is a file.
pub fn files_in(path: &Path, exts: &[&str]) -> Result<Vec<std::path::PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut f: Vec<_> = std::fs::read_dir(path)
        .map_err(|e| SurgeError::Input {
            input: path.display().to_string(),
            message: format!("cannot list the directory: {e}"),
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)))
        .collect();
    f.sort();
    Ok(f)
}

/// A list of sizes from a file (whitespace- or comma-separated, `#` comments), or from
/// `sizes.txt` in a directory. Errors name the file and line.
pub fn sizes_from_path(path: &Path) -> Result<Vec<usize>> {
    let bad = |m: String| SurgeError::Input {
        input: path.display().to_string(),
        message: m,
    };
    let file = if path.is_dir() {
        path.join("sizes.txt")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        bad(format!(
            "cannot read the sizes file {}: {e}",
            file.display()
        ))
    })?;
    let mut sizes = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            let n: usize = tok.parse().map_err(|_| {
                bad(format!(
                    "{}:{}: `{tok}` is not a size",
                    file.display(),
                    ln + 1
                ))
            })?;
            if n == 0 {
                return Err(bad(format!("{}:{}: size 0", file.display(), ln + 1)));
            }
            sizes.push(n);
        }
    }
    if sizes.is_empty() {
        return Err(tune_err(format!("no sizes in {}", file.display())));
    }
    Ok(sizes)
}
