//! A rank's share of one Lloyd iteration, with the Surge programs of `surge run kmeans`: the
//! relabeling of its points, then Listing 5.5's recalculation with every count 1, so its
//! "means" are the per-cluster sums exactly (`s / 1.0 == s`). The ranks add those sums and the
//! counts (one allreduce, `dist_kmeans`) and divide, as one rank's recalculation divides.

use crate::apps::kmeans::Points;
use crate::apps::kmeans::layout::Layout;
use crate::apps::kmeans::lloyd::{Program, labels_of, recalculate_sorted};
use crate::apps::kmeans::program::{self, CENTROIDS, POINTS};
use crate::codegen::data::Buffer;
use crate::{Kernels, Result, SurgeError, Target};

/// The two programs bound to this rank's copy of its points (compiled once; rebound each
/// iteration). At the first update the copy is arranged in label order, as one process's Lloyd
/// arranges its copy (`apps::kmeans::layout`), so later gathers read neighbouring rows; the sums
/// still add each cluster's points in their original order, so they are those of the
/// unarranged copy bit for bit.
pub struct LocalLloyd {
    relabel: Option<Program>,
    recalc: Option<Program>,
    bufs: Vec<Buffer>,
    /// Where the copy's rows came from, once arranged.
    layout: Option<Layout>,
    /// The last relabeling's labels, by position in the copy.
    last: Option<Vec<u32>>,
    d: usize,
    k: usize,
}

/// A rank's share of one iteration: per cluster the sum of its points labelled with it (k rows
/// of d) and their number (k), as f64 for one allreduce, and whether any label changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub sums: Vec<f64>,
    pub counts: Vec<f64>,
    pub changed: bool,
}

impl std::fmt::Debug for LocalLloyd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalLloyd(d = {}, k = {})", self.d, self.k)
    }
}

impl LocalLloyd {
    /// This rank's `points` (possibly none) for `k` clusters; each program runs its default
    /// variant, or with `threads`, the default among those running that many threads. The
    /// relabeling is built on no points (compiling needs only its structure) and bound to one
    /// copy of them.
    pub fn new(points: &Points, k: usize, threads: Option<usize>) -> Result<LocalLloyd> {
        let d = points.d;
        let mut local = LocalLloyd {
            relabel: None,
            recalc: None,
            bufs: Vec::new(),
            layout: None,
            last: None,
            d,
            k,
        };
        if points.is_empty() {
            return Ok(local);
        }
        let first = program::relabel(Vec::new(), vec![0.0; k * d], d)?;
        let relabel = program_with(&first, threads)?;
        let c = program::recalculate(Vec::new(), vec![], vec![], vec![], d)?;
        local.recalc = Some(program_with(&c, threads)?);
        local.bufs = first.into_buffers();
        local.bufs[relabel.slot(POINTS)] = Buffer::F64(points.data.clone());
        local.relabel = Some(relabel);
        Ok(local)
    }

    /// Relabels this rank's points against `centroids` (k rows) and sums them per cluster.
    /// `points` are the points this was built on (the source of the first arrangement).
    pub fn step(&mut self, centroids: &[f64], points: &[f64]) -> Result<Step> {
        let labels = self.relabeled(centroids)?;
        let changed = self.last.as_ref() != Some(&labels);
        let (sums, counts) = self.sums(labels, points)?;
        Ok(Step {
            sums,
            counts,
            changed,
        })
    }

    /// Per cluster, the sum of the points with `labels` (by position in the copy) and their
    /// number; arranges the copy at the first call. Keeps the labels by position.
    fn sums(&mut self, labels: Vec<u32>, points: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        let (d, k) = (self.d, self.k);
        let (mut sums, mut counts) = (vec![0.0; k * d], vec![0.0; k]);
        let (Some(relabel), Some(recalc)) = (&self.relabel, &self.recalc) else {
            self.last = Some(labels);
            return Ok((sums, counts));
        };
        let px = relabel.slot(POINTS);
        let Buffer::F64(copy) = &mut self.bufs[px] else {
            unreachable!("the points' buffer holds f64")
        };
        if copy.len() != points.len() {
            return Err(SurgeError::Usage(format!(
                "k-means step given {} point values, built on {}",
                points.len(),
                copy.len()
            )));
        }
        let (sorted, labels) = match &self.layout {
            Some(l) => (l.sort_by_label(&labels, k), labels),
            None => {
                let (sorted, l, by_position) =
                    Layout::arrange_by_labels(points, copy, &labels, k, d);
                self.layout = Some(l);
                (sorted, by_position)
            }
        };
        self.last = Some(labels);
        let (keys, sizes, s) =
            recalculate_sorted(recalc, (&mut self.bufs[px], true), sorted, d, |sizes| {
                vec![1.0; sizes.len()]
            })?;
        for (j, (&key, &size)) in keys.iter().zip(&sizes).enumerate() {
            let key = key as usize;
            sums[key * d..(key + 1) * d].copy_from_slice(&s[j * d..(j + 1) * d]);
            counts[key] = size;
        }
        Ok((sums, counts))
    }

    /// The last relabeling's labels, one per point in the order of the points this was built on.
    pub fn labels(&self) -> Vec<u32> {
        match (&self.layout, &self.last) {
            (Some(l), Some(last)) => l.to_original(last),
            (None, Some(last)) => last.clone(),
            (_, None) => Vec::new(),
        }
    }

    /// The nearest of `centroids` for each point of the copy, by position.
    fn relabeled(&mut self, centroids: &[f64]) -> Result<Vec<u32>> {
        let Some(relabel) = &self.relabel else {
            return Ok(Vec::new());
        };
        self.bufs[relabel.slot(CENTROIDS)] = Buffer::F64(centroids.to_vec());
        let (out, b) = relabel.run(std::mem::take(&mut self.bufs))?;
        self.bufs = b;
        labels_of(out)
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
