//! Algorithmic variants (dissertation §5.4.4; Nitro's code variants that are different
//! algorithms): one problem computed by several Surge programs of different structure (CoMD's
//! force by Listing 5.6's direct link-cell reduction or Listing 5.7's redistributed neighbour
//! lists), each with its own variant space. Selection is two-level: the model's classes are
//! `algorithm::variant` pairs, so one query picks the algorithm and, within it, the variant.
//!
//! The tuner itself is unchanged: [`AlgorithmBackend`] wraps any backend and offers the union of
//! the algorithms' variants, each id prefixed by its algorithm; timing a pair runs that
//! algorithm's own computation of the input. An input is built with [`input`], from one
//! [`TuneInput`] per algorithm on the same problem; the workload's features are taken from the
//! first algorithm's computation (add the problem's own with `Workload::with_feature`). The
//! store is keyed by every algorithm's structure, so changing any of them asks for a retune.
//!
//! ```
//! use surge::prelude::*;
//! use surge::tune::{self, algorithms, simulated::SimulatedBackend, TuneOptions, Workload};
//! // A sum, computed directly or as a sum of squares' square roots (two structures).
//! let sum = Workload::new("sum-two-ways");
//! let input = |n: usize| -> surge::Result<tune::TuneInput> {
//!     let x = Seq::input("x", vec![1.0f64; n])?;
//!     let direct = Computation::new(&reduce(add, &x)?)?;
//!     let roots = map(|v: Scalar<f64>| (&v * &v).sqrt(), &x)?;
//!     let other = Computation::new(&reduce(add, &roots)?)?;
//!     algorithms::input(&sum, format!("n={n}"), vec![
//!         ("direct".into(), sum.input("direct", direct)?),
//!         ("roots".into(), sum.input("roots", other)?),
//!     ])
//! };
//! let inner = SimulatedBackend::sized("sum-two-ways");
//! let backend = algorithms::AlgorithmBackend::new(&inner);
//! let inputs = [100, 10_000, 1_000_000].map(input).into_iter().collect::<surge::Result<Vec<_>>>()?;
//! let store = tune::tune(&backend, &sum, &inputs, &TuneOptions::default(), &mut |_| {})?;
//! let pick = tune::Tuned::from_store(&sum, store, &backend).select(&input(500)?)?;
//! let (algorithm, variant) = algorithms::split(&pick.variant).expect("a pair");
//! assert!(algorithm == "direct" || algorithm == "roots");
//! assert!(!variant.is_empty());
//! # Ok::<(), surge::SurgeError>(())
//! ```

use super::{TuneInput, TuningBackend, Workload, tune_err};
use crate::{Computation, Result};
use std::time::Duration;

/// Between an algorithm's name and its variant's id in a pair's id.
pub const SEP: &str = "::";

/// Each algorithm's input of one problem, attached to the input that is tuned.
#[derive(Debug, Clone)]
pub struct AlgorithmInputs(pub Vec<(String, TuneInput)>);

impl AlgorithmInputs {
    /// The input of algorithm `name`.
    pub fn get(&self, name: &str) -> Option<&TuneInput> {
        self.0.iter().find(|(a, _)| a == name).map(|(_, i)| i)
    }
}

/// One input of `workload` computed by several algorithms: `inputs` holds each algorithm's name
/// and its input on the same problem (names of letters, digits, `-` and `_`, each once). The
/// input's computation (what the workload's features see) and work are the first algorithm's.
pub fn input(
    workload: &Workload,
    name: impl Into<String>,
    inputs: Vec<(String, TuneInput)>,
) -> Result<TuneInput> {
    let name = name.into();
    let Some((_, first)) = inputs.first() else {
        return Err(tune_err(format!(
            "input `{name}`: no algorithm's input given"
        )));
    };
    for (k, (a, _)) in inputs.iter().enumerate() {
        let valid = !a.is_empty()
            && a.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
        if !valid {
            return Err(tune_err(format!(
                "input `{name}`: algorithm name `{a}` is not letters, digits, `-` and `_`"
            )));
        }
        if inputs[..k].iter().any(|(b, _)| b == a) {
            return Err(tune_err(format!(
                "input `{name}`: algorithm `{a}` is given twice"
            )));
        }
    }
    let (computation, work) = (first.computation.clone(), first.work);
    Ok(workload
        .input_with_work(name, computation, work)
        .with_data(AlgorithmInputs(inputs)))
}

/// `(algorithm, variant)` of a pair's id, `None` for an id without an algorithm.
pub fn split(id: &str) -> Option<(&str, &str)> {
    id.split_once(SEP)
}

/// The computation and variant id that run pair `id` of `input` (the input's own computation
/// and `id` itself when it is not an algorithm pair).
pub fn resolve<'i>(input: &'i TuneInput, id: &'i str) -> Result<(&'i Computation, &'i str)> {
    match (input.data::<AlgorithmInputs>(), split(id)) {
        (Some(algos), Some((a, v))) => {
            Ok((&algorithm_input(algos, &input.name, a)?.computation, v))
        }
        _ => Ok((&input.computation, id)),
    }
}

fn algorithm_input<'i>(
    algos: &'i AlgorithmInputs,
    input: &str,
    algorithm: &str,
) -> Result<&'i TuneInput> {
    algos.get(algorithm).ok_or_else(|| {
        let known: Vec<&str> = algos.0.iter().map(|(a, _)| a.as_str()).collect();
        tune_err(format!(
            "input `{input}` has no algorithm `{algorithm}` (it has {})",
            known.join(", ")
        ))
    })
}

/// The structure key of an input with algorithms: every algorithm's structure hash, combined
/// in order (so a change to any algorithm's program asks for a retune).
pub(super) fn structure(algos: &AlgorithmInputs) -> u128 {
    algos.0.iter().fold(0u128, |h, (_, i)| {
        h.rotate_left(17) ^ i.computation.ir().structure_hash()
    })
}

/// A backend whose variants are the `algorithm::variant` pairs of inputs built by [`input`],
/// each run by the wrapped backend on its algorithm's own input.
pub struct AlgorithmBackend<'b> {
    inner: &'b dyn TuningBackend,
}

impl std::fmt::Debug for AlgorithmBackend<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlgorithmBackend")
            .field("inner", &self.inner.platform())
            .finish()
    }
}

impl<'b> AlgorithmBackend<'b> {
    pub fn new(inner: &'b dyn TuningBackend) -> AlgorithmBackend<'b> {
        AlgorithmBackend { inner }
    }
}

fn algorithms(input: &TuneInput) -> std::result::Result<&AlgorithmInputs, String> {
    input.data::<AlgorithmInputs>().ok_or_else(|| {
        format!(
            "input `{}` has no algorithms: build it with `surge::tune::algorithms::input`",
            input.name
        )
    })
}

impl AlgorithmBackend<'_> {
    /// The algorithm's input and the wrapped backend's variant id of pair `id`.
    fn pair<'i>(
        &self,
        input: &'i TuneInput,
        id: &'i str,
    ) -> std::result::Result<(&'i TuneInput, &'i str), String> {
        let algos = algorithms(input)?;
        let (a, v) = split(id)
            .ok_or_else(|| format!("`{id}` names no algorithm (`ALGORITHM{SEP}VARIANT`)"))?;
        let i = algorithm_input(algos, &input.name, a).map_err(|e| e.to_string())?;
        Ok((i, v))
    }
}

impl TuningBackend for AlgorithmBackend<'_> {
    fn platform(&self) -> String {
        self.inner.platform()
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        let algos = algorithms(input).map_err(tune_err)?;
        let mut all = Vec::new();
        for (a, i) in &algos.0 {
            all.extend(
                self.inner
                    .variants(i)?
                    .into_iter()
                    .map(|v| format!("{a}{SEP}{v}")),
            );
        }
        Ok(all)
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        let (i, v) = self.pair(input, variant)?;
        self.inner.run_once(i, v)
    }

    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        let (i, v) = self.pair(input, variant)?;
        self.inner.run_batch(i, v, runs)
    }

    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        let algos = algorithms(input).map_err(tune_err)?;
        let (a, i) = algos.0.first().expect("`input` requires one algorithm");
        Ok(format!("{a}{SEP}{}", self.inner.default_variant(i)?))
    }

    fn stolen(&self) -> Option<(Duration, usize)> {
        self.inner.stolen()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tune::simulated::SimulatedBackend;

    fn sum_input(w: &Workload, n: usize) -> Result<TuneInput> {
        let x = Seq::input("x", vec![2.0f64; n])?;
        let a = Computation::new(&reduce(add, &x)?)?;
        let b = Computation::new(&reduce(add, &map(|v: Scalar<f64>| &v * 1.0, &x)?)?)?;
        input(
            w,
            format!("n={n}"),
            vec![
                ("plain".into(), w.input("a", a)?),
                ("scaled".into(), w.input("b", b)?),
            ],
        )
    }

    #[test]
    fn pairs_run_their_own_algorithms_computation() -> Result<()> {
        let w = Workload::new("sum2");
        let i = sum_input(&w, 1000)?;
        let inner = SimulatedBackend::sized("sum2");
        let b = AlgorithmBackend::new(&inner);
        let vs = b.variants(&i)?;
        assert_eq!(vs.len(), 6, "{vs:?}");
        assert!(
            vs[0].starts_with("plain::") && vs[5].starts_with("scaled::"),
            "{vs:?}"
        );
        assert!(b.default_variant(&i)?.starts_with("plain::"));
        for v in &vs {
            b.run_once(&i, v).map_err(crate::SurgeError::Tune)?;
        }
        let (c, v) = resolve(&i, "scaled::sim/sum2/tiled")?;
        assert_eq!(v, "sim/sum2/tiled");
        let algos = i.data::<AlgorithmInputs>().expect("attached");
        assert!(std::ptr::eq(
            c,
            &algos.get("scaled").expect("given").computation
        ));
        // The key covers both algorithms: another second program is another structure.
        assert_ne!(i.structure(), algos.0[0].1.structure());
        Ok(())
    }

    #[test]
    fn bad_algorithm_inputs_are_refused_by_name() -> Result<()> {
        let w = Workload::new("sum2");
        let x = Seq::input("x", vec![1.0f64; 4])?;
        let c = Computation::new(&reduce(add, &x)?)?;
        let one = || w.input("a", c.clone());
        let err = |r: Result<TuneInput>| r.expect_err("refused").to_string();
        assert!(err(input(&w, "p", vec![])).contains("input `p`: no algorithm's input given"));
        let twice = vec![("a".into(), one()?), ("a".into(), one()?)];
        assert!(err(input(&w, "p", twice)).contains("algorithm `a` is given twice"));
        let bad = vec![("a::b".into(), one()?)];
        assert!(err(input(&w, "p", bad)).contains("algorithm name `a::b` is not letters"));
        let i = input(&w, "p", vec![("a".into(), one()?)])?;
        let inner = SimulatedBackend::sized("sum2");
        let b = AlgorithmBackend::new(&inner);
        let e = b
            .run_once(&i, "z::sim/sum2/tiled")
            .expect_err("no such algorithm");
        assert!(
            e.contains("input `p` has no algorithm `z` (it has a)"),
            "{e}"
        );
        let e = b
            .run_once(&i, "sim/sum2/tiled")
            .expect_err("no algorithm named");
        assert!(e.contains("names no algorithm"), "{e}");
        let plain = w.input("q", c.clone())?;
        let e = b
            .variants(&plain)
            .expect_err("not built by input()")
            .to_string();
        assert!(e.contains("has no algorithms"), "{e}");
        Ok(())
    }
}
