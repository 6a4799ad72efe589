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
