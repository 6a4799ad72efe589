//! The initial structure of a CoMD run (CoMD 1.1 `initAtoms.c`): a face-centred cubic
//! lattice of nx×ny×nz conventional unit cells in a periodic box `[0, n·a)` per axis,
//! optionally with CoMD's random displacements (`--delta`).

use super::random::{DISPLACEMENT_CALL_SITE, lcg61, seed_for};
use crate::{Result, SurgeError};

/// The four atoms of the conventional FCC cell, in units of the lattice constant. The lattice
/// is offset by a/4 from the origin, as in CoMD.
pub const FCC_BASIS: [[f64; 3]; 4] = [
    [0.25, 0.25, 0.25],
    [0.25, 0.75, 0.75],
    [0.75, 0.25, 0.75],
    [0.75, 0.75, 0.25],
];

/// Atoms in a periodic orthorhombic box `[0, L₀) × [0, L₁) × [0, L₂)` (Å).
#[derive(Debug, Clone, PartialEq)]
pub struct Atoms {
    /// CoMD's global atom ids (they seed the per-atom random numbers).
    pub ids: Vec<u32>,
    /// Positions in Å.
    pub positions: Vec<[f64; 3]>,
    /// The box's edge lengths in Å.
    pub box_len: [f64; 3],
}

impl Atoms {
    /// A perfect FCC lattice of `cells = [nx, ny, nz]` unit cells with lattice constant
    /// `lattice` (Å). Atom `b + 4·(iz + nz·(iy + ny·ix))` (basis atom b of cell (ix, iy, iz))
    /// sits at `((ix, iy, iz) + basis_b)·a`; atoms are stored in id order.
    pub fn fcc(cells: [usize; 3], lattice: f64) -> Result<Atoms> {
        check_fcc(cells, lattice)?;
        let [nx, ny, nz] = cells;
        let mut atoms = Atoms {
            ids: Vec::with_capacity(4 * nx * ny * nz),
            positions: Vec::with_capacity(4 * nx * ny * nz),
            box_len: cells.map(|n| n as f64 * lattice),
        };
        for ix in 0..nx {
            for iy in 0..ny {
                for iz in 0..nz {
                    for (b, basis) in FCC_BASIS.iter().enumerate() {
                        let at = |i: usize, k: usize| (i as f64 + basis[k]) * lattice;
                        atoms.ids.push((b + 4 * (iz + nz * (iy + ny * ix))) as u32);
                        atoms.positions.push([at(ix, 0), at(iy, 1), at(iz, 2)]);
                    }
                }
            }
        }
        Ok(atoms)
    }

    /// The number of atoms.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no atoms.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// CoMD's `--delta` displacement: each coordinate moves by `(2u − 1)·delta`, u uniform in
    /// [0, 1) from the atom's own stream (seeded by its id and call site 457), x, y, z in turn.
    /// Positions are then wrapped back into the box.
    pub fn displace_randomly(&mut self, delta: f64) {
        for (id, r) in self.ids.iter().zip(&mut self.positions) {
            let mut seed = seed_for(*id, DISPLACEMENT_CALL_SITE);
            for x in r.iter_mut() {
                *x += (2.0 * lcg61(&mut seed) - 1.0) * delta;
            }
        }
        self.wrap();
    }

    /// Moves every atom to its periodic image inside the box (positions already inside are
    /// left bit for bit as they are).
    pub fn wrap(&mut self) {
        for r in &mut self.positions {
            for (x, len) in r.iter_mut().zip(self.box_len) {
                if !(0.0..len).contains(x) {
                    let y = x.rem_euclid(len);
                    *x = if y < len { y } else { 0.0 };
                }
            }
        }
    }
}

/// CoMD's FCC set-up needs at least one cell per axis, a positive lattice constant, and ids
/// that fit its 32-bit integers.
fn check_fcc(cells: [usize; 3], lattice: f64) -> Result<()> {
    if cells.contains(&0) {
        return Err(SurgeError::Usage(format!(
            "an FCC lattice needs at least one unit cell per axis, not {cells:?}"
        )));
    }
    if !(lattice.is_finite() && lattice > 0.0) {
        return Err(SurgeError::Usage(format!(
            "the lattice constant must be a number > 0 Å, not {lattice}"
        )));
    }
    let atoms = cells.iter().try_fold(4usize, |n, &c| n.checked_mul(c));
    match atoms {
        Some(n) if n <= i32::MAX as usize => Ok(()),
        _ => Err(SurgeError::Usage(format!(
            "{cells:?} FCC cells hold more than 2^31 − 1 atoms, CoMD's limit"
        ))),
    }
}
