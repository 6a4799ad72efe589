//! `surge run comd`: CoMD's EAM molecular dynamics as CoMD users run it: the lattice, the
//! velocities, velocity-Verlet steps, and a line per printed step in CoMD's format (or one
//! JSON document with `--json`).

use super::run::RunArgs;
use super::{CliError, print_json};
use serde_json::json;
use std::io::Write;
use std::time::Instant;
use surge::apps::comd::{
    Algorithm, Engine, Exec, ForceField, MdConfig, Sample, Simulation, SurgeForce,
};

fn usage(m: impl Into<String>) -> CliError {
    CliError {
        code: 2,
        message: m.into(),
    }
}

/// Options of other apps and modes that `surge run comd` does not take.
fn refuse_foreign(args: &RunArgs) -> Result<(), CliError> {
    let foreign = [
        (args.app.input.is_some(), "--input"),
        (args.app.size.is_some(), "--size"),
        (args.all, "--all"),
        (args.interpret, "--interpret"),
        (args.k.is_some(), "--k"),
        (args.init.is_some(), "--init"),
        (args.seed.is_some(), "--seed"),
    ];
    match foreign.iter().find(|(given, _)| *given) {
        Some((_, name)) => Err(usage(format!("`surge run comd` does not take {name}"))),
        None => Ok(()),
    }
}

/// The force computation `--variant` names, algorithm first (default: the plain reference on
/// rayon): `reference/serial`, `reference/rayon`, `surge/ALGORITHM/interpreter` (the Surge
/// program evaluated by the reference interpreter: slow, for checking) or
/// `surge/ALGORITHM/VARIANT-ID` (a native variant).
fn force_field(args: &RunArgs) -> Result<Box<dyn ForceField>, CliError> {
    if args.platform != "cpu" {
        return cuda_force(args);
    }
    if args.tuned {
        return tuned_force(args);
    }
    let unknown = |v: &str| {
        usage(format!(
            "unknown comd force computation `{v}`; known: reference/serial, reference/rayon, \
             surge/direct/interpreter, surge/redistributed/interpreter, surge/ALGORITHM/VARIANT-ID"
        ))
    };
    match args.variant.as_deref() {
        None | Some("reference/rayon") => Ok(Box::new(Exec::Rayon)),
        Some("reference/serial") => Ok(Box::new(Exec::Serial)),
        Some(v) => {
            let mut parts = v.splitn(3, '/');
            let (Some("surge"), Some(a), Some(how)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(unknown(v));
            };
            let algorithm = Algorithm::ALL
                .into_iter()
                .find(|x| x.name() == a)
                .ok_or_else(|| unknown(v))?;
            let engine = match how {
                "interpreter" => Engine::Interpret,
                id => Engine::Cpu(Some(id.to_string())),
            };
            Ok(Box::new(SurgeForce::new(algorithm, engine)))
        }
    }
}

/// On `--platform cuda` (GPU 0) or `cuda-emu`: an algorithm's Surge program with its default
/// CUDA variants (`--variant surge/direct` or `surge/redistributed`, the default).
fn cuda_force(args: &RunArgs) -> Result<Box<dyn ForceField>, CliError> {
    let target = super::run_cuda::target(&args.platform)?;
    if args.tuned {
        return Err(usage(
            "`surge run comd --tuned` picks among CPU variants; on CUDA give --variant \
             surge/direct or surge/redistributed",
        ));
    }
    let v = args.variant.as_deref().unwrap_or("surge/redistributed");
    let algorithm = Algorithm::ALL
        .into_iter()
        .find(|a| v == format!("surge/{}", a.name()) || v == format!("surge/{}/default", a.name()))
        .ok_or_else(|| {
            usage(format!(
                "on --platform {} `surge run comd` runs surge/direct or surge/redistributed (their \
                 default CUDA variants), not `{v}`",
                args.platform
            ))
        })?;
    Ok(Box::new(SurgeForce::new(algorithm, Engine::Cuda(target))))
}

/// The force the model of `surge tune comd` picks for this run's configuration: the algorithm
/// and its variant, in one query (the default variant, with a warning, without a usable model).
fn tuned_force(args: &RunArgs) -> Result<Box<dyn ForceField>, CliError> {
    use surge::apps::comd::tuning;
    use surge::tune::{Tuned, algorithms::AlgorithmBackend, cpu::CpuBackend};
    let (pot, _, _) = args.comd.potential()?;
    let cfg = args.comd.config();
    let config = tuning::Config {
        cells: cfg.cells,
        lattice: cfg.lattice_for(&pot),
        delta: cfg.delta,
    };
    let input = tuning::input(&pot, config)?;
    let cpu = CpuBackend::new();
    let backend = AlgorithmBackend::new(&cpu);
    let sel = Tuned::load(&tuning::workload(), &backend).select(&input)?;
    let (algorithm, variant) = tuning::pick(&sel.variant)?;
    eprintln!(
        "tuned force: {} (from the model: {}, selection {:.1} µs)",
        sel.variant,
        sel.from_model,
        (sel.feature_seconds + sel.query_seconds) * 1e6
    );
    Ok(Box::new(SurgeForce::new(
        algorithm,
        Engine::Cpu(Some(variant)),
    )))
}

/// One printed step with the wall time per atom and step since the previous one (µs).
#[derive(Debug, serde::Serialize)]
struct Line {
    #[serde(flatten)]
    sample: Sample,
    us_per_atom: f64,
}

const HEADER: &str = "#  Loop   Time(fs)       Total Energy   Potential Energy     Kinetic Energy  \
                      Temperature   (us/atom)     # Atoms";

fn print_line(l: &Line) {
    let s = &l.sample;
    println!(
        "{:7} {:10.2} {:18.12} {:18.12} {:18.12} {:12.4} {:10.4} {:12}",
        s.step, s.time, s.total, s.potential, s.kinetic, s.temperature, l.us_per_atom, s.atoms
    );
    let _ = std::io::stdout().flush();
}

/// The run's description: what CoMD prints before its table.
fn preamble(args: &RunArgs, cfg: &MdConfig, sim: &Simulation, force: &str) -> serde_json::Value {
    let cells = surge::apps::comd::config::link_cells(sim).ok();
    let pot = &sim.pot;
    json!({
        "app": "comd",
        "potential": {
            "file": args.comd.potential.as_ref().map(|p| p.display().to_string()),
            "format": args.comd.format.clone(),
            "species": pot.name, "atomic_number": pot.atomic_number, "mass_amu": pot.mass_amu,
            "lattice_type": pot.lattice_type, "lattice_constant": pot.lattice_constant,
            "cutoff": pot.cutoff,
        },
        "config": cfg,
        "lattice_constant": cfg.lattice_for(pot),
        "atoms": sim.atoms.len(),
        "box": sim.atoms.box_len,
        "link_cells": cells.as_ref().map(|c| c.grid()),
        "link_cell_size": cells.as_ref().map(|c| c.size()),
        "force": force,
    })
}

fn print_preamble(p: &serde_json::Value) {
    let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let pot = &p["potential"];
    let cutoff = pot["cutoff"].as_f64().unwrap_or(f64::NAN);
    println!("CoMD EAM molecular dynamics (surge run comd)");
    println!(
        "  Potential     : {} ({}, species {})",
        text(&pot["file"]),
        text(&pot["format"]),
        text(&pot["species"])
    );
    println!("  Cutoff        : {cutoff:.6} Å");
    println!("  Lattice       : {} Å", p["lattice_constant"]);
    println!("  Total atoms   : {}", p["atoms"]);
    println!("  Box           : {} Å", p["box"]);
    println!(
        "  Link cells    : {} of {} Å",
        p["link_cells"], p["link_cell_size"]
    );
    println!("  Force         : {}", text(&p["force"]));
    println!();
    println!("{HEADER}");
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    refuse_foreign(args)?;
    let mut force = force_field(args)?;
    let (pot, _, format) = args.comd.potential()?;
    let cfg = args.comd.config();
    let started = Instant::now();
    let mut sim = cfg.setup(pot, force.as_mut())?;
    let mut p = preamble(args, &cfg, &sim, &force.name());
    p["potential"]["format"] = json!(format.name());
    if !args.app.json {
        print_preamble(&p);
    }
    let mut lines = Vec::new();
    let mut emit = |sample: Sample, us_per_atom: f64| {
        let line = Line {
            sample,
            us_per_atom,
        };
        if !args.app.json {
            print_line(&line);
        }
        lines.push(line);
    };
    emit(sim.sample(), 0.0);
    let stepping = Instant::now();
    let mut last = (Instant::now(), 0);
    while sim.step < cfg.steps {
        sim.step(force.as_mut())?;
        if sim.step % cfg.print_rate == 0 || sim.step == cfg.steps {
            let per = last.0.elapsed().as_secs_f64() * 1e6
                / ((sim.step - last.1) * sim.atoms.len()) as f64;
            emit(sim.sample(), per);
            last = (Instant::now(), sim.step);
        }
    }
    let seconds = stepping.elapsed().as_secs_f64();
    finish(
        args,
        p,
        &lines,
        seconds,
        started.elapsed().as_secs_f64(),
        cfg.steps,
    )
}

/// CoMD's closing lines (initial and final energy), or the JSON document.
fn finish(
    args: &RunArgs,
    mut p: serde_json::Value,
    lines: &[Line],
    seconds: f64,
    total_seconds: f64,
    steps: usize,
) -> Result<(), CliError> {
    let (first, last) = (&lines[0].sample, &lines[lines.len() - 1].sample);
    let rate = (steps * first.atoms) as f64 / seconds / 1e6;
    if args.app.json {
        p["samples"] = json!(lines);
        p["initial_energy"] = json!(first.total);
        p["final_energy"] = json!(last.total);
        p["seconds"] = json!(seconds);
        p["total_seconds"] = json!(total_seconds);
        p["million_atom_steps_per_second"] = json!(if steps > 0 { Some(rate) } else { None });
        print_json(&p);
        return Ok(());
    }
    println!();
    println!("Simulation validation:");
    println!("  Initial energy  : {:.12}", first.total);
    println!("  Final energy    : {:.12}", last.total);
    println!("  eFinal/eInitial : {:.6}", last.total / first.total);
    if steps > 0 {
        println!(
            "  {steps} steps in {seconds:.3} s: {rate:.3} million atom-steps (force calculations) per second"
        );
    }
    Ok(())
}
