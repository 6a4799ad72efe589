//! Distributed Lloyd: every rank relabels its points and sums them per cluster
//! (`kmeans_local`), then one allreduce per iteration adds the sums, the counts and the number
//! of ranks whose labels changed; every rank divides and moves on with the same centroids. The
//! rules are `apps::kmeans::lloyd`'s (stop when no label changes, or after `iterations`
//! updates; an empty cluster keeps its centroid), so the centroids equal one rank's up to the
//! order of the sums' additions (1e-12 relative, checked).

use super::kmeans_local::{LocalLloyd, update};
use crate::Result;

/// What a distributed run found (the labels stay with the ranks' points).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DistKMeans {
    pub centroids: Vec<f64>,
    pub counts: Vec<u64>,
    pub inertia: f64,
    pub iterations: usize,
    pub converged: bool,
    /// The labels of `parts`' points, in order.
    #[serde(skip)]
    pub labels: Vec<u32>,
}

/// Runs Lloyd from `init` (k rows of d) over `parts` (this process's share: one part under
/// MPI, several when ranks are simulated in one process); `allreduce` adds a vector over the
/// processes (MPI's sum; the identity for one process) and is called once per iteration, and
/// once more for the inertia.
pub fn lloyd(
    parts: &mut [(LocalLloyd, &[f64])],
    init: &[f64],
    d: usize,
    iterations: usize,
    mut allreduce: impl FnMut(&mut [f64]),
) -> Result<DistKMeans> {
    let k = init.len() / d;
    let mut centroids = init.to_vec();
    let mut done = 0;
    let converged;
    let mut total;
    loop {
        total = vec![0.0; k * d + k + 1];
        for (local, points) in parts.iter_mut() {
            let step = local.step(&centroids, points)?;
            for (t, v) in total.iter_mut().zip(step.sums.iter().chain(&step.counts)) {
                *t += v;
            }
            if step.changed {
                total[k * d + k] += 1.0;
            }
        }
        allreduce(&mut total);
        if total[k * d + k] == 0.0 {
            converged = true;
            break;
        }
        if done == iterations {
            converged = false;
            break;
        }
        update(&mut centroids, &total[..k * d], &total[k * d..k * d + k], d);
        done += 1;
    }
    let labels: Vec<u32> = parts.iter().flat_map(|(local, _)| local.labels()).collect();
    let mut inertia = [0.0];
    let mut at = 0;
    for (_, points) in parts.iter() {
        for p in points.chunks(d) {
            let c = labels[at] as usize;
            inertia[0] += p
                .iter()
                .zip(&centroids[c * d..(c + 1) * d])
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>();
            at += 1;
        }
    }
    allreduce(&mut inertia);
    Ok(DistKMeans {
        counts: total[k * d..k * d + k].iter().map(|&c| c as u64).collect(),
        centroids,
        inertia: inertia[0],
        iterations: done,
        converged,
        labels,
    })
}
