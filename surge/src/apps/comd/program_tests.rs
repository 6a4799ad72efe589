//! The Surge programs against the plain reference: every algorithm, interpreted and native.

use super::potential::Format;
use super::reference::{self, EamResult, Exec};
use super::surge_force::{Algorithm, Engine, SurgeForce};
use super::tests::potential;
use super::{Atoms, ForceField, LinkCells};

/// Largest |f − f_ref| over the largest |f_ref|, and the energy's relative difference.
fn difference(got: &EamResult, want: &EamResult) -> (f64, f64) {
    let scale = want
        .forces
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let pairs = got
        .forces
        .iter()
        .flatten()
        .zip(want.forces.iter().flatten());
    let worst = pairs.fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let u = got
        .atom_energy
        .iter()
        .zip(&want.atom_energy)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    (
        worst / scale,
        (((got.energy - want.energy) / want.energy).abs()).max(u),
    )
}

fn check(format: Format, cells_per_side: usize, engine: Engine) {
    let pot = potential(format);
    let mut atoms = Atoms::fcc([cells_per_side; 3], pot.lattice_constant).unwrap();
    atoms.displace_randomly(0.1);
    let cells = LinkCells::new(&atoms, pot.cutoff).unwrap();
    let want = reference::direct(pot, &atoms, &cells, Exec::Serial);
    for a in Algorithm::ALL {
        let mut f = SurgeForce::new(a, engine.clone());
        let got = f
            .compute(pot, &atoms, &cells)
            .unwrap_or_else(|e| panic!("{e}"));
        let (df, de) = difference(&got, &want);
        println!(
            "{format} {} atoms {}: forces {df:.1e}, energy {de:.1e}",
            atoms.len(),
            f.name()
        );
        assert!(df < 1e-10 && de < 1e-10, "{}: {df:e} {de:e}", f.name());
    }
}

#[test]
fn interpreted_programs_equal_the_reference() {
    check(Format::Setfl, 3, Engine::Interpret);
    check(Format::Funcfl, 3, Engine::Interpret);
}

/// The CPU emitter printed a lambda's scalar DAG as one expression tree, with no `let` for a
/// value used more than once, so the interpolation (s, p and the table index each used 3–4
/// times, r by two lookups and the division) multiplied out: 21.9 MB of Rust for the direct
/// program. Values shared within one scalar expression are now bound once
/// (`emit/cpu/shared.rs`), which brings it to 2.3 MB, still more than rustfmt finished in 9
/// minutes: reuse across expressions and through fused element code is still printed again.
/// Run with `--ignored` once that is bound too.
#[test]
#[ignore = "the CPU emitter prints values reused across scalar expressions again: 2.3 MB of kernel source for the direct program"]
fn native_programs_equal_the_reference() {
    for format in Format::ALL {
        check(format, 5, Engine::Cpu(None));
    }
}
