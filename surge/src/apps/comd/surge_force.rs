//! The Surge programs ([`program`](super::program)) as [`ForceField`]s: each step the host
//! sorts the atoms by link cell, builds the algorithm's inputs (link-cell tables, or the
//! redistributed neighbour lists), runs the program (one native variant, or the interpreter),
//! and puts the forces back in atom order. The energy is summed per tile of link cells, then
//! over the tiles, as [`reference::direct`](super::reference::direct) sums it.

use super::cells::LinkCells;
use super::lattice::Atoms;
use super::layout::{Sorted, cell_inputs, neighbour_lists};
use super::md::ForceField;
use super::potential::EamPotential;
use super::program::{self, Frame};
use super::reference::{EamResult, TILE_CELLS};
use crate::{Computation, Kernels, Result, SurgeError, Target};
use crate::{Output, Value, Workspace};
use std::sync::Arc;
use surge_codegen::data::Buffer;
use surge_codegen::params::{CpuParams, LoopSchedule};
use surge_codegen::variant::Variant;
use surge_codegen::variant_set::VariantSet;

/// The dissertation's two algorithms for CoMD's force (§5.4.4): the first level of selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Listing 5.6: a map over atoms of reductions over the 27 neighbour link cells.
    Direct,
    /// Listing 5.7: neighbour lists redistributed by the host, a map over atoms.
    Redistributed,
}

impl Algorithm {
    pub const ALL: [Algorithm; 2] = [Algorithm::Direct, Algorithm::Redistributed];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Direct => "direct",
            Algorithm::Redistributed => "redistributed",
        }
    }

    /// The algorithm's program on one configuration.
    pub fn program(
        self,
        pot: &EamPotential,
        atoms: &Atoms,
        cells: &LinkCells,
    ) -> Result<(Computation, Sorted)> {
        let sorted = Sorted::new(cells);
        let frame = Frame::new(pot, sorted.positions(atoms))?;
        let c = match self {
            Algorithm::Direct => program::direct(&frame, cell_inputs(cells, &sorted))?,
            Algorithm::Redistributed => {
                let t = std::time::Instant::now();
                let lists = neighbour_lists(atoms, cells, &sorted, pot.cutoff);
                let listed = t.elapsed().as_secs_f64();
                let c = program::redistributed(&frame, lists)?;
                if std::env::var_os("SURGE_TRACE").is_some() {
                    eprintln!(
                        "redistributed: neighbour lists {listed:.4} s, program {:.4} s",
                        t.elapsed().as_secs_f64() - listed
                    );
                }
                c
            }
        };
        Ok((c, sorted))
    }
}

/// How a program runs: one compiled CPU variant (by id; `None`: the default), the CUDA
/// default variants on a CUDA target (a GPU, or the emulator), or the interpreter.
#[derive(Debug, Clone, PartialEq)]
pub enum Engine {
    Cpu(Option<String>),
    Cuda(Target),
    Interpret,
}

/// An algorithm and how it runs, with its compiled variant once the first step built it, and
/// the workspace its runs write into (the phases' result buffers are reused from step to step:
/// no allocation and no first-touch page faults for them after the first step).
#[derive(Debug)]
pub struct SurgeForce {
    pub algorithm: Algorithm,
    pub engine: Engine,
    built: Option<(Arc<Kernels>, Variant)>,
    ws: Workspace,
}

impl SurgeForce {
    pub fn new(algorithm: Algorithm, engine: Engine) -> SurgeForce {
        SurgeForce {
            algorithm,
            engine,
            built: None,
            ws: Workspace::default(),
        }
    }

    /// Compiles only the chosen variant (the first time; later steps reuse it).
    fn kernels(&mut self, c: &Computation, id: Option<&str>) -> Result<(Arc<Kernels>, Variant)> {
        if let Some(b) = &self.built {
            return Ok(b.clone());
        }
        let set = c.variants(&Target::cpu().platform()?)?;
        let v = match id {
            Some(id) => set.find(id).cloned().ok_or_else(|| {
                SurgeError::Usage(format!(
                    "the {} CoMD program has no variant `{id}`",
                    self.algorithm.name()
                ))
            })?,
            None => comd_default(&set),
        };
        let k = Arc::new(Kernels::build_variants(c, std::slice::from_ref(&v))?);
        self.built = Some((k, v));
        Ok(self.built.clone().expect("just built"))
    }

    /// `(fx, fy, fz, U_i)` per atom in sorted order.
    fn run(&mut self, c: &Computation) -> Result<[Vec<f64>; 4]> {
        match self.engine.clone() {
            Engine::Interpret => columns(&c.interpret()?),
            Engine::Cuda(target) => output_columns(crate::execute(c, &target)?),
            Engine::Cpu(id) => {
                let (k, v) = self.kernels(c, id.as_deref())?;
                k.run_in(c, &v, &mut self.ws)?;
                let out = (self.ws.output()).expect("internal: a finished CoMD run has no output");
                output_columns(out)
            }
        }
    }
}

/// The variant an untuned run uses: the platform's default (all cores on the loop over atoms,
/// the reductions over neighbours sequential) with the atoms handed out dynamically, in the
/// smallest chunk the space has (64), instead of the default's static chunks of 4096 (about 26
/// chunks at 108,000 atoms, 13 per thread: when one core is busy with other work, the other
/// thread waits for its share). On this shared 2-vCPU machine (load average 2.9-3.1) at
/// 108,000 atoms, two runs each: direct 0.386 and 0.372 Mforces/s against 0.337 and 0.311
/// static, redistributed 0.417 and 0.395 against 0.413 and 0.335 (`comd 30 --variant ID`).
/// Falls back to the platform default.
fn comd_default(set: &VariantSet) -> Variant {
    let d = set.default_variant();
    let Ok(dp) = CpuParams::of(d) else {
        return d.clone();
    };
    let unrolls = |p: &CpuParams| p.levels.iter().map(|l| l.unroll).collect::<Vec<_>>();
    let dynamic_chunk = |p: &CpuParams| match p.levels.first().and_then(|l| l.parallel) {
        Some((LoopSchedule::Dynamic, chunk)) => Some(chunk),
        _ => None,
    };
    (set.variants().iter())
        .filter(|v| v.schedule == d.schedule)
        .filter_map(|v| {
            let p = CpuParams::of(v).ok()?;
            let same = p.threads == dp.threads && unrolls(&p) == unrolls(&dp);
            Some((v, dynamic_chunk(&p).filter(|_| same)?))
        })
        .min_by_key(|(_, chunk)| *chunk)
        .map_or_else(|| d.clone(), |(v, _)| v.clone())
}

/// The four columns of the native result, moved out of its four parts (the packed phase's
/// words split per item) without building a `Value` per atom; any other shape via [`columns`].
fn output_columns(out: Output) -> Result<[Vec<f64>; 4]> {
    match out {
        Output::Composite { parts, .. } if parts.len() == 4 => {
            let cols: Vec<Vec<f64>> = (parts.into_iter())
                .filter_map(|p| match p {
                    Output::Seq(Buffer::F64(v)) => Some(v),
                    _ => None,
                })
                .collect();
            let cols: [Vec<f64>; 4] = (cols.try_into()).unwrap_or_else(|_| {
                panic!("internal: the CoMD program's parts are not f64 columns")
            });
            Ok(cols)
        }
        other => columns(&Value::from_output(&other)),
    }
}

/// The four columns of a sequence of `(f64, f64, f64, f64)`.
fn columns(v: &Value) -> Result<[Vec<f64>; 4]> {
    let bad = || SurgeError::Usage(format!("internal: the CoMD program returned {v:?}"));
    let Value::Seq(rows) = v else {
        return Err(bad());
    };
    let mut cols: [Vec<f64>; 4] = Default::default();
    for row in rows {
        let Value::Tuple(items) = row else {
            return Err(bad());
        };
        for (col, item) in cols.iter_mut().zip(items) {
            let Value::Scalar(s) = item else {
                return Err(bad());
            };
            col.push(s.as_f64().ok_or_else(bad)?);
        }
    }
    Ok(cols)
}

/// Σ energies (in sorted order, i.e. cell by cell) per tile of [`TILE_CELLS`] cells, then over
/// the tiles.
fn tiled_energy(sorted: &Sorted, energy: &[f64]) -> f64 {
    let cells = sorted.start.len() - 1;
    (0..cells.div_ceil(TILE_CELLS))
        .map(|t| {
            let lo = sorted.start[t * TILE_CELLS] as usize;
            let hi = sorted.start[((t + 1) * TILE_CELLS).min(cells)] as usize;
            energy[lo..hi].iter().sum::<f64>()
        })
        .sum()
}

impl ForceField for SurgeForce {
    fn name(&self) -> String {
        let how = match &self.engine {
            Engine::Interpret => "interpreter".to_string(),
            Engine::Cuda(Target::Cuda(i)) => format!("cuda:{i} default"),
            Engine::Cuda(Target::CudaEmulated(d)) => format!("cuda emulator ({}) default", d.name),
            Engine::Cuda(Target::Cpu(_)) => "cpu default".to_string(),
            Engine::Cpu(_) => match &self.built {
                Some((_, v)) => v.id(),
                None => "cpu default".to_string(),
            },
        };
        format!("surge/{}/{how}", self.algorithm.name())
    }

    fn compute(
        &mut self,
        pot: &EamPotential,
        atoms: &Atoms,
        cells: &LinkCells,
    ) -> Result<EamResult> {
        let clock = std::time::Instant::now();
        let (c, sorted) = self.algorithm.program(pot, atoms, cells)?;
        let built = clock.elapsed().as_secs_f64();
        let [fx, fy, fz, u] = self.run(&c)?;
        if std::env::var_os("SURGE_TRACE").is_some() {
            eprintln!(
                "{}: program built in {built:.4} s, run and read back in {:.4} s",
                self.name(),
                clock.elapsed().as_secs_f64() - built
            );
        }
        let forces: Vec<[f64; 3]> = (0..fx.len()).map(|s| [fx[s], fy[s], fz[s]]).collect();
        Ok(EamResult {
            energy: tiled_energy(&sorted, &u),
            atom_energy: sorted.unsort(&u),
            rhobar: Vec::new(),
            dembed: Vec::new(),
            forces: sorted.unsort(&forces),
        })
    }
}

/// The Surge force fields that are timed: each algorithm's default CPU variant, compiled
/// natively (one rustc call per algorithm, cached).
pub fn surge_force_fields(_pot: &EamPotential) -> Result<Vec<Box<dyn ForceField>>> {
    Ok(Algorithm::ALL
        .into_iter()
        .map(|a| Box::new(SurgeForce::new(a, Engine::Cpu(None))) as Box<dyn ForceField>)
        .collect())
}
