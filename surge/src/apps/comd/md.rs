//! CoMD's molecular dynamics (CoMD 1.1 `timestep.c`): velocity-Verlet steps over the EAM
//! forces, with atoms redistributed into link cells after every drift.
//!
//! One step, as CoMD's `timestep` does it: `p += ½dt·f`; `r += dt·p/m`; wrap every atom back
//! into the periodic box and sort the atoms into link cells again; compute the forces;
//! `p += ½dt·f`. The kinetic energy is computed only when a step is sampled.

use super::cells::LinkCells;
use super::lattice::Atoms;
use super::potential::EamPotential;
use super::reference::{self, EamResult, Exec};
use super::velocity::{kinetic_energy, temperature};
use crate::{Result, SurgeError};

/// Computes the EAM energy and forces of a configuration: the plain references ([`Exec`]) or a
/// Surge program.
pub trait ForceField {
    /// A name for reports (`reference/rayon`, a Surge variant id, ...).
    fn name(&self) -> String;
    /// Energies and forces of `atoms`, sorted into `cells`.
    fn compute(
        &mut self,
        pot: &EamPotential,
        atoms: &Atoms,
        cells: &LinkCells,
    ) -> Result<EamResult>;
}

impl ForceField for Exec {
    fn name(&self) -> String {
        match self {
            Exec::Serial => "reference/serial".into(),
            Exec::Rayon => "reference/rayon".into(),
        }
    }

    fn compute(
        &mut self,
        pot: &EamPotential,
        atoms: &Atoms,
        cells: &LinkCells,
    ) -> Result<EamResult> {
        Ok(reference::direct(pot, atoms, cells, *self))
    }
}

/// One printed line of a run: energies per atom (eV) and the temperature (K), as CoMD prints
/// them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Sample {
    pub step: usize,
    /// `step·dt`, fs.
    pub time: f64,
    /// `(U + K)/N`.
    pub total: f64,
    /// `U/N`.
    pub potential: f64,
    /// `K/N`.
    pub kinetic: f64,
    /// `(K/N)/(1.5·k_B)`.
    pub temperature: f64,
    pub atoms: usize,
}

/// The state of a run: positions, momenta, and the forces and energy of the current positions.
#[derive(Debug, Clone)]
pub struct Simulation {
    pub pot: EamPotential,
    pub atoms: Atoms,
    /// Momenta, eV·fs/Å.
    pub momenta: Vec<[f64; 3]>,
    /// Energies and forces at the current positions.
    pub eam: EamResult,
    /// Steps taken so far.
    pub step: usize,
    /// The time step, fs.
    pub dt: f64,
}

impl Simulation {
    /// A run from `atoms` (inside the box) and `momenta`, computing the first forces.
    pub fn new(
        pot: EamPotential,
        atoms: Atoms,
        momenta: Vec<[f64; 3]>,
        dt: f64,
        force: &mut dyn ForceField,
    ) -> Result<Simulation> {
        let cells = LinkCells::new(&atoms, pot.cutoff)?;
        let eam = force.compute(&pot, &atoms, &cells)?;
        Ok(Simulation {
            pot,
            atoms,
            momenta,
            eam,
            step: 0,
            dt,
        })
    }

    /// One velocity-Verlet step.
    pub fn step(&mut self, force: &mut dyn ForceField) -> Result<()> {
        let inv_mass = 1.0 / self.pot.mass();
        self.kick(0.5 * self.dt);
        for (r, p) in self.atoms.positions.iter_mut().zip(&self.momenta) {
            for k in 0..3 {
                r[k] += self.dt * p[k] * inv_mass;
            }
        }
        self.step += 1;
        self.check_finite()?;
        self.atoms.wrap();
        let cells = LinkCells::new(&self.atoms, self.pot.cutoff)?;
        self.eam = force.compute(&self.pot, &self.atoms, &cells)?;
        self.kick(0.5 * self.dt);
        Ok(())
    }

    /// `p += h·f`.
    fn kick(&mut self, h: f64) {
        for (p, f) in self.momenta.iter_mut().zip(&self.eam.forces) {
            for k in 0..3 {
                p[k] += h * f[k];
            }
        }
    }

    /// A diverged run (a time step far too long) is an error, not atoms lost from the cells.
    fn check_finite(&self) -> Result<()> {
        let bad = self
            .atoms
            .positions
            .iter()
            .position(|r| !r.iter().all(|x| x.is_finite()));
        match bad {
            None => Ok(()),
            Some(i) => Err(SurgeError::Usage(format!(
                "the dynamics diverged at step {}: atom {} has position {:?} Å; \
                 a time step of {} fs is too long for this system",
                self.step, self.atoms.ids[i], self.atoms.positions[i], self.dt
            ))),
        }
    }

    /// The energies of the current step.
    pub fn sample(&self) -> Sample {
        let n = self.atoms.len() as f64;
        let kinetic = kinetic_energy(&self.momenta, self.pot.mass());
        Sample {
            step: self.step,
            time: self.step as f64 * self.dt,
            total: (self.eam.energy + kinetic) / n,
            potential: self.eam.energy / n,
            kinetic: kinetic / n,
            temperature: temperature(kinetic / n),
            atoms: self.atoms.len(),
        }
    }
}
