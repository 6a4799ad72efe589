//! `Kernels::run_buffers_in`: repeated SpMVs on one workspace whose `x` changes between runs (an
//! iterative solver's, a distributed rank's) keep the layouts built from the matrix and still
//! read the new `x`: every layout gives, run after run, what a fresh unkeyed run gives, bit for
//! bit.

use surge::apps::{matgen, spmv_app};
use surge::codegen::params::CpuParams;
use surge::{Buffer, Computation, Kernels, Output, Target, Workspace};

/// `x` of run `r`: other values on every run.
fn x_of(n: usize, r: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + r * 13) % 23) as f64 * 0.25 - 2.0 + r as f64)
        .collect()
}

fn seq(out: &Output) -> Vec<f64> {
    match out {
        Output::Seq(Buffer::F64(y)) => y.clone(),
        other => panic!("an SpMV returns a flat f64 sequence, not {other:?}"),
    }
}

/// One variant of each layout (the first one-thread variant that has it).
fn one_per_layout(k: &Kernels) -> Vec<surge::codegen::variant::Variant> {
    let layout = |v: &surge::codegen::variant::Variant| {
        let p = CpuParams::of(v).ok()?;
        (p.threads == 1).then(|| {
            if p.diagonals {
                "diagonals"
            } else if p.sell.is_some() {
                "sell"
            } else if p.bcsr.is_some() {
                "bcsr"
            } else if p.lanes {
                "lanes"
            } else {
                "rows"
            }
        })
    };
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for v in k.variants() {
        if let Some(l) = layout(v)
            && !seen.contains(&l)
        {
            seen.push(l);
            out.push(v.clone());
        }
    }
    assert_eq!(seen.len(), 5, "layouts found: {seen:?}");
    out
}

#[test]
fn kept_layouts_read_each_runs_x() {
    let m = matgen::laplacian_2d(24);
    let c = Computation::new(&spmv_app(&m, &x_of(m.cols, 0)).unwrap()).unwrap();
    let k = Kernels::shared(&c, &Target::cpu()).unwrap();
    let x_at = c
        .ir()
        .inputs
        .iter()
        .position(|d| d.name == "x")
        .expect("spmv_app declares x");
    for v in one_per_layout(&k) {
        let mut ws = Workspace::default();
        let mut buffers = c.buffers().to_vec();
        for r in 0..3 {
            buffers[x_at] = Buffer::F64(x_of(m.cols, r));
            let fresh = seq(&k.run_buffers(&c, &v, &buffers).unwrap());
            k.run_buffers_in(&c, &v, &buffers, &mut ws).unwrap();
            let kept = ws.output_f64().expect("a flat f64 result");
            assert!(
                kept.len() == fresh.len()
                    && kept
                        .iter()
                        .zip(&fresh)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{v}: run {r} on a kept layout differs from a fresh run"
            );
            assert_eq!(
                seq(&ws.output().unwrap()),
                fresh,
                "{v}: output() of run {r}"
            );
        }
        if CpuParams::of(&v).unwrap().diagonals {
            assert!(
                ws.diagonal_layout(0).is_some(),
                "{v}: the layout was not kept"
            );
        }
    }
}

/// Row sums in the lanes kernel's order: element `k` of a row into partial sum `k mod 4`, the
/// row `(s0 + s2) + (s1 + s3)`.
fn lanes_reference(m: &surge::mtx::CsrMatrix, x: &[f64]) -> Vec<f64> {
    (0..m.rows)
        .map(|i| {
            let mut s = [0.0f64; 4];
            let (a, e) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
            for (j, k) in (a..e).enumerate() {
                s[j % 4] += m.values[k] * x[m.col_indices[k] as usize];
            }
            (s[0] + s[2]) + (s[1] + s[3])
        })
        .collect()
}

/// The lanes layout's forms (indices as `u16` where `x` has at most 65,536 elements; no values
/// read where every element has one value, infinite included) give the same bits as its plain
/// form's order, row lengths 0 to 9 covering every masked tail.
#[test]
fn narrow_and_one_valued_lanes_give_the_plain_lanes_bits() {
    let cases: [(usize, Option<f64>, bool, bool); 5] = [
        (500, None, true, false),
        (500, Some(1.0), true, true),
        (70_000, Some(0.5), false, true),
        (70_000, None, false, false),
        (300, Some(f64::INFINITY), true, true),
    ];
    for (cols, one, narrow, iso) in cases {
        let mut m = matgen::random(200, cols, 9, cols as u64);
        // Rows of 0..=9 elements: every tail length after the four-wide steps.
        let mut kept = surge::mtx::CsrMatrix {
            rows: m.rows,
            cols: m.cols,
            row_offsets: vec![0],
            col_indices: Vec::new(),
            values: Vec::new(),
        };
        for i in 0..m.rows {
            let (a, e) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
            let take = (i % 10).min(e - a);
            kept.col_indices
                .extend_from_slice(&m.col_indices[a..a + take]);
            kept.values.extend_from_slice(&m.values[a..a + take]);
            kept.row_offsets.push(kept.col_indices.len() as u64);
        }
        m = kept;
        if let Some(v) = one {
            m.values.iter_mut().for_each(|e| *e = v);
        }
        let x: Vec<f64> = (0..m.cols).map(|i| 1.0 + (i % 17) as f64 * 0.125).collect();
        let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
        let k = Kernels::shared(&c, &Target::cpu()).unwrap();
        let v = one_per_layout(&k)
            .into_iter()
            .find(|v| CpuParams::of(v).unwrap().lanes)
            .unwrap();
        let mut ws = Workspace::default();
        k.run_in(&c, &v, &mut ws).unwrap();
        let l = ws
            .lanes_layout(0)
            .expect("the lanes layout was built and kept");
        assert_eq!(
            (!l.narrow.is_empty(), l.iso.is_some()),
            (narrow, iso),
            "{cols} columns, value {one:?}: the layout's form"
        );
        let want = lanes_reference(&m, &x);
        let got = ws.output_f64().unwrap();
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits())
                && got.len() == want.len(),
            "{cols} columns, value {one:?}: {:?} against {:?}",
            &got[..10],
            &want[..10]
        );
    }
}
