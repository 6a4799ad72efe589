//! CoMD's EAM force as Surge programs, the dissertation's two algorithms (§5.4.4):
//!
//! * [`direct`] (Listing 5.6, `map.reduce`): a map over the atoms (sorted by link cell), each a
//!   reduction over the atoms of its 27 neighbour cells — nested: a reduction over the 27 cells
//!   of a reduction over each cell's atoms, the cell's range read from `cell_start`. Every
//!   candidate is tested against the cutoff (`0 < r² ≤ rc²`).
//! * [`redistributed`] (Listing 5.7, `map`): the host first redistributes each atom's
//!   neighbours within the cutoff into a list of its own (`neighbours`, ranges `offsets`);
//!   the program is a map over the atoms, each reading only its list.
//!
//! Both compute, per atom, ρ̄ and with it `(F(ρ̄), F′(ρ̄))`, then the force with every
//! neighbour's F′ and `U_i = ½Σφ + F(ρ̄_i)` — two phases of one computation, whose result is
//! `(fx, fy, fz, U_i)` per atom. The tables are captured sequences read at computed indices ([`TableSeq`]).

use super::interp_dsel::TableSeq;
use super::potential::EamPotential;
use crate::prelude::*;

/// Input names (the host rebinds them every step).
pub const X: &str = "x";
pub const Y: &str = "y";
pub const Z: &str = "z";
pub const CELL: &str = "cell";
pub const CELL_START: &str = "cell_start";
pub const NB_CELL: &str = "nb_cell";
pub const SHIFT_X: &str = "shift_x";
pub const SHIFT_Y: &str = "shift_y";
pub const SHIFT_Z: &str = "shift_z";
pub const OFFSETS: &str = "offsets";
pub const NEIGHBOURS: &str = "neighbours";
pub const IMAGE: &str = "image";

type S = Scalar<f64>;
type Force = (S, S, S, S);

fn add4(a: Force, b: Force) -> Force {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)
}

fn zero4() -> Force {
    (lit(0.0), lit(0.0), lit(0.0), lit(0.0))
}

/// Positions, the potential's tables and its cutoff, as a program sees them.
#[derive(Debug, Clone)]
pub struct Frame {
    pos: [Seq<f64>; 3],
    phi: TableSeq,
    rho: TableSeq,
    embed: TableSeq,
    rc2: f64,
}

impl Frame {
    /// Binds the positions (in the order the atoms are indexed) and the potential's tables.
    pub fn new(pot: &EamPotential, pos: [Vec<f64>; 3]) -> Result<Frame> {
        let [x, y, z] = pos;
        Ok(Frame {
            pos: [Seq::input(X, x)?, Seq::input(Y, y)?, Seq::input(Z, z)?],
            phi: TableSeq::input("phi", &pot.pair)?,
            rho: TableSeq::input("rho", &pot.density)?,
            embed: TableSeq::input("embed", &pot.embedding)?,
            rc2: pot.cutoff * pot.cutoff,
        })
    }

    /// `(r_i − r_j) − shift`, r², and whether j's image is a neighbour (`0 < r² ≤ rc²`).
    fn separation(
        &self,
        i: &Scalar<u32>,
        j: &Scalar<u32>,
        shift: &[S; 3],
    ) -> Result<([S; 3], S, Scalar<bool>)> {
        let mut d = Vec::with_capacity(3);
        for (p, s) in self.pos.iter().zip(shift) {
            d.push((at(p, i)? - at(p, j)?) - s);
        }
        let r2 = &d[0] * &d[0] + &d[1] * &d[1] + &d[2] * &d[2];
        let keep = r2.le(self.rc2).and(&r2.gt(0.0));
        let d: [S; 3] = d
            .try_into()
            .map_err(|_| SurgeError::Usage("internal: 3 components".into()))?;
        Ok((d, r2, keep))
    }

    /// `ρ(r)` of one candidate, zero unless it is a neighbour.
    fn density_term(&self, i: &Scalar<u32>, j: &Scalar<u32>, shift: &[S; 3]) -> Result<S> {
        let (_, r2, keep) = self.separation(i, j, shift)?;
        let rho = self.rho.eval(&r2.sqrt())?.0;
        Ok(keep.select(&rho, 0.0))
    }

    /// `−[φ′ + (F′_i + F′_j)·ρ′]·d/r` and `φ(r)` of one candidate (F′ read from each atom's
    /// `(F, F′)`), zero unless it is a neighbour.
    fn force_term(
        &self,
        i: &Scalar<u32>,
        j: &Scalar<u32>,
        shift: &[S; 3],
        embedding: &Seq<(f64, f64)>,
    ) -> Result<Force> {
        let (d, r2, keep) = self.separation(i, j, shift)?;
        let r = r2.sqrt();
        let (phi, dphi) = self.phi.eval(&r)?;
        let drho = self.rho.eval(&r)?.1;
        let s = (dphi + (at(embedding, i)?.1 + at(embedding, j)?.1) * drho) / &r;
        let f = |k: usize| keep.select(-(&s * &d[k]), 0.0);
        Ok((f(0), f(1), f(2), keep.select(&phi, 0.0)))
    }

    /// The atoms' indices `0..n`.
    fn atoms(&self) -> Result<Seq<u32>> {
        range(0u32, len(&self.pos[0]).cast::<u32>())
    }

    /// The phases, given atom i's reductions over its candidates of the density terms and of
    /// the force terms: per atom `(F(ρ̄_i), F′(ρ̄_i))`; per atom the force (reading F′ of every
    /// neighbour) and `U_i = ½Σφ + F(ρ̄_i)`, stored as one tuple per atom.
    ///
    /// F and F′ are computed in the phase that reduces ρ̄, once per atom. As a map of its own
    /// over ρ̄, F′ was fused into the force phase, where it was read at each neighbour: the
    /// embedding table was interpolated once per pair (about 55 per atom) instead of once per
    /// atom.
    fn phases<P, F>(&self, density: P, force: F) -> Result<Computation>
    where
        P: Fn(&Scalar<u32>) -> Result<S>,
        F: Fn(&Scalar<u32>, &Seq<(f64, f64)>) -> Result<Force>,
    {
        let atoms = self.atoms()?;
        let embedding = map(|i: Scalar<u32>| self.embed.eval(&density(&i)?), &atoms)?;
        let out = map(
            |(i, (f, _)): (Scalar<u32>, (S, S))| -> Result<Force> {
                let (fx, fy, fz, phi) = force(&i, &embedding)?;
                Ok((fx, fy, fz, phi * 0.5 + f))
            },
            (&atoms, &embedding),
        )?;
        Computation::new(&out)
    }
}

/// The link cells as the direct program reads them: each atom's cell, each cell's range of
/// atoms (atoms sorted by cell), and each cell's 27 neighbour cells with their image shifts.
#[derive(Debug, Clone)]
pub struct CellInputs {
    pub cell: Vec<u32>,
    pub cell_start: Vec<u32>,
    pub nb_cell: Vec<u32>,
    pub shift: [Vec<f64>; 3],
}

/// Listing 5.6: per atom, a reduction over the 27 neighbour cells of a reduction over each
/// cell's atoms.
pub fn direct(frame: &Frame, cells: CellInputs) -> Result<Computation> {
    let cell = Seq::input(CELL, cells.cell)?;
    let start = Seq::input(CELL_START, cells.cell_start)?;
    let nb_cell = Seq::input(NB_CELL, cells.nb_cell)?;
    let [sx, sy, sz] = cells.shift;
    let shift = [
        Seq::input(SHIFT_X, sx)?,
        Seq::input(SHIFT_Y, sy)?,
        Seq::input(SHIFT_Z, sz)?,
    ];
    let neighbours = |i: &Scalar<u32>| -> Result<Seq<u32>> {
        let base = at(&cell, i)? * 27u32;
        range(base.clone(), base + 27u32)
    };
    let cell_shift = |k: &Scalar<u32>| -> Result<[S; 3]> {
        Ok([at(&shift[0], k)?, at(&shift[1], k)?, at(&shift[2], k)?])
    };
    let members = |k: &Scalar<u32>| -> Result<Seq<u32>> {
        let c = at(&nb_cell, k)?;
        range(at(&start, &c)?, at(&start, c + 1u32)?)
    };
    frame.phases(
        |i| {
            let per_cell = map(
                |k: Scalar<u32>| {
                    let sh = cell_shift(&k)?;
                    let terms = map(
                        |j: Scalar<u32>| frame.density_term(i, &j, &sh),
                        &members(&k)?,
                    )?;
                    reduce_prefix(add, &terms, 0.0)
                },
                &neighbours(i)?,
            )?;
            reduce_prefix(add, &per_cell, 0.0)
        },
        |i, embedding| {
            let per_cell = map(
                |k: Scalar<u32>| {
                    let sh = cell_shift(&k)?;
                    let terms = map(
                        |j: Scalar<u32>| frame.force_term(i, &j, &sh, embedding),
                        &members(&k)?,
                    )?;
                    reduce_prefix(add4, &terms, zero4())
                },
                &neighbours(i)?,
            )?;
            reduce_prefix(add4, &per_cell, zero4())
        },
    )
}

/// Each atom's neighbours within the cutoff, redistributed into lists by the host: atom i's are
/// `neighbours[offsets[i]..offsets[i + 1]]`, each the image of its atom shifted by
/// `shift[image]` (27 shifts, `(o − 1)·L` per axis for `image = o_x + 3o_y + 9o_z`).
#[derive(Debug, Clone)]
pub struct ListInputs {
    pub offsets: Vec<u32>,
    pub neighbours: Vec<u32>,
    pub image: Vec<u32>,
    pub shift: [Vec<f64>; 3],
}

/// Listing 5.7: a map over the atoms, each reducing over its own neighbour list.
pub fn redistributed(frame: &Frame, lists: ListInputs) -> Result<Computation> {
    let offsets = Seq::input(OFFSETS, lists.offsets)?;
    let neighbours = Seq::input(NEIGHBOURS, lists.neighbours)?;
    let image = Seq::input(IMAGE, lists.image)?;
    let [sx, sy, sz] = lists.shift;
    let shift = [
        Seq::input(SHIFT_X, sx)?,
        Seq::input(SHIFT_Y, sy)?,
        Seq::input(SHIFT_Z, sz)?,
    ];
    let list = |i: &Scalar<u32>| range(at(&offsets, i)?, at(&offsets, i + 1u32)?);
    let entry = |e: &Scalar<u32>| -> Result<(Scalar<u32>, [S; 3])> {
        let m = at(&image, e)?;
        let sh = [at(&shift[0], &m)?, at(&shift[1], &m)?, at(&shift[2], &m)?];
        Ok((at(&neighbours, e)?, sh))
    };
    frame.phases(
        |i| {
            let terms = map(
                |e: Scalar<u32>| {
                    let (j, sh) = entry(&e)?;
                    frame.density_term(i, &j, &sh)
                },
                &list(i)?,
            )?;
            reduce_prefix(add, &terms, 0.0)
        },
        |i, embedding| {
            let terms = map(
                |e: Scalar<u32>| {
                    let (j, sh) = entry(&e)?;
                    frame.force_term(i, &j, &sh, embedding)
                },
                &list(i)?,
            )?;
            reduce_prefix(add4, &terms, zero4())
        },
    )
}
