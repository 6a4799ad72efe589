//! The cost of the spmv tuning features per Matrix Market file, against one SpMV of plain rayon
//! CSR: the computation's inferred features and the CUSP features, each timed alone (median of
//! 20), and the sampled DIA fill-in against the exact one. `cargo run --release -p benchmarks --bin feature_cost -- FILE.mtx..`

use surge::bench::measure;
use surge::mtx::read_mtx;
use surge::tune::TuneInput;
use surge::tune::features::{CuspFeatures, cusp_group, surge_group};

fn main() {
    for path in std::env::args().skip(1) {
        let m = match read_mtx(std::path::Path::new(&path)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let input = TuneInput::spmv(path.clone(), m.clone()).expect("an spmv input");
        let surge = surge_group();
        let cusp = cusp_group();
        let t_surge = measure(2, 20, || (surge.eval)(&input).expect("features")).median;
        let t_cusp = measure(2, 20, || (cusp.eval)(&input).expect("features")).median;
        let t_of = measure(2, 20, || CuspFeatures::of(&m)).median;
        let x = vec![1.0; m.cols];
        let mut y = vec![0.0; m.rows];
        let t_spmv = measure(2, 20, || {
            surge_cpu::baseline::rayon_ref::spmv(
                &m.row_offsets,
                &m.col_indices,
                &m.values,
                &x,
                &mut y,
            )
        })
        .median;
        // On a fresh input, as a tuned call on a new matrix pays it: the computation's
        // analysis is not cached yet (median of 20 fresh inputs, each built untimed).
        let fresh_time = |groups: &[&surge::tune::features::FeatureGroup]| -> f64 {
            let mut t: Vec<f64> = (0..20)
                .map(|_| {
                    let fresh = TuneInput::spmv(path.clone(), m.clone()).expect("an spmv input");
                    let t = std::time::Instant::now();
                    for g in groups {
                        (g.eval)(&fresh).expect("features");
                    }
                    t.elapsed().as_secs_f64()
                })
                .collect();
            t.sort_by(f64::total_cmp);
            t[10]
        };
        let (both, s_only, c_only) = (
            fresh_time(&[&surge, &cusp]),
            fresh_time(&[&surge]),
            fresh_time(&[&cusp]),
        );
        println!(
            "{path}: on a fresh input: both groups {:.1} us ({:.2} spmv), surge {:.1} us, cusp {:.1} us",
            both * 1e6,
            both / t_spmv,
            s_only * 1e6,
            c_only * 1e6
        );
        let (a, e) = (CuspFeatures::of(&m), CuspFeatures::exact(&m));
        println!(
            "{path}: dia_fill_in sampled {:.3} exact {:.3} ({:.2}x)",
            a.dia_fill_in,
            e.dia_fill_in,
            a.dia_fill_in / e.dia_fill_in
        );
        println!(
            "{path}: {} nnz; rayon spmv {:.1} us; surge features {:.1} us ({:.2} spmv), cusp {:.1} us ({:.2} spmv; pass alone {:.1} us)",
            m.nnz(),
            t_spmv * 1e6,
            t_surge * 1e6,
            t_surge / t_spmv,
            t_cusp * 1e6,
            t_cusp / t_spmv,
            t_of * 1e6
        );
    }
}
