//! CoMD's units and physical constants (CoMD 1.1 `constants.h`): lengths in Å, time in fs,
//! energy in eV; masses are read in amu and used in eV·fs²/Å².

/// One atomic mass unit in kilograms.
pub const AMU_IN_KILOGRAMS: f64 = 1.660538921e-27;
/// One femtosecond in seconds.
pub const FS_IN_SECONDS: f64 = 1.0e-15;
/// One ångström in metres.
pub const ANGS_IN_METERS: f64 = 1.0e-10;
/// One electronvolt in joules.
pub const EV_IN_JOULES: f64 = 1.602176565e-19;

/// One amu in CoMD's internal mass unit eV·fs²/Å² (about 103.6427), with CoMD's order of
/// operations.
pub const AMU_TO_INTERNAL_MASS: f64 = AMU_IN_KILOGRAMS * ANGS_IN_METERS * ANGS_IN_METERS
    / (FS_IN_SECONDS * FS_IN_SECONDS * EV_IN_JOULES);

/// One hartree in eV.
pub const HARTREE_TO_EV: f64 = 27.21138505;
/// One bohr in Å.
pub const BOHR_TO_ANGS: f64 = 0.52917721092;

/// Boltzmann's constant in eV/K.
pub const KB_EV: f64 = 8.6173324e-5;
