//! Plain-Rust EAM forces and energies, the reference that Surge programs for CoMD are checked
//! against.
//!
//! The physics (single species): with `ρ̄_i = Σ_j ρ(r_ij)` over the neighbours within the
//! cutoff (periodic images included),
//!
//! * energy `U = Σ_i U_i`, `U_i = ½ Σ_j φ(r_ij) + F(ρ̄_i)`;
//! * force `f_i = −Σ_j [φ′(r_ij) + (F′(ρ̄_i) + F′(ρ̄_j))·ρ′(r_ij)]·(r_i − r_j)/r_ij`.
//!
//! Two algorithms compute it:
//!
//! * [`direct`], the dissertation's direct form (Listing 5.6) and CoMD's OpenMP loop: a map
//!   over atoms, each reducing over its neighbours in the 27 surrounding link cells — first
//!   ρ̄ and ½Σφ, then (after F′ is known for every atom) the force. Every pair is seen from
//!   both sides and each atom writes only its own results, so it runs serially or with rayon
//!   ([`Exec`]) and gives the same numbers; the energy is summed per tile of link cells, then
//!   over the tiles.
//! * [`pairs`], CoMD's MPI/serial loop: each pair once, its contributions added to both atoms
//!   (Newton's third law), in three passes (pairs, embedding, pairs). Serial only.
//!
//! A pair is within the cutoff when `r² ≤ rc²` in every pass (CoMD's MPI code skips `r² = rc²`
//! in its third pass only; its OpenMP code includes it in both, as here).

use super::cells::LinkCells;
use super::lattice::Atoms;
use super::potential::EamPotential;
use crate::Result;
use rayon::prelude::*;

/// Link cells per tile of the direct form's energy reduction.
pub const TILE_CELLS: usize = 8;

/// How the direct form's per-atom maps run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exec {
    Serial,
    Rayon,
}

/// Energies, densities and forces of one configuration (eV, Å).
#[derive(Debug, Clone, PartialEq)]
pub struct EamResult {
    /// The total potential energy U (eV).
    pub energy: f64,
    /// Per atom: `U_i = ½Σ_j φ(r_ij) + F(ρ̄_i)` (eV).
    pub atom_energy: Vec<f64>,
    /// Per atom: ρ̄_i.
    pub rhobar: Vec<f64>,
    /// Per atom: F′(ρ̄_i).
    pub dembed: Vec<f64>,
    /// Per atom: the force (eV/Å).
    pub forces: Vec<[f64; 3]>,
}

impl EamResult {
    /// U/N, the potential energy per atom that CoMD prints.
    pub fn energy_per_atom(&self) -> f64 {
        self.energy / self.atom_energy.len() as f64
    }
}

/// The direct form on `atoms`, building the link cells for the potential's cutoff.
pub fn compute(pot: &EamPotential, atoms: &Atoms, exec: Exec) -> Result<EamResult> {
    let cells = LinkCells::new(atoms, pot.cutoff)?;
    Ok(direct(pot, atoms, &cells, exec))
}

/// The direct form: per atom, ρ̄ and ½Σφ over its neighbours; F and F′; per atom, the force.
/// `cells` must hold these atoms, in cells at least the potential's cutoff wide.
pub fn direct(pot: &EamPotential, atoms: &Atoms, cells: &LinkCells, exec: Exec) -> EamResult {
    check_cells(pot, atoms, cells);
    let n = atoms.len();
    let sums = map_indices(n, exec, |i| density_and_pair(pot, atoms, cells, i));
    let embed = map_indices(n, exec, |i| pot.embedding.eval(sums[i].0));
    let dembed: Vec<f64> = embed.iter().map(|e| e.1).collect();
    let forces = map_indices(n, exec, |i| force(pot, atoms, cells, &dembed, i));
    let atom_energy: Vec<f64> = (0..n).map(|i| sums[i].1 + embed[i].0).collect();
    EamResult {
        energy: tiled_sum(cells, &atom_energy, exec),
        rhobar: sums.iter().map(|s| s.0).collect(),
        atom_energy,
        dembed,
        forces,
    }
}

/// `f(i)` for every atom, in atom order.
fn map_indices<T: Send>(n: usize, exec: Exec, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    match exec {
        Exec::Serial => (0..n).map(f).collect(),
        Exec::Rayon => (0..n).into_par_iter().map(f).collect(),
    }
}

/// Σ values over the atoms of each tile of [`TILE_CELLS`] link cells, then over the tiles in
/// order (the same sum serially and with rayon).
fn tiled_sum(cells: &LinkCells, values: &[f64], exec: Exec) -> f64 {
    let tiles = cells.len().div_ceil(TILE_CELLS);
    let tile = |t: usize| -> f64 {
        let range = t * TILE_CELLS..((t + 1) * TILE_CELLS).min(cells.len());
        range
            .flat_map(|c| cells.atoms_in(c))
            .map(|&i| values[i])
            .sum()
    };
    map_indices(tiles, exec, tile).iter().sum()
}

/// `(ρ̄_i, ½Σ_j φ(r_ij))` of atom i.
fn density_and_pair(pot: &EamPotential, atoms: &Atoms, cells: &LinkCells, i: usize) -> (f64, f64) {
    let (mut rho, mut phi) = (0.0, 0.0);
    for_each_neighbour(atoms, cells, pot.cutoff, i, |_, _, r| {
        rho += pot.density.eval(r).0;
        phi += pot.pair.eval(r).0;
    });
    (rho, 0.5 * phi)
}

/// The force on atom i, given F′(ρ̄) of every atom.
fn force(
    pot: &EamPotential,
    atoms: &Atoms,
    cells: &LinkCells,
    dembed: &[f64],
    i: usize,
) -> [f64; 3] {
    let mut f = [0.0; 3];
    for_each_neighbour(atoms, cells, pot.cutoff, i, |j, dr, r| {
        let dphi = pot.pair.eval(r).1;
        let drho = pot.density.eval(r).1;
        let s = (dphi + (dembed[i] + dembed[j]) * drho) / r;
        for k in 0..3 {
            f[k] -= s * dr[k];
        }
    });
    f
}

/// Calls `visit(j, r_i − r_j′, |r_i − r_j′|)` for every neighbour image j′ of atom i within
/// the cutoff, in link-cell order.
pub(super) fn for_each_neighbour(
    atoms: &Atoms,
    cells: &LinkCells,
    cutoff: f64,
    i: usize,
    mut visit: impl FnMut(usize, [f64; 3], f64),
) {
    let rc2 = cutoff * cutoff;
    for nb in cells.neighbours(cells.cell_of(i)) {
        for &j in cells.atoms_in(nb.cell) {
            if j == i && nb.shift == [0.0; 3] {
                continue;
            }
            let dr = separation(atoms, i, j, nb.shift);
            let r2 = dr[0] * dr[0] + dr[1] * dr[1] + dr[2] * dr[2];
            if r2 <= rc2 {
                visit(j, dr, r2.sqrt());
            }
        }
    }
}

/// `(r_i − r_j) − shift`: the separation of atom i from the image of j at `r_j + shift`.
/// Swapping i and j and negating the shift negates it exactly.
fn separation(atoms: &Atoms, i: usize, j: usize, shift: [f64; 3]) -> [f64; 3] {
    let (ri, rj) = (atoms.positions[i], atoms.positions[j]);
    std::array::from_fn(|k| (ri[k] - rj[k]) - shift[k])
}

/// Panics unless `cells` sorts exactly these atoms into cells at least a cutoff wide.
fn check_cells(pot: &EamPotential, atoms: &Atoms, cells: &LinkCells) {
    assert!(
        cells.atom_count() == atoms.len() && cells.size().iter().all(|&s| s >= pot.cutoff),
        "link cells of {:?} Å for {} atoms do not fit {} atoms and a cutoff of {} Å",
        cells.size(),
        cells.atom_count(),
        atoms.len(),
        pot.cutoff
    );
}

/// CoMD's MPI/serial algorithm: each pair once, Newton's third law, three passes. `cells`
/// as for [`direct`].
pub fn pairs(pot: &EamPotential, atoms: &Atoms, cells: &LinkCells) -> EamResult {
    check_cells(pot, atoms, cells);
    let n = atoms.len();
    let mut out = EamResult {
        energy: 0.0,
        atom_energy: vec![0.0; n],
        rhobar: vec![0.0; n],
        dembed: vec![0.0; n],
        forces: vec![[0.0; 3]; n],
    };
    for_each_pair(atoms, cells, pot.cutoff, |i, j, dr, r| {
        pair_pass(pot, &mut out, i, j, dr, r)
    });
    for i in 0..n {
        let (f, df) = pot.embedding.eval(out.rhobar[i]);
        out.energy += f;
        out.atom_energy[i] += f;
        out.dembed[i] = df;
    }
    for_each_pair(atoms, cells, pot.cutoff, |i, j, dr, r| {
        let s = (out.dembed[i] + out.dembed[j]) * pot.density.eval(r).1 / r;
        push_apart(&mut out.forces, i, j, s, dr);
    });
    out
}

/// The first pass's work for one pair: φ to the energy, ½φ to each atom, ρ to each ρ̄, and
/// the pair force.
fn pair_pass(pot: &EamPotential, out: &mut EamResult, i: usize, j: usize, dr: [f64; 3], r: f64) {
    let (phi, dphi) = pot.pair.eval(r);
    let rho = pot.density.eval(r).0;
    out.energy += phi;
    out.atom_energy[i] += 0.5 * phi;
    out.atom_energy[j] += 0.5 * phi;
    out.rhobar[i] += rho;
    out.rhobar[j] += rho;
    push_apart(&mut out.forces, i, j, dphi / r, dr);
}

/// `f_i −= s·dr`, `f_j += s·dr`.
fn push_apart(forces: &mut [[f64; 3]], i: usize, j: usize, s: f64, dr: [f64; 3]) {
    for k in 0..3 {
        forces[i][k] -= s * dr[k];
        forces[j][k] += s * dr[k];
    }
}

/// Calls `visit(i, j, dr, r)` once for every pair of atoms (or of an atom and another atom's
/// image) within the cutoff: of the two visits [`for_each_neighbour`] would make, the one
/// from the lower atom index, or for an atom and its own image, the one with the positive
/// shift.
fn for_each_pair(
    atoms: &Atoms,
    cells: &LinkCells,
    cutoff: f64,
    mut visit: impl FnMut(usize, usize, [f64; 3], f64),
) {
    let rc2 = cutoff * cutoff;
    for c in 0..cells.len() {
        for nb in cells.neighbours(c) {
            for &i in cells.atoms_in(c) {
                for &j in cells.atoms_in(nb.cell) {
                    if !(i < j || (i == j && nb.shift > [0.0; 3])) {
                        continue;
                    }
                    let dr = separation(atoms, i, j, nb.shift);
                    let r2 = dr[0] * dr[0] + dr[1] * dr[1] + dr[2] * dr[2];
                    if r2 <= rc2 {
                        visit(i, j, dr, r2.sqrt());
                    }
                }
            }
        }
    }
}
