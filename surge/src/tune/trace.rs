//! With `SURGE_TRACE` set, one stderr line per stage of a tuning campaign (loading, features,
//! measuring, model, store, testing, selection cost, report) and how long it took: where a
//! campaign's time goes, per rank under `mpirun` (the line names the rank's role).

use std::time::Instant;

/// Whether stage lines are printed (`SURGE_TRACE` set).
pub fn enabled() -> bool {
    std::env::var_os("SURGE_TRACE").is_some()
}

/// Prints `trace: <who> <stage> <seconds since start> s` when tracing, and returns now (the
/// next stage's start).
pub fn stage(who: &str, stage: &str, start: Instant) -> Instant {
    if enabled() {
        // One write per line: under mpirun the ranks' lines come through one pipe.
        let line = format!(
            "trace: {who} {stage} {:.3} s\n",
            start.elapsed().as_secs_f64()
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    Instant::now()
}
