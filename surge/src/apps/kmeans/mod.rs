//! k-means (Lloyd) as a Surge application, the dissertation's fourth benchmark (§5.4): the
//! relabeling (`map.reduce`: distances, then a tuple argmin) and Listing 5.5's recalculation
//! (`reduce_by_key.map`) are Surge programs ([`program`]); the host sorts the labels between
//! them ([`lloyd`]). Points come from CSV or `.npy` files or a seeded generator, initial
//! centroids from a file or k-means++ ([`data`]); plain-Rust references ([`reference`]) check
//! and benchmark it.
//!
//! Rules (Surge's and the references'): a point goes to its nearest centroid, ties to the
//! lower index; a cluster left empty keeps its centroid; iterations stop early when no label
//! changes; the labels returned are those of the final centroids.
//!
//! ```no_run
//! use surge::apps::kmeans::{self, data};
//! let points = data::blobs(10_000, 32, 10, 7);
//! let init = data::kmeans_plus_plus(&points, 10, 1)?;
//! let r = kmeans::lloyd(&points, &init, 100, &surge::Target::cpu(), &Default::default())?;
//! println!("{} iterations, inertia {}", r.iterations, r.inertia);
//! # Ok::<(), surge::SurgeError>(())
//! ```

pub mod data;
pub(crate) mod layout;
pub(crate) mod lloyd;
mod npy;
pub mod program;
pub mod reference;

pub use data::Points;
pub use lloyd::{LloydVariants, lloyd};

/// What a k-means run found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KMeansResult {
    /// k centroids, row-major.
    pub centroids: Vec<f64>,
    /// Each point's cluster.
    pub labels: Vec<u32>,
    /// Points per cluster.
    pub counts: Vec<u64>,
    /// Sum of squared distances of the points to their centroids.
    pub inertia: f64,
    /// Centroid updates made.
    pub iterations: usize,
    /// Whether it stopped because no label changed.
    pub converged: bool,
    /// The variants that ran: the relabeling's, then the recalculation's (none for the plain
    /// references; the recalculation's is missing when no update ran).
    pub variants: Vec<String>,
}

impl KMeansResult {
    fn new(
        points: &Points,
        centroids: Vec<f64>,
        labels: Vec<u32>,
        iterations: usize,
        converged: bool,
    ) -> KMeansResult {
        let d = points.d;
        let mut counts = vec![0u64; centroids.len() / d];
        let mut inertia = 0.0;
        for (i, &l) in labels.iter().enumerate() {
            counts[l as usize] += 1;
            let c = &centroids[l as usize * d..(l as usize + 1) * d];
            inertia += points
                .point(i)
                .iter()
                .zip(c)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>();
        }
        KMeansResult {
            centroids,
            labels,
            counts,
            inertia,
            iterations,
            converged,
            variants: Vec::new(),
        }
    }
}
