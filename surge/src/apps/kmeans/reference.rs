//! Plain-Rust Lloyd, serial and with rayon: the same rules as Surge's (ties to the lower
//! centroid index, an empty cluster keeps its centroid, stop when no label changes, labels of
//! the final centroids), written the obvious way. The references Surge is checked and
//! benchmarked against.

use super::KMeansResult;
use super::data::Points;
use rayon::prelude::*;

fn nearest(p: &[f64], centroids: &[f64], d: usize) -> u32 {
    let mut best = (f64::INFINITY, 0u32);
    for (j, q) in centroids.chunks_exact(d).enumerate() {
        let dist: f64 = p.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum();
        if dist < best.0 {
            best = (dist, j as u32);
        }
    }
    best.1
}

/// The centroids of `labels` (sums in point order); an empty cluster keeps its old centroid.
fn means(points: &Points, labels: &[u32], old: &[f64]) -> Vec<f64> {
    let d = points.d;
    let k = old.len() / d;
    let mut sums = vec![0.0; k * d];
    let mut counts = vec![0usize; k];
    for (i, &l) in labels.iter().enumerate() {
        let l = l as usize;
        counts[l] += 1;
        for (s, v) in sums[l * d..(l + 1) * d].iter_mut().zip(points.point(i)) {
            *s += v;
        }
    }
    let mut out = old.to_vec();
    for j in (0..k).filter(|&j| counts[j] > 0) {
        for t in 0..d {
            out[j * d + t] = sums[j * d + t] / counts[j] as f64;
        }
    }
    out
}

fn run(
    points: &Points,
    init: &[f64],
    iterations: usize,
    relabel: impl Fn(&[f64]) -> Vec<u32>,
) -> KMeansResult {
    let mut centroids = init.to_vec();
    let mut previous: Option<Vec<u32>> = None;
    let mut done = 0;
    loop {
        let labels = relabel(&centroids);
        if previous.as_ref() == Some(&labels) {
            return KMeansResult::new(points, centroids, labels, done, true);
        }
        if done == iterations {
            return KMeansResult::new(points, centroids, labels, done, false);
        }
        centroids = means(points, &labels, &centroids);
        previous = Some(labels);
        done += 1;
    }
}

/// Serial Lloyd.
pub fn lloyd_serial(points: &Points, init: &[f64], iterations: usize) -> KMeansResult {
    let d = points.d;
    run(points, init, iterations, |c| {
        points
            .data
            .chunks_exact(d)
            .map(|p| nearest(p, c, d))
            .collect()
    })
}

/// Lloyd with the relabeling in parallel (rayon), the update serial (O(n·d), k·d outputs).
pub fn lloyd_rayon(points: &Points, init: &[f64], iterations: usize) -> KMeansResult {
    let d = points.d;
    run(points, init, iterations, |c| {
        points
            .data
            .par_chunks_exact(d)
            .map(|p| nearest(p, c, d))
            .collect()
    })
}
