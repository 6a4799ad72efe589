//! The cost of the spmv tuning features per Matrix Market file, against one SpMV of plain rayon
//! CSR, on a fresh input (as a tuned call on a new matrix pays it: a `TuneInput` just built,
//! its matrix not read by anything but its construction): both feature groups together (the
//! selection's feature cost), the computation's inferred features and the CUSP group alone.
//! Rounds interleave the three fresh-input timings with SpMVs (each the least of three back to
//! back), so that load from other processes lands on both sides of each ratio; medians of
//! [`ROUNDS`] rounds. Then the sampled
//! features against the exact ones, and the median and largest selection cost over the files.
//! `cargo run --release -p benchmarks --bin feature_cost -- FILE.mtx..`

use std::time::Instant;
use surge::mtx::read_mtx;
use surge::tune::TuneInput;
use surge::tune::features::{CuspFeatures, FeatureGroup, cusp_group, surge_group};

const ROUNDS: usize = 25;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (surge, cusp) = (surge_group(), cusp_group());
    let mut totals: Vec<(String, f64)> = Vec::new();
    for path in std::env::args().skip(1) {
        let m = match read_mtx(std::path::Path::new(&path)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let x = vec![1.0; m.cols];
        let mut y = vec![0.0; m.rows];
        let mut spmv = || {
            let t = Instant::now();
            surge_cpu::baseline::rayon_ref::spmv(
                &m.row_offsets,
                &m.col_indices,
                &m.values,
                &x,
                &mut y,
            );
            t.elapsed().as_secs_f64()
        };
        for _ in 0..3 {
            spmv();
        }
        let fresh = || TuneInput::spmv(path.clone(), m.clone()).expect("an spmv input");
        let timed = |input: &TuneInput, groups: &[&FeatureGroup]| {
            let t = Instant::now();
            for g in groups {
                std::hint::black_box((g.eval)(input).expect("features"));
            }
            t.elapsed().as_secs_f64()
        };
        let (mut both, mut s_only, mut c_only, mut inferred, mut spmvs) =
            (vec![], vec![], vec![], vec![], vec![]);
        // The SpMV as a run of them takes it: the least of three back to back (the first
        // after a construction reads a matrix evicted by it and wakes rayon's threads).
        let mut warm_spmv = || (0..3).map(|_| spmv()).fold(f64::INFINITY, f64::min);
        for _ in 0..ROUNDS {
            both.push(timed(&fresh(), &[&surge, &cusp]));
            spmvs.push(warm_spmv());
            s_only.push(timed(&fresh(), &[&surge]));
            spmvs.push(warm_spmv());
            let input = fresh();
            c_only.push(timed(&input, &[&cusp]));
            spmvs.push(warm_spmv());
            // What the input's construction paid for the inferred features (once per input;
            // selection reuses them): the features alone, the analysis being cached.
            let c = &input.computation;
            let a = c.analyze().expect("an analysis");
            let t = Instant::now();
            std::hint::black_box(
                surge_codegen::analysis::features(c.ir(), &a, c.buffers()).expect("features"),
            );
            inferred.push(t.elapsed().as_secs_f64());
        }
        let t_spmv = median(spmvs);
        let (both, s_only, c_only, inferred) = (
            median(both),
            median(s_only),
            median(c_only),
            median(inferred),
        );
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        println!(
            "{name}: {} nnz, rayon spmv {:.1} us; fresh input: selection features {:.1} us = {:.3} spmv (surge {:.1} us, cusp {:.1} us); inferred features at construction {:.1} us ({:.3} spmv)",
            m.nnz(),
            t_spmv * 1e6,
            both * 1e6,
            both / t_spmv,
            s_only * 1e6,
            c_only * 1e6,
            inferred * 1e6,
            inferred / t_spmv,
        );
        let (a, e) = (CuspFeatures::of(&m), CuspFeatures::exact(&m));
        let ratio = |a: f64, e: f64| if e == 0.0 { f64::NAN } else { a / e };
        println!(
            "{name}: sampled/exact: std-dev {:.2}, ell {:.2}, dia {:.2} ({:.3} exact), bcsr 2x2 {:.2} ({:.3} exact), col spread {:.2} ({:.2e} exact)",
            ratio(a.row_length_std_dev, e.row_length_std_dev),
            ratio(a.ell_fill_in, e.ell_fill_in),
            ratio(a.dia_fill_in, e.dia_fill_in),
            e.dia_fill_in,
            ratio(a.bcsr_fill_in, e.bcsr_fill_in),
            e.bcsr_fill_in,
            ratio(a.col_spread, e.col_spread),
            e.col_spread,
        );
        totals.push((name, both / t_spmv));
    }
    if totals.is_empty() {
        return;
    }
    let fractions: Vec<f64> = totals.iter().map(|(_, f)| *f).collect();
    let (worst, max) = totals
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a file");
    println!(
        "selection features on a fresh input, over {} files: median {:.3} spmv, max {:.3} ({worst}); {} of {} at most 0.10",
        totals.len(),
        median(fractions.clone()),
        max,
        fractions.iter().filter(|f| **f <= 0.10).count(),
        totals.len()
    );
}
