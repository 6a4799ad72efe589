//! Tile-width specialization of a flat phase's element loop. Sizes are run-time values (the
//! literal table), so a `split(c, d)` inside a map body has tiles of a length rustc cannot see:
//! `min(d, len - k·d)`. Where `d` is small the loops over a tile are then a few iterations of
//! general code, and for k-means assignment (d = 4, k = 8, 2.5·10^6 points, one thread,
//! 2026-11-27, the emitted kernel edited by hand) the element loop took 54–57 ms against 23 ms
//! with the tile length a constant (the literal alone a constant: 49 ms; the whole tile length
//! is what matters). So the `elems` function is expanded once per width in [`WIDTHS`] and once
//! generically (`W = 0`), and picks an expansion at each call: `W` where every specialized tile
//! literal equals `W` and divides its input's length (every tile full), else the generic one.
//! Each expansion computes what the generic code computes; only the tile length is a constant.
//!
//! Specialized: a `split` met while the body of a flat root map is emitted, of an input buffer
//! (its length `bK.len()` is bound before the loop), by a tile that is one literal of the
//! table. Splits outside the body (the root's own inputs, whose checks run in every function of
//! the phase) are not. A body larger than [`MAX_BODY`] is not expanded (rustc's time grows with
//! each copy).

use super::code::Gen;

/// Tile widths with an expansion of their own.
const WIDTHS: [usize; 3] = [2, 3, 4];

/// The largest element body (bytes of generated code) that is expanded per width.
const MAX_BODY: usize = 24_000;

/// A split the body's code specializes: its tile literal's index and its input's length.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct SpecTile {
    pub lit: usize,
    pub len: String,
}

impl<'a> Gen<'a> {
    /// Runs `f` (the emission of a flat root map's body) with specialization on; returns its
    /// result and the splits it specialized (deduplicated).
    pub(super) fn specializing<T>(&self, f: impl FnOnce() -> T) -> (T, Vec<SpecTile>) {
        {
            let mut m = self.memo.borrow_mut();
            m.spec = Some(Vec::new());
            m.lane_sites = [0; 2];
        }
        let out = f();
        let tiles = self.memo.borrow_mut().spec.take().unwrap_or_default();
        (out, tiles)
    }

    /// Whether the `split` of `input` by a tile whose scalar code is `tile` is specialized
    /// (recording it): specialization is on, the input is an input buffer and the tile is one
    /// literal of the table.
    pub(super) fn spec_tile(&self, input_is_buffer: bool, tile: &str, len: &str) -> bool {
        let mut memo = self.memo.borrow_mut();
        let Some(tiles) = memo.spec.as_mut() else {
            return false;
        };
        let Some(lit) = tile.strip_prefix("lit").and_then(|k| k.parse().ok()) else {
            return false;
        };
        if !input_is_buffer {
            return false;
        }
        let t = SpecTile {
            lit,
            len: len.to_string(),
        };
        if !tiles.contains(&t) {
            tiles.push(t);
        }
        true
    }
}

impl Gen<'_> {
    /// A new site of the expansion's `LaneCells` (`jam/lanes.rs`) for rows of `e` (`f64` or
    /// `f32`): its index in the cells of its type, None where specialization is off or the
    /// sites are used up.
    pub(super) fn lane_site(&self, e: crate::ir::Elem, sites: usize) -> Option<usize> {
        let mut memo = self.memo.borrow_mut();
        memo.spec.as_ref()?;
        let k = match e {
            crate::ir::Elem::F64 => 0,
            crate::ir::Elem::F32 => 1,
            _ => return None,
        };
        let site = memo.lane_sites[k];
        (site < sites).then(|| {
            memo.lane_sites[k] += 1;
            site
        })
    }
}

/// The dispatch of a flat `elems` loop that specialized `tiles` (none: no dispatch): the width
/// expression (`spec_width`, runtime.rs) and the widths with an expansion, none where the body
/// is too large (then only the generic expansion, `W = 0`, is emitted).
pub(super) fn dispatch(tiles: &[SpecTile], body: &str) -> Option<(String, Vec<usize>)> {
    if tiles.is_empty() {
        return None;
    }
    if body.len() > MAX_BODY {
        return Some(("0usize".to_string(), Vec::new()));
    }
    let pairs: Vec<String> = tiles
        .iter()
        .map(|t| format!("(lits[{}], {})", t.lit, t.len))
        .collect();
    Some((
        format!("spec_width(&[{}])", pairs.join(", ")),
        WIDTHS.to_vec(),
    ))
}
