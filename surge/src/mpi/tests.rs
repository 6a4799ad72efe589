//! The distributed SpMV with its ranks simulated in one process: the partition, the exchange
//! pattern, the wire form and the two local Surge SpMVs, checked bit for bit against the
//! one-rank product (the MPI transport itself is checked under `mpirun`, `tests/mpi/run.sh`).

use super::*;
use crate::mtx::CsrMatrix;
use crate::{Buffer, Computation, Kernels, Output, Target};
use std::path::PathBuf;

/// `x[j]`: distinct, inexact values, so a misplaced ghost or a reordered sum changes bits.
fn x_of(n: usize) -> Vec<f64> {
    (0..n)
        .map(|j| 1.0 + ((j * 7919) % 1009) as f64 / 1013.0)
        .collect()
}

/// The one-rank product: `surge run spmv`'s program and default variant on the whole matrix.
fn one_rank(a: &CsrMatrix, x: &[f64]) -> Vec<f64> {
    let c = Computation::new(&crate::apps::spmv_app(a, x).unwrap()).unwrap();
    let k = Kernels::shared(&c, &Target::cpu()).unwrap();
    match k.run(&c, k.default_variant()).unwrap() {
        Output::Seq(Buffer::F64(y)) => y,
        other => panic!("unexpected {other:?}"),
    }
}

/// Every rank's part through the wire form, the ghosts exchanged in memory, both blocks run.
fn simulated(a: &CsrMatrix, ranks: usize, x: &[f64], threads: usize) -> Vec<f64> {
    let blocks = Blocks::balanced(&a.row_offsets, a.cols, ranks);
    let parts: Vec<RankPart> = RankPart::split(a, &blocks)
        .iter()
        .map(|p| {
            let (ints, values) = wire::encode(p);
            let back = wire::decode(&ints, &values).unwrap();
            assert_eq!(&back, p);
            back
        })
        .collect();
    let mut ghosts: Vec<Vec<f64>> = parts
        .iter()
        .map(|p| vec![f64::NAN; p.ghosts.len()])
        .collect();
    for p in &parts {
        let mut bufs = vec![Vec::new(); p.send.len()];
        p.pack(&x[p.cols.clone()], &mut bufs);
        for (n, buf) in p.send.iter().zip(bufs) {
            let to = &parts[n.rank];
            let at = &to.recv.iter().find(|r| r.rank == p.rank).unwrap().at;
            ghosts[n.rank][at.clone()].copy_from_slice(&buf);
        }
    }
    let mut y = vec![f64::NAN; a.rows];
    for (p, g) in parts.iter().zip(&ghosts) {
        assert_eq!(
            g,
            &p.ghosts.iter().map(|&c| x[c as usize]).collect::<Vec<_>>()
        );
        let mut local = LocalSpmv::new(p, threads, None).unwrap();
        let y_own = &mut y[p.rows.clone()];
        local.interior(&x[p.cols.clone()], y_own).unwrap();
        local.boundary(&x[p.cols.clone()], g, y_own).unwrap();
    }
    y
}

fn assert_bits(a: &CsrMatrix, what: &str) {
    let x = x_of(a.cols);
    let expected = one_rank(a, &x);
    for ranks in [1, 2, 3, 5] {
        for threads in [1, 2] {
            let got = simulated(a, ranks, &x, threads);
            let same = got
                .iter()
                .zip(&expected)
                .all(|(g, e)| g.to_bits() == e.to_bits());
            assert!(
                same && got.len() == expected.len(),
                "{what}: {ranks} ranks differ"
            );
        }
    }
}

#[test]
fn blocks_cover_every_row_in_order_and_balance_nonzeros() {
    let a = crate::apps::matgen::laplacian_2d(20);
    for ranks in 1..=7 {
        let b = Blocks::balanced(&a.row_offsets, a.cols, ranks);
        assert_eq!((b.rows[0], b.rows[ranks]), (0, a.rows));
        assert!(b.rows.windows(2).all(|w| w[0] <= w[1]));
        let cost = |r: usize| a.row_offsets[b.rows[r + 1]] - a.row_offsets[b.rows[r]];
        let ideal = a.nnz() as f64 / ranks as f64;
        assert!((0..ranks).all(|r| (cost(r) as f64 - ideal).abs() <= 6.0 + ideal * 0.02));
    }
}

#[test]
fn fewer_rows_than_ranks_leaves_empty_parts_that_work() {
    let a = CsrMatrix::from_triplets(2, 2, &[(0, 1, 2.5), (1, 0, -1.5), (1, 1, 3.0)]).unwrap();
    let b = Blocks::balanced(&a.row_offsets, a.cols, 5);
    assert_eq!((0..5).filter(|&r| b.rows_of(r).is_empty()).count(), 3);
    assert_bits(&a, "2x2");
}

#[test]
fn exchange_pattern_is_the_ghost_columns_grouped_by_owner() {
    // A 1-D Laplacian over 3 ranks: the middle rank needs one entry from each side.
    let n = 9;
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
    let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
    let parts = RankPart::split(&a, &Blocks::balanced(&a.row_offsets, n, 3));
    let mid = &parts[1];
    assert_eq!(mid.rows, 3..6);
    assert_eq!(mid.ghosts, vec![2, 6]);
    assert_eq!(mid.neighbours(), vec![0, 2]);
    assert_eq!((mid.interior.rows, mid.boundary.rows), (1, 2));
    assert_eq!(parts[0].send[0].indices, vec![2]);
    assert_eq!(parts[2].send[0].indices, vec![0]);
    assert_eq!(mid.summary().off_diagonal_nnz, 2);
    assert_bits(&a, "1-D Laplacian");
}

#[test]
fn rectangular_matrices_and_empty_rows_match_one_rank() {
    let t = [
        (0, 6, 1.25),
        (0, 0, 0.5),
        (2, 3, -2.0),
        (2, 1, 4.0),
        (4, 5, 1.0),
        (4, 0, 3.0),
    ];
    let a = CsrMatrix::from_triplets(5, 7, &t).unwrap();
    assert_bits(&a, "5x7 with empty rows");
    let wide: Vec<_> = (0..40).map(|j| (j % 3, j, 1.0 / (j + 1) as f64)).collect();
    assert_bits(&CsrMatrix::from_triplets(3, 40, &wide).unwrap(), "3x40");
}

#[test]
fn a_wrong_length_is_an_error_naming_x() {
    let a = crate::apps::matgen::laplacian_2d(4);
    let parts = RankPart::split(&a, &Blocks::balanced(&a.row_offsets, a.cols, 2));
    let mut local = LocalSpmv::new(&parts[0], 1, None).unwrap();
    let e = local
        .interior(&[1.0; 3], &mut [0.0; 8])
        .unwrap_err()
        .to_string();
    assert!(e.contains("owns 8 entries of x"), "{e}");
    assert!(
        wire::decode(&[1, 2], &[])
            .unwrap_err()
            .contains("end early")
    );
}

/// Every shared matrix (the complex one is refused by the reader), bit for bit
/// (`SURGE_MATRICES_DIR` overrides `../shared/matrices`).
#[test]
fn every_shared_matrix_matches_one_rank_bit_for_bit() {
    let files = shared_matrix_files();
    let mut checked = 0;
    for f in &files {
        match crate::mtx::read_mtx(f) {
            Ok(a) => {
                let x = x_of(a.cols);
                let expected = one_rank(&a, &x);
                let got = simulated(&a, 3, &x, 1);
                let same = got
                    .iter()
                    .zip(&expected)
                    .all(|(g, e)| g.to_bits() == e.to_bits());
                assert!(same, "{}: 3 simulated ranks differ from one", f.display());
                checked += 1;
            }
            Err(e) => assert!(e.message.contains("complex"), "{}: {e}", f.display()),
        }
    }
    assert!(
        checked + 1 >= files.len() && checked > 20,
        "{checked} of {} checked",
        files.len()
    );
}

/// The `.mtx` files of the shared matrices, sorted (`SURGE_MATRICES_DIR` overrides
/// `../shared/matrices`, a test requirement).
pub(super) fn shared_matrix_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("SURGE_MATRICES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/matrices"));
    assert!(
        dir.is_dir(),
        "the shared matrices are required: {} not found",
        dir.display()
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
        .collect();
    files.sort();
    files
}
