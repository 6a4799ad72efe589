//! The local SpMV rate the plan predicts from, measured on this machine: one process, one
//! thread, the whole matrix, with the program and default variant `surge run spmv` runs
//! ([`LocalSpmv`] over the one-rank part, whose rows are all interior).

use super::super::{Blocks, LocalSpmv, RankPart};
use crate::Result;
use crate::bench::{Timing, measure};
use crate::mtx::CsrMatrix;
use serde::Serialize;

/// What was measured: the one-thread time of `y = A x` and the rate it gives.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// The variant timed (the default among the one-thread variants).
    pub variant: String,
    pub timing: Timing,
    /// T_1: the median one-thread time.
    pub seconds: f64,
    /// T_1 / (nonzeros + rows): a nonzero and a row cost the same, as the partition assumes.
    pub seconds_per_unit: f64,
}

/// Times the one-thread SpMV of `a` (x = 1): warm-up, then the median of enough runs to take
/// about half a second (5 to 200).
pub fn measure_one_thread(a: &CsrMatrix) -> Result<Measured> {
    let part = RankPart::split(a, &Blocks::balanced(&a.row_offsets, a.cols, 1))
        .pop()
        .expect("one rank's part");
    let mut spmv = LocalSpmv::new(&part, 1, None)?;
    let x = vec![1.0; a.cols];
    let mut y = vec![0.0; a.rows];
    // The first run checks the kernels; its time sizes the number of timed runs.
    let first = std::time::Instant::now();
    spmv.interior(&x, &mut y)?;
    let once = first.elapsed().as_secs_f64().max(1e-7);
    let runs = ((0.5 / once) as usize).clamp(5, 200);
    let mut failed = None;
    let timing = measure(2, runs, || {
        if let Err(e) = spmv.interior(&x, &mut y) {
            failed.get_or_insert(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(Measured {
        variant: spmv.variant().id(),
        seconds: timing.median,
        seconds_per_unit: timing.median / (a.nnz() + a.rows).max(1) as f64,
        timing,
    })
}
