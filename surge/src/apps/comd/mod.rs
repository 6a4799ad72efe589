//! CoMD's EAM force computation (CoMD 1.1, the ExMatEx molecular-dynamics proxy; the
//! dissertation's fifth benchmark, §5.4.4), in plain Rust: the reference that Surge programs
//! for it are checked against. See `README.md` in this directory for the concepts, units and
//! what was checked against CoMD's own output.
//!
//! * [`potential`]: funcfl and setfl files, read as CoMD reads them;
//! * [`table`]: CoMD's interpolation of the tabulated F(ρ̄), ρ(r), φ(r);
//! * [`lattice`]: the FCC copper lattice and CoMD's random displacements ([`random`]);
//! * [`cells`]: link cells with periodic images;
//! * [`reference`](mod@reference): energies and forces (direct: serial or rayon; pair loops);
//! * [`velocity`], [`md`], [`config`]: CoMD's initial velocities, its velocity-Verlet steps and
//!   a run's parameters.
//!
//! ```no_run
//! use surge::apps::comd::{Atoms, EamPotential, Exec, Format, reference};
//! let pot = EamPotential::read("../shared/comd/Cu_u6.eam".as_ref(), Format::Funcfl)?;
//! let atoms = Atoms::fcc([6, 6, 6], pot.lattice_constant)?;
//! let result = reference::compute(&pot, &atoms, Exec::Rayon)?;
//! println!("{:.12} eV/atom", result.energy_per_atom()); // -3.538079224686
//! # Ok::<(), surge::SurgeError>(())
//! ```

pub mod cells;
pub mod config;
pub mod interp_dsel;
pub mod lattice;
pub mod layout;
pub mod md;
pub mod potential;
pub mod program;
pub mod random;
pub mod reference;
pub mod surge_force;
pub mod table;
pub mod tuning;
pub mod units;
pub mod velocity;

pub use cells::LinkCells;
pub use config::MdConfig;
pub use lattice::Atoms;
pub use md::{ForceField, Sample, Simulation};
pub use potential::{EamPotential, Format};
pub use reference::{EamResult, Exec};
pub use surge_force::{Algorithm, Engine, SurgeForce, surge_force_fields};
pub use table::Table;

#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod md_tests;
#[cfg(test)]
mod program_tests;
#[cfg(test)]
mod tests;
