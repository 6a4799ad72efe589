//! Counting a level in closed form (see `plan/closed.rs` for when a level qualifies): each
//! constraint accepts an interval of values, hence an interval of the range's indices.

use crate::plan::{Bound, Closed};
use crate::stats::Counters;
use crate::value::{CmpOp, PyRange, Value};

/// Indices `lo..=hi` (empty when `lo > hi`).
#[derive(Clone, Copy)]
struct Span {
    lo: i128,
    hi: i128,
}

impl Span {
    fn len(self) -> u64 {
        if self.lo > self.hi {
            0
        } else {
            (self.hi - self.lo + 1) as u64
        }
    }

    fn meet(self, o: Span) -> Span {
        Span {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        }
    }
}

/// The values `v` accepted by a rejected-when-true bound `v op e`, as `[min, max]`.
fn accepted(op: CmpOp, e: i64) -> (i128, i128) {
    let (e, inf) = (e as i128, i128::from(i64::MAX) * 4);
    match op {
        CmpOp::Gt => (-inf, e),
        CmpOp::Ge => (-inf, e - 1),
        CmpOp::Lt => (e, inf),
        CmpOp::Le => (e + 1, inf),
        // `v != e` rejects everything but `e`; only `!=` and the orderings are planned.
        _ => (e, e),
    }
}

/// The indices `i` of `r` (value `start + i * step`) whose value lies in `[a, b]`.
fn indices(r: &PyRange, (a, b): (i128, i128)) -> Span {
    let (s, st) = (r.start as i128, r.step as i128);
    let all = Span {
        lo: 0,
        hi: r.len() as i128 - 1,
    };
    let (lo, hi) = if st > 0 {
        (
            (a - s).div_euclid(st) + i128::from((a - s).rem_euclid(st) != 0),
            (b - s).div_euclid(st),
        )
    } else {
        let st = -st;
        (
            (s - b).div_euclid(st) + i128::from((s - b).rem_euclid(st) != 0),
            (s - a).div_euclid(st),
        )
    };
    all.meet(Span { lo, hi })
}

/// Count level `d` over range `r` in closed form: visited and rejected counters are updated
/// as a scan would, and the number of accepted values is returned; None when a bound is not
/// an int here (the caller then scans).
pub(super) fn count_range(
    cf: &Closed,
    r: &PyRange,
    env: &[Value],
    d: usize,
    c: &mut Counters,
) -> Option<u64> {
    let mut spans = Vec::with_capacity(cf.checks.len());
    for (_, bounds) in &cf.checks {
        let mut sp = indices(r, (i128::MIN / 4, i128::MAX / 4));
        for Bound { op, e } in bounds {
            sp = sp.meet(indices(r, accepted(*op, e.int_fast(env)?)));
        }
        spans.push(sp);
    }
    let mut left = indices(r, (i128::MIN / 4, i128::MAX / 4));
    c.visited[d] += left.len();
    for ((ci, _), sp) in cf.checks.iter().zip(spans) {
        let next = left.meet(sp);
        c.rejected[*ci] += left.len() - next.len();
        left = next;
    }
    Some(left.len())
}
