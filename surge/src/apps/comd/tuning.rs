//! CoMD's force tuned through the open tuning API, two-level (dissertation §5.4.4): the
//! algorithm (Listing 5.6 direct, Listing 5.7 redistributed) and, within it, the variant. Each
//! training configuration (an FCC lattice with CoMD's random displacements) gives one input per
//! algorithm, made into one tuned input by [`crate::tune::algorithms::input`]; the model's
//! classes are `algorithm::variant` pairs. Features: the atoms, and the atoms per link cell
//! (the inner reductions' length). Work: one force per atom (Mforces/s).
//!
//! The timed part is the Surge program on its inputs, as `surge run comd` runs it every step;
//! the host's per-step work (sorting atoms by cell, the redistributed algorithm's neighbour
//! lists) is the same for every variant of an algorithm and is not timed.

use super::cells::LinkCells;
use super::lattice::Atoms;
use super::potential::EamPotential;
use super::surge_force::Algorithm;
use crate::tune::algorithms::{self, AlgorithmInputs};
use crate::tune::features::FeatureSet;
use crate::tune::{TuneInput, Workload};
use crate::{Result, SurgeError};

/// The tuned workload's name (and the store's).
pub const WORKLOAD: &str = "comd";

/// One CoMD configuration, attached to each algorithm's input (what the features read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// FCC unit cells along each axis.
    pub cells: [usize; 3],
    /// Lattice constant, Å.
    pub lattice: f64,
    /// The largest random displacement per coordinate, Å (CoMD's `-r`).
    pub delta: f64,
}

#[derive(Debug, Clone, Copy)]
struct Shape {
    atoms: usize,
    link_cells: usize,
}

fn shape(input: &TuneInput) -> Result<Shape> {
    let first = input
        .data::<AlgorithmInputs>()
        .and_then(|a| a.0.first())
        .map_or(input, |(_, i)| i);
    first.data::<Shape>().copied().ok_or_else(|| {
        SurgeError::Tune(format!(
            "input `{}` is not a CoMD configuration (surge::apps::comd::tuning::input)",
            input.name
        ))
    })
}

/// The workload: Mforces/s, features the atoms (log scale) and the atoms per link cell.
pub fn workload() -> Workload {
    // Not Surge's inferred features: the programs' lengths are only known when they run.
    let features = FeatureSet::default()
        .with_feature("atoms", true, |i| Ok(shape(i)?.atoms as f64))
        .with_feature("atoms_per_link_cell", false, |i| {
            let s = shape(i)?;
            Ok(s.atoms as f64 / s.link_cells.max(1) as f64)
        });
    Workload::new(WORKLOAD)
        .with_unit("Mforces/s", 1e-6)
        .with_features(features)
}

/// The tuned input of configuration `cfg` with potential `pot`: both algorithms' programs.
pub fn input(pot: &EamPotential, cfg: Config) -> Result<TuneInput> {
    let mut atoms = Atoms::fcc(cfg.cells, cfg.lattice)?;
    if cfg.delta > 0.0 {
        atoms.displace_randomly(cfg.delta);
    }
    let cells = LinkCells::new(&atoms, pot.cutoff)?;
    let s = Shape {
        atoms: atoms.len(),
        link_cells: cells.len(),
    };
    let w = workload();
    let [x, y, z] = cfg.cells;
    let name = format!("cells={x}x{y}x{z} a={:.4} delta={}", cfg.lattice, cfg.delta);
    let mut per_algorithm = Vec::new();
    for a in Algorithm::ALL {
        let (c, _) = a.program(pot, &atoms, &cells)?;
        let i = w
            .input_with_work(format!("{name} {}", a.name()), c, atoms.len() as f64)
            .with_data(s);
        per_algorithm.push((a.name().to_string(), i));
    }
    algorithms::input(&w, name, per_algorithm)
}

/// Training (`test == false`) or held-out test configurations; `small` for a quick run (each
/// size is one rustc-free run of already compiled programs: only the first input compiles).
pub fn configs(pot: &EamPotential, small: bool, test: bool) -> Vec<Config> {
    let a = pot.lattice_constant;
    let sizes: &[usize] = match (small, test) {
        (true, false) => &[5, 7, 9],
        (true, true) => &[6, 8],
        (false, false) => &[5, 6, 8, 10, 12, 14, 17, 20],
        (false, true) => &[7, 9, 11, 13, 16, 18],
    };
    let mut out = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        // Two densities: the potential's lattice, and a 2% dilated one (fewer neighbours).
        let lattice = if k % 2 == 0 { a } else { a * 1.02 };
        out.push(Config {
            cells: [n; 3],
            lattice,
            delta: 0.1,
        });
    }
    out
}

/// The algorithm and variant of a selected pair id.
pub fn pick(id: &str) -> Result<(Algorithm, String)> {
    let bad = || SurgeError::Tune(format!("`{id}` is not a CoMD algorithm::variant pair"));
    let (a, v) = algorithms::split(id).ok_or_else(bad)?;
    let algorithm = Algorithm::ALL
        .into_iter()
        .find(|x| x.name() == a)
        .ok_or_else(bad)?;
    Ok((algorithm, v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::algorithms::AlgorithmBackend;
    use crate::tune::simulated::SimulatedBackend;
    use crate::tune::{self, TuneOptions};

    fn adams() -> EamPotential {
        let dir = super::super::tests::data_dir();
        EamPotential::read(&dir.join("Cu_u6.eam"), super::super::Format::Funcfl).expect("read")
    }

    #[test]
    fn selection_is_an_algorithm_and_its_variant() -> Result<()> {
        let pot = adams();
        let train = configs(&pot, true, false)
            .into_iter()
            .map(|c| input(&pot, c))
            .collect::<Result<Vec<_>>>()?;
        assert_eq!(train.len(), 3);
        let inner = SimulatedBackend::sized(WORKLOAD);
        let backend = AlgorithmBackend::new(&inner);
        let w = workload();
        let store = tune::tune(&backend, &w, &train, &TuneOptions::default(), &mut |_| {})?;
        let tuned = tune::Tuned::from_store(&w, store, &backend);
        let cfg = Config {
            cells: [6, 6, 7],
            lattice: pot.lattice_constant,
            delta: 0.0,
        };
        let probe = input(&pot, cfg)?;
        let f = w.features().evaluate(&probe)?.values;
        assert_eq!(f[0], (4 * 6 * 6 * 7) as f64, "atoms");
        let sel = tuned.select(&probe)?;
        assert!(sel.from_model, "{sel:?}");
        let (algorithm, variant) = pick(&sel.variant)?;
        assert!(Algorithm::ALL.contains(&algorithm));
        assert!(variant.starts_with("sim/comd/"), "{variant}");
        assert!(pick("sideways::x").is_err() && pick("no-pair").is_err());
        Ok(())
    }
}
