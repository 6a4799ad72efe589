//! Planning: dependency DAG, level sets, loop order, hoisting and bound tightening.
//!
//! 1. Parse every expression and resolve names; unknown names are errors.
//! 2. Build the dependency DAG (petgraph) of iterators, derived values and constraints; a cycle
//!    is an error naming it.
//! 3. Fold constants: settings, and derived values that only depend on settings, disappear.
//! 4. Compute the level sets of Section X (longest-path layers of the DAG) and choose the loop
//!    order: a linear extension of the DAG that binds the iterators which complete the most
//!    constraints first, and sinks "free" iterators (no constraint depends on them) innermost.
//! 5. Hoist: each derived value and constraint is evaluated at the shallowest loop where all its
//!    inputs are bound, derived values just before the first constraint that needs them.
//! 6. Bound tightening: a constraint `it * x != e` (or `it != e`, `it + x != e`, `it - x != e`,
//!    also as a disjunct of an `or` chain) at the loop of `it`, where `x` and `e` are bound
//!    outside it, is solved for `it` instead of searched; it is evaluated first at that level so
//!    statistics are identical to a full scan.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};

use super::error::BeastError;
use super::expr::{Builtin, Expr, ExprKind, Resolved};
use super::space::{Class, Domain, GeneratorFn, Source, Space};
use super::value::{BinOp, CmpOp, PyRange, UnOp, Value};

/// Options that change what is enumerated or how.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Constraint names or class names (`hard`, `soft`, `correctness`) to switch off.
    pub disable: Vec<String>,
    /// Solve equality constraints instead of searching (exact; on by default).
    pub tighten: bool,
    /// Explicit loop order (prefix), overriding the space's own.
    pub loop_order: Option<Vec<String>>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            disable: Vec::new(),
            tighten: true,
            loop_order: None,
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
}

/// A materialised iterator domain.
#[derive(Clone, Debug)]
pub(super) enum Dom {
    Range(PyRange),
    Values(Arc<[Value]>),
    Single(Value),
}

impl Dom {
    pub(super) fn len(&self) -> u64 {
        match self {
            Dom::Range(r) => r.len(),
            Dom::Values(v) => v.len() as u64,
            Dom::Single(_) => 1,
        }
    }

    pub(super) fn from_value(v: Value) -> Dom {
        match v {
            Value::Range(r) => Dom::Range(r),
            Value::List(l) => Dom::Values(l),
            other => Dom::Single(other),
        }
    }

    pub(super) fn to_values(&self) -> Vec<Value> {
        match self {
            Dom::Range(r) => r.iter().map(Value::Int).collect(),
            Dom::Values(v) => v.to_vec(),
            Dom::Single(v) => vec![v.clone()],
        }
    }
}

/// How an iterator's domain is obtained at run time.
#[derive(Clone)]
pub(super) enum DomainPlan {
    Const(Dom),
    Expr(Expr),
    Gen {
        f: GeneratorFn,
        args: Vec<Expr>,
    },
    Set(Builtin, Box<DomainPlan>, Box<DomainPlan>),
    /// A loop-invariant domain expression hoisted to an outer level (`Step::Domain` stores
    /// its value in `slot`; `None` there means "evaluate `expr` here", e.g. after an error).
    Cached {
        slot: u32,
        expr: Expr,
    },
}

impl DomainPlan {
    fn exprs(&self) -> Vec<&Expr> {
        match self {
            DomainPlan::Const(_) => vec![],
            DomainPlan::Expr(e) | DomainPlan::Cached { expr: e, .. } => vec![e],
            DomainPlan::Gen { args, .. } => args.iter().collect(),
            DomainPlan::Set(_, a, b) => {
                let mut v = a.exprs();
                v.extend(b.exprs());
                v
            }
        }
    }

    fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            DomainPlan::Const(_) => vec![],
            DomainPlan::Expr(e) | DomainPlan::Cached { expr: e, .. } => vec![e],
            DomainPlan::Gen { args, .. } => args.iter_mut().collect(),
            DomainPlan::Set(_, a, b) => {
                let mut v = a.exprs_mut();
                v.extend(b.exprs_mut());
                v
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            DomainPlan::Const(d) => match d {
                Dom::Range(r) => format!("range({}, {}, {})", r.start, r.stop, r.step),
                Dom::Values(v) => Value::List(v.clone()).to_string(),
                Dom::Single(v) => v.to_string(),
            },
            DomainPlan::Expr(e) => e.to_string(),
            DomainPlan::Cached { slot, expr } => format!("{expr}   (hoisted into ${slot})"),
            DomainPlan::Gen { args, .. } => {
                format!(
                    "<generator>({})",
                    args.iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            DomainPlan::Set(op, a, b) => {
                format!("{}({}, {})", op.name(), a.describe(), b.describe())
            }
        }
    }
}

/// One evaluation step at a loop level.
#[derive(Clone)]
pub(super) enum Step {
    /// Compute a derived value into its slot.
    Derive {
        slot: u32,
        entry: Arc<str>,
        expr: Expr,
    },
    /// Evaluate constraint `ci`; reject the point if true.
    Check { ci: usize, expr: Expr },
    /// Evaluate a hoisted domain expression into its slot (`None` on error).
    Domain { slot: u32, expr: Expr },
    /// Evaluate a hoisted loop-invariant sub-expression into its slot (`None` on error).
    Cache { slot: u32, expr: Expr },
}

/// The solved form of a tightened equality: `it == (rhs op coef)`.
#[derive(Clone)]
pub(super) enum SolveForm {
    /// `it != rhs`
    Plain,
    /// `it * coef != rhs`
    Mul(Expr),
    /// `it + coef != rhs`
    Add(Expr),
    /// `it - coef != rhs`
    Sub(Expr),
}

/// Bound tightening of one level: the level's first check is constraint `ci`, and every point
/// it does not reject satisfies the solved equation.
#[derive(Clone)]
pub(super) struct Solve {
    pub ci: usize,
    pub form: SolveForm,
    pub rhs: Expr,
}

/// Range clipping of one level: the level's first check is constraint `ci`, and `pred` (one
/// of its disjuncts, with the level's derived values inlined) is non-decreasing in the
/// iterator whenever every `conds` expression is `>= 0` (or `> 0` when flagged strict), so
/// once it holds it holds for the rest of an increasing range.
#[derive(Clone)]
pub(super) struct Clip {
    pub ci: usize,
    pub pred: Expr,
    pub conds: Vec<(Expr, bool)>,
}

/// Divisor enumeration of the outer iterator `o` of a solved product `o * it != rhs` one
/// level deeper: only divisors of `rhs` can leave a candidate for `it`, so the other values of
/// `o` are counted (each rejects the whole inner domain through constraint `ci`) and skipped.
#[derive(Clone)]
pub(super) struct Pair {
    pub ci: usize,
    pub rhs: Expr,
}

/// One loop of the nest.
#[derive(Clone)]
pub(super) struct Level {
    pub pair: Option<Pair>,
    pub name: String,
    pub slot: u32,
    pub domain: DomainPlan,
    pub solve: Option<Solve>,
    pub clip: Option<Clip>,
    pub steps: Vec<Step>,
    /// Position of this iterator in the Section X level sets.
    pub level_set: usize,
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

struct Entry {
    name: String,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Iter(usize),
    Derived(usize),
    Constraint(usize),
}

fn domain_plan(space: &Space, entry: &str, d: &Domain) -> Result<DomainPlan, BeastError> {
    Ok(match d {
        Domain::Expr(s) => DomainPlan::Expr(space.parse_entry(entry, s)?),
        Domain::Values(v) => DomainPlan::Const(Dom::Values(Arc::from(v.clone()))),
        Domain::Generator { args, f } => DomainPlan::Gen {
            f: f.clone(),
            args: args
                .iter()
                .map(|a| Expr::new(ExprKind::Name(a.clone()), 0))
                .collect(),
        },
        Domain::Union(a, b) => DomainPlan::Set(
            Builtin::Union,
            Box::new(domain_plan(space, entry, a)?),
            Box::new(domain_plan(space, entry, b)?),
        ),
        Domain::Intersection(a, b) => DomainPlan::Set(
            Builtin::Intersection,
            Box::new(domain_plan(space, entry, a)?),
            Box::new(domain_plan(space, entry, b)?),
        ),
        Domain::Difference(a, b) => DomainPlan::Set(
            Builtin::Difference,
            Box::new(domain_plan(space, entry, a)?),
            Box::new(domain_plan(space, entry, b)?),
        ),
    })
}

fn source_expr(space: &Space, entry: &str, s: &Source) -> Result<Expr, BeastError> {
    match s {
        Source::Text(t) => space.parse_entry(entry, t),
        Source::Native { args, f } => Ok(Expr::new(
            ExprKind::Native(
                f.clone(),
                args.iter()
                    .map(|a| Expr::new(ExprKind::Name(a.clone()), 0))
                    .collect(),
            ),
            0,
        )),
    }
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
            let r = super::expr::call_builtin(
                *op,
                &[Value::list(a.to_values()), Value::list(b.to_values())],
            )
            .ok()?;
            Some(Dom::from_value(r))
        }
    }
}

/// Find the shortest dependency cycle through the strongly connected component `scc`.
fn cycle_names(g: &DiGraph<usize, ()>, scc: &[NodeIndex], names: &[String]) -> Vec<String> {
    let set: HashSet<NodeIndex> = scc.iter().copied().collect();
    let start = *scc.iter().min_by_key(|n| g[**n]).unwrap_or(&scc[0]);
    // BFS along "uses" (reverse edges) from start back to start.
    let mut parent: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut found = None;
    'bfs: while let Some(n) = queue.pop_front() {
        let mut nexts: Vec<NodeIndex> = g
            .neighbors_directed(n, petgraph::Direction::Incoming)
            .filter(|m| set.contains(m))
            .collect();
        nexts.sort_by_key(|m| g[*m]);
        for m in nexts {
            if m == start {
                found = Some(n);
                break 'bfs;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(m) {
                e.insert(n);
                queue.push_back(m);
            }
        }
    }
    let mut path = vec![start];
    if let Some(mut n) = found {
        let mut back = vec![];
        while n != start {
            back.push(n);
            n = parent[&n];
        }
        back.reverse();
        path.extend(back);
    }
    path.push(start);
    path.into_iter().map(|n| names[g[n]].clone()).collect()
}

impl Plan {
    /// Compile `space` under `opts`.
    pub fn new(space: &Space, opts: &PlanOptions) -> Result<Plan, BeastError> {
        space.validate()?;
        let ni = space.iterators.len();
        let nd = space.derived.len();
        let settings: HashMap<&str, &Value> = space
            .settings
            .iter()
            .map(|(n, v)| (n.as_str(), v))
            .collect();

        // --- entries and their parsed expressions -------------------------------------------
        let mut entries: Vec<Entry> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (i, it) in space.iterators.iter().enumerate() {
            by_name.insert(it.name.clone(), entries.len());
            entries.push(Entry {
                name: it.name.clone(),
                kind: Kind::Iter(i),
            });
        }
        for (i, d) in space.derived.iter().enumerate() {
            by_name.insert(d.name.clone(), entries.len());
            entries.push(Entry {
                name: d.name.clone(),
                kind: Kind::Derived(i),
            });
        }
        for (i, c) in space.constraints.iter().enumerate() {
            entries.push(Entry {
                name: c.name.clone(),
                kind: Kind::Constraint(i),
            });
        }
        let names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();

        let mut domains: Vec<DomainPlan> = space
            .iterators
            .iter()
            .map(|it| domain_plan(space, &it.name, &it.domain))
            .collect::<Result<_, _>>()?;
        let mut dexprs: Vec<Expr> = space
            .derived
            .iter()
            .map(|d| source_expr(space, &d.name, &d.source))
            .collect::<Result<_, _>>()?;
        let mut cexprs: Vec<Expr> = space
            .constraints
            .iter()
            .map(|c| source_expr(space, &c.name, &c.source))
            .collect::<Result<_, _>>()?;

        // --- raw dependency graph and cycle check -------------------------------------------
        let mut g: DiGraph<usize, ()> = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..entries.len()).map(|i| g.add_node(i)).collect();
        for (ei, e) in entries.iter().enumerate() {
            let exprs: Vec<&Expr> = match e.kind {
                Kind::Iter(i) => domains[i].exprs(),
                Kind::Derived(i) => vec![&dexprs[i]],
                Kind::Constraint(i) => vec![&cexprs[i]],
            };
            for x in exprs {
                for (n, pos) in x.names() {
                    if let Some(&dep) = by_name.get(&n) {
                        g.update_edge(nodes[dep], nodes[ei], ());
                    } else if !settings.contains_key(n.as_str()) {
                        return Err(BeastError::UnknownName {
                            entry: e.name.clone(),
                            column: pos as usize + 1,
                            name: n,
                            file_pos: space.file_pos_of(&e.name, pos as usize),
                        });
                    }
                }
            }
        }
        let topo = match toposort(&g, None) {
            Ok(t) => t,
            Err(_) => {
                let mut sccs: Vec<Vec<NodeIndex>> = tarjan_scc(&g)
                    .into_iter()
                    .filter(|s| s.len() > 1 || g.contains_edge(s[0], s[0]))
                    .collect();
                sccs.sort_by_key(|s| s.iter().map(|n| g[*n]).min());
                return Err(BeastError::Cycle {
                    cycle: cycle_names(&g, &sccs[0], &names),
                });
            }
        };

        // --- resolution and constant folding in topological order ---------------------------
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
        let mut derived_const: Vec<bool> = vec![false; nd];
        for &n in &topo {
            if let Kind::Derived(i) = entries[g[n]].kind {
                let lookup = |name: &str| -> Option<Resolved> {
                    if let Some(v) = consts.get(name) {
                        Some(Resolved::Const(v.clone()))
                    } else {
                        slot_of(name).map(Resolved::Slot)
                    }
                };
                // Names were checked above, so resolution cannot fail.
                let _ = dexprs[i].resolve(&lookup);
                dexprs[i].fold();
                if let Some(v) = dexprs[i].as_const() {
                    consts.insert(space.derived[i].name.clone(), v.clone());
                    derived_const[i] = true;
                }
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

        // --- enabled constraints -----------------------------------------------------------
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

        // --- dependencies over slots --------------------------------------------------------
        let derived_slots: Vec<Vec<u32>> = dexprs.iter().map(Expr::slots).collect();
        // Iterators each derived value depends on (transitively), in topological order.
        let mut derived_iters: Vec<HashSet<usize>> = vec![HashSet::new(); nd];
        for &n in &topo {
            if let Kind::Derived(i) = entries[g[n]].kind {
                let mut s = HashSet::new();
                for &slot in &derived_slots[i] {
                    let slot = slot as usize;
                    if slot < ni {
                        s.insert(slot);
                    } else {
                        s.extend(derived_iters[slot - ni].iter().copied());
                    }
                }
                derived_iters[i] = s;
            }
        }
        let iters_of = |slots: &[u32]| -> HashSet<usize> {
            let mut s = HashSet::new();
            for &slot in slots {
                let slot = slot as usize;
                if slot < ni {
                    s.insert(slot);
                } else {
                    s.extend(derived_iters[slot - ni].iter().copied());
                }
            }
            s
        };
        let domain_slots: Vec<Vec<u32>> = domains
            .iter()
            .map(|d| {
                let mut v: Vec<u32> = d.exprs().iter().flat_map(|e| e.slots()).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let domain_iters: Vec<HashSet<usize>> = domain_slots.iter().map(|s| iters_of(s)).collect();
        let cons_slots: Vec<Vec<u32>> = cexprs.iter().map(Expr::slots).collect();
        let cons_iters: Vec<HashSet<usize>> = cons_slots.iter().map(|s| iters_of(s)).collect();
        let active: Vec<usize> = enabled
            .iter()
            .copied()
            .filter(|&i| !matches!(cexprs[i].as_const(), Some(v) if !v.truthy()))
            .collect();

        // --- Section X level sets over iterators ---------------------------------------------
        let mut iter_level = vec![0usize; ni];
        {
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
        }
        // Level sets of the whole DAG (iterators, derived values, constraints) for reporting.
        let mut node_level = vec![0usize; entries.len()];
        for &n in &topo {
            let l = g
                .neighbors_directed(n, petgraph::Direction::Incoming)
                .map(|m| node_level[g[m]] + 1)
                .max();
            node_level[g[n]] = l.unwrap_or(0);
        }
        let nlevels = node_level.iter().copied().max().map_or(0, |m| m + 1);
        let mut level_sets: Vec<Vec<String>> = vec![Vec::new(); nlevels];
        for (i, e) in entries.iter().enumerate() {
            if let Kind::Constraint(c) = e.kind
                && disabled.contains(&c)
            {
                continue;
            }
            level_sets[node_level[i]].push(e.name.clone());
        }

        // --- relevance: iterators some constraint depends on ---------------------------------
        let mut relevant = vec![false; ni];
        for &c in &active {
            for &i in &cons_iters[c] {
                relevant[i] = true;
            }
        }
        loop {
            let mut changed = false;
            for i in 0..ni {
                if relevant[i] {
                    for &j in &domain_iters[i] {
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

        // --- loop order ---------------------------------------------------------------------
        let mut order: Vec<usize> = Vec::new();
        let mut bound = vec![false; ni];
        if let Some(user) = opts.loop_order.as_ref().or(space.loop_order.as_ref()) {
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
                if let Some(&j) = domain_iters[i].iter().find(|&&j| !bound[j]) {
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
        }
        while order.len() < ni {
            let mut best: Option<(usize, (bool, usize, f64))> = None;
            for i in 0..ni {
                if bound[i] || domain_iters[i].iter().any(|&j| !bound[j]) {
                    continue;
                }
                let mut completes = 0;
                let mut proximity = 0.0;
                for &c in &active {
                    let ci = &cons_iters[c];
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
                            .then(
                                key.2
                                    .partial_cmp(&bk.2)
                                    .unwrap_or(std::cmp::Ordering::Equal),
                            )
                            .then(iter_level[*b].cmp(&iter_level[i]));
                        cmp == std::cmp::Ordering::Greater
                    }
                };
                if better {
                    best = Some((i, key));
                }
            }
            let Some((i, _)) = best else {
                return Err(BeastError::invalid(
                    &space.name,
                    "iterator domains form a cycle",
                ));
            };
            bound[i] = true;
            order.push(i);
        }
        let mut loop_pos = vec![0usize; ni];
        for (k, &i) in order.iter().enumerate() {
            loop_pos[i] = k;
        }

        // --- hoisting: the loop at which each value / constraint becomes computable -----------
        // -1 = before all loops.
        let mut derived_pos: Vec<i64> = vec![-1; nd];
        for &n in &topo {
            if let Kind::Derived(i) = entries[g[n]].kind {
                derived_pos[i] = derived_slots[i]
                    .iter()
                    .map(|&s| {
                        let s = s as usize;
                        if s < ni {
                            loop_pos[s] as i64
                        } else {
                            derived_pos[s - ni]
                        }
                    })
                    .max()
                    .unwrap_or(-1);
            }
        }
        let pos_of_slots = |slots: &[u32]| -> i64 {
            slots
                .iter()
                .map(|&s| {
                    let s = s as usize;
                    if s < ni {
                        loop_pos[s] as i64
                    } else {
                        derived_pos[s - ni]
                    }
                })
                .max()
                .unwrap_or(-1)
        };
        let cons_pos: Vec<i64> = cons_slots.iter().map(|s| pos_of_slots(s)).collect();

        // Derived values that something needs.
        let mut needed = vec![false; nd];
        let mut stack: Vec<usize> = Vec::new();
        let mark = |slots: &[u32], stack: &mut Vec<usize>| {
            for &s in slots {
                if s as usize >= ni {
                    stack.push(s as usize - ni);
                }
            }
        };
        for &c in &active {
            mark(&cons_slots[c], &mut stack);
        }
        for s in &domain_slots {
            mark(s, &mut stack);
        }
        while let Some(d) = stack.pop() {
            if !needed[d] && !derived_const[d] {
                needed[d] = true;
                mark(&derived_slots[d], &mut stack);
            }
        }
        let topo_rank: HashMap<usize, usize> = topo
            .iter()
            .enumerate()
            .filter_map(|(r, &n)| match entries[g[n]].kind {
                Kind::Derived(i) => Some((i, r)),
                _ => None,
            })
            .collect();

        // Emit `Derive` steps for the not-yet-computed derived dependencies of `slots` at `pos`.
        fn emit_derived(
            slots: &[u32],
            pos: i64,
            ni: usize,
            ctx: DerivedCtx<'_>,
            computed: &mut [bool],
            steps: &mut Vec<Step>,
        ) {
            let (dslots, dpos, dexprs, dnames, rank) = ctx;
            let mut deps: Vec<usize> = slots
                .iter()
                .filter(|&&s| s as usize >= ni)
                .map(|&s| s as usize - ni)
                .collect();
            deps.sort_by_key(|d| rank.get(d).copied().unwrap_or(0));
            for d in deps {
                if computed[d] || dpos[d] != pos {
                    continue;
                }
                emit_derived(&dslots[d], pos, ni, ctx, computed, steps);
                computed[d] = true;
                steps.push(Step::Derive {
                    slot: (ni + d) as u32,
                    entry: Arc::from(dnames[d].as_str()),
                    expr: dexprs[d].clone(),
                });
            }
        }
        let dnames: Vec<String> = space.derived.iter().map(|d| d.name.clone()).collect();
        let ctx = (
            &derived_slots[..],
            &derived_pos[..],
            &dexprs[..],
            &dnames[..],
            &topo_rank,
        );
        let mut computed = derived_const.clone();
        let all_needed_at = |pos: i64| -> Vec<u32> {
            let mut v: Vec<usize> = (0..nd)
                .filter(|&d| needed[d] && derived_pos[d] == pos)
                .collect();
            v.sort_by_key(|d| topo_rank.get(d).copied().unwrap_or(0));
            v.into_iter().map(|d| (ni + d) as u32).collect()
        };

        let mut pre_steps = Vec::new();
        for &c in &active {
            if cons_pos[c] == -1 {
                emit_derived(&cons_slots[c], -1, ni, ctx, &mut computed, &mut pre_steps);
                pre_steps.push(Step::Check {
                    ci: ci_of[&c],
                    expr: cexprs[c].clone(),
                });
            }
        }
        emit_derived(
            &all_needed_at(-1),
            -1,
            ni,
            ctx,
            &mut computed,
            &mut pre_steps,
        );

        let mut levels = Vec::with_capacity(ni);
        for (k, &it) in order.iter().enumerate() {
            let k64 = k as i64;
            let mut checks: Vec<usize> = active
                .iter()
                .copied()
                .filter(|&c| cons_pos[c] == k64)
                .collect();
            let mut solve = None;
            if let Some((idx, form, rhs)) = checks.iter().enumerate().find_map(|(idx, &c)| {
                find_solve(&cexprs[c], it as u32, &|slots: &[u32]| {
                    pos_of_slots(slots) < k64
                })
                .map(|(f, r)| (idx, f, r))
            }) {
                let c = checks.remove(idx);
                checks.insert(0, c);
                solve = Some(Solve {
                    ci: ci_of[&c],
                    form,
                    rhs,
                });
            }
            let mut clip = None;
            if solve.is_none() {
                let inline = |e: &Expr| inline_level(e, k64, ni, &derived_pos, &dexprs);
                if let Some((idx, pred, conds)) = checks.iter().enumerate().find_map(|(idx, &c)| {
                    find_clip(&inline(&cexprs[c]), it as u32, &|slots: &[u32]| {
                        pos_of_slots(slots) < k64
                    })
                    .map(|(p, cs)| (idx, p, cs))
                }) {
                    let c = checks.remove(idx);
                    checks.insert(0, c);
                    clip = Some(Clip {
                        ci: ci_of[&c],
                        pred,
                        conds,
                    });
                }
            }
            let mut steps = Vec::new();
            for &c in &checks {
                emit_derived(&cons_slots[c], k64, ni, ctx, &mut computed, &mut steps);
                steps.push(Step::Check {
                    ci: ci_of[&c],
                    expr: cexprs[c].clone(),
                });
            }
            emit_derived(&all_needed_at(k64), k64, ni, ctx, &mut computed, &mut steps);
            levels.push(Level {
                pair: None,
                name: space.iterators[it].name.clone(),
                slot: it as u32,
                domain: domains[it].clone(),
                solve,
                clip,
                steps,
                level_set: iter_level[it],
            });
        }

        // --- hoist loop-invariant domains to the loop where their inputs are bound -----------
        let mut n_slots = ni + nd;
        for k in 0..levels.len() {
            let DomainPlan::Expr(e) = &levels[k].domain else {
                continue;
            };
            let p = pos_of_slots(&domain_slots[levels[k].slot as usize]);
            if p >= 0 && p < k as i64 - 1 {
                let slot = n_slots as u32;
                n_slots += 1;
                let expr = e.clone();
                levels[p as usize].steps.push(Step::Domain {
                    slot,
                    expr: expr.clone(),
                });
                levels[k].domain = DomainPlan::Cached { slot, expr };
            }
        }

        // --- hoist loop-invariant sub-expressions of derived values and constraints --------
        {
            let pos_fn = |slots: &[u32]| pos_of_slots(slots);
            let mut hoisted: Vec<(usize, Step)> = Vec::new();
            for (k, level) in levels.iter_mut().enumerate() {
                for st in level.steps.iter_mut() {
                    let expr = match st {
                        Step::Derive { expr, .. } | Step::Check { expr, .. } => expr,
                        _ => continue,
                    };
                    licm(expr, k as i64, &pos_fn, &mut n_slots, &mut hoisted);
                }
            }
            for (p, st) in hoisted {
                levels[p].steps.push(st);
            }
        }

        // --- divisor enumeration for the outer loop of a solved product ---------------------
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
                && pos_of_slots(&rhs.slots()) < l as i64
                && pos_of_slots(&domain_slots[inner.slot as usize]) < l as i64
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

        // --- counting shortcut for trailing free loops --------------------------------------
        let n = levels.len();
        let mut shortcut = n;
        while shortcut > 0 {
            let s = shortcut - 1;
            let ok = (s..n).all(|j| {
                levels[j].steps.is_empty()
                    && levels[j].solve.is_none()
                    && levels[j].clip.is_none()
                    && levels[j].pair.is_none()
                    && pos_of_slots(&domain_slots[levels[j].slot as usize]) < s as i64
            });
            if !ok {
                break;
            }
            shortcut = s;
        }

        let mut init_env = vec![Value::None; n_slots];
        for d in 0..nd {
            if let Some(v) = dexprs[d].as_const() {
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
            constraints: enabled
                .iter()
                .map(|&i| ConstraintInfo {
                    name: space.constraints[i].name.clone(),
                    class: space.constraints[i].class,
                })
                .collect(),
            shortcut,
            tighten: opts.tighten,
            disabled: {
                let mut d: Vec<usize> = disabled.into_iter().collect();
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

    /// A human-readable account of the plan: loops, hoisted steps, tightening.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "space {}: {} loops", self.space_name, self.levels.len());
        let cname = |ci: usize| self.constraints[ci].name.as_str();
        for st in &self.pre_steps {
            match st {
                Step::Derive { entry, .. } => {
                    let _ = writeln!(s, "  before loops: {entry} =");
                }
                Step::Check { ci, .. } => {
                    let _ = writeln!(s, "  before loops: reject if {}", cname(*ci));
                }
                Step::Domain { .. } | Step::Cache { .. } => {}
            }
        }
        for (k, l) in self.levels.iter().enumerate() {
            let _ = writeln!(
                s,
                "{}for {} in {}:   # level set {}{}",
                "  ".repeat(k + 1),
                l.name,
                l.domain.describe(),
                l.level_set,
                if k >= self.shortcut {
                    ", counted by product"
                } else {
                    ""
                }
            );
            if let (Some(sv), true) = (&l.solve, self.tighten) {
                let _ = writeln!(
                    s,
                    "{}  # solved for {} from {}",
                    "  ".repeat(k + 1),
                    l.name,
                    cname(sv.ci)
                );
            }
            if let (Some(p), true) = (&l.pair, self.tighten) {
                let _ = writeln!(
                    s,
                    "{}  # only divisors of {} (for {})",
                    "  ".repeat(k + 1),
                    p.rhs,
                    cname(p.ci)
                );
            }
            if let (Some(cl), true) = (&l.clip, self.tighten) {
                let _ = writeln!(
                    s,
                    "{}  # range clipped by {}: {}",
                    "  ".repeat(k + 1),
                    cname(cl.ci),
                    cl.pred
                );
            }
            for st in &l.steps {
                match st {
                    Step::Derive { entry, expr, .. } => {
                        let _ = writeln!(s, "{}  {entry} = {expr}", "  ".repeat(k + 1));
                    }
                    Step::Check { ci, expr } => {
                        let _ = writeln!(
                            s,
                            "{}  reject if {}: {expr}",
                            "  ".repeat(k + 1),
                            cname(*ci)
                        );
                    }
                    Step::Domain { slot, expr } => {
                        let _ = writeln!(
                            s,
                            "{}  ${slot} = {expr}   (hoisted domain)",
                            "  ".repeat(k + 1)
                        );
                    }
                    Step::Cache { slot, expr } => {
                        let _ = writeln!(
                            s,
                            "{}  ${slot} = {expr}   (hoisted invariant)",
                            "  ".repeat(k + 1)
                        );
                    }
                }
            }
        }
        s
    }
}

/// Derived values' slots, loop positions, expressions, names and topological ranks.
type DerivedCtx<'a> = (
    &'a [Vec<u32>],
    &'a [i64],
    &'a [Expr],
    &'a [String],
    &'a HashMap<usize, usize>,
);

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
        ExprKind::Binary(op, a, b) => {
            let (var, other, var_left) = if has_it(a) && !has_it(b) {
                (a.as_ref(), b.as_ref(), true)
            } else if has_it(b) && !has_it(a) {
                (b.as_ref(), a.as_ref(), false)
            } else {
                return None;
            };
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
    let disjuncts: Vec<&Expr> = match &e.kind {
        ExprKind::Or(xs) => xs.iter().collect(),
        _ => vec![e],
    };
    for d in disjuncts {
        let ExprKind::Compare(a, rest) = &d.kind else {
            continue;
        };
        if rest.len() != 1 {
            continue;
        }
        let (op, b) = (&rest[0].0, &rest[0].1);
        let (f, other) = match op {
            CmpOp::Gt | CmpOp::Ge => (a.as_ref(), b),
            CmpOp::Lt | CmpOp::Le => (b, a.as_ref()),
            _ => continue,
        };
        if !outer(&other.slots()) || !f.slots().contains(&it) {
            continue;
        }
        if let Some(conds) = monotone(f, it, outer) {
            return Some((d.clone(), conds));
        }
    }
    None
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
