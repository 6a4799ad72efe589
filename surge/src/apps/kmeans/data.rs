//! Points from files (CSV, `.npy`) and generated ones, and k-means++ seeding. Points are kept
//! row-major: `n` rows of `d` values.

use crate::apps::matgen::Rng;
use crate::{Result, SurgeError};
use std::path::Path;

/// `n` points of dimension `d`, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Points {
    pub d: usize,
    pub data: Vec<f64>,
}

impl Points {
    pub fn new(d: usize, data: Vec<f64>) -> Result<Points> {
        if d == 0 || !data.len().is_multiple_of(d) {
            return Err(SurgeError::Usage(format!(
                "{} values do not make points of dimension {d}",
                data.len()
            )));
        }
        Ok(Points { d, data })
    }

    pub fn len(&self) -> usize {
        self.data.len() / self.d
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn point(&self, i: usize) -> &[f64] {
        &self.data[i * self.d..(i + 1) * self.d]
    }

    /// Reads a `.npy` file (2-D, f64) or else CSV (one point per row, comma-separated numbers,
    /// `#` comments and blank lines skipped). Errors name the file and line.
    pub fn read(path: &Path) -> Result<Points> {
        let bad = |m: String| SurgeError::Input {
            input: path.display().to_string(),
            message: m,
        };
        let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
        if bytes.starts_with(b"\x93NUMPY") {
            return super::npy::read(&bytes).map_err(bad);
        }
        let text =
            String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text (CSV) nor .npy".into()))?;
        parse_csv(&text).map_err(bad)
    }
}

/// CSV rows of equal length; the message names the line.
pub fn parse_csv(text: &str) -> std::result::Result<Points, String> {
    let mut d = None;
    let mut data = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let row: Vec<f64> = line
            .split(',')
            .map(|t| {
                let t = t.trim();
                t.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("line {}: `{t}` is not a finite number", ln + 1))
            })
            .collect::<std::result::Result<_, _>>()?;
        match d {
            None => d = Some(row.len()),
            Some(d) if d != row.len() => {
                return Err(format!(
                    "line {}: {} values, the first point has {d}",
                    ln + 1,
                    row.len()
                ));
            }
            _ => {}
        }
        data.extend(row);
    }
    let d = d.ok_or("no points")?;
    Ok(Points { d, data })
}

/// `n` points of dimension `d` around `k` seeded Gaussian-like centres (sums of uniforms),
/// spread so clusters overlap a little: the dissertation's synthetic inputs (D = 32, k = 10).
pub fn blobs(n: usize, d: usize, k: usize, seed: u64) -> Points {
    blobs_spread(n, d, k, seed, 2.0)
}

/// [`blobs`] with noise `spread` times the sum of 4 uniforms (centred) per coordinate: wider
/// spreads overlap the clusters, so Lloyd takes more iterations (benchmarks use 8).
pub fn blobs_spread(n: usize, d: usize, k: usize, seed: u64, spread: f64) -> Points {
    let mut rng = Rng::new(seed);
    let centres: Vec<f64> = (0..k * d).map(|_| rng.unit() * 20.0 - 10.0).collect();
    let mut data = Vec::with_capacity(n * d);
    for _ in 0..n {
        let c = rng.below(k as u64) as usize;
        for j in 0..d {
            let noise = (0..4).map(|_| rng.unit()).sum::<f64>() - 2.0;
            data.push(centres[c * d + j] + spread * noise);
        }
    }
    Points { d, data }
}

/// k-means++ seeding (D² sampling) with a seeded generator: `k` distinct points' coordinates.
pub fn kmeans_plus_plus(p: &Points, k: usize, seed: u64) -> Result<Vec<f64>> {
    check_k(p, k)?;
    let mut rng = Rng::new(seed);
    let n = p.len();
    let mut c = p.point(rng.below(n as u64) as usize).to_vec();
    let dist = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
    let mut d2: Vec<f64> = (0..n).map(|i| dist(p.point(i), &c[..p.d])).collect();
    while c.len() < k * p.d {
        let total: f64 = d2.iter().sum();
        let pick = if total > 0.0 {
            let mut r = rng.unit() * total;
            d2.iter()
                .position(|&w| {
                    r -= w;
                    r < 0.0
                })
                .unwrap_or(n - 1)
        } else {
            rng.below(n as u64) as usize
        };
        let new = p.point(pick).to_vec();
        for (i, w) in d2.iter_mut().enumerate() {
            *w = w.min(dist(p.point(i), &new));
        }
        c.extend(new);
    }
    Ok(c)
}

/// k must be in 1..=n.
pub fn check_k(p: &Points, k: usize) -> Result<()> {
    if k == 0 || k > p.len() {
        return Err(SurgeError::Usage(format!(
            "k = {k} clusters for {} points: k must be between 1 and the number of points",
            p.len()
        )));
    }
    Ok(())
}
