//! Tuning your own computation, end to end, without a built-in application: a dot product and
//! a CSR row maximum, written with the DSEL here (outside the crate), registered as
//! [`Workload`]s, tuned on this machine's CPU on generated training inputs, scored on held-out
//! inputs disjoint from them (tuned against exhaustive search and the default variant), stored,
//! then used for run-time selection.
//!
//! ```sh
//! cargo run --release -p surge --example tune_own            # both workloads (minutes on 2 cores)
//! cargo run --release -p surge --example tune_own -- --quick  # a few small inputs (seconds)
//! cargo run --release -p surge --example tune_own -- --json   # the summaries as JSON
//! ```
//!
//! The stores go where `surge tune` puts its own (`$SURGE_DATA`, else the user data directory):
//! `dot-cpu-<machine>.json`, `csr-row-max-cpu-<machine>.json`.

use serde_json::json;
use std::time::Instant;
use surge::apps::matgen;
use surge::mtx::CsrMatrix;
use surge::prelude::*;
use surge::tune::campaign::Campaign;
use surge::tune::cpu::CpuBackend;
use surge::tune::{TuneInput, TuneOptions, Tuned, Workload};

/// The dot product `x · y` of two vectors of length `n` (deterministic values).
fn dot(n: usize) -> surge::Result<Computation> {
    let x = Seq::input("x", (0..n).map(|i| (i % 17) as f64 * 0.25).collect())?;
    let y = Seq::input("y", (0..n).map(|i| 1.0 - (i % 5) as f64 * 0.125).collect())?;
    let products = map(|(a, b): (Scalar<f64>, Scalar<f64>)| a * b, (&x, &y))?;
    Computation::new(&reduce(add, &products)?)
}

/// The largest value of each row of a CSR matrix (`f64::MIN` for an empty row).
fn row_max(m: &CsrMatrix) -> surge::Result<Computation> {
    let values = Seq::input("values", m.values.clone())?;
    let offsets = Seq::input("row_offsets", m.row_offsets.clone())?;
    let rows = nest(&values, &offsets)?;
    let y = map(|row: Seq<f64>| reduce_prefix(max, &row, f64::MIN), &rows)?;
    Computation::new(&y)
}

/// Log-spaced sizes from 2^lo to 2^hi; the test set sits between the training sizes.
fn sizes(lo: f64, hi: f64, step: f64, test: bool) -> Vec<usize> {
    let mut v = Vec::new();
    let mut e = lo + if test { step / 2.0 } else { 0.0 };
    while e <= hi + 1e-9 {
        v.push(2f64.powf(e).round() as usize);
        e += step;
    }
    v
}

fn dot_inputs(w: &Workload, quick: bool, test: bool) -> surge::Result<Vec<TuneInput>> {
    let (lo, hi, step) = if quick {
        (8.0, 16.0, 2.0)
    } else {
        (8.0, 23.0, 0.75)
    };
    sizes(lo, hi, step, test)
        .into_iter()
        .map(|n| {
            Ok(w.input(format!("n={n}"), dot(n)?)?
                .with_work(2.0 * n as f64))
        })
        .collect()
}

/// Generated matrices of several row-length distributions; the test set uses other sizes,
/// row lengths and seeds.
fn matrices(quick: bool, test: bool) -> Vec<(String, CsrMatrix)> {
    let s = u64::from(test) * 1000;
    let rows: &[usize] = match (quick, test) {
        (true, false) => &[300, 20_000],
        (true, true) => &[2_000],
        (false, false) => &[200, 1_000, 5_000, 20_000, 100_000, 400_000],
        (false, true) => &[500, 3_000, 12_000, 60_000, 250_000],
    };
    let per_row: &[usize] = if test { &[3, 12, 40] } else { &[2, 8, 24, 64] };
    let mut out = Vec::new();
    for &r in rows {
        for &k in per_row {
            // Keep the widest rows to about 4M nonzeros.
            let r = r.min(4_000_000 / k);
            out.push((
                format!("random-{r}-k{k}"),
                matgen::random(r, r, k, r as u64 * 31 + k as u64 + s),
            ));
        }
        out.push((
            format!("power_law-{r}"),
            matgen::power_law(r, 1, 1.8 + u64::from(test) as f64 * 0.3, r as u64 + s),
        ));
    }
    out
}

fn row_max_inputs(w: &Workload, quick: bool, test: bool) -> surge::Result<Vec<TuneInput>> {
    matrices(quick, test)
        .into_iter()
        .map(|(name, m)| {
            let c = row_max(&m)?;
            Ok(w.input(name, c)?.with_work(m.nnz() as f64))
        })
        .collect()
}

/// Tunes `workload` on `train`, scores it on `test`, then selects for one input as a user
/// would at run time. Returns the campaign's summary.
fn tune(
    workload: &Workload,
    train: &[TuneInput],
    test: &[TuneInput],
    quick: bool,
) -> surge::Result<serde_json::Value> {
    let backend = CpuBackend::new();
    let mut options = TuneOptions::default();
    if quick {
        options.training.repetitions = 1;
        options.training.retime_within = -1.0;
        options.training.confirm_rounds = 1;
        options.min_class_inputs = 1;
    }
    let started = Instant::now();
    let campaign = Campaign {
        workload,
        backend: &backend,
        train,
        test,
        options: &options,
        out: None,
        report: None,
        selection: test.last(),
        started,
    };
    let mut runs = 0usize;
    let done = campaign.run(&mut |_| runs += 1)?;
    // Run-time selection, as a user's program does it: open the stored model once, then pick
    // per input.
    let tuned = Tuned::open(workload, &backend)?;
    let input = &test[test.len() / 2];
    let t = Instant::now();
    let (_out, sel) = tuned.execute(input, &surge::Target::cpu())?;
    let mut summary = done.summary;
    summary["measured_runs"] = json!(runs);
    summary["example_selection"] = json!({
        "input": input.name,
        "variant": sel.variant,
        "from_model": sel.from_model,
        "select_and_run_seconds": t.elapsed().as_secs_f64(),
    });
    Ok(summary)
}

fn main() -> surge::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let as_json = args.iter().any(|a| a == "--json");
    let dot_w = Workload::new("dot").with_unit("GFLOP/s", 1e-9);
    let max_w = Workload::new("csr-row-max").with_unit("Gnnz/s", 1e-9);
    let mut all = Vec::new();
    for (w, train, test) in [
        (
            &dot_w,
            dot_inputs(&dot_w, quick, false)?,
            dot_inputs(&dot_w, quick, true)?,
        ),
        (
            &max_w,
            row_max_inputs(&max_w, quick, false)?,
            row_max_inputs(&max_w, quick, true)?,
        ),
    ] {
        eprintln!(
            "tuning `{}`: {} training inputs, {} test inputs",
            w.name(),
            train.len(),
            test.len()
        );
        let s = tune(w, &train, &test, quick)?;
        if !as_json {
            println!(
                "{}: {} classes, tuned/exhaustive {:.3}, default/exhaustive {:.3}, select beyond the features {:.2} µs, store {}",
                w.name(),
                s["model"]["class_count"],
                s["tuned_vs_exhaustive"].as_f64().unwrap_or(f64::NAN),
                s["default_vs_exhaustive"].as_f64().unwrap_or(f64::NAN),
                s["selection"]["select_beyond_features_us"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                s["store"].as_str().unwrap_or("?"),
            );
        }
        all.push(s);
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&all).expect("JSON"));
    }
    Ok(())
}
