//! A backend that lets rank 0 answer the other ranks while it measures an input of a
//! distributed campaign itself (`fan_out`): every run it is asked for first calls `between`
//! (rank 0's desk: answer the ranks waiting, without blocking), outside the timed run, so a
//! rank that finished waits one sample at most, not a whole input. The hook's own CPU time is
//! this process's, which the disturbance guard does not count as stolen.

use crate::Result;
use crate::tune::{TuneInput, TuningBackend};
use std::cell::RefCell;
use std::time::Duration;

/// `inner`, with `between` called before every run (each sample, warm-up and batch sizing).
pub struct Answering<'a> {
    inner: &'a dyn TuningBackend,
    between: RefCell<&'a mut dyn FnMut()>,
}

impl std::fmt::Debug for Answering<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answering")
            .field("inner", &self.inner.platform())
            .finish_non_exhaustive()
    }
}

impl<'a> Answering<'a> {
    pub fn new(inner: &'a dyn TuningBackend, between: &'a mut dyn FnMut()) -> Answering<'a> {
        Answering {
            inner,
            between: RefCell::new(between),
        }
    }

    fn between(&self) {
        // A run never starts inside the hook, so the cell is never borrowed twice.
        if let Ok(mut f) = self.between.try_borrow_mut() {
            f();
        }
    }
}

impl TuningBackend for Answering<'_> {
    fn platform(&self) -> String {
        self.inner.platform()
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        self.inner.variants(input)
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        self.between();
        self.inner.run_once(input, variant)
    }

    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        self.between();
        self.inner.run_batch(input, variant, runs)
    }

    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        self.inner.default_variant(input)
    }

    fn stolen(&self) -> Option<(Duration, usize)> {
        self.inner.stolen()
    }

    fn reference(&self, input: &TuneInput) -> Option<std::result::Result<Duration, String>> {
        self.between();
        self.inner.reference(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::App;
    use crate::tune::simulated::SimulatedBackend;

    /// The hook runs once per run, and the runs' times are the inner backend's (the same as
    /// another simulated backend's given the same runs: its jitter follows its run count).
    #[test]
    fn calls_between_before_every_run() {
        let (sim, plain) = (
            SimulatedBackend::sized("reduce"),
            SimulatedBackend::sized("reduce"),
        );
        let input = TuneInput::sized(App::Reduce, 1000).unwrap();
        let v = sim.variants(&input).unwrap()[0].clone();
        let mut calls = 0;
        {
            let mut count = || calls += 1;
            let a = Answering::new(&sim, &mut count);
            assert_eq!(a.platform(), sim.platform());
            assert_eq!(a.run_once(&input, &v), plain.run_once(&input, &v));
            assert_eq!(a.run_batch(&input, &v, 3), plain.run_batch(&input, &v, 3));
        }
        assert_eq!(calls, 2);
    }
}
