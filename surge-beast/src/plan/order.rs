//! Stages 6 and 7 of planning: the Section X level sets of the iterators and the loop order.
//!
//! The loop order is a linear extension of the DAG: a user prefix (`loop_order`), then,
//! among iterators whose domain inputs are bound, the one that completes the most constraints,
//! then the one closest to completing constraints (sum of 1/#unbound inputs), then the lowest
//! level set, then declaration order; iterators no constraint depends on go innermost.

use std::cmp::Ordering;
use std::collections::HashSet;

use super::PlanOptions;
use super::deps::Deps;
use crate::error::BeastError;
use crate::space::Space;

/// Level set of each iterator: 0 when its domain uses no iterator, else one more than the
/// deepest iterator its domain uses.
pub(super) fn iterator_levels(domain_iters: &[HashSet<usize>]) -> Vec<usize> {
    let ni = domain_iters.len();
    let mut iter_level = vec![0usize; ni];
    let mut done = vec![false; ni];
    for _ in 0..ni {
        for i in 0..ni {
            if !done[i] && domain_iters[i].iter().all(|&j| done[j]) {
                iter_level[i] = domain_iters[i]
                    .iter()
                    .map(|&j| iter_level[j] + 1)
                    .max()
                    .unwrap_or(0);
                done[i] = true;
            }
        }
    }
    iter_level
}

/// Iterators some active constraint depends on, directly or through the domain of another
/// relevant iterator.
fn relevant_iterators(deps: &Deps, active: &[usize]) -> Vec<bool> {
    let ni = deps.ni;
    let mut relevant = vec![false; ni];
    for &c in active {
        for &i in &deps.cons_iters[c] {
            relevant[i] = true;
        }
    }
    loop {
        let mut changed = false;
        for i in 0..ni {
            if relevant[i] {
                for &j in &deps.domain_iters[i] {
                    if !relevant[j] {
                        relevant[j] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    relevant
}

/// The loop order (iterator indices, outermost first).
pub(super) fn loop_order(
    space: &Space,
    opts: &PlanOptions,
    deps: &Deps,
    active: &[usize],
    iter_level: &[usize],
) -> Result<Vec<usize>, BeastError> {
    let ni = deps.ni;
    let relevant = relevant_iterators(deps, active);
    let mut order: Vec<usize> = Vec::new();
    let mut bound = vec![false; ni];
    if let Some(user) = opts.loop_order.as_ref().or(space.loop_order.as_ref()) {
        user_prefix(space, user, deps, &mut order, &mut bound)?;
    }
    while order.len() < ni {
        let Some(i) = next_loop(deps, active, &relevant, iter_level, &bound) else {
            return Err(BeastError::invalid(
                &space.name,
                "iterator domains form a cycle",
            ));
        };
        bound[i] = true;
        order.push(i);
    }
    Ok(order)
}

/// Bind the iterators of a user-given loop order prefix, checking it.
fn user_prefix(
    space: &Space,
    user: &[String],
    deps: &Deps,
    order: &mut Vec<usize>,
    bound: &mut [bool],
) -> Result<(), BeastError> {
    for n in user {
        let Some(i) = space.iterators.iter().position(|it| &it.name == n) else {
            return Err(BeastError::invalid(
                n,
                "loop_order names an unknown iterator",
            ));
        };
        if bound[i] {
            return Err(BeastError::invalid(
                n,
                "loop_order names this iterator twice",
            ));
        }
        if let Some(&j) = deps.domain_iters[i].iter().find(|&&j| !bound[j]) {
            return Err(BeastError::invalid(
                n,
                format!(
                    "loop_order places it outside '{}', which its domain uses",
                    space.iterators[j].name
                ),
            ));
        }
        bound[i] = true;
        order.push(i);
    }
    Ok(())
}

/// The best iterator to bind next among those whose domain inputs are bound (`None` if there
/// is none).
fn next_loop(
    deps: &Deps,
    active: &[usize],
    relevant: &[bool],
    iter_level: &[usize],
    bound: &[bool],
) -> Option<usize> {
    let mut best: Option<(usize, (bool, usize, f64))> = None;
    for i in 0..deps.ni {
        if bound[i] || deps.domain_iters[i].iter().any(|&j| !bound[j]) {
            continue;
        }
        let mut completes = 0;
        let mut proximity = 0.0;
        for &c in active {
            let ci = &deps.cons_iters[c];
            if !ci.contains(&i) {
                continue;
            }
            let unbound = ci.iter().filter(|&&j| !bound[j]).count();
            if unbound == 1 {
                completes += 1;
            }
            proximity += 1.0 / unbound as f64;
        }
        let key = (relevant[i], completes, proximity);
        let better = match &best {
            None => true,
            Some((b, bk)) => {
                let cmp = key
                    .0
                    .cmp(&bk.0)
                    .then(key.1.cmp(&bk.1))
                    .then(key.2.partial_cmp(&bk.2).unwrap_or(Ordering::Equal))
                    .then(iter_level[*b].cmp(&iter_level[i]));
                cmp == Ordering::Greater
            }
        };
        if better {
            best = Some((i, key));
        }
    }
    best.map(|(i, _)| i)
}
