//! Stage 15: innermost levels counted in closed form (used only by [`Plan::count`]).
//!
//! A level qualifies when every level after it is multiplied out (the counting shortcut)
//! without reading its iterator, and its only steps are constraints that are bounds on its
//! iterator: `it op e` or `e op it` with `op` one of `<`, `<=`, `>`, `>=`, `!=`, or an `or` of
//! such comparisons, where `e` does not read `it`. Each constraint then accepts an interval
//! of values (`it > e` accepts `it <= e`; `it != e` accepts `[e, e]`; an `or` accepts the
//! intersection of its disjuncts' intervals), so over a range the survivors of each
//! constraint, in evaluation order, are an interval of the range's indices: the counts and
//! the per-constraint rejections are computed without visiting the values.

use super::nest::{Level, Step};
use crate::expr::{Expr, ExprKind};
use crate::value::CmpOp;

/// One bound `it op e` (normalised so that the iterator is on the left).
#[derive(Clone)]
pub(crate) struct Bound {
    pub op: CmpOp,
    pub e: Expr,
}

/// A level counted in closed form: per constraint (in evaluation order), its disjuncts.
#[derive(Clone)]
pub(crate) struct Closed {
    pub checks: Vec<(usize, Vec<Bound>)>,
}

fn flip(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Ne => CmpOp::Ne,
        _ => return None,
    })
}

fn is_slot(e: &Expr, slot: u32) -> bool {
    matches!(e.kind, ExprKind::Slot(s) if s == slot)
}

fn reads_slot(e: &Expr, slot: u32) -> bool {
    matches!(e.kind, ExprKind::Slot(s) | ExprKind::Cached(s, _) if s == slot)
        || e.child_refs().iter().any(|c| reads_slot(c, slot))
}

/// `it op e` from one comparison, if it is a bound on `slot`.
fn bound(e: &Expr, slot: u32) -> Option<Bound> {
    let ExprKind::Compare(a, rest) = &e.kind else {
        return None;
    };
    let [(op, b)] = rest.as_slice() else {
        return None;
    };
    flip(*op)?;
    if is_slot(a, slot) && !reads_slot(b, slot) {
        Some(Bound {
            op: *op,
            e: b.clone(),
        })
    } else if is_slot(b, slot) && !reads_slot(a, slot) {
        Some(Bound {
            op: flip(*op)?,
            e: (**a).clone(),
        })
    } else {
        None
    }
}

fn disjuncts(e: &Expr, slot: u32) -> Option<Vec<Bound>> {
    match &e.kind {
        ExprKind::Or(xs) => xs.iter().map(|x| bound(x, slot)).collect(),
        _ => Some(vec![bound(e, slot)?]),
    }
}

/// The closed form of level `d`, if it qualifies (`shortcut` is the first multiplied-out level).
pub(super) fn closed_form(levels: &[Level], d: usize, shortcut: usize) -> Option<Closed> {
    let l = &levels[d];
    if d + 1 != shortcut || l.steps.is_empty() {
        return None;
    }
    let inner_free = levels[d + 1..]
        .iter()
        .all(|x| x.domain.exprs().iter().all(|e| !reads_slot(e, l.slot)));
    if !inner_free {
        return None;
    }
    let checks = l
        .steps
        .iter()
        .map(|s| match s {
            Step::Check { ci, expr } => Some((*ci, disjuncts(expr, l.slot)?)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Closed { checks })
}
