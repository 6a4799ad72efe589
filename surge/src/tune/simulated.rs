//! A simulated backend: deterministic synthetic timings computed from the input's features with a
//! planted rule, so the tuner, store and selection are tested without hardware noise (like
//! CubeCL's dummy backend and Kernel Tuner's simulation mode). Nothing runs and nothing sleeps.
//!
//! Planted rules (times in nanoseconds), one per kind of input:
//! * sparse ([`SimulatedBackend::sparse`], inputs with a matrix: `nnz` nonzeros, average row length `r`, coefficient of variation `cv` of row lengths):
//!   `row-per-thread = nnz·(1 + r/8)·(1 + cv)`, `row-per-warp = 2·nnz·(1 + cv)`,
//!   `merge-path = 2.6·nnz`: row-per-thread wins below 8 nonzeros per row, row-per-warp above,
//!   merge-path on very irregular matrices.
//! * sized ([`SimulatedBackend::sized`], an input's work `n`, e.g. its elements): `sequential = n + 100`, `tiled = n/2 + 5000`,
//!   `blocked = 0.3·n + 200000`: sequential below ~9800 elements, blocked above ~975000.

use super::{TuneInput, TuningBackend};
use crate::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug)]
pub struct SimulatedBackend {
    /// The workload it simulates (its variant ids are `sim/<workload>/<name>`).
    workload: String,
    /// Which planted rule: the sparse one, or the sized one.
    sparse: bool,
    /// A variant that always fails, to exercise failure handling.
    failing: Option<String>,
    /// Run counter, so repeated runs differ by a deterministic ±1 % jitter.
    runs: AtomicU64,
}

impl SimulatedBackend {
    /// The sparse rule, for `workload`'s inputs (each with its matrix).
    pub fn sparse(workload: &str) -> SimulatedBackend {
        SimulatedBackend::planted(workload, true)
    }

    /// The sized rule, for `workload`'s inputs (on their work).
    pub fn sized(workload: &str) -> SimulatedBackend {
        SimulatedBackend::planted(workload, false)
    }

    fn planted(workload: &str, sparse: bool) -> SimulatedBackend {
        SimulatedBackend {
            workload: workload.to_string(),
            sparse,
            failing: None,
            runs: AtomicU64::new(0),
        }
    }

    /// Adds a variant `sim/<workload>/broken` that fails on every run.
    pub fn with_failing_variant(mut self) -> SimulatedBackend {
        self.failing = Some(format!("sim/{}/broken", self.workload));
        self
    }

    fn base_variants(&self) -> Vec<String> {
        let names: &[&str] = if self.sparse {
            &["row-per-thread", "row-per-warp", "merge-path"]
        } else {
            &["sequential", "tiled", "blocked"]
        };
        names
            .iter()
            .map(|n| format!("sim/{}/{n}", self.workload))
            .collect()
    }

    /// The planted noise-free time of a variant on an input, in nanoseconds.
    pub fn model_nanos(&self, input: &TuneInput, variant: &str) -> Option<f64> {
        let short = variant.rsplit('/').next()?;
        if let Some(m) = input.matrix.as_deref() {
            let nnz = m.nnz().max(1) as f64;
            let rows = m.rows.max(1) as f64;
            let r = nnz / rows;
            let var = m
                .row_offsets
                .windows(2)
                .map(|w| {
                    let d = (w[1] - w[0]) as f64 - r;
                    d * d
                })
                .sum::<f64>()
                / rows;
            let cv = var.sqrt() / r.max(1e-9);
            match short {
                "row-per-thread" => Some(nnz * (1.0 + r / 8.0) * (1.0 + cv)),
                "row-per-warp" => Some(2.0 * nnz * (1.0 + cv)),
                "merge-path" => Some(2.6 * nnz),
                _ => None,
            }
        } else {
            let n = input.work;
            match short {
                "sequential" => Some(n + 100.0),
                "tiled" => Some(n / 2.0 + 5000.0),
                "blocked" => Some(0.3 * n + 200_000.0),
                _ => None,
            }
        }
    }
}

impl TuningBackend for SimulatedBackend {
    fn platform(&self) -> String {
        "sim:planted".into()
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        if input.workload != self.workload || input.matrix.is_some() != self.sparse {
            return Err(crate::SurgeError::Usage(format!(
                "the simulated backend was made for {} inputs of `{}`, not input `{}` of `{}`",
                if self.sparse { "sparse" } else { "sized" },
                self.workload,
                input.name,
                input.workload
            )));
        }
        let mut v = self.base_variants();
        v.extend(self.failing.clone());
        Ok(v)
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        if self.failing.as_deref() == Some(variant) {
            return Err(format!(
                "simulated failure of `{variant}` on `{}`",
                input.name
            ));
        }
        let ns = self
            .model_nanos(input, variant)
            .ok_or_else(|| format!("unknown variant `{variant}` for input `{}`", input.name))?;
        let k = self.runs.fetch_add(1, Ordering::Relaxed);
        let jitter = 1.0 + ((k % 5) as f64 - 2.0) * 0.005;
        Ok(Duration::from_nanos((ns * jitter).max(1.0) as u64))
    }

    /// `runs` times the planted time, with one jitter draw: as cheap and deterministic as a
    /// single run, however large the batch.
    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        self.run_once(input, variant).map(|d| d * runs.max(1))
    }

    fn default_variant(&self, _input: &TuneInput) -> Result<String> {
        let name = if self.sparse { "row-per-warp" } else { "tiled" };
        Ok(format!("sim/{}/{name}", self.workload))
    }

    /// A reference that is a constant 10 % slower than the best planted variant.
    fn reference(&self, input: &TuneInput) -> Option<std::result::Result<Duration, String>> {
        let best = self
            .base_variants()
            .iter()
            .filter_map(|v| self.model_nanos(input, v))
            .fold(f64::INFINITY, f64::min);
        best.is_finite()
            .then(|| Ok(Duration::from_nanos((best * 1.1) as u64)))
    }
}
