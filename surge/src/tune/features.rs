//! Input features: what the model sees of an input. Surge's own three (inferred from the
//! computation, computed once per computation), the CUSP features of the dissertation's Table
//! 2.3 for spmv with two layout features (BCSR 2×2 fill, column spread), and any user-defined
//! feature functions. Evaluation is timed, because at run time the feature pass is part of the
//! selection cost. Groups are evaluated one after another on the calling thread: each is cheap
//! (the CUSP pass reads the row offsets, or chunks of them, and runs of rows, see `cusp`: on a
//! fresh input about 0.06 of one rayon CSR SpMV on `matrices-large`, 0.105 at most in three
//! runs), and a rayon fork-join over three groups cost more than the cheap ones together.
//! Against the variant the model picks (SELL or lanes on two threads, 2-4× a rayon CSR SpMV)
//! the selection cost a median of 0.28 calls in `surge bench spmv --tuned`; the CUSP samples
//! were halved for it (issue 24), which halved the pass on the larger matrices but left a floor
//! of 2-5 µs on a fresh input (cache and TLB misses) and the query's 0.7-4.9 µs on a fresh
//! input: figures and what remains in the `cusp` module notes.

use super::TuneInput;
pub use super::cusp::{CuspFeatures, Plan};
use crate::{Result, SurgeError};
use rayon::prelude::*;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A function computing one or more feature values of an input.
pub type FeatureFn = Arc<dyn Fn(&TuneInput) -> Result<Vec<f64>> + Send + Sync>;

/// Features computed together (one pass over the input), e.g. the CUSP features.
#[derive(Clone)]
pub struct FeatureGroup {
    pub name: String,
    /// How the values are computed, bumped whenever that changes (1 unless set with
    /// [`with_version`](Self::with_version)): a store records it, and a model trained on
    /// another version of a group is refused, since it would be queried with values computed
    /// another way. Renaming, adding or removing a feature is noticed without it.
    pub version: u32,
    /// (feature name, log-scaled?) per value. Sizes span orders of magnitude, so they are
    /// compared on a log scale before the [-1, 1] scaling.
    pub features: Vec<(String, bool)>,
    pub eval: FeatureFn,
}

impl fmt::Debug for FeatureGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FeatureGroup")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl FeatureGroup {
    /// A group of version 1 computing `features` ((name, log-scaled?) per value) with `eval`.
    pub fn new(
        name: &str,
        features: Vec<(String, bool)>,
        eval: impl Fn(&TuneInput) -> Result<Vec<f64>> + Send + Sync + 'static,
    ) -> FeatureGroup {
        FeatureGroup {
            name: name.to_string(),
            version: 1,
            features,
            eval: Arc::new(eval),
        }
    }

    /// The group with its version set: bump it whenever its values are computed another way,
    /// so stores trained on the old values are refused.
    ///
    /// ```
    /// use surge::tune::features::FeatureGroup;
    /// let g = FeatureGroup::new("rows", vec![("rows".into(), true)], |_| Ok(vec![1.0]));
    /// assert_eq!(g.version, 1);
    /// assert_eq!(g.with_version(2).version, 2);
    /// ```
    pub fn with_version(mut self, version: u32) -> FeatureGroup {
        self.version = version;
        self
    }

    /// What a store records of the group: its name, version and feature names.
    pub fn key(&self) -> FeatureGroupKey {
        FeatureGroupKey {
            name: self.name.clone(),
            version: self.version,
            features: self.features.iter().map(|(n, _)| n.clone()).collect(),
        }
    }
}

/// A feature group as a store records it (see [`FeatureGroup::key`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FeatureGroupKey {
    pub name: String,
    pub version: u32,
    /// The group's feature names, in order.
    pub features: Vec<String>,
}

/// The features of one workload: an ordered list of groups.
#[derive(Debug, Clone, Default)]
pub struct FeatureSet {
    groups: Vec<FeatureGroup>,
}

/// The features of one input, with the time each group took.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FeatureValues {
    pub values: Vec<f64>,
    /// Seconds per group, in group order.
    pub group_seconds: Vec<f64>,
    /// Wall time of the whole (parallel) evaluation.
    pub seconds: f64,
}

impl FeatureSet {
    /// Surge's inferred features alone (what a [`Workload`](super::Workload) starts with).
    pub fn inferred() -> FeatureSet {
        FeatureSet::default().with_group(surge_group())
    }

    pub fn with_group(mut self, g: FeatureGroup) -> FeatureSet {
        self.groups.push(g);
        self
    }

    /// Sets the version of the group named `group` (e.g. a feature added with
    /// [`with_feature`](Self::with_feature), which is a group of its own), to be bumped when
    /// its values are computed another way. A set without that group is returned unchanged.
    ///
    /// ```
    /// use surge::tune::FeatureSet;
    /// let f = FeatureSet::inferred()
    ///     .with_feature("nnz", true, |_| Ok(1.0))
    ///     .with_version("nnz", 2);
    /// assert_eq!(f.key()[1].version, 2);
    /// assert_eq!(f.key()[0].version, 1);
    /// ```
    pub fn with_version(mut self, group: &str, version: u32) -> FeatureSet {
        for g in self.groups.iter_mut().filter(|g| g.name == group) {
            g.version = version;
        }
        self
    }

    /// What a store records of the set: each group's name, version and feature names.
    pub fn key(&self) -> Vec<FeatureGroupKey> {
        self.groups.iter().map(FeatureGroup::key).collect()
    }

    /// Adds a user-defined feature function of one value.
    pub fn with_feature(
        self,
        name: &str,
        log_scale: bool,
        f: impl Fn(&TuneInput) -> Result<f64> + Send + Sync + 'static,
    ) -> FeatureSet {
        self.with_group(FeatureGroup::new(
            name,
            vec![(name.to_string(), log_scale)],
            move |i| Ok(vec![f(i)?]),
        ))
    }

    pub fn names(&self) -> Vec<String> {
        self.groups
            .iter()
            .flat_map(|g| g.features.iter().map(|(n, _)| n.clone()))
            .collect()
    }

    pub fn log_scaled(&self) -> Vec<bool> {
        self.groups
            .iter()
            .flat_map(|g| g.features.iter().map(|(_, l)| *l))
            .collect()
    }

    pub fn group_names(&self) -> Vec<String> {
        self.groups.iter().map(|g| g.name.clone()).collect()
    }

    /// Evaluates every group (in parallel) on one input.
    pub fn evaluate(&self, input: &TuneInput) -> Result<FeatureValues> {
        let start = Instant::now();
        let results: Vec<Result<(Vec<f64>, Duration)>> = self
            .groups
            .iter()
            .map(|g| {
                let t = Instant::now();
                let v = (g.eval)(input).map_err(|e| {
                    SurgeError::Tune(format!(
                        "feature `{}` on input `{}`: {e}",
                        g.name, input.name
                    ))
                })?;
                if v.len() != g.features.len() {
                    return Err(SurgeError::Tune(format!(
                        "feature group `{}` returned {} values for {} features on input `{}`",
                        g.name,
                        v.len(),
                        g.features.len(),
                        input.name
                    )));
                }
                if let Some(bad) = v.iter().position(|x| !x.is_finite()) {
                    return Err(SurgeError::Tune(format!(
                        "feature `{}` is {} on input `{}`",
                        g.features[bad].0, v[bad], input.name
                    )));
                }
                Ok((v, t.elapsed()))
            })
            .collect();
        let mut values = Vec::new();
        let mut group_seconds = Vec::new();
        for r in results {
            let (v, d) = r?;
            values.extend(v);
            group_seconds.push(d.as_secs_f64());
        }
        Ok(FeatureValues {
            values,
            group_seconds,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Evaluates the features of many inputs, inputs in parallel.
    pub fn evaluate_all(&self, inputs: &[TuneInput]) -> Result<Vec<FeatureValues>> {
        inputs.par_iter().map(|i| self.evaluate(i)).collect()
    }
}

/// Surge's three inferred features: sequence length, aspect ratio of a uniformly nested input,
/// average row length of an irregularly nested input; plus the element count Surge infers with
/// them, which separates inputs smaller than one tile; and the aspect ratio and average row
/// length of the second nesting level (rows of rows: 0 for an input nested once or not at all).
///
/// Surge leaves the aspect ratio undefined for irregular nesting and the average row length for
/// uniform nesting. Here both are computed for both (rows / average row length, elements / rows)
/// whenever the input is nested: a tiled reduction on 4096·k elements is uniformly nested and on
/// 4096·k + 1 irregularly, and a feature that jumps to 0 between the two would make neighbours
/// look far apart to the model.
pub fn surge_group() -> FeatureGroup {
    FeatureGroup {
        name: "surge".into(),
        version: 1,
        features: vec![
            ("length".into(), true),
            ("aspect_ratio".into(), true),
            ("avg_row_length".into(), true),
            ("elements".into(), true),
            ("inner_aspect_ratio".into(), true),
            ("inner_avg_row_length".into(), true),
        ],
        eval: Arc::new(|input: &TuneInput| {
            let f = input.computation.features()?;
            let both = |rows: u64, elements: u64, nested: bool| {
                let avg = elements as f64 / rows.max(1) as f64;
                match nested {
                    true => (if avg > 0.0 { rows as f64 / avg } else { 0.0 }, avg),
                    false => (0.0, 0.0),
                }
            };
            let nested = f.aspect_ratio.is_some() || f.avg_row_length.is_some();
            // The outer level's elements are the rows below it when there are deeper levels.
            let outer_elements = f.levels.first().map_or(f.elements, |l| l.rows);
            let (aspect, avg) = both(f.length, outer_elements, nested);
            let (inner_aspect, inner_avg) = f
                .levels
                .first()
                .map_or((0.0, 0.0), |l| both(l.rows, l.elements, true));
            Ok(vec![
                f.length as f64,
                aspect,
                avg,
                f.elements as f64,
                inner_aspect,
                inner_avg,
            ])
        }),
    }
}

/// The CUSP features of Table 2.3 for spmv, and two that predict layouts CUSP's five do not
/// see: `bcsr_fill_in` (BCSR 2×2 stored values per nonzero, from sampled block rows: how well
/// the register-blocked layout fills) and `col_spread` (mean distance of a sampled nonzero's
/// column from the diagonal, over the columns: how local SpMV's reads of x are). One pass over
/// the row offsets (every row, or chunks of them on very sparse matrices) and one over a
/// sample of rows; see [`CuspFeatures`] for the definitions.
///
/// Version 2: the samples were halved (issue 24), so the values differ from version 1's.
pub fn cusp_group() -> FeatureGroup {
    FeatureGroup {
        name: "cusp".into(),
        version: 2,
        features: vec![
            ("avg_nnz_per_row".into(), true),
            ("row_length_std_dev".into(), true),
            ("max_deviation".into(), true),
            ("dia_fill_in".into(), true),
            ("ell_fill_in".into(), true),
            ("bcsr_fill_in".into(), true),
            ("col_spread".into(), true),
        ],
        eval: Arc::new(|input: &TuneInput| {
            let m = input.matrix.as_deref().ok_or_else(|| SurgeError::Input {
                input: input.name.clone(),
                message: "CUSP features need a sparse matrix (spmv input)".into(),
            })?;
            Ok(CuspFeatures::of(m).values().to_vec())
        }),
    }
}
