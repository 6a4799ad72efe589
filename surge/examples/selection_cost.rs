//! Where a tuned SpMV's selection cost goes, per Matrix Market file: on a fresh input (its
//! matrix just copied, as `surge bench spmv --tuned` and a tuned call on a new matrix meet it),
//! the inferred feature group, the CUSP group and the model query, each in calls of the
//! variant the model picks (timed on all cores, in a `Workspace` whose layout is built), and
//! `Tuned::select` whole. Rounds interleave the selections with batches of calls, so that load
//! from other processes lands on both sides; medians of [`ROUNDS`] rounds. The calls here follow
//! a fresh input's construction, which evicts the matrix, so they are slower than the steady
//! state `surge bench spmv` confirms (its 20th percentile after 3 ms of calls: 1.5-4× less on
//! `matrices-large`): read the parts against each other, and the bench's `selection_calls`
//! for the ratio.
//!
//! `cargo run --release -p surge --example selection_cost -- STORE.json FILE.mtx..`

use std::time::Instant;
use surge::apps::spmv_app;
use surge::mtx::read_mtx;
use surge::tune::cpu::CpuBackend;
use surge::tune::features::{CuspFeatures, Plan};
use surge::tune::{TuneInput, Tuned};
use surge::{Computation, Kernels, Target, Workspace};

const ROUNDS: usize = 15;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> surge::Result<()> {
    let mut args = std::env::args().skip(1);
    let store = args
        .next()
        .expect("usage: selection_cost STORE.json FILE.mtx..");
    let backend = CpuBackend::new();
    let workload = surge::apps::App::Spmv.workload();
    let tuned = Tuned::open_from(std::path::Path::new(&store), &workload, &backend)?;
    let mut totals = Vec::new();
    for path in args {
        let m = read_mtx(std::path::Path::new(&path))?;
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
        let c = Computation::new(&spmv_app(&m, &x)?)?;
        let k = Kernels::build(&c, &Target::cpu())?;
        let fresh = || TuneInput::spmv(name.clone(), m.clone()).expect("an spmv input");
        let pick = tuned.select(&fresh())?.variant;
        let v = k.variant(&pick)?;
        let mut ws = Workspace::default();
        k.run_in(&c, v, &mut ws)?;
        // One call, as a loop of calls takes it: batches of at least 1 ms.
        let mut call = || -> surge::Result<f64> {
            let t = Instant::now();
            let mut n = 0;
            while t.elapsed().as_secs_f64() < 1e-3 {
                k.run_in(&c, v, &mut ws)?;
                n += 1;
            }
            Ok(t.elapsed().as_secs_f64() / n as f64)
        };
        call()?;
        let groups = workload.features().group_names();
        let (mut calls, mut per_group, mut query, mut select) =
            (vec![], vec![vec![]; groups.len()], vec![], vec![]);
        let plan = Plan::of(&m);
        // The CUSP pass's two halves alone: the row lengths (runs of two rows) and the layout
        // sample (one chunk of row lengths).
        let halves = [
            Plan {
                run_rows: 2,
                ..plan
            },
            Plan {
                stat_every: usize::MAX / 4096,
                ..plan
            },
        ];
        let mut half_times = [vec![], vec![]];
        let mut warm = vec![];
        for _ in 0..ROUNDS {
            let input = fresh();
            let f = workload.features().evaluate(&input)?;
            for (g, s) in per_group.iter_mut().zip(&f.group_seconds) {
                g.push(*s);
            }
            let t = Instant::now();
            std::hint::black_box(tuned.choose(&f.values));
            query.push(t.elapsed().as_secs_f64());
            calls.push(call()?);
            for (h, times) in halves.iter().zip(&mut half_times) {
                let input = fresh();
                let t = Instant::now();
                std::hint::black_box(CuspFeatures::sampled(
                    input.matrix.as_deref().expect("a matrix"),
                    *h,
                ));
                times.push(t.elapsed().as_secs_f64());
            }
            let input = fresh();
            let cusp = |input: &TuneInput| {
                let t = Instant::now();
                std::hint::black_box(CuspFeatures::of(input.matrix.as_deref().expect("a matrix")));
                t.elapsed().as_secs_f64()
            };
            cusp(&input);
            warm.push(cusp(&input));
            let input = fresh();
            let t = Instant::now();
            let s = tuned.select(&input)?;
            let whole = t.elapsed().as_secs_f64();
            select.push((whole, s.feature_seconds + s.query_seconds));
            calls.push(call()?);
        }
        let t_call = median(calls);
        let q = median(query);
        let whole = median(select.iter().map(|s| s.0).collect());
        let counted = median(select.iter().map(|s| s.1).collect());
        let half: Vec<f64> = half_times.into_iter().map(median).collect();
        let parts: Vec<String> = groups
            .iter()
            .zip(per_group)
            .map(|(g, s)| {
                let s = median(s);
                format!("{g} {:.2} us ({:.3})", s * 1e6, s / t_call)
            })
            .collect();
        println!(
            "{name}: {} nnz, {plan:?}, {}: {:.1} us/call; {} (rows {:.2} us, layout {:.2} us, warm cusp {:.2} us); query {:.2} us ({:.3}); select counted {:.2} us ({:.3}), whole {:.2} us ({:.3})",
            m.nnz(),
            pick.rsplit('/').next().unwrap_or(&pick),
            t_call * 1e6,
            parts.join(", "),
            half[0] * 1e6,
            half[1] * 1e6,
            median(warm) * 1e6,
            q * 1e6,
            q / t_call,
            counted * 1e6,
            counted / t_call,
            whole * 1e6,
            whole / t_call,
        );
        totals.push(counted / t_call);
    }
    if !totals.is_empty() {
        let max = totals.iter().copied().fold(0.0, f64::max);
        println!(
            "selection (features + query) over {} files: median {:.3} calls, max {:.3}; {} at most 0.10",
            totals.len(),
            median(totals.clone()),
            max,
            totals.iter().filter(|f| **f <= 0.10).count()
        );
    }
    Ok(())
}
