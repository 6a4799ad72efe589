//! The Nitro-style tuner (dissertation Chapter 2): time every variant on training inputs, learn
//! which variant wins for which input features, keep the model in a tuning store, and pick a
//! variant at run time in microseconds.
//!
//! The tuner is platform-neutral: everything that runs code goes through [`TuningBackend`], so
//! the CPU and CUDA backends plug in by implementing one small trait, and the simulated backend
//! ([`simulated`]) tests the tuner without hardware noise.
//!
//! Measuring on a shared machine (see [`training`]): each input's variants are sampled in
//! interleaved passes, the contenders re-timed in an interleaved second round, and the whole
//! input measured again when the hypervisor stole CPU time during it
//! ([`TrainingConfig::max_steal`]). Evaluating on test inputs adds a confirmation round
//! ([`training::confirm`]) that times exhaustive search's pick, the tuned pick and the default
//! afresh, because the least of many noisy times flatters exhaustive search.
//!
//! Any computation is tuned the same way: describe it as a [`Workload`] (a name, features,
//! a unit), make one [`TuneInput`] per input with your own code, [`tune`] it on a backend, and
//! select with [`Tuned`]. The built-in apps register through the same API
//! (`surge::apps::App::workload`). Here on the simulated backend (planted timings):
//!
//! ```
//! use surge::prelude::*;
//! use surge::tune::{self, simulated::SimulatedBackend, TuneInput, TuneOptions, Workload};
//! let dot = Workload::new("dot");
//! let input = |n: usize| -> surge::Result<TuneInput> {
//!     let x = Seq::input("x", vec![1.0f64; n])?;
//!     let y = Seq::input("y", vec![2.0f64; n])?;
//!     let p = map(|(a, b): (Scalar<f64>, Scalar<f64>)| a * b, (&x, &y))?;
//!     dot.input(format!("n={n}"), Computation::new(&reduce(add, &p)?)?)
//! };
//! let backend = SimulatedBackend::sized("dot");
//! let inputs = [100, 1_000, 20_000, 100_000, 400_000, 2_000_000]
//!     .map(input)
//!     .into_iter()
//!     .collect::<surge::Result<Vec<_>>>()?;
//! let store = tune::tune(&backend, &dot, &inputs, &TuneOptions::default(), &mut |_| {})?;
//! let tuned = tune::Tuned::from_store(&dot, store, &backend);
//! let pick = tuned.select(&input(50)?)?;
//! assert_eq!(pick.variant, "sim/dot/sequential");
//! # Ok::<(), surge::SurgeError>(())
//! ```
//!
//! On the real CPU (what `examples/tune_own.rs` does at length):
//!
//! ```no_run
//! use surge::prelude::*;
//! use surge::tune::{self, cpu::CpuBackend, TuneOptions, Tuned, TuningBackend, Workload};
//! let dot = Workload::new("dot").with_unit("GFLOP/s", 1e-9);
//! let input = |n: usize| -> surge::Result<tune::TuneInput> {
//!     let x = Seq::input("x", vec![1.0f64; n])?;
//!     let y = Seq::input("y", vec![2.0f64; n])?;
//!     let p = map(|(a, b): (Scalar<f64>, Scalar<f64>)| a * b, (&x, &y))?;
//!     let c = Computation::new(&reduce(add, &p)?)?;
//!     Ok(dot.input(format!("n={n}"), c)?.with_work(2.0 * n as f64))
//! };
//! let train = [1 << 10, 1 << 14, 1 << 18, 1 << 22]
//!     .map(input)
//!     .into_iter()
//!     .collect::<surge::Result<Vec<_>>>()?;
//! let backend = CpuBackend::new();
//! let store = tune::tune(&backend, &dot, &train, &TuneOptions::default(), &mut |_| {})?;
//! store.save(&tune::store::default_path(dot.name(), &backend.platform())?)?;
//! // At run time:
//! let tuned = Tuned::open(&dot, &backend)?;
//! let (out, selection) = tuned.execute(&input(100_000)?, &surge::Target::cpu())?;
//! # Ok::<(), surge::SurgeError>(())
//! ```

mod affinity;
pub mod algorithms;
pub mod campaign;
pub mod cover;
pub mod cpu;
pub mod cuda;
mod cusp;
mod cusp_sample;
pub mod features;
pub mod filtered;
pub mod incremental;
pub mod inputs;
pub mod journal;
mod labelling;
#[cfg(feature = "mpi")]
pub(crate) use labelling::label;
pub mod model;
mod options;
pub mod record;
pub mod report;
pub mod scoring;
pub mod select;
pub mod simulated;
pub mod store;
pub mod trace;
pub mod training;
mod tuner;
pub mod workload;

pub use cover::{Cover, cover};
pub use features::{FeatureSet, FeatureValues};
pub use labelling::labels;
pub use model::{Model, ModelKind, SvmSearch};
pub use options::{Progress, TuneOptions};
pub use select::{Selection, Tuned, execute_tuned};
pub use store::{StoreKey, TuningStore};
pub use training::{Disturbance, Measurement, Outcome, TrainingConfig};
pub use tuner::{Labeller, Local, tune, tune_with};
pub use workload::Workload;

use crate::mtx::CsrMatrix;
use crate::{Result, SurgeError};
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

/// One input the tuner trains, tests or selects on: its workload's computation built on it
/// (what a backend runs), its work, and what features may need beside the computation (a CSR
/// matrix, the user's own data). Made by [`Workload::input`].
#[derive(Clone)]
pub struct TuneInput {
    /// A short, unique name (file name or generator description) used in stores and reports.
    pub name: String,
    /// The name of the [`Workload`] it belongs to.
    pub workload: String,
    pub computation: crate::Computation,
    /// The useful work of one run (flops for spmv, elements for reduce and scan), so times on
    /// different inputs become comparable rates (GFLOP/s, Gelem/s) in reports.
    pub work: f64,
    pub matrix: Option<Arc<CsrMatrix>>,
    /// The user's description of the input ([`TuneInput::with_data`]).
    pub data: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for TuneInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TuneInput")
            .field("name", &self.name)
            .field("workload", &self.workload)
            .field("work", &self.work)
            .field(
                "matrix",
                &self.matrix.as_ref().map(|m| (m.rows, m.cols, m.nnz())),
            )
            .finish_non_exhaustive()
    }
}

/// What the tuner needs from a backend. Object-safe, so a tuning run holds `&dyn TuningBackend`
/// and adding a platform is one `match` arm in `surge tune`.
pub trait TuningBackend {
    /// `"<platform>:<device>"`, e.g. `"cpu:Intel Xeon ..."` or `"sim:planted"`; part of the store
    /// key, so a model tuned on one machine is never used on another.
    fn platform(&self) -> String;
    /// The candidate variant ids for the app's computation on this input (the same set for every
    /// input of one app; its checksum keys the store).
    fn variants(&self, input: &TuneInput) -> Result<Vec<String>>;
    /// Runs `variant` on `input` once and returns its wall time; `Err(reason)` on failure, which
    /// the tuner records and never treats as fatal.
    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String>;
    /// Runs `variant` on `input` `runs` times back to back and returns the total wall time
    /// (one sample of [`TrainingConfig::min_sample_time`]). The default sums `run_once`; a
    /// backend overrides it to time the whole batch at once, or (the simulated one) to stay
    /// cheap and deterministic.
    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        let mut total = Duration::ZERO;
        for _ in 0..runs.max(1) {
            total += self.run_once(input, variant)?;
        }
        Ok(total)
    }
    /// The variant used when no model is available (no store, corrupt store, mismatched key).
    fn default_variant(&self, input: &TuneInput) -> Result<String>;
    /// CPU time taken from the tuner by others so far (a hypervisor's *steal* time and, where
    /// the backend can tell, other processes' busy time, summed over the CPUs) and the CPU
    /// count. A measurement during which it grows was disturbed (see
    /// [`TrainingConfig::max_steal`]). None where unknown (the default).
    fn stolen(&self) -> Option<(Duration, usize)> {
        None
    }
    /// The time of a vendor reference (MKL, cuSPARSE) on this input, if the backend has one.
    fn reference(&self, _input: &TuneInput) -> Option<std::result::Result<Duration, String>> {
        None
    }
}

/// The platform half of `"<platform>:<device>"`.
pub fn split_platform(p: &str) -> (&str, &str) {
    p.split_once(':').unwrap_or((p, ""))
}

fn tune_err(msg: impl Into<String>) -> SurgeError {
    SurgeError::Tune(msg.into())
}
