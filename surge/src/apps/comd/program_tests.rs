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

/// Both algorithms compiled natively (one rustc call each) against the reference. The kernel
/// source of the direct program was 21.9 MB when the CPU emitter printed a lambda's scalar DAG
/// as one tree, 2.3 MB once values shared within one scalar expression were bound by `let`,
/// 727 KB once the DSEL kept a scalar used twice as a node of its own instead of copying its
/// tree into each use, and 529 KB (unformatted) since the sharing analysis also follows `index`
/// positions and projections (`emit/sharing.rs`). What is still printed more than once: values
/// shared by the items of a tuple (the pair's energy and its three force components each
/// recompute the distance; see `emit/cpu/shared.rs` for why).
#[test]
fn native_programs_equal_the_reference() {
    check(Format::Funcfl, 3, Engine::Cpu(None));
}

/// The same for the other potential format (two more rustc calls).
#[test]
#[ignore = "two more rustc calls of about a minute each; the funcfl case runs by default"]
fn native_programs_equal_the_reference_setfl() {
    check(Format::Setfl, 3, Engine::Cpu(None));
}

/// Both algorithms emitted for CUDA (NVRTC-compiled where it loads) and run with their default
/// variants in the CUDA emulator, against the reference.
#[test]
fn cuda_programs_equal_the_reference_in_the_emulator() {
    check(
        Format::Funcfl,
        3,
        Engine::Cuda(crate::Target::cuda_emulated()),
    );
}
