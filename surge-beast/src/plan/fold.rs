//! Stage 3 of planning: resolve names to constants or environment slots and fold constants.
//! Settings, and derived values that only depend on settings, disappear from the expressions;
//! a domain that becomes constant is materialised.

use std::collections::HashMap;
use std::sync::Arc;

use super::dag::{Kind, Parsed};
use super::nest::{Dom, DomainPlan};
use crate::expr::{Resolved, call_builtin};
use crate::space::Space;
use crate::value::Value;

/// Resolve and fold every expression, derived values in topological order (`derived_topo`) so
/// a derived value that folds to a constant is inlined into its users. Returns, per derived
/// value, whether it folded to a constant.
pub(super) fn resolve_and_fold(
    space: &Space,
    parsed: &mut Parsed,
    derived_topo: &[usize],
) -> Vec<bool> {
    let ni = space.iterators.len();
    let Parsed {
        entries,
        by_name,
        domains,
        dexprs,
        cexprs,
    } = parsed;
    let mut consts: HashMap<String, Value> = space
        .settings
        .iter()
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let slot_of = |name: &str| -> Option<u32> {
        by_name.get(name).and_then(|&e| match entries[e].kind {
            Kind::Iter(i) => Some(i as u32),
            Kind::Derived(i) => Some((ni + i) as u32),
            Kind::Constraint(_) => None,
        })
    };
    let mut derived_const: Vec<bool> = vec![false; space.derived.len()];
    for &i in derived_topo {
        let lookup = |name: &str| -> Option<Resolved> {
            if let Some(v) = consts.get(name) {
                Some(Resolved::Const(v.clone()))
            } else {
                slot_of(name).map(Resolved::Slot)
            }
        };
        // Names were checked when building the DAG, so resolution cannot fail.
        let _ = dexprs[i].resolve(&lookup);
        dexprs[i].fold();
        if let Some(v) = dexprs[i].as_const() {
            consts.insert(space.derived[i].name.clone(), v.clone());
            derived_const[i] = true;
        }
    }
    let lookup = |name: &str| -> Option<Resolved> {
        if let Some(v) = consts.get(name) {
            Some(Resolved::Const(v.clone()))
        } else {
            slot_of(name).map(Resolved::Slot)
        }
    };
    for d in domains.iter_mut() {
        for e in d.exprs_mut() {
            let _ = e.resolve(&lookup);
            e.fold();
        }
        if let Some(c) = try_const_domain(d) {
            *d = DomainPlan::Const(c);
        }
    }
    for c in cexprs.iter_mut() {
        let _ = c.resolve(&lookup);
        c.fold();
    }
    derived_const
}

/// Whether a domain plan can be evaluated now (no slots) and, if so, its value.
fn try_const_domain(d: &DomainPlan) -> Option<Dom> {
    match d {
        DomainPlan::Const(c) => Some(c.clone()),
        DomainPlan::Expr(e) => e.as_const().map(|v| Dom::from_value(v.clone())),
        DomainPlan::Cached { .. } => None,
        DomainPlan::Gen { f, args } => {
            let vals = args
                .iter()
                .map(|a| a.as_const().cloned())
                .collect::<Option<Vec<_>>>()?;
            f(&vals).ok().map(|v| Dom::Values(Arc::from(v)))
        }
        DomainPlan::Set(op, a, b) => {
            let (a, b) = (try_const_domain(a)?, try_const_domain(b)?);
            let r = call_builtin(
                *op,
                &[Value::list(a.to_values()), Value::list(b.to_values())],
            )
            .ok()?;
            Some(Dom::from_value(r))
        }
    }
}
