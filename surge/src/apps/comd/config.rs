//! A CoMD run's parameters (CoMD 1.1 `mycommand.c`, with its defaults) and their checks
//! (`CoMD.c`, `sanityChecks`), and the run itself: set up the lattice and velocities, step, and
//! sample every `print_rate` steps.

use super::cells::LinkCells;
use super::lattice::Atoms;
use super::md::{ForceField, Sample, Simulation};
use super::potential::EamPotential;
use super::velocity::thermal_momenta;
use crate::{Result, SurgeError};

/// Link cells a run needs per axis: with 3 or more, an atom's 27 neighbour cells are 27
/// distinct cells.
pub const MIN_LINK_CELLS: usize = 3;

/// The parameters of a run; [`Default`] is CoMD's default run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MdConfig {
    /// FCC unit cells per axis (`-x -y -z`).
    pub cells: [usize; 3],
    /// The lattice constant, Å (`-l`); `None`: the potential file's.
    pub lattice: Option<f64>,
    /// The initial temperature, K (`-T`).
    pub temperature: f64,
    /// The largest random displacement per coordinate, Å (`-r`).
    pub delta: f64,
    /// Time steps (`-N`).
    pub steps: usize,
    /// The time step, fs (`-D`).
    pub dt: f64,
    /// Steps between samples (`-n`).
    pub print_rate: usize,
}

impl Default for MdConfig {
    fn default() -> MdConfig {
        MdConfig {
            cells: [20, 20, 20],
            lattice: None,
            temperature: 600.0,
            delta: 0.0,
            steps: 100,
            dt: 1.0,
            print_rate: 10,
        }
    }
}

fn usage(message: String) -> SurgeError {
    SurgeError::Usage(message)
}

impl MdConfig {
    /// Refuses numbers no run can use.
    pub fn check(&self) -> Result<()> {
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return Err(usage(format!(
                "--temperature must be a number of kelvin ≥ 0, not {}",
                self.temperature
            )));
        }
        if !(self.delta.is_finite() && self.delta >= 0.0) {
            return Err(usage(format!(
                "--delta must be a displacement ≥ 0 Å, not {}",
                self.delta
            )));
        }
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(usage(format!(
                "--dt must be a time step > 0 fs, not {}",
                self.dt
            )));
        }
        if self.print_rate == 0 {
            return Err(usage("--print-rate must be at least 1 step".into()));
        }
        if let Some(a) = self.lattice.filter(|a| !(a.is_finite() && *a > 0.0)) {
            return Err(usage(format!("--lattice must be a length > 0 Å, not {a}")));
        }
        Ok(())
    }

    /// The lattice constant used with `pot`.
    pub fn lattice_for(&self, pot: &EamPotential) -> f64 {
        self.lattice.unwrap_or(pot.lattice_constant)
    }

    /// The initial state: CoMD's FCC lattice, its random displacements and velocities, and
    /// the first forces.
    pub fn setup(&self, pot: EamPotential, force: &mut dyn ForceField) -> Result<Simulation> {
        self.check()?;
        check_fcc(&pot)?;
        let a = self.lattice_for(&pot);
        let mut atoms = Atoms::fcc(self.cells, a)?;
        check_size(&self.cells, a, pot.cutoff)?;
        let momenta = thermal_momenta(&atoms.ids, pot.mass(), self.temperature);
        if self.delta > 0.0 {
            atoms.displace_randomly(self.delta);
        }
        Simulation::new(pot, atoms, momenta, self.dt, force)
    }

    /// Sets up and runs `steps` steps, calling `sample` at step 0, every `print_rate` steps and
    /// after the last step.
    pub fn run(
        &self,
        pot: EamPotential,
        force: &mut dyn ForceField,
        mut sample: impl FnMut(&Sample),
    ) -> Result<Simulation> {
        let mut sim = self.setup(pot, force)?;
        sample(&sim.sample());
        while sim.step < self.steps {
            sim.step(force)?;
            if sim.step % self.print_rate == 0 || sim.step == self.steps {
                sample(&sim.sample());
            }
        }
        Ok(sim)
    }
}

/// CoMD builds FCC lattices only.
fn check_fcc(pot: &EamPotential) -> Result<()> {
    if pot.lattice_type.eq_ignore_ascii_case("fcc") {
        return Ok(());
    }
    Err(usage(format!(
        "the potential's lattice type is `{}`; CoMD builds FCC lattices only",
        pot.lattice_type
    )))
}

/// The box must hold [`MIN_LINK_CELLS`] link cells per axis, i.e. be at least 3 cutoffs wide.
fn check_size(cells: &[usize; 3], a: f64, cutoff: f64) -> Result<()> {
    let box_len = cells.map(|n| n as f64 * a);
    let grid = box_len.map(|l| (l / cutoff).floor());
    if grid.iter().all(|&g| g >= MIN_LINK_CELLS as f64) {
        return Ok(());
    }
    let need = (MIN_LINK_CELLS as f64 * cutoff / a).ceil();
    Err(usage(format!(
        "simulation too small: {}×{}×{} unit cells of {a} Å make a box of {:.4} × {:.4} × {:.4} Å, \
         {}×{}×{} link cells of at least the cutoff {cutoff:.4} Å; CoMD needs at least {MIN_LINK_CELLS} \
         per axis, so a box at least {:.4} Å wide: use at least {need} unit cells per axis",
        cells[0],
        cells[1],
        cells[2],
        box_len[0],
        box_len[1],
        box_len[2],
        grid[0],
        grid[1],
        grid[2],
        MIN_LINK_CELLS as f64 * cutoff,
    )))
}

/// The link cells of a configuration (for reports: CoMD prints their grid and size).
pub fn link_cells(sim: &Simulation) -> Result<LinkCells> {
    LinkCells::new(&sim.atoms, sim.pot.cutoff)
}
