//! The two Surge programs of one Lloyd iteration, as the dissertation writes them (Table 5.6:
//! k-means is `reduce_by_key.map, map.reduce`):
//!
//! * **relabeling** (`map.reduce`): per point, its squared distance to every centroid, then the
//!   argmin as a tuple reduction over `zip(distances, range(0, k))`. Ties go to the lower
//!   centroid index (the combiner keeps its left operand on `<=`, which is associative, so
//!   every schedule agrees).
//! * **recalculation** (Listing 5.5, `reduce_by_key.map`): the points gathered in label order
//!   (the host sorts the labels, as in the dissertation), summed per run of equal labels with a
//!   vector-valued combiner, each sum divided by its cluster's count.

use crate::prelude::*;

/// The input names the host rebinds each iteration (see `lloyd`).
pub const POINTS: &str = "points";
pub const CENTROIDS: &str = "centroids";
pub const ORDER: &str = "order";
pub const SORTED_LABELS: &str = "sorted_labels";
pub const COUNTS: &str = "counts";
pub const ZERO: &str = "zero";

/// `a` if its distance is at most `b`'s: the argmin combiner over (distance, index).
pub fn argmin(
    a: (Scalar<f64>, Scalar<u32>),
    b: (Scalar<f64>, Scalar<u32>),
) -> (Scalar<f64>, Scalar<u32>) {
    let take_a = a.0.le(&b.0);
    (take_a.select(&a.0, &b.0), take_a.select(&a.1, &b.1))
}

/// The nearest centroid of each of the `points` (row-major, `d` per point) among `centroids`
/// (row-major, `d` each): one `u32` label per point.
pub fn relabel(points: Vec<f64>, centroids: Vec<f64>, d: usize) -> Result<Computation> {
    let k = (centroids.len() / d.max(1)) as u32;
    let x = Seq::input(POINTS, points)?;
    let c = Seq::input(CENTROIDS, centroids)?;
    let centroids = split(&c, d as u64)?;
    let labels = map(
        |p: Seq<f64>| {
            let dists = map(
                |q: Seq<f64>| {
                    reduce_prefix(add, &map(|(a, b)| (&a - &b) * (&a - &b), (&p, &q))?, 0.0)
                },
                &centroids,
            )?;
            let best = reduce(argmin, &zip(&dists, &range(0u32, k)?)?)?;
            Ok(best.1)
        },
        &split(&x, d as u64)?,
    )?;
    Computation::new(&labels)
}

/// Listing 5.5: the mean of each non-empty cluster, in label order. `order` lists the points in
/// label order, `sorted_labels` their labels (sorted), `counts` the size of each run of equal
/// labels (as f64).
pub fn recalculate(
    points: Vec<f64>,
    order: Vec<u32>,
    sorted_labels: Vec<u32>,
    counts: Vec<f64>,
    d: usize,
) -> Result<Computation> {
    let x = Seq::input(POINTS, points)?;
    let order = Seq::input(ORDER, order)?;
    let keys = Seq::input(SORTED_LABELS, sorted_labels)?;
    let counts = Seq::input(COUNTS, counts)?;
    let zero = Seq::input(ZERO, vec![0.0f64; d])?;
    let gathered = gather(&split(&x, d as u64)?, &order)?;
    let sums = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        &gathered,
        &keys,
        &zero,
    )?;
    let means = map(
        |(sum, count): (Seq<f64>, Scalar<f64>)| map(|s: Scalar<f64>| s / &count, &sum),
        (&sums, &counts),
    )?;
    Computation::new(&means)
}
