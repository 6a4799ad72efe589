//! Bound tightening (exact only), decided in stage 9 for each loop and in stage 12 between
//! loops: a constraint placed at the loop of `it` is *solved* for `it` (`it * x != e` and the
//! like), or *clips* the loop's range (a disjunct non-decreasing in `it` that, once true, stays
//! true); and the loop just outside a solved product `o * it != e` enumerates only the divisors
//! of `e` (*pairing*). The enumerator checks the run-time conditions and falls back to a full
//! scan; statistics are identical either way.

use super::dag::Parsed;
use super::deps::Deps;
use super::nest::{Clip, Level, Pair, Solve, SolveForm, Step};
use super::placement::Placement;
use super::select::Selection;
use crate::expr::{Builtin, Expr, ExprKind, IntProg};
use crate::value::{BinOp, CmpOp, UnOp};

/// Choose the tightening of loop `k` (iterator `it`): the first of `checks` (the constraints
/// placed there, in declaration order) that can be solved for `it`, else the first that clips
/// its range (with the derived values placed at `k` inlined). The chosen constraint moves to the
/// front of `checks`, since the enumerator evaluates it first.
pub(super) fn tighten_level(
    checks: &mut Vec<usize>,
    it: usize,
    k64: i64,
    parsed: &Parsed,
    deps: &Deps,
    place: &Placement,
    sel: &Selection,
) -> (Option<Solve>, Option<Clip>) {
    let cexprs = &parsed.cexprs;
    let outer = |slots: &[u32]| place.pos_of_slots(slots) < k64;
    if let Some((idx, form, rhs)) = checks
        .iter()
        .enumerate()
        .find_map(|(idx, &c)| find_solve(&cexprs[c], it as u32, &outer).map(|(f, r)| (idx, f, r)))
    {
        let c = checks.remove(idx);
        checks.insert(0, c);
        let solve = Solve {
            ci: sel.ci_of[&c],
            form,
            rhs,
        };
        return (Some(solve), None);
    }
    let inline = |e: &Expr| inline_level(e, k64, deps.ni, &place.derived_pos, &parsed.dexprs);
    if let Some((idx, pred, conds)) = checks.iter().enumerate().find_map(|(idx, &c)| {
        find_clip(&inline(&cexprs[c]), it as u32, &outer).map(|(p, cs)| (idx, p, cs))
    }) {
        let c = checks.remove(idx);
        checks.insert(0, c);
        // A second clip: the next check (only derived values come between the two), when
        // this clip's predicate is its whole constraint (so a value it does not clip passes
        // it). Nothing moves: the evaluation order is the same with or without it.
        let then = match checks.get(1) {
            Some(&c2) if !matches!(inline(&cexprs[c]).kind, ExprKind::Or(_)) => {
                find_clip_either(&inline(&cexprs[c2]), it as u32, &outer).map(
                    |(pred, conds, pos_start)| {
                        Box::new(Clip {
                            ci: sel.ci_of[&c2],
                            prog: IntProg::truthy(&pred),
                            pred,
                            conds,
                            pos_start,
                            then: None,
                        })
                    },
                )
            }
            _ => None,
        };
        let clip = Clip {
            ci: sel.ci_of[&c],
            prog: IntProg::truthy(&pred),
            pred,
            conds,
            pos_start: false,
            then,
        };
        return (None, Some(clip));
    }
    (None, None)
}

/// Stage 12: divisor enumeration for the outer loop of a solved product. When loop `l + 1`
/// solves `o * it != rhs` with `o` the iterator of loop `l`, `rhs` and the inner domain bound
/// outside `l`, and loop `l` does nothing else, loop `l` only visits divisors of `rhs`.
pub(super) fn pair_divisors(levels: &mut [Level], deps: &Deps, place: &Placement) {
    for l in 0..levels.len().saturating_sub(1) {
        let outer_slot = levels[l].slot;
        let inner = &levels[l + 1];
        let Some(Solve {
            ci,
            form: SolveForm::Mul(coef),
            rhs,
        }) = &inner.solve
        else {
            continue;
        };
        let ok = matches!(coef.kind, ExprKind::Slot(s) if s == outer_slot)
            && place.pos_of_slots(&rhs.slots()) < l as i64
            && place.pos_of_slots(&deps.domain_slots[inner.slot as usize]) < l as i64
            && levels[l].solve.is_none()
            && levels[l].clip.is_none()
            && levels[l]
                .steps
                .iter()
                .all(|s| matches!(s, Step::Domain { .. } | Step::Cache { .. }));
        if ok {
            levels[l].pair = Some(Pair {
                ci: *ci,
                rhs: rhs.clone(),
            });
        }
    }
}

/// Detect `it * x != rhs` (and the other solvable forms) in a constraint's disjuncts.
/// `outer(slots)` says whether the slots are all bound outside the loop of `it`.
fn find_solve(e: &Expr, it: u32, outer: &dyn Fn(&[u32]) -> bool) -> Option<(SolveForm, Expr)> {
    let disjuncts: Vec<&Expr> = match &e.kind {
        ExprKind::Or(xs) => xs.iter().collect(),
        _ => vec![e],
    };
    for d in disjuncts {
        let (a, b) = match &d.kind {
            ExprKind::Compare(a, rest) if rest.len() == 1 && rest[0].0 == CmpOp::Ne => {
                (a.as_ref(), &rest[0].1)
            }
            ExprKind::Unary(UnOp::Not, inner) => match &inner.kind {
                ExprKind::Compare(a, rest) if rest.len() == 1 && rest[0].0 == CmpOp::Eq => {
                    (a.as_ref(), &rest[0].1)
                }
                _ => continue,
            },
            _ => continue,
        };
        for (side, other) in [(a, b), (b, a)] {
            if !outer(&other.slots()) {
                continue;
            }
            let is_it = |x: &Expr| matches!(x.kind, ExprKind::Slot(s) if s == it);
            let form = match &side.kind {
                ExprKind::Slot(s) if *s == it => Some(SolveForm::Plain),
                ExprKind::Binary(op, l, r) => {
                    let (coef, it_left) = if is_it(l) {
                        (r.as_ref(), true)
                    } else if is_it(r) {
                        (l.as_ref(), false)
                    } else {
                        continue;
                    };
                    if !outer(&coef.slots()) {
                        continue;
                    }
                    match op {
                        BinOp::Mul => Some(SolveForm::Mul(coef.clone())),
                        BinOp::Add => Some(SolveForm::Add(coef.clone())),
                        BinOp::Sub if it_left => Some(SolveForm::Sub(coef.clone())),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(f) = form {
                return Some((f, other.clone()));
            }
        }
    }
    None
}

/// Replace derived values computed at loop `k` by their (recursively inlined) definitions.
fn inline_level(e: &Expr, k: i64, ni: usize, dpos: &[i64], dexprs: &[Expr]) -> Expr {
    let mut out = e.clone();
    fn go(e: &mut Expr, k: i64, ni: usize, dpos: &[i64], dexprs: &[Expr], depth: usize) {
        if let ExprKind::Slot(s) = e.kind {
            let s = s as usize;
            if s >= ni && dpos[s - ni] == k && depth < 64 {
                *e = dexprs[s - ni].clone();
                go(e, k, ni, dpos, dexprs, depth + 1);
            }
            return;
        }
        for c in e.children_mut_pub() {
            go(c, k, ni, dpos, dexprs, depth);
        }
    }
    go(&mut out, k, ni, dpos, dexprs, 0);
    out
}

/// Conditions under which `e` is non-decreasing in slot `it` (None if not provable).
fn monotone(e: &Expr, it: u32, outer: &dyn Fn(&[u32]) -> bool) -> Option<Vec<(Expr, bool)>> {
    let has_it = |x: &Expr| x.slots().contains(&it);
    match &e.kind {
        ExprKind::Slot(s) if *s == it => Some(vec![]),
        ExprKind::Binary(BinOp::Add, a, b) if has_it(a) && has_it(b) => {
            // A sum of non-decreasing terms is non-decreasing.
            let mut conds = monotone(a, it, outer)?;
            conds.extend(monotone(b, it, outer)?);
            Some(conds)
        }
        ExprKind::Binary(op, a, b) => {
            let (var, other, var_left) = one_side(a, b, &has_it)?;
            if !outer(&other.slots()) {
                return None;
            }
            let mut conds = monotone(var, it, outer)?;
            match op {
                BinOp::Add => {}
                BinOp::Sub if var_left => {}
                BinOp::Mul => conds.push((other.clone(), false)),
                BinOp::FloorDiv if var_left => conds.push((other.clone(), true)),
                _ => return None,
            }
            Some(conds)
        }
        ExprKind::Call(Builtin::Min | Builtin::Max, args) if args.len() >= 2 => {
            let mut conds = vec![];
            for a in args {
                if has_it(a) {
                    conds.extend(monotone(a, it, outer)?);
                } else if !outer(&a.slots()) {
                    return None;
                }
            }
            Some(conds)
        }
        _ => None,
    }
}

/// Find a disjunct `f > e` / `f >= e` / `e < f` / `e <= f` with `f` non-decreasing in `it`.
fn find_clip(
    e: &Expr,
    it: u32,
    outer: &dyn Fn(&[u32]) -> bool,
) -> Option<(Expr, Vec<(Expr, bool)>)> {
    for (d, f, other) in order_disjuncts(e) {
        if !outer(&other.slots()) || !f.slots().contains(&it) {
            continue;
        }
        if let Some(conds) = monotone(f, it, outer) {
            return Some((d.clone(), conds));
        }
    }
    None
}

/// The disjuncts of `e` (itself where it is no `or`) that are one ordering comparison, each as
/// `(disjunct, big, small)` for `big > small` or `big >= small` (`small < big` mirrored).
fn order_disjuncts(e: &Expr) -> impl Iterator<Item = (&Expr, &Expr, &Expr)> {
    let disjuncts: Vec<&Expr> = match &e.kind {
        ExprKind::Or(xs) => xs.iter().collect(),
        _ => vec![e],
    };
    disjuncts.into_iter().filter_map(|d| {
        let ExprKind::Compare(a, rest) = &d.kind else {
            return None;
        };
        let [(op, b)] = rest.as_slice() else {
            return None;
        };
        match op {
            CmpOp::Gt | CmpOp::Ge => Some((d, a.as_ref(), b)),
            CmpOp::Lt | CmpOp::Le => Some((d, b, a.as_ref())),
            _ => None,
        }
    })
}

/// The operand of `a ∘ b` that holds the iterator, the other, and whether it is the left one;
/// None unless exactly one does.
fn one_side<'e>(
    a: &'e Expr,
    b: &'e Expr,
    has_it: &dyn Fn(&Expr) -> bool,
) -> Option<(&'e Expr, &'e Expr, bool)> {
    match (has_it(a), has_it(b)) {
        (true, false) => Some((a, b, true)),
        (false, true) => Some((b, a, false)),
        _ => None,
    }
}

/// Run-time conditions of a clip: expressions that must be `>= 0` (`> 0` when flagged strict).
type Conds = Vec<(Expr, bool)>;

/// Conditions under which `e` is monotone in slot `it` over an increasing range: non-decreasing
/// when `inc`, else non-increasing. Each condition in `conds` must be `>= 0` (`> 0` when
/// flagged strict); `pos` is set when the range must also start above 0.
fn mono(
    e: &Expr,
    it: u32,
    outer: &dyn Fn(&[u32]) -> bool,
    inc: bool,
    conds: &mut Conds,
    pos: &mut bool,
) -> bool {
    let has_it = |x: &Expr| x.slots().contains(&it);
    match &e.kind {
        ExprKind::Slot(s) if *s == it => inc,
        _ if !has_it(e) => outer(&e.slots()),
        ExprKind::Binary(BinOp::Add, a, b) if has_it(a) && has_it(b) => {
            mono(a, it, outer, inc, conds, pos) && mono(b, it, outer, inc, conds, pos)
        }
        ExprKind::Binary(op, a, b) => {
            let Some((var, other, var_left)) = one_side(a, b, &has_it) else {
                return false;
            };
            if !outer(&other.slots()) {
                return false;
            }
            match op {
                BinOp::Add => mono(var, it, outer, inc, conds, pos),
                BinOp::Sub if var_left => mono(var, it, outer, inc, conds, pos),
                BinOp::Sub => mono(var, it, outer, !inc, conds, pos),
                BinOp::Mul => {
                    conds.push((other.clone(), false));
                    mono(var, it, outer, inc, conds, pos)
                }
                BinOp::FloorDiv if var_left => {
                    conds.push((other.clone(), true));
                    mono(var, it, outer, inc, conds, pos)
                }
                // `other // var` with `other >= 0` and `var` positive and non-decreasing.
                BinOp::FloorDiv if !inc => {
                    conds.push((other.clone(), false));
                    positive_inc(var, it, outer, conds, pos)
                }
                _ => false,
            }
        }
        ExprKind::Call(Builtin::Min | Builtin::Max, args) if args.len() >= 2 => {
            args.iter().all(|a| mono(a, it, outer, inc, conds, pos))
        }
        _ => false,
    }
}

/// Conditions under which `e` is at least 1 and non-decreasing in slot `it` over an increasing
/// int range (see [`mono`]): `it` over a range starting above 0, times or plus co-operands
/// above 0.
fn positive_inc(
    e: &Expr,
    it: u32,
    outer: &dyn Fn(&[u32]) -> bool,
    conds: &mut Conds,
    pos: &mut bool,
) -> bool {
    let has_it = |x: &Expr| x.slots().contains(&it);
    match &e.kind {
        ExprKind::Slot(s) if *s == it => {
            *pos = true;
            true
        }
        ExprKind::Binary(op @ (BinOp::Mul | BinOp::Add), a, b) => {
            let Some((var, other, _)) = one_side(a, b, &has_it) else {
                return false;
            };
            if !outer(&other.slots()) {
                return false;
            }
            conds.push((other.clone(), *op == BinOp::Mul));
            positive_inc(var, it, outer, conds, pos)
        }
        _ => false,
    }
}

/// Find a disjunct that, once true along an increasing range, stays true: `f > e` / `f >= e`
/// with `f` non-decreasing or `e` non-increasing, and mirrored (`e < f`, ...); the other side
/// bound outside. Returns it with its conditions and whether the range must start above 0.
fn find_clip_either(
    e: &Expr,
    it: u32,
    outer: &dyn Fn(&[u32]) -> bool,
) -> Option<(Expr, Conds, bool)> {
    // `big > small`: true-set upward closed when `big` rises or `small` falls.
    for (d, big, small) in order_disjuncts(e) {
        for (var, other, inc) in [(big, small, true), (small, big, false)] {
            if !outer(&other.slots()) || !var.slots().contains(&it) {
                continue;
            }
            let (mut conds, mut pos) = (Vec::new(), false);
            if mono(var, it, outer, inc, &mut conds, &mut pos) {
                return Some((d.clone(), conds, pos));
            }
        }
    }
    None
}
