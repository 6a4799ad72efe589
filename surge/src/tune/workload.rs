//! What a user tunes: a [`Workload`] is a named family of computations of one structure (a dot
//! product, a CSR row maximum, SpMV), with the features its model sees and the unit its rates
//! are reported in. Its inputs are [`TuneInput`]s: one `Computation` each, built by the user's
//! own code on one input. Nothing here knows the built-in applications; they register
//! themselves through the same type (`surge::apps::App::workload`).
//!
//! The model a workload is tuned into is keyed by the workload's name, the structure of its
//! computation (the IR with sizes and literal values erased, see
//! `surge_codegen::ir::literals::structure`), the platform and the device: two workloads never
//! share a model, and a model whose computation changed is refused with a message to retune.
//!
//! ```
//! use surge::prelude::*;
//! use surge::tune::Workload;
//! // A dot product, tuned per input length.
//! let dot = Workload::new("dot").with_unit("Gflop/s", 2e-9);
//! let build = |n: usize| -> surge::Result<Computation> {
//!     let x = Seq::input("x", vec![1.0f64; n])?;
//!     let y = Seq::input("y", vec![2.0f64; n])?;
//!     Computation::new(&reduce(add, &map(|(a, b): (Scalar<f64>, Scalar<f64>)| a * b, (&x, &y))?)?)
//! };
//! let input = dot.input(format!("n={}", 1000), build(1000)?)?.with_work(2000.0);
//! assert_eq!(input.workload, "dot");
//! # Ok::<(), surge::SurgeError>(())
//! ```

use super::features::{FeatureGroup, FeatureSet, surge_group};
use super::{TuneInput, tune_err};
use crate::mtx::CsrMatrix;
use crate::{Computation, Result};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A tunable computation family (see the module documentation).
#[derive(Clone)]
pub struct Workload {
    name: String,
    features: FeatureSet,
    /// The rate unit of reports and its scale: rate = work × scale / seconds.
    unit: (String, f64),
}

impl fmt::Debug for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workload")
            .field("name", &self.name)
            .field("features", &self.features.names())
            .field("unit", &self.unit)
            .finish()
    }
}

impl Workload {
    /// A workload named `name` (letters, digits, `-`, `_`, `.`: it names the store's file),
    /// whose model sees the features Surge infers from the computation (dissertation §5.2.4:
    /// length, aspect ratio of a uniform nest, average row length of an irregular one, element
    /// count; the aspect ratio and average row length of a second nesting level). Add features
    /// of your own with [`with_feature`](Self::with_feature).
    ///
    /// # Panics
    /// When `name` is empty or holds other characters: a workload's name is part of the
    /// program, not of its input.
    pub fn new(name: impl Into<String>) -> Workload {
        let name = name.into();
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')),
            "a workload's name is letters, digits, `-`, `_` or `.`, not `{name}`"
        );
        Workload {
            name,
            features: FeatureSet::default().with_group(surge_group()),
            unit: ("Gelem/s".into(), 1e-9),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn features(&self) -> &FeatureSet {
        &self.features
    }

    /// The rate unit of reports, `unit` per (work × `scale`) per second: `("GFLOP/s", 1e-9)`
    /// with each input's work counted in flops. The default is Gelem/s of elements.
    pub fn with_unit(mut self, unit: &str, scale: f64) -> Workload {
        self.unit = (unit.to_string(), scale);
        self
    }

    pub fn unit(&self) -> &str {
        &self.unit.0
    }

    /// A rate in [`unit`](Self::unit) for `work` done in `seconds`.
    pub fn rate(&self, work: f64, seconds: f64) -> f64 {
        work * self.unit.1 / seconds
    }

    /// Adds a user feature of one value, computed from the input (its computation, or the data
    /// attached with [`TuneInput::with_data`]). `log_scale`: compare on a log scale (sizes).
    pub fn with_feature(
        mut self,
        name: &str,
        log_scale: bool,
        f: impl Fn(&TuneInput) -> Result<f64> + Send + Sync + 'static,
    ) -> Workload {
        self.features = self.features.with_feature(name, log_scale, f);
        self
    }

    /// Adds a group of features computed in one pass (e.g. the CUSP features of a matrix).
    pub fn with_group(mut self, g: FeatureGroup) -> Workload {
        self.features = self.features.with_group(g);
        self
    }

    /// Replaces the features altogether (the inferred ones included).
    pub fn with_features(mut self, features: FeatureSet) -> Workload {
        self.features = features;
        self
    }

    /// One input of this workload: `computation` built on it, named `name` in stores and
    /// reports. Its work (for rates) defaults to the element count Surge infers.
    pub fn input(&self, name: impl Into<String>, computation: Computation) -> Result<TuneInput> {
        let name = name.into();
        let work = computation
            .features()
            .map(|f| f.elements as f64)
            .map_err(|e| tune_err(format!("input `{name}` of `{}`: {e}", self.name)))?;
        Ok(self.input_with_work(name, computation, work))
    }

    /// [`input`](Self::input) whose work is given, not inferred: for computations whose element
    /// count Surge cannot know before running (a `range` bounded by a computed length).
    pub fn input_with_work(
        &self,
        name: impl Into<String>,
        computation: Computation,
        work: f64,
    ) -> TuneInput {
        TuneInput {
            name: name.into(),
            workload: self.name.clone(),
            computation,
            work,
            matrix: None,
            data: None,
        }
    }
}

impl TuneInput {
    /// The useful work of one run in the workload's unit (flops for a GFLOP/s workload), so
    /// times on different inputs become comparable rates.
    pub fn with_work(mut self, work: f64) -> TuneInput {
        self.work = work;
        self
    }

    /// Attaches the sparse matrix the computation was built on (for the CUSP features and the
    /// MKL reference).
    pub fn with_matrix(mut self, m: Arc<CsrMatrix>) -> TuneInput {
        self.matrix = Some(m);
        self
    }

    /// Attaches the user's own description of the input, for user features
    /// ([`data`](Self::data) gets it back).
    pub fn with_data<T: Any + Send + Sync>(mut self, data: T) -> TuneInput {
        self.data = Some(Arc::new(data));
        self
    }

    /// The data attached with [`with_data`](Self::with_data), if it is a `T`.
    pub fn data<T: Any>(&self) -> Option<&T> {
        self.data.as_deref().and_then(|d| d.downcast_ref())
    }

    /// The structure hash of the input's computation, hex: what the store is keyed by.
    pub fn structure(&self) -> String {
        if let Some(algos) = self.data::<super::algorithms::AlgorithmInputs>() {
            return format!("{:032x}", super::algorithms::structure(algos));
        }
        format!("{:032x}", self.computation.ir().structure_hash())
    }
}
