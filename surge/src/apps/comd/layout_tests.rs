//! The redistributed program's neighbour lists against a plain construction: per sorted atom,
//! every image of every atom of its 27 neighbour cells, tested against the cutoff.

use super::layout::{Sorted, neighbour_lists};
use super::tests::potential;
use super::{Atoms, LinkCells, potential::Format};

/// Per sorted atom, its (neighbour's sorted position, image shift) entries in link-cell order.
fn plain_lists(
    atoms: &Atoms,
    cells: &LinkCells,
    sorted: &Sorted,
    cutoff: f64,
) -> Vec<Vec<(u32, [f64; 3])>> {
    let rank = sorted.unsort(&(0..sorted.order.len() as u32).collect::<Vec<_>>());
    (0..sorted.order.len())
        .map(|s| {
            let ri = atoms.positions[sorted.order[s]];
            let mut list = Vec::new();
            for nb in cells.neighbours(sorted.cell[s] as usize) {
                for &j in cells.atoms_in(nb.cell) {
                    let rj = atoms.positions[j];
                    let d: [f64; 3] = std::array::from_fn(|k| (ri[k] - rj[k]) - nb.shift[k]);
                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    if r2 <= cutoff * cutoff && r2 > 0.0 {
                        list.push((rank[j], nb.shift));
                    }
                }
            }
            list
        })
        .collect()
}

fn check(cells_per_side: [usize; 3], delta: f64, cutoff: f64) {
    let pot = potential(Format::Funcfl);
    let mut atoms = Atoms::fcc(cells_per_side, pot.lattice_constant).unwrap();
    atoms.displace_randomly(delta);
    let cells = LinkCells::new(&atoms, cutoff).unwrap();
    let sorted = Sorted::new(&cells);
    let want = plain_lists(&atoms, &cells, &sorted, cutoff);
    let got = neighbour_lists(&atoms, &cells, &sorted, cutoff);
    assert_eq!(got.offsets.len(), want.len() + 1);
    for (s, list) in want.iter().enumerate() {
        let range = got.offsets[s] as usize..got.offsets[s + 1] as usize;
        let entries: Vec<(u32, [f64; 3])> = range
            .map(|e| {
                let m = got.image[e] as usize;
                let shift = std::array::from_fn(|k| got.shift[k][m]);
                (got.neighbours[e], shift)
            })
            .collect();
        assert_eq!(&entries, list, "atom at sorted position {s}");
    }
}

#[test]
fn neighbour_lists_equal_a_plain_construction() {
    let cutoff = potential(Format::Funcfl).cutoff;
    // 3 cells per axis; more cells than the lattice has unit cells; a wider box.
    check([4, 4, 4], 0.1, cutoff);
    check([7, 5, 6], 0.3, cutoff);
    // A perfect lattice (atoms on cell boundaries), and a cutoff of exactly the nearest
    // neighbours' distance (pairs at r² = rc² are neighbours).
    check([6, 6, 6], 0.0, cutoff);
    let a = potential(Format::Funcfl).lattice_constant;
    check([6, 6, 6], 0.0, a);
    check([6, 6, 6], 0.0, a / 2f64.sqrt());
}
