//! CoMD EAM force benchmark: million force calculations per second (atoms whose force and
//! energy are computed, per second: CoMD's 1/(µs/atom)), for every force computation that
//! exists — the plain references (CoMD's pair loops serial; the direct form serial and on
//! rayon) and the Surge programs — on FCC copper (Adams' `Cu_u6.eam`, 3.615 Å, displaced by
//! CoMD's `-r 0.1`), 10k–1M atoms. Each result is checked against the serial direct reference
//! (largest force difference relative to the largest force, and the energy).
//!
//! `cargo run --release -p benchmarks --bin comd -- [CELLS ...] [--potential FILE] [--runs R]`
//! (CELLS: FCC unit cells per side, default 14 20 30 40: 10 976 to 256 000 atoms); prints JSON.
//! `--only TEXT` times only the force computations whose name contains TEXT (e.g. `surge`,
//! `rayon`; repeatable), for profiling one of them. `--variant ID` (repeatable) also times both
//! algorithms' Surge programs at that CPU variant (an id as `SURGE_TRACE` prints it).

use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;
use surge::apps::comd::{
    self, Atoms, EamPotential, EamResult, Exec, ForceField, Format, LinkCells,
};

/// The median of `runs` timings of `f` (after one warm-up), and its last result.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = f();
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            out = f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], out)
}

/// CoMD's pair loops (serial, Newton's third law) as a force field.
#[derive(Debug)]
struct Pairs;

impl ForceField for Pairs {
    fn name(&self) -> String {
        "reference/pairs (CoMD's serial loops)".into()
    }
    fn compute(&mut self, p: &EamPotential, a: &Atoms, c: &LinkCells) -> surge::Result<EamResult> {
        Ok(comd::reference::pairs(p, a, c))
    }
}

/// Largest |f − f_ref| over the largest |f_ref|, and |U − U_ref|/|U_ref|.
fn difference(got: &EamResult, want: &EamResult) -> (f64, f64) {
    let scale = want
        .forces
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let df = got
        .forces
        .iter()
        .flatten()
        .zip(want.forces.iter().flatten());
    let worst = df.fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    (
        worst / scale,
        ((got.energy - want.energy) / want.energy).abs(),
    )
}

struct Options {
    cells: Vec<usize>,
    potential: PathBuf,
    runs: usize,
    only: Vec<String>,
    variants: Vec<String>,
}

fn options() -> surge::Result<Options> {
    let mut o = Options {
        cells: Vec::new(),
        potential: PathBuf::from("../shared/comd/Cu_u6.eam"),
        runs: 3,
        only: Vec::new(),
        variants: Vec::new(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    let bad = |a: &str| surge::SurgeError::Usage(format!("`{a}` is not a number of unit cells"));
    while let Some(a) = it.next() {
        match a.as_str() {
            "--potential" => o.potential = it.next().map(PathBuf::from).unwrap_or_default(),
            "--runs" => o.runs = it.next().and_then(|v| v.parse().ok()).unwrap_or(3),
            "--only" => o.only.extend(it.next().cloned()),
            "--variant" => o.variants.extend(it.next().cloned()),
            n => o.cells.push(n.parse().map_err(|_| bad(n))?),
        }
    }
    if o.cells.is_empty() {
        o.cells = vec![14, 20, 30, 40];
    }
    Ok(o)
}

fn main() -> surge::Result<()> {
    let o = options()?;
    let pot = EamPotential::read(&o.potential, Format::Funcfl)?;
    let mut rows = Vec::new();
    for n in o.cells {
        let mut atoms = Atoms::fcc([n; 3], pot.lattice_constant)?;
        atoms.displace_randomly(0.1);
        let cells = LinkCells::new(&atoms, pot.cutoff)?;
        let want = comd::reference::direct(&pot, &atoms, &cells, Exec::Serial);
        let mut fields: Vec<Box<dyn ForceField>> = vec![
            Box::new(Exec::Serial),
            Box::new(Exec::Rayon),
            Box::new(Pairs),
        ];
        fields.extend(comd::surge_force_fields(&pot)?);
        for id in &o.variants {
            for a in comd::Algorithm::ALL {
                let engine = comd::Engine::Cpu(Some(id.clone()));
                fields.push(Box::new(comd::SurgeForce::new(a, engine)));
            }
        }
        fields.retain(|f| o.only.is_empty() || o.only.iter().any(|t| f.name().contains(t)));
        let mut results = Vec::new();
        for f in &mut fields {
            let (s, got) = time(o.runs, || f.compute(&pot, &atoms, &cells));
            let (df, de) = difference(&got?, &want);
            let rate = atoms.len() as f64 / s / 1e6;
            results.push(
                json!({"force": f.name(), "seconds": s, "mforces_per_s": rate,
                "max_force_rel_diff": df, "energy_rel_diff": de}),
            );
            eprintln!(
                "{:>8} atoms  {:8.3} Mforces/s  {}",
                atoms.len(),
                rate,
                f.name()
            );
        }
        rows.push(json!({"cells": n, "atoms": atoms.len(), "link_cells": cells.grid(), "results": results}));
    }
    let doc = json!({"potential": o.potential.display().to_string(),
        "threads": rayon::current_num_threads(), "results": rows});
    println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    Ok(())
}
