//! Planning: compile a [`Space`] into a [`Plan`], the loop nest the enumerator interprets.
//!
//! [`Plan::new`] runs these stages, one module each:
//!
//! 1. *Parse* every expression (`dag`: [`Parsed`]).
//! 2. Build the dependency *DAG* (petgraph) of iterators, derived values and constraints;
//!    unknown names and cycles are errors (`dag`: [`Dag`]).
//! 3. *Resolve and fold*: names become constants or slots; settings, and derived values that
//!    only depend on settings, disappear (`fold`).
//! 4. *Select* the enabled constraints (`select`).
//! 5. *Slot dependencies*: the iterators each domain, derived value and constraint depends on
//!    (`deps`).
//! 6. *Level sets* of Section X (longest-path layers of the DAG) (`order`, `dag`).
//! 7. *Loop order*: a linear extension of the DAG that binds the iterators which complete the
//!    most constraints first, and sinks "free" iterators (no constraint depends on them)
//!    innermost (`order`).
//! 8. *Placement*: each derived value and constraint goes to the shallowest loop where all its
//!    inputs are bound (`hoist`).
//! 9. *Levels*: per loop, the constraints placed there, derived values just before the first
//!    constraint that needs them, a tightened constraint first (`hoist`, `tighten`). Bound
//!    tightening: a constraint `it * x != e` (or `it != e`, `it + x != e`, `it - x != e`, also as
//!    a disjunct of an `or` chain) at the loop of `it`, where `x` and `e` are bound outside it,
//!    is solved for `it` instead of searched; a monotone disjunct clips the range.
//! 10. *Hoist loop-invariant domains* (`hoist`).
//! 11. *Hoist loop-invariant sub-expressions* into cache slots (`hoist`).
//! 12. *Pair* a solved product's outer loop with divisor enumeration (`tighten`).
//! 13. *Counting shortcut*: trailing loops with no steps are multiplied out when counting.
//! 14. *Factoring*: cuts (blocks of loops the rest does not depend on) and the keys under
//!     which counting remembers sub-nests (`factor`).
//! 15. *Closed form*: an innermost loop whose constraints are bounds on its iterator is
//!     counted by interval arithmetic (`closed`).
//!
//! The compiled nest's types are in `nest`; [`Plan::describe`] in `describe`.

mod closed;
mod dag;
mod deps;
mod describe;
mod factor;
mod fold;
mod hoist;
mod nest;
mod order;
mod placement;
mod select;
mod tighten;

use std::sync::Arc;

use self::dag::{Dag, Parsed};
use self::deps::Deps;
use self::placement::Placement;
use self::select::Selection;
use crate::error::BeastError;
use crate::space::{Class, Space};
use crate::value::Value;

pub(crate) use self::closed::{Bound, Closed};
pub(crate) use self::factor::{Cut, Factoring};
pub(crate) use self::nest::{
    Clip, Dom, DomProg, DomainPlan, Level, Pair, Solve, SolveForm, Step, StepProg,
};

/// Options that change what is enumerated or how.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Constraint names or class names (`hard`, `soft`, `correctness`) to switch off.
    pub disable: Vec<String>,
    /// Solve equality constraints instead of searching (exact; on by default).
    pub tighten: bool,
    /// Explicit loop order (prefix), overriding the space's own.
    pub loop_order: Option<Vec<String>>,
    /// Count with cuts, remembered sub-nests and closed forms (exact; on by default). Off,
    /// [`Plan::count`] scans like listing does (for comparison).
    pub fast_count: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            disable: Vec::new(),
            tighten: true,
            loop_order: None,
            fast_count: true,
        }
    }
}

impl PlanOptions {
    pub fn disable(mut self, name: impl Into<String>) -> Self {
        self.disable.push(name.into());
        self
    }

    pub fn tighten(mut self, on: bool) -> Self {
        self.tighten = on;
        self
    }

    pub fn fast_count(mut self, on: bool) -> Self {
        self.fast_count = on;
        self
    }
}

/// An enabled constraint.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ConstraintInfo {
    pub name: String,
    pub class: Class,
}

/// A compiled, immutable enumeration plan (cheap to share between threads).
#[derive(Clone)]
pub struct Plan {
    pub(super) space_name: String,
    /// Iterator names in declaration order; iterator `i` lives in slot `i`.
    pub(super) iter_names: Arc<[String]>,
    /// Environment with constants filled in (slots of later-computed values hold `None`).
    pub(super) init_env: Vec<Value>,
    /// Steps evaluated once before the loops (values and constraints without loop inputs).
    pub(super) pre_steps: Vec<Step>,
    pub(super) levels: Vec<Level>,
    /// Enabled constraints; indices are the `ci` of [`Step::Check`].
    pub(super) constraints: Vec<ConstraintInfo>,
    /// Levels `shortcut..` have no steps and domains that only depend on outer loops: when only
    /// counting, their contribution is the product of their domain sizes.
    pub(super) shortcut: usize,
    pub(super) tighten: bool,
    /// Cuts and memo keys for counting (empty when `fast_count` is off).
    pub(crate) factoring: Factoring,
    /// Per level, its closed form for counting.
    pub(crate) closed: Vec<Option<Closed>>,
    /// The levels as counting runs them (`factor::counting_levels`).
    pub(crate) count_levels: Vec<Level>,
    pub(super) fast_count: bool,
    pub(super) disabled: Vec<String>,
    level_sets: Vec<Vec<String>>,
}

impl std::fmt::Debug for Plan {
    /// The space, loop order and enabled constraints (the compiled steps hold closures).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("space_name", &self.space_name)
            .field("iterators", &self.iter_names)
            .field("loop_order", &self.loop_order())
            .field("constraints", &self.constraints)
            .field("shortcut", &self.shortcut)
            .field("tighten", &self.tighten)
            .field("disabled", &self.disabled)
            .finish_non_exhaustive()
    }
}

impl Space {
    /// Compile the space into an enumeration plan.
    pub fn plan(&self, opts: &PlanOptions) -> Result<Plan, BeastError> {
        Plan::new(self, opts)
    }
}

impl Plan {
    /// Compile `space` under `opts` (the stages are listed in this module's documentation).
    pub fn new(space: &Space, opts: &PlanOptions) -> Result<Plan, BeastError> {
        space.validate()?;
        let ni = space.iterators.len();
        let nd = space.derived.len();
        let mut parsed = Parsed::new(space)?;
        let dag = Dag::build(space, &parsed)?;
        let derived_topo = dag.derived_in_topo_order(&parsed.entries);
        let derived_const = fold::resolve_and_fold(space, &mut parsed, &derived_topo);
        let sel = Selection::new(space, opts, &parsed.cexprs)?;
        let deps = Deps::new(&parsed, ni, &derived_topo);
        let iter_level = order::iterator_levels(&deps.domain_iters);
        let level_sets = dag.level_sets(&parsed.entries, &sel.disabled);
        let order = order::loop_order(space, opts, &deps, &sel.active, &iter_level)?;
        let place = Placement::new(
            &order,
            &deps,
            &derived_topo,
            dag.derived_ranks(&parsed.entries),
            &derived_const,
            &sel.active,
        );
        let (pre_steps, mut levels) = hoist::build_levels(
            space,
            &parsed,
            &deps,
            &place,
            &sel,
            &order,
            &iter_level,
            &derived_const,
        );
        let mut n_slots = ni + nd;
        hoist::hoist_domains(&mut levels, &deps, &place, &mut n_slots);
        hoist::hoist_invariants(&mut levels, &place, &mut n_slots);
        tighten::pair_divisors(&mut levels, &deps, &place);
        let shortcut = counting_shortcut(&levels, &deps, &place);
        let (factoring, closed): (Factoring, Vec<Option<Closed>>) = if opts.fast_count {
            (
                factor::factor(&levels, n_slots),
                (0..levels.len())
                    .map(|d| closed::closed_form(&levels, d, shortcut))
                    .collect(),
            )
        } else {
            let n = levels.len();
            (
                Factoring {
                    rest_key: vec![None; n],
                    cut: vec![None; n],
                    columns: factor::Columns::new(&levels),
                },
                vec![None; n],
            )
        };
        let mut count_levels = factor::counting_levels(&levels, &factoring);
        for l in levels.iter_mut().chain(count_levels.iter_mut()) {
            l.progs = nest::compile_steps(&l.steps);
            l.fused = nest::fuse(&l.steps, &l.progs);
        }

        let mut init_env = vec![Value::None; n_slots];
        for (d, e) in parsed.dexprs.iter().enumerate() {
            if let Some(v) = e.as_const() {
                init_env[ni + d] = v.clone();
            }
        }
        Ok(Plan {
            space_name: space.name.clone(),
            iter_names: space
                .iterators
                .iter()
                .map(|i| i.name.clone())
                .collect::<Vec<_>>()
                .into(),
            init_env,
            pre_steps,
            levels,
            constraints: sel
                .enabled
                .iter()
                .map(|&i| ConstraintInfo {
                    name: space.constraints[i].name.clone(),
                    class: space.constraints[i].class,
                })
                .collect(),
            shortcut,
            tighten: opts.tighten,
            factoring,
            closed,
            count_levels,
            fast_count: opts.fast_count,
            disabled: {
                let mut d: Vec<usize> = sel.disabled.into_iter().collect();
                d.sort_unstable();
                d.into_iter()
                    .map(|i| space.constraints[i].name.clone())
                    .collect()
            },
            level_sets,
        })
    }

    /// Iterator names in declaration order (the field order of every point).
    pub fn iterator_names(&self) -> &[String] {
        &self.iter_names
    }

    /// Iterator names, outermost loop first.
    pub fn loop_order(&self) -> Vec<&str> {
        self.levels.iter().map(|l| l.name.as_str()).collect()
    }

    /// Section X level sets of the dependency DAG (iterators, derived values and enabled
    /// constraints): set `i` holds the entries whose longest dependency chain has length `i`.
    pub fn level_sets(&self) -> &[Vec<String>] {
        &self.level_sets
    }

    /// Enabled constraints in declaration order.
    pub fn constraints(&self) -> &[ConstraintInfo] {
        &self.constraints
    }

    /// Names of disabled constraints.
    pub fn disabled(&self) -> &[String] {
        &self.disabled
    }

    /// Loops whose range is tightened by a constraint (solved equality or clipped range):
    /// (iterator, constraint).
    pub fn tightened(&self) -> Vec<(&str, &str)> {
        if !self.tighten {
            return vec![];
        }
        self.levels
            .iter()
            .filter_map(|l| {
                let ci = l
                    .solve
                    .as_ref()
                    .map(|s| s.ci)
                    .or(l.clip.as_ref().map(|c| c.ci))?;
                Some((l.name.as_str(), self.constraints[ci].name.as_str()))
            })
            .collect()
    }
}

/// Stage 13: the first of the trailing loops that have no steps and no tightening and whose
/// domains only depend on loops outside them; when only counting, they are multiplied out.
fn counting_shortcut(levels: &[Level], deps: &Deps, place: &Placement) -> usize {
    let n = levels.len();
    let mut shortcut = n;
    while shortcut > 0 {
        let s = shortcut - 1;
        let ok = (s..n).all(|j| {
            levels[j].steps.is_empty()
                && levels[j].solve.is_none()
                && levels[j].clip.is_none()
                && levels[j].pair.is_none()
                && place.pos_of_slots(&deps.domain_slots[levels[j].slot as usize]) < s as i64
        });
        if !ok {
            break;
        }
        shortcut = s;
    }
    shortcut
}
