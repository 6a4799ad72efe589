//! The two nested pipelines of issue 19's benchmarks: k-means assignment (per point, the argmin
//! of its distances to every centroid) and mat-mat through `transpose(split(B, p))`.

use crate::pipelines::{Case, argmin_op, data};
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::Arc;
use surge::prelude::*;

/// 2.5·10^6 points of dimension 4, 8 centroids: each point's nearest centroid.
pub fn k_means_assignment() -> Case {
    const P: usize = 2_500_000;
    const D: usize = 4;
    const K: usize = 8;
    let x = Arc::new(data(P * D, 4));
    let c = Arc::new(data(K * D, 5));
    let (x1, x2, x3) = (x.clone(), x.clone(), x);
    let (c1, c2, c3) = (c.clone(), c.clone(), c);
    let nearest = |p: &[f64], c: &[f64]| -> u32 {
        let mut best = (f64::INFINITY, 0u32);
        for (j, q) in c.chunks_exact(D).enumerate() {
            let d: f64 = p.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum();
            if d < best.0 {
                best = (d, j as u32);
            }
        }
        best.1
    };
    Case {
        name: "k_means_assignment",
        build: Box::new(move || {
            let x = Seq::input("x", x1.to_vec()).expect("input");
            let c = Seq::input("c", c1.to_vec()).expect("input");
            let centroids = split(&c, D as u64).expect("split");
            let assign = map(
                |p: Seq<f64>| {
                    let dists = map(
                        |q: Seq<f64>| {
                            reduce_prefix(add, &map(|(a, b)| (&a - &b) * (&a - &b), (&p, &q))?, 0.0)
                        },
                        &centroids,
                    )?;
                    let n = len(&dists).cast::<u32>();
                    let best = reduce(argmin_op, &zip(&dists, &range(0u32, n)?)?)?;
                    Ok(best.1)
                },
                &split(&x, D as u64).expect("split"),
            )
            .expect("map");
            Computation::new(&assign).expect("c")
        }),
        serial: Box::new(move || {
            let out: Vec<u32> = x2.chunks_exact(D).map(|p| nearest(p, &c2)).collect();
            black_box(out);
        }),
        rayon: Box::new(move || {
            let out: Vec<u32> = x3.par_chunks_exact(D).map(|p| nearest(p, &c3)).collect();
            black_box(out);
        }),
        bytes: P * D * 8,
        written: 0,
    }
}

/// C = A·B for 256×256 matrices, B's columns read through `transpose(split(B, 256))`.
pub fn mat_mat() -> Case {
    const M: usize = 256;
    let a = Arc::new(data(M * M, 6));
    let b = Arc::new(data(M * M, 7));
    let (a1, a2, a3) = (a.clone(), a.clone(), a);
    let (b1, b2, b3) = (b.clone(), b.clone(), b);
    let row = |a: &[f64], b: &[f64]| -> Vec<f64> {
        let mut out = vec![0.0; M];
        for (k, &aik) in a.iter().enumerate() {
            for (o, &bkj) in out.iter_mut().zip(&b[k * M..(k + 1) * M]) {
                *o += aik * bkj;
            }
        }
        out
    };
    Case {
        name: "mat_mat_transpose",
        build: Box::new(move || {
            let a = Seq::input("a", a1.to_vec()).expect("input");
            let b = Seq::input("b", b1.to_vec()).expect("input");
            let bcols = transpose(&split(&b, M as u64).expect("split")).expect("transpose");
            let c = map(
                |arow: Seq<f64>| {
                    map(
                        |bcol: Seq<f64>| {
                            reduce_prefix(add, &map(|(u, v)| &u * &v, (&arow, &bcol))?, 0.0)
                        },
                        &bcols,
                    )
                },
                &split(&a, M as u64).expect("split"),
            )
            .expect("map");
            Computation::new(&c).expect("c")
        }),
        serial: Box::new(move || {
            let c: Vec<Vec<f64>> = a2.chunks_exact(M).map(|r| row(r, &b2)).collect();
            black_box(c);
        }),
        rayon: Box::new(move || {
            let c: Vec<Vec<f64>> = a3.par_chunks_exact(M).map(|r| row(r, &b3)).collect();
            black_box(c);
        }),
        bytes: 2 * M * M * 8,
        written: 0,
    }
}
