//! `surge plan spmv`: the distributed SpMV at rank counts not at hand, on paper.
//!
//! For each rank count the exact partition is computed with the code the ranks run
//! ([`Blocks::balanced`], [`RankPart::split`]); each rank's time is then predicted from a local
//! SpMV rate measured on this machine ([`rate`]) and a stated network model ([`Model`]):
//!
//! ```text
//! rank time = max(compute(interior rows), exchange) + compute(boundary rows)
//! compute   = nonzeros × s_nz + rows × s_row
//! exchange  = neighbours × latency + 8 bytes × ghost entries received / bandwidth
//! T_R       = the slowest rank's time;  efficiency = T_1 / (R × T_R)
//! ```
//!
//! Neither the partition nor the model has a superlinear term (the ranks' computes add up to
//! the one-rank time), so the predicted efficiency is at most 1.

pub mod rate;
pub mod svg;
#[cfg(test)]
mod tests;

use super::{Blocks, RankPart};
use crate::mtx::CsrMatrix;
use serde::Serialize;

/// The formula of the prediction, as `--help` and the JSON state it.
pub const FORMULA: &str = "rank time = max(compute(interior rows), exchange) + \
compute(boundary rows); compute = nonzeros * s_nz + rows * s_row; exchange = neighbours * \
latency + 8 bytes * ghost entries received / bandwidth; T_R = the slowest rank's time; \
efficiency = T_1 / (R * T_R)";

/// The prediction's parameters: the local rate (measured) and the network (stated).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Model {
    /// Seconds of local SpMV per nonzero and per row.
    pub seconds_per_nonzero: f64,
    pub seconds_per_row: f64,
    /// Seconds per message (one per neighbour and SpMV).
    pub latency_seconds: f64,
    /// Bytes per second a rank receives.
    pub bandwidth_bytes_per_second: f64,
}

impl Model {
    /// The local compute of `nnz` nonzeros in `rows` rows.
    pub fn compute(&self, nnz: usize, rows: usize) -> f64 {
        nnz as f64 * self.seconds_per_nonzero + rows as f64 * self.seconds_per_row
    }

    /// The ghost exchange of a rank with `neighbours` neighbours that receives `ghosts` entries.
    pub fn exchange(&self, neighbours: usize, ghosts: usize) -> f64 {
        neighbours as f64 * self.latency_seconds
            + (8 * ghosts) as f64 / self.bandwidth_bytes_per_second
    }
}

/// One rank's share and its predicted time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankPlan {
    pub rank: usize,
    pub rows: usize,
    pub nnz: usize,
    pub interior_rows: usize,
    pub interior_nnz: usize,
    pub boundary_rows: usize,
    pub boundary_nnz: usize,
    /// Ghost entries of `x` this rank receives, and the entries it sends (an entry two
    /// neighbours need counts twice).
    pub ghosts_received: usize,
    pub ghosts_sent: usize,
    /// Ranks it exchanges with, either way.
    pub neighbours: usize,
    pub interior_seconds: f64,
    pub exchange_seconds: f64,
    pub boundary_seconds: f64,
    /// max(interior, exchange) + boundary.
    pub seconds: f64,
}

impl RankPlan {
    fn of(part: &RankPart, model: &Model) -> RankPlan {
        let (interior_rows, boundary_rows) = (part.interior.rows, part.boundary.rows);
        let (interior_nnz, boundary_nnz) = (part.interior.nnz(), part.boundary.nnz());
        let ghosts_received = part.ghosts.len();
        let neighbours = part.neighbours().len();
        let interior_seconds = model.compute(interior_nnz, interior_rows);
        let exchange_seconds = model.exchange(neighbours, ghosts_received);
        let boundary_seconds = model.compute(boundary_nnz, boundary_rows);
        RankPlan {
            rank: part.rank,
            rows: part.rows.len(),
            nnz: interior_nnz + boundary_nnz,
            interior_rows,
            interior_nnz,
            boundary_rows,
            boundary_nnz,
            ghosts_received,
            ghosts_sent: part.send.iter().map(|n| n.indices.len()).sum(),
            neighbours,
            interior_seconds,
            exchange_seconds,
            boundary_seconds,
            seconds: interior_seconds.max(exchange_seconds) + boundary_seconds,
        }
    }
}

/// A per-rank statistic over all ranks: its least, mean and largest value, and the rank with
/// the largest (the first of equals).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub max_rank: usize,
}

impl Spread {
    fn of(ranks: &[RankPlan], get: impl Fn(&RankPlan) -> f64) -> Spread {
        let mut s = Spread {
            min: f64::INFINITY,
            mean: 0.0,
            max: f64::NEG_INFINITY,
            max_rank: 0,
        };
        for r in ranks {
            let v = get(r);
            s.min = s.min.min(v);
            s.mean += v;
            if v > s.max {
                s.max = v;
                s.max_rank = r.rank;
            }
        }
        s.mean /= ranks.len() as f64;
        s
    }
}

/// The plan of one rank count: every per-rank statistic's spread, and the prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub ranks: usize,
    /// Ranks with no row.
    pub empty_ranks: usize,
    pub rows: Spread,
    pub nnz: Spread,
    pub interior_rows: Spread,
    pub boundary_rows: Spread,
    pub ghosts_received: Spread,
    pub ghosts_sent: Spread,
    pub neighbours: Spread,
    pub interior_seconds: Spread,
    pub exchange_seconds: Spread,
    pub boundary_seconds: Spread,
    pub seconds: Spread,
    /// The largest rank's nonzeros over the mean (1 is perfect balance).
    pub imbalance: f64,
    /// The predicted time of one distributed SpMV: the slowest rank's.
    pub predicted_seconds: f64,
    /// T_1 / T_R and T_1 / (R × T_R).
    pub speedup: f64,
    pub efficiency: f64,
    /// The slowest rank, every statistic.
    pub worst_rank: RankPlan,
}

/// Every rank's plan for `a` over `ranks` ranks (at least one).
pub fn rank_plans(a: &CsrMatrix, ranks: usize, model: &Model) -> Vec<RankPlan> {
    let blocks = Blocks::balanced(&a.row_offsets, a.cols, ranks);
    RankPart::split(a, &blocks)
        .iter()
        .map(|p| RankPlan::of(p, model))
        .collect()
}

/// The plan of `a` over `ranks` ranks; `t1` is the one-rank time efficiency is measured against.
pub fn plan(a: &CsrMatrix, ranks: usize, model: &Model, t1: f64) -> Plan {
    let per = rank_plans(a, ranks, model);
    let spread = |get: fn(&RankPlan) -> f64| Spread::of(&per, get);
    let nnz = spread(|r| r.nnz as f64);
    let seconds = spread(|r| r.seconds);
    let predicted = seconds.max;
    Plan {
        ranks,
        empty_ranks: per.iter().filter(|r| r.rows == 0).count(),
        rows: spread(|r| r.rows as f64),
        interior_rows: spread(|r| r.interior_rows as f64),
        boundary_rows: spread(|r| r.boundary_rows as f64),
        ghosts_received: spread(|r| r.ghosts_received as f64),
        ghosts_sent: spread(|r| r.ghosts_sent as f64),
        neighbours: spread(|r| r.neighbours as f64),
        interior_seconds: spread(|r| r.interior_seconds),
        exchange_seconds: spread(|r| r.exchange_seconds),
        boundary_seconds: spread(|r| r.boundary_seconds),
        imbalance: if nnz.mean > 0.0 {
            nnz.max / nnz.mean
        } else {
            1.0
        },
        nnz,
        predicted_seconds: predicted,
        speedup: t1 / predicted,
        efficiency: t1 / (ranks as f64 * predicted),
        worst_rank: per[seconds.max_rank].clone(),
        seconds,
    }
}
