//! The plan's numbers on a matrix whose partition is checked by hand, and its invariants on
//! every shared matrix.

use super::*;

/// The 6 × 6 tridiagonal matrix (1-D Laplacian): 16 nonzeros.
fn tridiagonal(n: usize) -> CsrMatrix {
    let mut t = Vec::new();
    for i in 0..n {
        t.push((i, i, 2.0));
        if i > 0 {
            t.push((i, i - 1, -1.0));
        }
        if i + 1 < n {
            t.push((i, i + 1, -1.0));
        }
    }
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

/// Unit costs, 10 s per message, 1 s per ghost entry (8 bytes/s).
const UNIT: Model = Model {
    seconds_per_nonzero: 1.0,
    seconds_per_row: 1.0,
    latency_seconds: 10.0,
    bandwidth_bytes_per_second: 8.0,
};

#[test]
fn tridiagonal_over_three_ranks_by_hand() {
    // cost(i) = nonzeros before row i + i = 0 3 7 11 15 19 22; the bounds nearest 22/3 and
    // 44/3 are rows 2 (cost 7) and 4 (cost 15): rows 0-1, 2-3, 4-5.
    let a = tridiagonal(6);
    let r = rank_plans(&a, 3, &UNIT);
    let got = |f: fn(&RankPlan) -> usize| r.iter().map(f).collect::<Vec<_>>();
    assert_eq!(got(|r| r.rows), [2, 2, 2]);
    assert_eq!(got(|r| r.nnz), [5, 6, 5]);
    // Rank 0 needs x2; rank 1 x1 and x4; rank 2 x3.
    assert_eq!(got(|r| r.ghosts_received), [1, 2, 1]);
    // Rank 0 sends x1 to rank 1; rank 1 x2 to 0 and x3 to 2; rank 2 x4 to 1.
    assert_eq!(got(|r| r.ghosts_sent), [1, 2, 1]);
    assert_eq!(got(|r| r.neighbours), [1, 2, 1]);
    assert_eq!(got(|r| r.interior_rows), [1, 0, 1]);
    assert_eq!(got(|r| r.boundary_rows), [1, 2, 1]);
    assert_eq!(got(|r| r.boundary_nnz), [3, 6, 3]);
    // Rank 0: max(2 + 1, 10 + 1) + 3 + 1 = 15; rank 1: max(0, 20 + 2) + 6 + 2 = 30.
    assert_eq!(
        r.iter().map(|r| r.seconds).collect::<Vec<_>>(),
        [15.0, 30.0, 15.0]
    );

    let p = plan(&a, 3, &UNIT, 22.0);
    assert_eq!(p.predicted_seconds, 30.0);
    assert_eq!(p.worst_rank.rank, 1);
    assert_eq!(p.imbalance, 6.0 / (16.0 / 3.0));
    assert_eq!(p.efficiency, 22.0 / 90.0);
    assert_eq!((p.nnz.min, p.nnz.max, p.nnz.max_rank), (5.0, 6.0, 1));
    assert_eq!(p.empty_ranks, 0);
}

#[test]
fn more_ranks_than_rows_leaves_empty_ranks() {
    let a = tridiagonal(6);
    let p = plan(&a, 8, &UNIT, 22.0);
    assert_eq!(p.empty_ranks, 2);
    assert_eq!(p.rows.min, 0.0);
    let r = rank_plans(&a, 8, &UNIT);
    assert_eq!(r.iter().map(|r| r.rows).sum::<usize>(), 6);
    assert!(r.iter().filter(|r| r.rows == 0).all(|r| r.seconds == 0.0));
}

#[test]
fn one_rank_has_no_exchange() {
    let a = tridiagonal(6);
    let p = plan(&a, 1, &UNIT, 22.0);
    assert_eq!(p.worst_rank.neighbours, 0);
    assert_eq!(p.predicted_seconds, 22.0);
    assert_eq!(p.efficiency, 1.0);
}

/// Every shared matrix but the complex one, at rank counts up to beyond its rows.
#[test]
fn invariants_on_every_shared_matrix() {
    let files = crate::mpi::tests::shared_matrix_files();
    let mut checked = 0;
    for f in files {
        let Ok(a) = crate::mtx::read_mtx(&f) else {
            continue;
        };
        let unit = (a.nnz() + a.rows) as f64;
        let model = Model {
            seconds_per_nonzero: 1.0 / unit,
            seconds_per_row: 1.0 / unit,
            latency_seconds: 1e-6,
            bandwidth_bytes_per_second: 1e9,
        };
        for ranks in [1, 2, 7, 64, a.rows + 3] {
            let r = rank_plans(&a, ranks, &model);
            let name = format!("{} over {ranks}", f.display());
            assert_eq!(r.iter().map(|r| r.nnz).sum::<usize>(), a.nnz(), "{name}");
            assert_eq!(r.iter().map(|r| r.rows).sum::<usize>(), a.rows, "{name}");
            let sent: usize = r.iter().map(|r| r.ghosts_sent).sum();
            assert_eq!(
                sent,
                r.iter().map(|r| r.ghosts_received).sum::<usize>(),
                "{name}"
            );
            let p = plan(&a, ranks, &model, 1.0);
            assert!(
                p.efficiency <= 1.0 + 1e-12,
                "{name}: efficiency {}",
                p.efficiency
            );
            assert!(p.imbalance >= 1.0 - 1e-12, "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} shared matrices read");
}
