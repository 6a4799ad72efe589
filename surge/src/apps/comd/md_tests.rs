//! The dynamics against CoMD 1.1's own runs (`comd-1.1-serial-runs.tsv`: every printed step of
//! the 864-atom runs), energy conservation, and the checks of a run's parameters.

use super::config::MdConfig;
use super::md::Sample;
use super::potential::Format;
use super::reference::Exec;
use super::tests::{data_dir, potential};
use super::velocity::{kinetic_energy, thermal_momenta};
use super::{Atoms, EamPotential};

/// One printed row of a CoMD run.
#[derive(Debug, Clone)]
struct Printed {
    run: String,
    args: String,
    values: Sample,
}

fn printed_rows() -> Vec<Printed> {
    let path = data_dir().join("comd-1.1-serial-runs.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header row").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let cols = [
        "time_fs",
        "total_eV_per_atom",
        "potential_eV_per_atom",
        "kinetic_eV_per_atom",
        "temperature_K",
    ]
    .map(col);
    let (run, args, step, atoms) = (col("run"), col("args"), col("step"), col("atoms"));
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .map(|f| {
            let v = cols.map(|c| f[c].parse::<f64>().unwrap());
            Printed {
                run: f[run].into(),
                args: f[args].into(),
                values: Sample {
                    step: f[step].parse().unwrap(),
                    time: v[0],
                    total: v[1],
                    potential: v[2],
                    kinetic: v[3],
                    temperature: v[4],
                    atoms: f[atoms].parse().unwrap(),
                },
            }
        })
        .collect()
}

/// The potential format and run parameters of a CoMD command line.
fn comd_config(args: &str) -> (Format, MdConfig) {
    let (mut format, mut cfg) = (Format::Funcfl, MdConfig::default());
    let mut words = args.split_whitespace();
    while let Some(flag) = words.next() {
        if flag == "-e" {
            continue;
        }
        let value = words
            .next()
            .unwrap_or_else(|| panic!("{flag} without a value"));
        match flag {
            "-t" => format = value.parse().unwrap(),
            "-x" => cfg.cells[0] = value.parse().unwrap(),
            "-y" => cfg.cells[1] = value.parse().unwrap(),
            "-z" => cfg.cells[2] = value.parse().unwrap(),
            "-l" => cfg.lattice = Some(value.parse().unwrap()),
            "-r" => cfg.delta = value.parse().unwrap(),
            "-T" => cfg.temperature = value.parse().unwrap(),
            "-N" => cfg.steps = value.parse().unwrap(),
            _ => panic!("unexpected CoMD argument {flag} in `{args}`"),
        }
    }
    (format, cfg)
}

fn run(pot: &EamPotential, cfg: &MdConfig, exec: Exec) -> Vec<Sample> {
    let mut samples = Vec::new();
    cfg.run(pot.clone(), &mut { exec }, |s| samples.push(*s))
        .unwrap_or_else(|e| panic!("{e}"));
    samples
}

#[test]
fn initial_velocities_have_comds_temperature_and_no_drift() {
    let pot = potential(Format::Funcfl);
    let atoms = Atoms::fcc([6, 6, 6], pot.lattice_constant).unwrap();
    let p = thermal_momenta(&atoms.ids, pot.mass(), 600.0);
    let k = kinetic_energy(&p, pot.mass()) / atoms.len() as f64;
    // CoMD prints 0.077555991600 for every run at 600 K: 1.5·k_B·T.
    assert!((k - 0.0775559916).abs() < 1e-12, "{k}");
    let total: f64 = (0..3)
        .map(|d| p.iter().map(|q| q[d]).sum::<f64>().abs())
        .sum();
    let scale: f64 = p.iter().flatten().map(|x| x.abs()).sum();
    assert!(total < 1e-13 * scale, "Σp = {total:e} of Σ|p| = {scale:e}");
    let cold = thermal_momenta(&atoms.ids, pot.mass(), 0.0);
    assert!(cold.iter().flatten().all(|&x| x == 0.0));
}

#[test]
fn every_printed_step_of_comds_864_atom_runs_is_reproduced() {
    let rows = printed_rows();
    let mut runs: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.values.atoms == 864 && r.values.step > 0)
        .map(|r| (r.run.clone(), r.args.clone()))
        .collect();
    runs.dedup();
    assert_eq!(runs.len(), 4, "{runs:?}");
    let mut worst = 0.0f64;
    for (name, args) in runs {
        let (format, cfg) = comd_config(&args);
        let samples = run(potential(format), &cfg, Exec::Rayon);
        let comd: Vec<&Printed> = rows.iter().filter(|r| r.run == name).collect();
        assert_eq!(samples.len(), comd.len(), "{name}");
        for (s, c) in samples.iter().zip(comd) {
            let c = c.values;
            assert_eq!((s.step, s.atoms), (c.step, c.atoms), "{name}");
            let diffs = [
                s.total - c.total,
                s.potential - c.potential,
                s.kinetic - c.kinetic,
            ];
            let d = diffs.map(f64::abs).into_iter().fold(0.0, f64::max);
            println!("{name:26} step {:3}: {s:?} |diff| {d:.1e}", s.step);
            // Energies are printed to 12 decimals, the temperature to 4.
            let hot = (s.temperature - c.temperature).abs() > 0.5e-4 + 1e-9;
            assert!(
                d < 1e-10 && !hot && s.time == c.time,
                "{name} step {}: {s:?} vs CoMD's {c:?}",
                s.step
            );
            worst = worst.max(d);
        }
    }
    println!("worst |difference| from CoMD's printed energies: {worst:.1e} eV/atom");
}

#[test]
fn total_energy_is_conserved_to_five_digits_over_100_steps() {
    // CoMD.c: "total energy should be conserved to 5 or more digits"; CoMD's own 864-atom runs
    // drift by at most 3.5e-6 relative over 100 steps of 1 fs.
    for format in Format::ALL {
        let cfg = MdConfig {
            cells: [6, 6, 6],
            ..MdConfig::default()
        };
        let samples = run(potential(format), &cfg, Exec::Rayon);
        let e0 = samples[0].total;
        let drift = samples
            .iter()
            .map(|s| ((s.total - e0) / e0).abs())
            .fold(0.0, f64::max);
        println!("{format}: largest relative change of the total energy {drift:.1e}");
        assert!(drift < 1e-5, "{format}: {drift:e}");
        // ... while the potential energy changes a thousand times more.
        let swing = (samples[10].potential - samples[0].potential).abs() / e0.abs();
        assert!(swing > 1e3 * drift, "{format}: {swing:e}");
    }
}

#[test]
fn serial_and_rayon_runs_are_bit_identical() {
    let cfg = MdConfig {
        cells: [5, 5, 5],
        steps: 5,
        print_rate: 1,
        ..MdConfig::default()
    };
    let pot = potential(Format::Setfl);
    assert_eq!(run(pot, &cfg, Exec::Serial), run(pot, &cfg, Exec::Rayon));
}

#[test]
fn steps_are_sampled_every_print_rate_and_at_the_end() {
    let cfg = MdConfig {
        cells: [5, 5, 5],
        steps: 7,
        print_rate: 3,
        dt: 2.0,
        ..MdConfig::default()
    };
    let samples = run(potential(Format::Funcfl), &cfg, Exec::Rayon);
    let steps: Vec<(usize, f64)> = samples.iter().map(|s| (s.step, s.time)).collect();
    assert_eq!(steps, [(0, 0.0), (3, 6.0), (6, 12.0), (7, 14.0)]);
}

fn setup_error(cfg: MdConfig) -> String {
    let pot = potential(Format::Funcfl).clone();
    match cfg.setup(pot, &mut Exec::Serial) {
        Ok(_) => panic!("{cfg:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn nonsensical_parameters_and_small_boxes_are_refused() {
    let d = MdConfig::default;
    let cases = [
        (
            MdConfig {
                temperature: -1.0,
                ..d()
            },
            "--temperature must be a number of kelvin ≥ 0, not -1",
        ),
        (
            MdConfig { dt: 0.0, ..d() },
            "--dt must be a time step > 0 fs, not 0",
        ),
        (
            MdConfig {
                dt: f64::NAN,
                ..d()
            },
            "--dt must be a time step > 0 fs, not NaN",
        ),
        (
            MdConfig { delta: -0.1, ..d() },
            "--delta must be a displacement ≥ 0 Å, not -0.1",
        ),
        (
            MdConfig {
                print_rate: 0,
                ..d()
            },
            "--print-rate must be at least 1 step",
        ),
        (
            MdConfig {
                lattice: Some(0.0),
                ..d()
            },
            "--lattice must be a length > 0 Å, not 0",
        ),
        (
            MdConfig {
                cells: [0, 6, 6],
                ..d()
            },
            "at least one unit cell per axis",
        ),
        (
            MdConfig {
                cells: [6, 4, 6],
                ..d()
            },
            "simulation too small: 6×4×6 unit cells of 3.615 Å make a box of 21.6900 × 14.4600 × \
             21.6900 Å, 4×2×4 link cells of at least the cutoff 4.9500 Å; CoMD needs \
             at least 3 per axis, so a box at least 14.8500 Å wide: use at least 5 unit cells per \
             axis",
        ),
    ];
    for (cfg, expect) in cases {
        let e = setup_error(cfg);
        assert!(e.contains(expect), "`{expect}` not in `{e}`");
    }
}

#[test]
fn a_diverging_run_is_an_error() {
    let cfg = MdConfig {
        cells: [5, 5, 5],
        dt: 1e300,
        steps: 3,
        ..MdConfig::default()
    };
    let pot = potential(Format::Funcfl).clone();
    let e = cfg
        .run(pot, &mut Exec::Serial, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("the dynamics diverged at step 1"), "{e}");
}
