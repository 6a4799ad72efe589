//! A rank's share of one Lloyd iteration, with the Surge programs of `surge run kmeans`: the
//! relabeling of its points, then Listing 5.5's recalculation with every count 1, so its
//! "means" are the per-cluster sums exactly (`s / 1.0 == s`). The ranks add those sums and the
//! counts (one allreduce, `dist_kmeans`) and divide, as one rank's recalculation divides.

use crate::apps::kmeans::Points;
use crate::apps::kmeans::lloyd::{Program, labels_of, recalculate};
use crate::apps::kmeans::program::{self, CENTROIDS, POINTS};
use crate::codegen::data::Buffer;
use crate::{Kernels, Result, Target};

/// The two programs bound to this rank's points (compiled once; rebound each iteration).
pub struct LocalLloyd {
    relabel: Option<Program>,
    recalc: Option<Program>,
    bufs: Vec<Buffer>,
    d: usize,
    k: usize,
}

impl std::fmt::Debug for LocalLloyd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalLloyd(d = {}, k = {})", self.d, self.k)
    }
}

impl LocalLloyd {
    /// This rank's `points` (possibly none) for `k` clusters; each program runs its default
    /// variant, or with `threads`, the default among those running that many threads.
    pub fn new(points: &Points, k: usize, threads: Option<usize>) -> Result<LocalLloyd> {
        let d = points.d;
        if points.is_empty() {
            return Ok(LocalLloyd {
                relabel: None,
                recalc: None,
                bufs: Vec::new(),
                d,
                k,
            });
        }
        let first = program::relabel(points.data.clone(), vec![0.0; k * d], d)?;
        let relabel = program_with(&first, threads)?;
        let c = program::recalculate(Vec::new(), vec![], vec![], vec![], d)?;
        let recalc = program_with(&c, threads)?;
        Ok(LocalLloyd {
            relabel: Some(relabel),
            recalc: Some(recalc),
            bufs: first.into_buffers(),
            d,
            k,
        })
    }

    /// The nearest of `centroids` (k rows) for each of this rank's points.
    pub fn labels(&mut self, centroids: &[f64]) -> Result<Vec<u32>> {
        let Some(relabel) = &self.relabel else {
            return Ok(Vec::new());
        };
        self.bufs[relabel.slot(CENTROIDS)] = Buffer::F64(centroids.to_vec());
        let (out, b) = relabel.run(std::mem::take(&mut self.bufs))?;
        self.bufs = b;
        labels_of(out)
    }

    /// Per cluster, the sum of this rank's points labelled with it (k rows of d) and their
    /// number (k), as f64 for one allreduce.
    pub fn sums(&mut self, labels: &[u32]) -> Result<(Vec<f64>, Vec<f64>)> {
        let (d, k) = (self.d, self.k);
        let (mut sums, mut counts) = (vec![0.0; k * d], vec![0.0; k]);
        let (Some(relabel), Some(recalc)) = (&self.relabel, &self.recalc) else {
            return Ok((sums, counts));
        };
        let px = relabel.slot(POINTS);
        let (keys, sizes, s) = recalculate(recalc, &mut self.bufs[px], labels, k, d, |sizes| {
            vec![1.0; sizes.len()]
        })?;
        for (j, (&key, &size)) in keys.iter().zip(&sizes).enumerate() {
            let key = key as usize;
            sums[key * d..(key + 1) * d].copy_from_slice(&s[j * d..(j + 1) * d]);
            counts[key] = size;
        }
        Ok((sums, counts))
    }
}

/// `c`'s compiled program running the default variant at `threads` threads (or the default).
fn program_with(c: &crate::Computation, threads: Option<usize>) -> Result<Program> {
    let target = Target::cpu();
    let id = match threads {
        Some(t) => {
            Some(super::local_spmv::variant_with_threads(&*Kernels::shared(c, &target)?, t).id())
        }
        None => None,
    };
    Program::new(c, &target, id.as_deref())
}

/// The new centroids from the summed `sums` and `counts` of every rank: each non-empty
/// cluster's mean (the sum divided by the count, as the one-rank recalculation divides), an
/// empty one keeps its centroid.
pub fn update(centroids: &mut [f64], sums: &[f64], counts: &[f64], d: usize) {
    for (j, &n) in counts.iter().enumerate() {
        if n > 0.0 {
            for (c, s) in centroids[j * d..(j + 1) * d]
                .iter_mut()
                .zip(&sums[j * d..(j + 1) * d])
            {
                *c = s / n;
            }
        }
    }
}
