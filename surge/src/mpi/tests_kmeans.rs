//! Distributed Lloyd with its ranks simulated in one process, against one rank's
//! `apps::kmeans::lloyd`: the same labels, counts and iterations, centroids to 1e-12.

use super::kmeans_local::LocalLloyd;
use super::kmeans_loop::{DistKMeans, lloyd};
use crate::Target;
use crate::apps::kmeans::{self, Points, data};

/// `points` in `ranks` contiguous blocks of points, each run by its own `LocalLloyd`.
pub(crate) fn simulated(
    points: &Points,
    init: &[f64],
    ranks: usize,
    iterations: usize,
) -> DistKMeans {
    let (n, d, k) = (points.len(), points.d, init.len() / points.d);
    let blocks: Vec<Points> = (0..ranks)
        .map(|r| {
            let (lo, hi) = (n * r / ranks, n * (r + 1) / ranks);
            Points {
                d,
                data: points.data[lo * d..hi * d].to_vec(),
            }
        })
        .collect();
    let mut parts: Vec<(LocalLloyd, &[f64])> = blocks
        .iter()
        .map(|b| (LocalLloyd::new(b, k, Some(1)).unwrap(), &b.data[..]))
        .collect();
    lloyd(&mut parts, init, d, iterations, |_| {}).unwrap()
}

/// Centroids within 1e-12 of one rank's (relative to the largest coordinate), the rest equal.
pub(crate) fn assert_matches_one_rank(points: &Points, k: usize, ranks: usize, iterations: usize) {
    let init = data::kmeans_plus_plus(points, k, 1).unwrap();
    let one = kmeans::lloyd(
        points,
        &init,
        iterations,
        &Target::cpu(),
        &Default::default(),
    )
    .unwrap();
    let many = simulated(points, &init, ranks, iterations);
    let scale = one.centroids.iter().fold(1.0f64, |m, c| m.max(c.abs()));
    let worst = one
        .centroids
        .iter()
        .zip(&many.centroids)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        worst <= 1e-12 * scale,
        "{ranks} ranks: centroids differ by {worst:e}"
    );
    assert_eq!(
        (many.iterations, many.converged),
        (one.iterations, one.converged)
    );
    assert_eq!(many.counts, one.counts);
    assert_eq!(many.labels, one.labels);
    assert!((many.inertia - one.inertia).abs() <= 1e-9 * one.inertia.max(1.0));
}

#[test]
fn simulated_ranks_match_one_rank_lloyd() {
    let points = data::blobs(3000, 4, 5, 11);
    for ranks in [1, 2, 3, 7] {
        assert_matches_one_rank(&points, 5, ranks, 100);
    }
    // Stopped by the iteration limit before converging.
    assert_matches_one_rank(&points, 5, 2, 2);
}

#[test]
fn more_ranks_than_points_leave_empty_ranks_that_work() {
    let points = data::blobs(5, 2, 2, 3);
    assert_matches_one_rank(&points, 2, 8, 100);
}

#[test]
fn a_step_on_other_points_is_an_error() {
    let points = data::blobs(40, 3, 2, 5);
    let init = data::kmeans_plus_plus(&points, 2, 1).unwrap();
    let mut local = LocalLloyd::new(&points, 2, Some(1)).unwrap();
    let err = local.step(&init, &points.data[..30]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "k-means step given 30 point values, built on 120"
    );
    // The points it was built on work, and the labels come back in their order.
    let step = local.step(&init, &points.data).unwrap();
    assert!(step.changed);
    assert_eq!(step.counts.iter().sum::<f64>(), 40.0);
    assert_eq!(local.labels().len(), 40);
}
