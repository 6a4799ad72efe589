//! Stage 4 of planning: which constraints are enabled (`PlanOptions::disable` switches them off
//! by name or class) and which of those can reject anything (not constant false).

use std::collections::{HashMap, HashSet};

use super::PlanOptions;
use crate::error::BeastError;
use crate::expr::Expr;
use crate::space::{Class, Space};

/// The constraints a plan checks.
pub(super) struct Selection {
    /// Disabled constraints, by declaration index.
    pub disabled: HashSet<usize>,
    /// Enabled constraints in declaration order; position `ci` here is the plan's constraint
    /// index.
    pub enabled: Vec<usize>,
    /// Declaration index -> plan constraint index, for enabled constraints.
    pub ci_of: HashMap<usize, usize>,
    /// Enabled constraints that are not constant false, in declaration order.
    pub active: Vec<usize>,
}

impl Selection {
    pub fn new(
        space: &Space,
        opts: &PlanOptions,
        cexprs: &[Expr],
    ) -> Result<Selection, BeastError> {
        let mut disabled: HashSet<usize> = HashSet::new();
        for d in &opts.disable {
            let by_class: Vec<usize> = match Class::parse(d) {
                Some(cl) => space
                    .constraints
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.class == cl)
                    .map(|(i, _)| i)
                    .collect(),
                None => space
                    .constraints
                    .iter()
                    .position(|c| &c.name == d)
                    .into_iter()
                    .collect(),
            };
            if by_class.is_empty() && Class::parse(d).is_none() {
                return Err(BeastError::invalid(
                    d,
                    "no constraint or class of that name (classes: hard, soft, correctness)",
                ));
            }
            disabled.extend(by_class);
        }
        let enabled: Vec<usize> = (0..space.constraints.len())
            .filter(|i| !disabled.contains(i))
            .collect();
        let ci_of: HashMap<usize, usize> =
            enabled.iter().enumerate().map(|(ci, &i)| (i, ci)).collect();
        let active: Vec<usize> = enabled
            .iter()
            .copied()
            .filter(|&i| !matches!(cexprs[i].as_const(), Some(v) if !v.truthy()))
            .collect();
        Ok(Selection {
            disabled,
            enabled,
            ci_of,
            active,
        })
    }
}
