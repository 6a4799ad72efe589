//! Nonzero-balanced shares of a layout's run (SELL chunks, BCSR block rows, and the rows either
//! leaves to `elems`), for the `static` schedule: each worker takes one contiguous range of the
//! layout's units and one of its rest rows, cut where the stored elements before it reach
//! `t / workers` of the total, so a call is one kernel call per worker and each does the same
//! work. Why: with `static` and a chunk of rows, 712 SELL-16 chunks of cage10 in chunks of
//! 256 units were dealt 2:1 to two workers, and the rest rows ran in a second team after the
//! units; power-law rows (a few rows holding a large share of the elements) make rows a poor
//! measure of work.

use super::diagonal::int_at;
use surge_codegen::data::Buffer;

/// Runs of rest rows are cut to hold at most this share of the rest's weight, so that a
/// worker's share of them is within this of an even one.
pub const PIECES: u64 = 64;

/// The rows a layout leaves to `elems`, as runs cut for balancing, with their weight.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weighed {
    /// Runs of rows `(first, end)`, increasing, covering the layout's rest rows exactly.
    pub runs: Vec<(usize, usize)>,
    /// `prefix[k]`: the weight of runs `0..k` (`runs.len() + 1` entries).
    pub prefix: Vec<u64>,
}

/// `rest` weighed by the offsets `off` (a row weighs its elements plus one, so empty and invalid
/// rows count too), its runs cut at `1 / PIECES` of the total weight.
pub fn weigh(rest: &[(usize, usize)], off: &Buffer) -> Weighed {
    let row = |i: usize| -> u64 {
        match (int_at(off, i), int_at(off, i + 1)) {
            (Some(a), Some(b)) if a <= b => (b - a) as u64 + 1,
            _ => 1,
        }
    };
    let total: u64 = rest.iter().flat_map(|&(a, e)| a..e).map(row).sum();
    let cap = (total / PIECES).max(1);
    let mut w = Weighed {
        runs: Vec::new(),
        prefix: vec![0],
    };
    let mut sum = 0u64;
    for &(a, e) in rest {
        let (mut start, mut held) = (a, 0u64);
        for i in a..e {
            held += row(i);
            if held >= cap || i + 1 == e {
                sum += held;
                w.runs.push((start, i + 1));
                w.prefix.push(sum);
                (start, held) = (i + 1, 0);
            }
        }
    }
    w
}

/// The range of units `lo..hi` worker `t` of `workers` takes, by the weight prefix `prefix`
/// (`units + 1` entries, non-decreasing): the units whose start lies in
/// `[t·W/workers, (t+1)·W/workers)` of the total weight `W`.
pub fn share(prefix: &[u64], t: usize, workers: usize) -> (usize, usize) {
    let n = prefix.len().saturating_sub(1);
    let total = prefix.last().copied().unwrap_or(0) as u128;
    let bound = |t: usize| -> usize {
        if t >= workers {
            return n;
        }
        let target = (total * t as u128 / workers.max(1) as u128) as u64;
        prefix[..n].partition_point(|&w| w < target)
    };
    (bound(t), bound(t + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_unit_once_and_balance_weight() {
        // Units of weight 1, then a heavy one, then weight 1 again.
        let mut prefix = vec![0u64];
        for w in [1, 1, 1, 100, 1, 1, 1, 1] {
            prefix.push(prefix.last().unwrap() + w);
        }
        for workers in 1..5 {
            let shares: Vec<_> = (0..workers).map(|t| share(&prefix, t, workers)).collect();
            assert_eq!(shares[0].0, 0);
            assert_eq!(shares[workers - 1].1, 8);
            for p in shares.windows(2) {
                assert_eq!(p[0].1, p[1].0, "{shares:?}");
            }
        }
        assert_eq!(share(&prefix, 0, 2), (0, 4));
        assert_eq!(share(&prefix, 1, 2), (4, 8));
        assert_eq!(share(&[0], 0, 2), (0, 0));
        assert_eq!(share(&[0, 0, 0], 1, 2), (0, 2));
    }

    #[test]
    fn weighed_runs_cover_the_rest_and_cut_heavy_runs() {
        // Rows 0..10 of 3 elements each, row 10 of 500, row 11 empty.
        let mut off = vec![0u64];
        for i in 0..12 {
            let len = match i {
                10 => 500,
                11 => 0,
                _ => 3,
            };
            off.push(off.last().unwrap() + len);
        }
        let off = Buffer::U64(off);
        let w = weigh(&[(0, 5), (8, 12)], &off);
        let rows: Vec<usize> = w.runs.iter().flat_map(|&(a, e)| a..e).collect();
        assert_eq!(rows, [0, 1, 2, 3, 4, 8, 9, 10, 11]);
        assert_eq!(w.prefix.len(), w.runs.len() + 1);
        assert_eq!(*w.prefix.last().unwrap(), 7 * 4 + 501 + 1);
        // The heavy row is a run of its own.
        assert!(w.runs.contains(&(10, 11)), "{:?}", w.runs);
        let none = weigh(&[], &off);
        assert_eq!((none.runs.len(), none.prefix), (0, vec![0]));
    }
}
