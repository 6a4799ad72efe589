//! Tiled prefix scan, Listing 5.4: per-tile reductions, a scan of the partials, then each tile
//! scanned from its prefix. Computes the exclusive prefix sum `y[0] = 0, y[i] = s[0] + .. + s[i-1]`.

use crate::prelude::*;

/// The exclusive prefix sum of `s`, tile by tile (concatenate the rows for the flat result, as
/// `execute` into `s_result` does in the listing).
pub fn scan_app(s: &Seq<f64>, tile_size: u64) -> Result<Nested<f64>> {
    let plus = |a: Scalar<f64>, b: Scalar<f64>| a + b;
    // Split the original flat sequence into tiles.
    let s_tiled = split(s, tile_size)?;
    // Compute per-tile reductions.
    let s_partial_reductions = map(|tile: Seq<f64>| reduce(plus, &tile), &s_tiled)?;
    // Prefix sum over the partial reductions (one tile holding them all).
    let c = s_partial_reductions.static_len().unwrap_or(1).max(1);
    let s_partials_tiled = split(&s_partial_reductions, c)?;
    let s_partial_scans = map(
        |tile: Seq<f64>| scan_prefix(plus, &tile, 0.0),
        &s_partials_tiled,
    )?;
    if s_partial_scans.static_len() == Some(0) {
        // An empty input has no tiles: its scan is empty.
        return Ok(s_tiled);
    }
    let tile_prefixes: Seq<f64> = at(&s_partial_scans, 0u64)?;
    // Compute the full prefix sum by seeding each tile from its prefix.
    map(
        |(tile, prefix): (Seq<f64>, Scalar<f64>)| scan_prefix(plus, &tile, prefix),
        (&s_tiled, &tile_prefixes),
    )
}
