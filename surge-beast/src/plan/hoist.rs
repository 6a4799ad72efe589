//! Stages 9 to 11 of planning: per-loop steps and hoisting, under the placement of stage 8
//! (`placement.rs`).
//!
//! Every derived value and constraint is evaluated at the shallowest loop where all its inputs
//! are bound ([`Placement`]); at that loop, a derived value is computed just before the first
//! constraint that needs it ([`build_levels`]). Loop-invariant domains ([`hoist_domains`]) and
//! loop-invariant sub-expressions ([`hoist_invariants`]) move out to the loop that binds their
//! last input, into cache slots.

use std::sync::Arc;

use super::dag::Parsed;
use super::deps::Deps;
use super::nest::{DomainPlan, Level, Step};
use super::placement::Placement;
use super::select::Selection;
use super::tighten::tighten_level;
use crate::expr::{Expr, ExprKind};
use crate::space::Space;
use crate::value::Value;

/// Emits `Derive` steps, each derived value once.
struct Emitter<'a> {
    space: &'a Space,
    deps: &'a Deps,
    place: &'a Placement,
    dexprs: &'a [Expr],
    /// Derived values already computed (or constant).
    computed: Vec<bool>,
}

impl Emitter<'_> {
    /// Emit `Derive` steps for the not-yet-computed derived dependencies of `slots` at `pos`.
    fn derived(&mut self, slots: &[u32], pos: i64, steps: &mut Vec<Step>) {
        let ni = self.deps.ni;
        let mut deps: Vec<usize> = slots
            .iter()
            .filter(|&&s| s as usize >= ni)
            .map(|&s| s as usize - ni)
            .collect();
        deps.sort_by_key(|d| self.place.topo_rank.get(d).copied().unwrap_or(0));
        for d in deps {
            if self.computed[d] || self.place.derived_pos[d] != pos {
                continue;
            }
            let deps: &Deps = self.deps;
            self.derived(&deps.derived_slots[d], pos, steps);
            self.computed[d] = true;
            steps.push(Step::Derive {
                slot: (ni + d) as u32,
                entry: Arc::from(self.space.derived[d].name.as_str()),
                expr: self.dexprs[d].clone(),
            });
        }
    }
}

/// Stage 9: the steps before all loops and one [`Level`] per loop of `order`. At each loop the
/// constraints placed there are checked in declaration order, a tightened one (solved or
/// clipping the range) first, each preceded by the derived values it needs; the remaining needed
/// derived values placed there follow.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_levels(
    space: &Space,
    parsed: &Parsed,
    deps: &Deps,
    place: &Placement,
    sel: &Selection,
    order: &[usize],
    iter_level: &[usize],
    derived_const: &[bool],
) -> (Vec<Step>, Vec<Level>) {
    let cexprs = &parsed.cexprs;
    let mut emit = Emitter {
        space,
        deps,
        place,
        dexprs: &parsed.dexprs,
        computed: derived_const.to_vec(),
    };
    let mut pre_steps = Vec::new();
    for &c in &sel.active {
        if place.cons_pos[c] == -1 {
            emit.derived(&deps.cons_slots[c], -1, &mut pre_steps);
            pre_steps.push(Step::Check {
                ci: sel.ci_of[&c],
                expr: cexprs[c].clone(),
            });
        }
    }
    emit.derived(&place.all_needed_at(-1), -1, &mut pre_steps);

    let mut levels = Vec::with_capacity(order.len());
    for (k, &it) in order.iter().enumerate() {
        let k64 = k as i64;
        let mut checks: Vec<usize> = sel
            .active
            .iter()
            .copied()
            .filter(|&c| place.cons_pos[c] == k64)
            .collect();
        let (solve, clip) = tighten_level(&mut checks, it, k64, parsed, deps, place, sel);
        let mut steps = Vec::new();
        for &c in &checks {
            emit.derived(&deps.cons_slots[c], k64, &mut steps);
            steps.push(Step::Check {
                ci: sel.ci_of[&c],
                expr: cexprs[c].clone(),
            });
        }
        emit.derived(&place.all_needed_at(k64), k64, &mut steps);
        levels.push(Level {
            pair: None,
            name: space.iterators[it].name.clone(),
            slot: it as u32,
            domain: parsed.domains[it].clone(),
            solve,
            clip,
            steps,
            progs: Vec::new(),
            fused: None,
            level_set: iter_level[it],
        });
    }
    (pre_steps, levels)
}

/// Stage 10: hoist loop-invariant domains to the loop where their inputs are bound (when that
/// is not the loop just outside), into new slots numbered from `n_slots`.
pub(super) fn hoist_domains(
    levels: &mut [Level],
    deps: &Deps,
    place: &Placement,
    n_slots: &mut usize,
) {
    for k in 0..levels.len() {
        let DomainPlan::Expr(e) = &levels[k].domain else {
            continue;
        };
        let p = place.pos_of_slots(&deps.domain_slots[levels[k].slot as usize]);
        if p >= 0 && p < k as i64 - 1 {
            let slot = *n_slots as u32;
            *n_slots += 1;
            let expr = e.clone();
            levels[p as usize].steps.push(Step::Domain {
                slot,
                expr: expr.clone(),
            });
            levels[k].domain = DomainPlan::Cached { slot, expr };
        }
    }
}

/// Stage 11: hoist loop-invariant sub-expressions of derived values and constraints into new
/// slots numbered from `n_slots`, computed at the loop that binds their last input.
pub(super) fn hoist_invariants(levels: &mut [Level], place: &Placement, n_slots: &mut usize) {
    let pos_fn = |slots: &[u32]| place.pos_of_slots(slots);
    let mut hoisted: Vec<(usize, Step)> = Vec::new();
    for (k, level) in levels.iter_mut().enumerate() {
        for st in level.steps.iter_mut() {
            let expr = match st {
                Step::Derive { expr, .. } | Step::Check { expr, .. } => expr,
                _ => continue,
            };
            licm(expr, k as i64, &pos_fn, n_slots, &mut hoisted);
        }
    }
    for (p, st) in hoisted {
        levels[p].steps.push(st);
    }
}

/// Loop-invariant code motion: replace maximal non-trivial sub-expressions of `e` (evaluated at
/// loop `k`) whose inputs are all bound at an outer loop `p` by a cached slot computed at `p`.
fn licm(
    e: &mut Expr,
    k: i64,
    pos_of: &dyn Fn(&[u32]) -> i64,
    n_slots: &mut usize,
    hoisted: &mut Vec<(usize, Step)>,
) {
    let trivial = matches!(
        e.kind,
        ExprKind::Const(_) | ExprKind::Slot(_) | ExprKind::Cached(..) | ExprKind::Native(..)
    );
    if !trivial {
        let p = pos_of(&e.slots());
        if p >= 0 && p < k {
            let slot = *n_slots as u32;
            *n_slots += 1;
            hoisted.push((
                p as usize,
                Step::Cache {
                    slot,
                    expr: e.clone(),
                },
            ));
            let inner = std::mem::replace(e, Expr::constant(Value::None));
            let pos = inner.pos;
            *e = Expr::new(ExprKind::Cached(slot, Box::new(inner)), pos);
            return;
        }
    }
    for c in e.children_mut_pub() {
        licm(c, k, pos_of, n_slots, hoisted);
    }
}
