//! Checks against CoMD 1.1's own output (`../shared/comd/`, see its README) and the physics.

// Literals are copied digit for digit from the potential files and CoMD's output.
#![allow(clippy::excessive_precision)]

use super::potential::{EamPotential, Format};
use super::random::{DISPLACEMENT_CALL_SITE, lcg61, seed_for};
use super::reference::{self, EamResult, Exec};
use super::{Atoms, LinkCells, Table};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The CoMD reference data: `$SURGE_COMD_DATA`, else the first `shared/comd` found beside
/// the workspace or one of its parent folders (a git worktree may sit deeper than the main
/// checkout); a missing folder fails the test, naming where it was looked for.
pub(super) fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SURGE_COMD_DATA") {
        return PathBuf::from(dir);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let found = manifest
        .ancestors()
        .map(|a| a.join("shared/comd"))
        .find(|d| d.is_dir());
    found.unwrap_or_else(|| {
        panic!(
            "the CoMD reference data folder shared/comd is in no parent of {} \
             (set SURGE_COMD_DATA; see surge/src/apps/comd/README.md)",
            manifest.display()
        )
    })
}

/// CoMD's default potential for a format, read once.
pub(super) fn potential(format: Format) -> &'static EamPotential {
    static POTS: [OnceLock<EamPotential>; 2] = [OnceLock::new(), OnceLock::new()];
    POTS[format as usize].get_or_init(|| {
        let path = data_dir().join(format.default_file());
        EamPotential::read(&path, format).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// A 6×6×6-cell (864-atom) lattice at the potential's lattice constant, displaced as CoMD's
/// `-r delta` does.
fn lattice(format: Format, delta: f64) -> Atoms {
    let mut atoms = Atoms::fcc([6, 6, 6], potential(format).lattice_constant).unwrap();
    if delta > 0.0 {
        atoms.displace_randomly(delta);
    }
    atoms
}

fn eam(format: Format, atoms: &Atoms, exec: Exec) -> EamResult {
    reference::compute(potential(format), atoms, exec).unwrap()
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

// ---------------------------------------------------------------- potential files

#[test]
fn funcfl_reads_cu_u6_as_comd_does() {
    let p = potential(Format::Funcfl);
    assert_eq!((p.name.as_str(), p.atomic_number), ("Cu", 29));
    assert_eq!((p.mass_amu, p.lattice_constant), (63.55, 3.615));
    assert_eq!(p.lattice_type, "FCC");
    assert_eq!(p.cutoff, 4.9499999999999886);
    assert_eq!(
        (p.embedding.len(), p.embedding.dx()),
        (500, 5.0100200400801306e-04)
    );
    assert_eq!((p.density.len(), p.pair.len()), (500, 500));
    assert_eq!(p.embedding.values()[1], -3.1589719908208558e-01);
    assert_eq!(p.density.dx(), 1.0 / (1.0 / 1.0000000000000009e-02));
    // Z(dr), the second value of the Z(r) table (line 104 of the file).
    let z1 = 1.0801250630455797e+01;
    let phi = p.pair.values();
    assert_eq!(
        phi[1],
        z1 * (z1 / 1.0000000000000009e-02) * (27.21138505 * 0.52917721092)
    );
    assert_eq!(phi[0], phi[1] + (phi[1] - phi[2]), "φ₀ is extrapolated");
    assert!((p.mass() / 63.55 - 103.6426919).abs() < 1e-6);
}

#[test]
fn setfl_reads_cu01_as_comd_does() {
    let p = potential(Format::Setfl);
    assert_eq!((p.name.as_str(), p.atomic_number), ("Cu", 29));
    assert_eq!((p.mass_amu, p.lattice_constant), (63.546, 3.615));
    assert_eq!((p.lattice_type.as_str(), p.cutoff), ("fcc", 5.506786));
    assert_eq!((p.embedding.len(), p.embedding.dx()), (10000, 1.2e-3));
    assert_eq!(p.embedding.values()[0], -0.2009087334761683e-06);
    assert_eq!(p.embedding.values()[1], -0.1275420370511642e-01);
    let phi = p.pair.values();
    assert_eq!(phi[9999], 0.3506003599488745e-11 / (9999.0 * 0.5506786e-3));
}

#[test]
fn funcfl_and_setfl_of_a_small_file() {
    let p = EamPotential::parse(FUNCFL, Format::Funcfl, "t.eam").unwrap();
    assert_eq!((p.name.as_str(), p.cutoff), ("Xx", 1.5));
    assert_eq!(p.embedding.values(), [0.0, -1.0, -1.5]);
    assert_eq!(p.density.values(), [0.3, 0.2, 0.1]);
    let c = 27.21138505 * 0.52917721092;
    let (phi1, phi2) = (2.0 * (2.0 / 1.0) * c, 3.0 * (3.0 / 2.0) * c);
    assert_eq!(p.pair.values(), [phi1 + (phi1 - phi2), phi1, phi2]);
    let p = EamPotential::parse(SETFL, Format::Setfl, "t.eam.alloy").unwrap();
    assert_eq!((p.name.as_str(), p.lattice_type.as_str()), ("Xx", "fcc"));
    assert_eq!(p.density.values(), [0.3, 0.2, 0.1]);
    assert_eq!(p.pair.values(), [4.0 + (4.0 - 2.25), 4.0, 4.5 / 2.0]);
}

/// A 3-point funcfl file: comment, species, grid (line 3), F (4), Z (5), ρ (6).
const FUNCFL: &str =
    "Xx test\n 29 63.55 3.615 FCC\n 3 0.5 3 1.0 1.5\n 0. -1. -1.5\n 1. 2. 3.\n 0.3 0.2 0.1\n";
/// A 3-point setfl file: comments (1-3), elements (4), grid (5), species (6), F (7), ρ (8),
/// r·φ (9).
const SETFL: &str = "c1\nc2\nc3\n 1 Xx\n 3 0.5 3 1.0 1.5\n 29 63.546 3.615 fcc\n 0. -1. -1.5\n 0.3 0.2 0.1\n 1. 4. 4.5\n";

/// `text` with its 1-based line `line` replaced (or removed, for `None`).
fn edit(text: &str, line: usize, new: Option<&str>) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    match new {
        Some(s) => lines[line - 1] = s,
        None => drop(lines.remove(line - 1)),
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn parse_error(text: &str, format: Format) -> String {
    let source = format
        .default_file()
        .replace("Cu_u6", "t")
        .replace("Cu01", "t");
    match EamPotential::parse(text, format, &source) {
        Ok(_) => panic!("a malformed {format} file was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_funcfl_files_are_refused_naming_the_line() {
    let f = Format::Funcfl;
    let cases = [
        (
            String::new(),
            "line 1: missing (`the comment`): the file has 0 lines",
        ),
        (
            FUNCFL.lines().take(2).map(|l| format!("{l}\n")).collect(),
            "line 3: missing (`nrho drho nr dr rcutoff`): the file has 2 lines",
        ),
        (
            edit(FUNCFL, 2, Some(" 29 63.55 3.615")),
            "line 2: expected `atomic-number mass lattice-constant lattice-type`, found `29 63.55 3.615`",
        ),
        (
            edit(FUNCFL, 2, Some("Cu 63.55 3.615 FCC")),
            "line 2: `Cu` is not a whole number (the atomic number)",
        ),
        (
            edit(FUNCFL, 3, Some(" 3 0.5 3 1.0")),
            "line 3: expected `nrho drho nr dr rcutoff`, found `3 0.5 3 1.0`",
        ),
        (
            edit(FUNCFL, 3, Some(" 3 0.5 2 1.0 1.5")),
            "line 3: nr = `2`: expected a whole number of at least 3",
        ),
        (
            edit(FUNCFL, 3, Some(" 3 0.5 3 -1 1.5")),
            "line 3: dr = `-1`: expected a number > 0",
        ),
        (
            edit(FUNCFL, 4, Some(" 0. -1. inf")),
            "line 4: `inf` is not a finite number (value 3 of 3 of the F(rhobar) table)",
        ),
        (
            edit(FUNCFL, 5, Some(" 1. two 3.")),
            "line 5: `two` is not a finite number (value 2 of 3 of the Z(r) table)",
        ),
        (
            edit(FUNCFL, 6, Some(" 0.3 0.2")),
            "line 6: the file ends inside the rho(r) table: 2 of its 3 values",
        ),
        (
            format!("{FUNCFL} 9\n"),
            "line 7: `9` follows the last table; the header on line 3 says nrho = 3, nr = 3",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(parse_error(&text, f), format!("input `t.eam`: {message}"));
    }
}

#[test]
fn malformed_setfl_files_are_refused_naming_the_line() {
    let f = Format::Setfl;
    let cases = [
        (
            edit(SETFL, 4, Some(" 2 Cu Ag")),
            "line 4: 2 elements: CoMD 1.1 reads single-element setfl files only, not alloys",
        ),
        (
            edit(SETFL, 4, Some(" Cu")),
            "line 4: `Cu` is not a whole number (the number of elements)",
        ),
        (
            edit(SETFL, 6, Some(" 29 heavy 3.615 fcc")),
            "line 6: the mass = `heavy`: expected a number > 0",
        ),
        (
            edit(SETFL, 9, None),
            "line 8: the file ends inside the r*phi(r) table: 0 of its 3 values",
        ),
        (
            edit(SETFL, 7, Some(" 0. -1. -1.5 7")),
            "line 9: `4.5` follows the last table; the header on line 5 says nrho = 3, nr = 3",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(
            parse_error(&text, f),
            format!("input `t.eam.alloy`: {message}")
        );
    }
}

#[test]
fn a_missing_file_or_an_unknown_format_is_an_error() {
    let path = data_dir().join("no-such.eam");
    let e = EamPotential::read(&path, Format::Funcfl)
        .unwrap_err()
        .to_string();
    let expected = format!(
        "input `{}`: cannot read this funcfl potential file: ",
        path.display()
    );
    assert!(e.starts_with(&expected), "{e}");
    let e = "eam".parse::<Format>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown EAM potential format `eam`; CoMD reads funcfl and setfl"
    );
    assert_eq!("setfl".parse::<Format>().unwrap(), Format::Setfl);
}

// ---------------------------------------------------------------- interpolation

#[test]
fn interpolation_is_exact_on_quadratics() {
    let g = |x: f64| 2.0 + 3.0 * x - 0.5 * x * x;
    let dg = |x: f64| 3.0 - x;
    let values: Vec<f64> = (0..20).map(|k| g(k as f64 * 0.25)).collect();
    let t = Table::new(&values, 0.0, 0.25);
    // Up to 4.5: beyond it the stencil reaches the padding (t₂₀ = t₁₉).
    for x in [0.3, 1.3, 2.0, 3.9, 4.4] {
        let (f, df) = t.eval(x);
        assert!(
            (f - g(x)).abs() < 1e-13 && (df - dg(x)).abs() < 1e-13,
            "x = {x}"
        );
    }
    for (k, v) in values.iter().enumerate() {
        assert_eq!(t.eval(k as f64 * 0.25).0, *v, "a node gives its value");
    }
}

#[test]
fn interpolation_pads_and_clamps_as_comd_does() {
    let values = [1.0, 2.0, 4.0, 8.0];
    let t = Table::new(&values, 0.0, 0.5);
    // Below x0: clamped to x0, with t₋₁ = t₀.
    assert_eq!(t.eval(-3.0), (1.0, 0.5 * (2.0 - 1.0) * 2.0));
    assert_eq!(t.eval(-3.0), t.eval(0.0));
    // Past the end: t₄ = t₅ = t₃.
    assert_eq!(t.eval(1.5), (8.0, 0.5 * (8.0 - 4.0) * 2.0));
    // Far beyond: CoMD's i = n, s = n·dx = 2.0 (p = 0): the padded value, slope 0.
    assert_eq!(t.eval(1e9), (8.0, 0.0));
    let (f, df) = t.eval(0.75);
    let p = 0.5;
    assert_eq!(
        f,
        2.0 + 0.5 * p * ((4.0 - 1.0) + p * (4.0 + 1.0 - 2.0 * 2.0))
    );
    assert_eq!(
        df,
        0.5 * ((4.0 - 1.0) + p * ((8.0 - 2.0) - (4.0 - 1.0))) * 2.0
    );
    assert!(t.eval(f64::NAN).0.is_nan());
}

// ---------------------------------------------------------------- random numbers, lattice

#[test]
fn random_numbers_follow_comds_generator() {
    // Values from an independent Python evaluation of the README's §3.8 description.
    let mut seed = seed_for(0, DISPLACEMENT_CALL_SITE);
    assert_eq!(seed, 1603389933693415303);
    assert_eq!(lcg61(&mut seed), 0.919719216662762);
    assert_eq!(lcg61(&mut seed), 0.8242034553492396);
    let mut seed = seed_for(u32::MAX, DISPLACEMENT_CALL_SITE);
    assert_eq!(seed, 719391248795071603, "id + call site wraps");
    assert_eq!(lcg61(&mut seed), 0.3386998881503252);
    assert_eq!(seed_for(863, 457), 2245007239948130052);
}

#[test]
fn fcc_lattice_is_comds() {
    let a = 3.615;
    let atoms = Atoms::fcc([6, 6, 6], a).unwrap();
    assert_eq!(atoms.len(), 864);
    assert_eq!(atoms.box_len, [6.0 * a; 3]);
    assert!(
        atoms
            .ids
            .iter()
            .enumerate()
            .all(|(i, &id)| id as usize == i)
    );
    assert_eq!(atoms.positions[0], [0.25 * a; 3]);
    assert_eq!(atoms.positions[1], [0.25 * a, 0.75 * a, 0.75 * a]);
    assert_eq!(
        atoms.positions[4],
        [0.25 * a, 0.25 * a, 1.25 * a],
        "cell (0, 0, 1)"
    );
    assert_eq!(
        atoms.positions[4 * 36],
        [1.25 * a, 0.25 * a, 0.25 * a],
        "cell (1, 0, 0)"
    );
    let e = Atoms::fcc([0, 6, 6], a).unwrap_err().to_string();
    assert_eq!(
        e,
        "an FCC lattice needs at least one unit cell per axis, not [0, 6, 6]"
    );
    let e = Atoms::fcc([6, 6, 6], -1.0).unwrap_err().to_string();
    assert_eq!(e, "the lattice constant must be a number > 0 Å, not -1");
}

#[test]
fn random_displacement_is_comds() {
    let (perfect, displaced) = (lattice(Format::Funcfl, 0.0), lattice(Format::Funcfl, 0.1));
    let u = [0.919719216662762, 0.8242034553492396, 0.7183404529436296];
    let expected: [f64; 3] = std::array::from_fn(|k| 0.25 * 3.615 + (2.0 * u[k] - 1.0) * 0.1);
    assert_eq!(displaced.positions[0], expected);
    for (p, d) in perfect.positions.iter().zip(&displaced.positions) {
        assert!((0..3).all(|k| (p[k] - d[k]).abs() <= 0.1 && p[k] != d[k]));
    }
}

#[test]
fn wrap_moves_atoms_into_the_box() {
    let mut atoms = Atoms {
        ids: vec![0, 1, 2],
        positions: vec![[-0.5, 10.0, 3.0], [-1e-300, 0.0, 9.999], [25.0, -20.0, 5.0]],
        box_len: [10.0; 3],
    };
    atoms.wrap();
    assert_eq!(atoms.positions[0], [9.5, 0.0, 3.0]);
    assert_eq!(atoms.positions[1], [0.0, 0.0, 9.999]);
    assert_eq!(atoms.positions[2], [5.0, 0.0, 5.0]);
}

// ---------------------------------------------------------------- link cells

#[test]
fn link_cells_are_comds() {
    // (cells per axis, lattice constant, format) → CoMD's printed "Local boxes" and "Box size".
    let runs = [
        (6, 3.615, Format::Funcfl, 4, 5.4225),
        (6, 3.615, Format::Setfl, 3, 7.23),
        (6, 3.5, Format::Funcfl, 4, 5.25),
        (6, 3.7, Format::Setfl, 4, 5.55),
        (20, 3.615, Format::Funcfl, 14, 5.1642857143),
        (20, 3.615, Format::Setfl, 13, 5.5615384615),
    ];
    for (n, a, format, grid, size) in runs {
        let atoms = Atoms::fcc([n; 3], a).unwrap();
        let cells = LinkCells::new(&atoms, potential(format).cutoff).unwrap();
        assert_eq!(cells.grid(), [grid; 3], "{n}³ cells, a = {a}, {format}");
        assert!(cells.size().iter().all(|s| (s - size).abs() < 1e-10));
        let mut seen: Vec<usize> = (0..cells.len())
            .flat_map(|c| cells.atoms_in(c).to_vec())
            .collect();
        assert!((0..cells.len()).all(|c| cells.atoms_in(c).is_sorted()));
        seen.sort();
        assert_eq!(
            seen,
            (0..atoms.len()).collect::<Vec<_>>(),
            "each atom in one cell"
        );
    }
}

#[test]
fn link_cells_refuse_atoms_outside_and_boxes_too_small() {
    let mut atoms = Atoms::fcc([2, 2, 2], 3.615).unwrap();
    let e = LinkCells::new(&atoms, 7.5).unwrap_err().to_string();
    assert!(
        e.starts_with("a periodic box of [7.23, 7.23, 7.23] Å is too small"),
        "{e}"
    );
    atoms.positions[3][1] = -0.25;
    let e = LinkCells::new(&atoms, 4.95).unwrap_err().to_string();
    let expected = "atom 3 at [2.71125, -0.25, 0.90375] Å is outside the periodic box \
                    [0, 7.23) × [0, 7.23) × [0, 7.23) Å; wrap the positions first";
    assert_eq!(e, expected);
}

/// Per atom: the number of neighbour images within the cutoff and the sum of their
/// distances, by brute force over all atoms and their images one box away (farther images
/// are more than one box length, so more than the cutoff, away).
fn brute_force_neighbours(atoms: &Atoms, cutoff: f64) -> Vec<(usize, f64)> {
    let shifts: Vec<[f64; 3]> = (0..27)
        .map(|s| std::array::from_fn(|k| ((s / 3usize.pow(k as u32)) % 3) as f64 - 1.0))
        .collect();
    (0..atoms.len())
        .map(|i| {
            let (mut count, mut sum) = (0, 0.0);
            for j in 0..atoms.len() {
                for s in &shifts {
                    let d: [f64; 3] = std::array::from_fn(|k| {
                        atoms.positions[i][k] - atoms.positions[j][k] - s[k] * atoms.box_len[k]
                    });
                    let r = norm(d);
                    if r <= cutoff && !(i == j && *s == [0.0; 3]) {
                        count += 1;
                        sum += r;
                    }
                }
            }
            (count, sum)
        })
        .collect()
}

#[test]
fn link_cells_find_every_neighbour_image() {
    // 2×2×2 and 4×4×4 unit cells give grids of 1 and 2 link cells per axis, where the same
    // cell appears as several periodic images; 5×5×5 gives 3.
    for (n, expected_grid) in [(2, 1), (4, 2), (5, 3)] {
        let mut atoms = Atoms::fcc([n; 3], 3.615).unwrap();
        atoms.displace_randomly(0.3);
        let cutoff = 5.506786;
        let cells = LinkCells::new(&atoms, cutoff).unwrap();
        assert_eq!(cells.grid(), [expected_grid; 3]);
        let brute = brute_force_neighbours(&atoms, cutoff);
        for (i, (count, sum)) in brute.into_iter().enumerate() {
            let (mut c, mut s) = (0, 0.0);
            reference::for_each_neighbour(&atoms, &cells, cutoff, i, |_, _, r| {
                c += 1;
                s += r;
            });
            assert_eq!(c, count, "atom {i} of {n}³ cells");
            assert!((s - sum).abs() < 1e-9 * sum);
        }
    }
}

#[test]
fn perfect_lattice_neighbour_shells() {
    for (format, expected) in [(Format::Funcfl, 42), (Format::Setfl, 54)] {
        let atoms = lattice(format, 0.0);
        let cells = LinkCells::new(&atoms, potential(format).cutoff).unwrap();
        for i in 0..atoms.len() {
            let mut count = 0;
            reference::for_each_neighbour(
                &atoms,
                &cells,
                potential(format).cutoff,
                i,
                |_, _, _| count += 1,
            );
            assert_eq!(count, expected, "{format}, atom {i}");
        }
    }
}

// ---------------------------------------------------------------- energies against CoMD

/// README §2.5: per atom on the perfect lattice at 3.615 Å, (½Σφ, ρ̄, F(ρ̄), F′(ρ̄), U/N).
const PERFECT_LATTICE: [(Format, [f64; 5]); 2] = [
    (
        Format::Funcfl,
        [
            2.555359458098,
            0.041029147943,
            -6.093438682784,
            -94.428145739060,
            -3.538079224686,
        ],
    ),
    (
        Format::Setfl,
        [
            -1.257646033602,
            1.000000112802,
            -2.282353935570,
            -0.000002162896,
            -3.539999969172,
        ],
    ),
];

#[test]
fn perfect_lattice_intermediate_values() {
    for (format, [half_phi, rhobar, f, df, u]) in PERFECT_LATTICE {
        let r = eam(format, &lattice(format, 0.0), Exec::Serial);
        for i in 0..r.rhobar.len() {
            let embed = potential(format).embedding.eval(r.rhobar[i]).0;
            let got = [
                r.atom_energy[i] - embed,
                r.rhobar[i],
                embed,
                r.dembed[i],
                r.atom_energy[i],
            ];
            for (g, want) in got.iter().zip([half_phi, rhobar, f, df, u]) {
                assert!(
                    (g - want).abs() < 1e-11,
                    "{format}, atom {i}: {g:.12} vs {want:.12}"
                );
            }
        }
    }
}

#[test]
fn cohesive_energy_is_comds() {
    // CoMD's "Verifying Correctness" table, printed for its default 32 000-atom run.
    for (format, cohesive) in [
        (Format::Funcfl, -3.538079224691),
        (Format::Setfl, -3.539999969176),
    ] {
        let u = eam(format, &lattice(format, 0.0), Exec::Rayon).energy_per_atom();
        println!("{format}: U/N = {u:.13}, CoMD's cohesive energy {cohesive:.12}");
        assert!(
            (u - cohesive).abs() < 1e-10,
            "{format}: {u:.13} vs {cohesive}"
        );
    }
}

/// A step-0 row of `comd-1.1-serial-runs.tsv`: the run's name, its CoMD arguments, atoms,
/// and the potential energy per atom CoMD printed.
#[derive(Debug)]
struct Row {
    run: String,
    args: String,
    atoms: usize,
    potential: f64,
}

fn step_zero_rows() -> Vec<Row> {
    let path = data_dir().join("comd-1.1-serial-runs.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header row").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (run, args, step, pot, atoms) = (
        col("run"),
        col("args"),
        col("step"),
        col("potential_eV_per_atom"),
        col("atoms"),
    );
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f[step] == "0")
        .map(|f| Row {
            run: f[run].to_string(),
            args: f[args].to_string(),
            atoms: f[atoms].parse().unwrap(),
            potential: f[pot].parse().unwrap(),
        })
        .collect()
}

/// The structure a CoMD command line starts from: format, unit cells, lattice constant
/// (`None`: the file's), `--delta`. Temperatures and step counts do not change step 0's
/// potential energy.
fn configuration(args: &str) -> (Format, [usize; 3], Option<f64>, f64) {
    let (mut format, mut cells, mut lat, mut delta) = (Format::Funcfl, [20; 3], None, 0.0);
    let mut words = args.split_whitespace();
    while let Some(flag) = words.next() {
        let mut value = || {
            words
                .next()
                .unwrap_or_else(|| panic!("{flag} without a value"))
        };
        match flag {
            "-e" => {}
            "-t" => format = value().parse().unwrap(),
            "-x" => cells[0] = value().parse().unwrap(),
            "-y" => cells[1] = value().parse().unwrap(),
            "-z" => cells[2] = value().parse().unwrap(),
            "-l" => lat = Some(value().parse().unwrap()),
            "-r" => delta = value().parse().unwrap(),
            "-T" | "-N" => drop(value()),
            _ => panic!("unexpected CoMD argument {flag} in `{args}`"),
        }
    }
    (format, cells, lat, delta)
}

#[test]
fn step_zero_energies_match_every_comd_run() {
    let rows = step_zero_rows();
    assert_eq!(rows.len(), 14, "the 14 runs of the README's §2.3");
    assert_eq!(rows.iter().filter(|r| r.atoms == 864).count(), 12);
    let mut worst: f64 = 0.0;
    for row in rows {
        let (format, cells, lat, delta) = configuration(&row.args);
        let mut atoms =
            Atoms::fcc(cells, lat.unwrap_or(potential(format).lattice_constant)).unwrap();
        if delta > 0.0 {
            atoms.displace_randomly(delta);
        }
        assert_eq!(atoms.len(), row.atoms, "{}", row.run);
        let u = eam(format, &atoms, Exec::Rayon).energy_per_atom();
        let error = (u - row.potential).abs();
        println!(
            "{:34} CoMD {:.12}  here {u:.13}  |diff| {error:.1e}",
            row.run, row.potential
        );
        assert!(
            error < 1e-10,
            "{}: {u:.13} vs CoMD's {:.12}",
            row.run,
            row.potential
        );
        worst = worst.max(error);
    }
    println!("worst |difference| from CoMD's step-0 potential energy: {worst:.1e} eV/atom");
}

// ---------------------------------------------------------------- forces

#[test]
fn perfect_lattice_forces_vanish() {
    for format in Format::ALL {
        let atoms = lattice(format, 0.0);
        let cells = LinkCells::new(&atoms, potential(format).cutoff).unwrap();
        let direct = reference::direct(potential(format), &atoms, &cells, Exec::Serial);
        let pairs = reference::pairs(potential(format), &atoms, &cells);
        for r in [direct, pairs] {
            let worst = r.forces.iter().map(|f| norm(*f)).fold(0.0, f64::max);
            assert!(
                worst < 1e-10,
                "{format}: a force of {worst:e} eV/Å on a perfect lattice"
            );
        }
    }
}

#[test]
fn total_force_vanishes() {
    for format in Format::ALL {
        let atoms = lattice(format, 0.1);
        let cells = LinkCells::new(&atoms, potential(format).cutoff).unwrap();
        let direct = reference::direct(potential(format), &atoms, &cells, Exec::Rayon);
        let pairs = reference::pairs(potential(format), &atoms, &cells);
        for r in [direct, pairs] {
            let total: [f64; 3] =
                std::array::from_fn(|k| r.forces.iter().map(|f| f[k]).sum::<f64>());
            let scale: f64 = r.forces.iter().map(|f| norm(*f)).sum();
            assert!(
                norm(total) < 1e-10 * scale,
                "{format}: Σf = {total:?}, Σ|f| = {scale}"
            );
        }
    }
}

/// −∂U/∂x_ik by central differences, summing the per-atom energy differences (atoms far
/// from i cancel exactly, so rounding stays small).
fn finite_difference(pot: &EamPotential, atoms: &Atoms, i: usize, k: usize, h: f64) -> f64 {
    let energies = |dx: f64| {
        let mut moved = atoms.clone();
        moved.positions[i][k] += dx;
        moved.wrap();
        reference::compute(pot, &moved, Exec::Rayon)
            .unwrap()
            .atom_energy
    };
    let (plus, minus) = (energies(h), energies(-h));
    -plus.iter().zip(&minus).map(|(p, m)| p - m).sum::<f64>() / (2.0 * h)
}

/// The largest `|f − (−∂U/∂x)| / |f_i|` over a few atoms and all components.
fn worst_force_error(pot: &EamPotential, atoms: &Atoms) -> f64 {
    let r = reference::compute(pot, atoms, Exec::Rayon).unwrap();
    let mut worst: f64 = 0.0;
    for i in [0, 100, 431, 863] {
        for k in 0..3 {
            let fd = finite_difference(pot, atoms, i, k, 1e-5);
            worst = worst.max((r.forces[i][k] - fd).abs() / norm(r.forces[i]));
        }
    }
    worst
}

/// A setfl potential whose tables sample quadratics (φ = 0.2(rc − r)², ρ = 0.01(rc − r)²,
/// F = 2ρ̄² − 5ρ̄). On them CoMD's interpolation is exact in value and derivative, so its
/// forces must be the exact gradient of its energy.
fn quadratic_potential() -> EamPotential {
    let (rc, dr, nr, drho, nrho) = (5.0, 0.01, 700, 0.005, 600);
    let phi = |r: f64| 0.2 * (rc - r) * (rc - r);
    let rho = |r: f64| 0.01 * (rc - r) * (rc - r);
    let embed = |x: f64| 2.0 * x * x - 5.0 * x;
    let column = |n: usize, dx: f64, f: &dyn Fn(f64) -> f64| -> String {
        (0..n)
            .map(|k| format!("{:e}\n", f(k as f64 * dx)))
            .collect()
    };
    let text = format!(
        "quadratic\n\n\n1 Qq\n{nrho} {drho} {nr} {dr} {rc}\n1 1.0 3.615 fcc\n{}{}{}",
        column(nrho, drho, &embed),
        column(nr, dr, &rho),
        column(nr, dr, &|r| r * phi(r)),
    );
    EamPotential::parse(&text, Format::Setfl, "quadratic.eam.alloy").unwrap()
}

#[test]
fn forces_are_the_energy_gradient() {
    let pot = quadratic_potential();
    let mut atoms = Atoms::fcc([6, 6, 6], 3.615).unwrap();
    atoms.displace_randomly(0.1);
    let worst = worst_force_error(&pot, &atoms);
    println!("quadratic tables: worst relative force error {worst:.1e}");
    assert!(worst < 1e-6, "worst relative force error {worst:e}");
}

#[test]
fn comd_forces_are_the_energy_gradient_to_its_tables_accuracy() {
    // CoMD's derivative (a blend of central differences) is not the derivative of its value
    // (a quadratic): they differ by O(dx²·f‴), so its forces are the gradient of its energy
    // only to about 1e-3 (Adams, dx = 0.01 Å) or 4e-6 (Mishin, dx = 5.5e-4 Å).
    for (format, tolerance) in [(Format::Funcfl, 2e-3), (Format::Setfl, 1e-5)] {
        let worst = worst_force_error(potential(format), &lattice(format, 0.1));
        println!("{format}: worst relative force error {worst:.1e}");
        assert!(worst < tolerance, "{format}: {worst:e}");
    }
}

// ---------------------------------------------------------------- the algorithms agree

fn relative_difference(a: &EamResult, b: &EamResult) -> f64 {
    let scale = a.forces.iter().map(|f| norm(*f)).fold(0.0, f64::max);
    let force = a
        .forces
        .iter()
        .zip(&b.forces)
        .map(|(f, g)| norm(std::array::from_fn(|k| f[k] - g[k])) / scale);
    let rho = a
        .rhobar
        .iter()
        .zip(&b.rhobar)
        .map(|(x, y)| (x - y).abs() / x.abs());
    let energy = (a.energy - b.energy).abs() / a.energy.abs();
    force.chain(rho).fold(energy, f64::max)
}

#[test]
fn serial_rayon_and_pair_loops_agree() {
    for format in Format::ALL {
        let atoms = lattice(format, 0.1);
        let cells = LinkCells::new(&atoms, potential(format).cutoff).unwrap();
        let serial = reference::direct(potential(format), &atoms, &cells, Exec::Serial);
        let rayon = reference::direct(potential(format), &atoms, &cells, Exec::Rayon);
        let pairs = reference::pairs(potential(format), &atoms, &cells);
        let (dr, dp) = (
            relative_difference(&serial, &rayon),
            relative_difference(&serial, &pairs),
        );
        println!("{format}: serial vs rayon {dr:.1e}, direct vs pair loops {dp:.1e}");
        // Each atom is computed alike and the tiled energy sum is fixed: bit for bit.
        assert_eq!(serial, rayon, "{format}: serial and rayon differ ({dr:e})");
        assert!(dr < 1e-10 && dp < 1e-10, "{format}: {dr:e}, {dp:e}");
    }
}
