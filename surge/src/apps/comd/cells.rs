//! Link cells (CoMD 1.1 `linkCells.c`): the box is cut into a grid of cells at least one
//! cutoff wide, so every neighbour of an atom within the cutoff lies in the atom's own cell
//! or one of the 26 around it. Periodic boundaries are handled by images: a neighbour cell
//! across the box's edge comes with the shift (±L per axis) that carries its atoms next to
//! the atom's cell, as CoMD's halo cells do.

use super::lattice::Atoms;
use crate::{Result, SurgeError};

/// One of a cell's 27 neighbour cells (itself included): its index, and the shift to add to
/// its atoms' positions to get the images adjacent to the cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbour {
    pub cell: usize,
    pub shift: [f64; 3],
}

/// Atoms sorted into link cells; cell `(cx, cy, cz)` has index `cx + gx·(cy + gy·cz)`, and
/// the atoms of a cell are in ascending index order.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkCells {
    grid: [usize; 3],
    size: [f64; 3],
    box_len: [f64; 3],
    /// `members[start[c]..start[c + 1]]` are the atoms of cell c.
    start: Vec<usize>,
    members: Vec<usize>,
    cell_of: Vec<usize>,
    /// The 27 neighbours of every cell, computed once (every atom of every pass reads them).
    neighbours: Vec<[Neighbour; 27]>,
}

impl LinkCells {
    /// Cells for `atoms` and a `cutoff` (Å): per axis `⌊L/cutoff⌋` cells of `L/⌊L/cutoff⌋`,
    /// as CoMD makes them. Every atom must be inside the box (see [`Atoms::wrap`]).
    pub fn new(atoms: &Atoms, cutoff: f64) -> Result<LinkCells> {
        let grid = grid_for(atoms.box_len, cutoff)?;
        let size = std::array::from_fn(|k| atoms.box_len[k] / grid[k] as f64);
        let mut cells = LinkCells {
            grid,
            size,
            box_len: atoms.box_len,
            start: Vec::new(),
            members: Vec::new(),
            cell_of: Vec::with_capacity(atoms.len()),
            neighbours: Vec::new(),
        };
        cells.neighbours = (0..cells.len()).map(|c| cells.neighbours_of(c)).collect();
        for (i, r) in atoms.positions.iter().enumerate() {
            let c = cells.locate(r).ok_or_else(|| outside(atoms, i))?;
            cells.cell_of.push(c);
        }
        cells.sort_atoms();
        Ok(cells)
    }

    /// Cells per axis.
    pub fn grid(&self) -> [usize; 3] {
        self.grid
    }

    /// A cell's edge lengths (Å), each at least the cutoff.
    pub fn size(&self) -> [f64; 3] {
        self.size
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.grid.iter().product()
    }

    /// Whether there are no cells (never).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of atoms sorted into the cells.
    pub fn atom_count(&self) -> usize {
        self.cell_of.len()
    }

    /// The atoms of cell `c`.
    pub fn atoms_in(&self, c: usize) -> &[usize] {
        &self.members[self.start[c]..self.start[c + 1]]
    }

    /// The cell of atom `i`.
    pub fn cell_of(&self, i: usize) -> usize {
        self.cell_of[i]
    }

    /// The grid coordinates of cell `c`.
    pub fn coords(&self, c: usize) -> [usize; 3] {
        let [gx, gy, _] = self.grid;
        [c % gx, (c / gx) % gy, c / (gx * gy)]
    }

    /// The index of the cell at grid coordinates `xyz`.
    pub fn index(&self, [x, y, z]: [usize; 3]) -> usize {
        x + self.grid[0] * (y + self.grid[1] * z)
    }

    /// The 27 neighbours of cell `c` (offsets −1, 0, +1 per axis, x fastest), with periodic
    /// wrap-around. The 27 (cell, shift) pairs are distinct images even when the grid has
    /// fewer than 3 cells along an axis.
    pub fn neighbours(&self, c: usize) -> &[Neighbour; 27] {
        &self.neighbours[c]
    }

    fn neighbours_of(&self, c: usize) -> [Neighbour; 27] {
        let at = self.coords(c);
        std::array::from_fn(|n| {
            let offset = [n % 3, (n / 3) % 3, n / 9];
            let mut xyz = [0; 3];
            let mut shift = [0.0; 3];
            for k in 0..3 {
                let raw = (at[k] + offset[k]) as isize - 1;
                let g = self.grid[k] as isize;
                xyz[k] = raw.rem_euclid(g) as usize;
                shift[k] = raw.div_euclid(g) as f64 * self.box_len[k];
            }
            Neighbour {
                cell: self.index(xyz),
                shift,
            }
        })
    }

    /// The cell holding position `r`, or `None` if `r` is outside the box.
    fn locate(&self, r: &[f64; 3]) -> Option<usize> {
        let mut xyz = [0; 3];
        for k in 0..3 {
            if !(0.0..self.box_len[k]).contains(&r[k]) {
                return None;
            }
            // Rounding may put a coordinate just below L into cell `grid`.
            xyz[k] = ((r[k] / self.size[k]).floor() as usize).min(self.grid[k] - 1);
        }
        Some(self.index(xyz))
    }

    /// Fills `start` and `members` from `cell_of` (a counting sort, stable in atom index).
    fn sort_atoms(&mut self) {
        let mut start = vec![0; self.len() + 1];
        for &c in &self.cell_of {
            start[c + 1] += 1;
        }
        for c in 0..self.len() {
            start[c + 1] += start[c];
        }
        let mut next = start.clone();
        self.members = vec![0; self.cell_of.len()];
        for (i, &c) in self.cell_of.iter().enumerate() {
            self.members[next[c]] = i;
            next[c] += 1;
        }
        self.start = start;
    }
}

/// `⌊L/cutoff⌋` cells per axis; the box must be at least one cutoff wide.
fn grid_for(box_len: [f64; 3], cutoff: f64) -> Result<[usize; 3]> {
    if !(cutoff.is_finite() && cutoff > 0.0) {
        return Err(SurgeError::Usage(format!(
            "link cells need a cutoff > 0 Å, not {cutoff}"
        )));
    }
    let mut grid = [0; 3];
    for k in 0..3 {
        let n = (box_len[k] / cutoff).floor();
        if !(n >= 1.0 && n <= u32::MAX as f64) {
            return Err(SurgeError::Usage(format!(
                "a periodic box of {box_len:?} Å is too small (or too large) for link cells \
                 of at least the cutoff {cutoff} Å"
            )));
        }
        grid[k] = n as usize;
    }
    Ok(grid)
}

fn outside(atoms: &Atoms, i: usize) -> SurgeError {
    let [x, y, z] = atoms.box_len;
    SurgeError::Usage(format!(
        "atom {} at {:?} Å is outside the periodic box [0, {x}) × [0, {y}) × [0, {z}) Å; \
         wrap the positions first",
        atoms.ids[i], atoms.positions[i]
    ))
}
