//! Tiled reduction, Listing 5.3: per-tile reductions (`map.reduce`), then one more `map.reduce`
//! over the partials, split into a single tile.

use crate::prelude::*;

/// The sum of `s`, as a one-element sequence (empty for an empty input).
pub fn reduce_app(s: &Seq<f64>, tile_size: u64) -> Result<Seq<f64>> {
    let plus = |a: Scalar<f64>, b: Scalar<f64>| a + b;
    // Split the original flat sequence into tiles.
    let s_tiled = split(s, tile_size)?;
    let row_reduce = |row: Seq<f64>| reduce(plus, &row);
    // Compute per-tile reductions.
    let s_partials = map(row_reduce, &s_tiled)?;
    // Reduce the partials into s_result[0].
    let c = s_partials.static_len().unwrap_or(1).max(1);
    let s_partials_tiled = split(&s_partials, c)?;
    map(row_reduce, &s_partials_tiled)
}

/// The default input of the reduction and scan benchmarks: `n` deterministic values in [0, 1).
pub fn sum_input(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919) % 1024) as f64 / 1024.0)
        .collect()
}
