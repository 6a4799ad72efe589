//! A backend that tunes over part of another backend's variants: GEMM tuned over its generated
//! family only (`surge tune gemm`), leaving out the phase variants of the DSEL's mat-mat, which
//! are 10–30× slower at every size measured and would cost most of the campaign's time.

use super::{TuneInput, TuningBackend};
use crate::{Result, SurgeError};
use std::time::Duration;

/// `inner`'s variants for which `keep` holds; the rest is `inner`'s.
pub struct FilteredBackend<'b> {
    inner: &'b dyn TuningBackend,
    keep: fn(&str) -> bool,
    /// What the kept variants are, for errors ("the GEMM family").
    what: &'static str,
}

impl std::fmt::Debug for FilteredBackend<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteredBackend")
            .field("inner", &self.inner.platform())
            .field("what", &self.what)
            .finish()
    }
}

impl<'b> FilteredBackend<'b> {
    pub fn new(
        inner: &'b dyn TuningBackend,
        keep: fn(&str) -> bool,
        what: &'static str,
    ) -> FilteredBackend<'b> {
        FilteredBackend { inner, keep, what }
    }
}

impl TuningBackend for FilteredBackend<'_> {
    fn platform(&self) -> String {
        self.inner.platform()
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        let kept: Vec<String> = self
            .inner
            .variants(input)?
            .into_iter()
            .filter(|v| (self.keep)(v))
            .collect();
        if kept.is_empty() {
            return Err(SurgeError::Tune(format!(
                "input `{}` has no variants of {} on {}",
                input.name,
                self.what,
                self.inner.platform()
            )));
        }
        Ok(kept)
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        self.inner.run_once(input, variant)
    }

    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        self.inner.run_batch(input, variant, runs)
    }

    /// `inner`'s default where it is kept, else the first kept variant.
    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        let d = self.inner.default_variant(input)?;
        if (self.keep)(&d) {
            return Ok(d);
        }
        Ok(self.variants(input)?.swap_remove(0))
    }

    fn stolen(&self) -> Option<(Duration, usize)> {
        self.inner.stolen()
    }

    fn reference(&self, input: &TuneInput) -> Option<std::result::Result<Duration, String>> {
        self.inner.reference(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::simulated::SimulatedBackend;
    use crate::tune::{self, TuneOptions};

    fn no_sequential(id: &str) -> bool {
        !id.ends_with("/sequential")
    }

    #[test]
    fn tunes_over_the_kept_variants_only() -> Result<()> {
        use crate::apps::gemm_tuning::{input, shapes, workload};
        let inner = SimulatedBackend::sized("gemm");
        let backend = FilteredBackend::new(&inner, no_sequential, "the fast variants");
        let train = shapes(true, false)?
            .iter()
            .map(input)
            .collect::<Result<Vec<_>>>()?;
        let all = inner.variants(&train[0])?;
        let kept = backend.variants(&train[0])?;
        assert!(kept.len() + 1 == all.len() && kept.iter().all(|v| no_sequential(v)));
        assert!(no_sequential(&backend.default_variant(&train[0])?));
        let w = workload();
        let store = tune::tune(&backend, &w, &train, &TuneOptions::default(), &mut |_| {})?;
        let tuned = tune::Tuned::from_store(&w, store, &backend);
        let probe = input(&crate::bench::gemm::Shape::of("square", 300)?)?;
        let sel = tuned.select(&probe)?;
        assert!(sel.from_model && no_sequential(&sel.variant), "{sel:?}");
        // Nothing kept: an error naming what was asked for.
        let none = FilteredBackend::new(&inner, |_| false, "the GEMM family");
        let e = none.variants(&train[0]).unwrap_err().to_string();
        assert!(e.contains("no variants of the GEMM family"), "{e}");
        Ok(())
    }
}
