//! Stages 1 and 2 of planning: parse every entry's expressions, then build the dependency DAG
//! (petgraph) of iterators, derived values and constraints, rejecting unknown names and cycles.
//! The DAG also gives the topological order of derived values and the Section X level sets.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};

use super::nest::{Dom, DomainPlan};
use crate::error::BeastError;
use crate::expr::{Builtin, Expr, ExprKind};
use crate::space::{Domain, Source, Space};

/// A node of the dependency DAG.
pub(super) struct Entry {
    pub name: String,
    pub kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Iter(usize),
    Derived(usize),
    Constraint(usize),
}

/// Every entry of a space and its parsed (not yet resolved) expressions.
pub(super) struct Parsed {
    /// Iterators, then derived values, then constraints, each in declaration order.
    pub entries: Vec<Entry>,
    /// Entry index of each iterator and derived value.
    pub by_name: HashMap<String, usize>,
    /// Iterator domains, by iterator.
    pub domains: Vec<DomainPlan>,
    /// Derived value expressions, by derived value.
    pub dexprs: Vec<Expr>,
    /// Constraint expressions, by constraint.
    pub cexprs: Vec<Expr>,
}

impl Parsed {
    /// Stage 1: list the entries and parse their expressions.
    pub fn new(space: &Space) -> Result<Parsed, BeastError> {
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
        let domains: Vec<DomainPlan> = space
            .iterators
            .iter()
            .map(|it| domain_plan(space, &it.name, &it.domain))
            .collect::<Result<_, _>>()?;
        let dexprs: Vec<Expr> = space
            .derived
            .iter()
            .map(|d| source_expr(space, &d.name, &d.source))
            .collect::<Result<_, _>>()?;
        let cexprs: Vec<Expr> = space
            .constraints
            .iter()
            .map(|c| source_expr(space, &c.name, &c.source))
            .collect::<Result<_, _>>()?;
        Ok(Parsed {
            entries,
            by_name,
            domains,
            dexprs,
            cexprs,
        })
    }

    /// The expressions entry `ei` depends on.
    fn exprs_of(&self, ei: usize) -> Vec<&Expr> {
        match self.entries[ei].kind {
            Kind::Iter(i) => self.domains[i].exprs(),
            Kind::Derived(i) => vec![&self.dexprs[i]],
            Kind::Constraint(i) => vec![&self.cexprs[i]],
        }
    }
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

/// The dependency DAG: node weights are entry indices, an edge runs from a dependency to its
/// user.
pub(super) struct Dag {
    g: DiGraph<usize, ()>,
    topo: Vec<NodeIndex>,
}

impl Dag {
    /// Stage 2: add an edge for every name an entry uses; a name that is neither an entry nor a
    /// setting is an error, and so is a cycle (reported as the shortest one through the first
    /// strongly connected component).
    pub fn build(space: &Space, parsed: &Parsed) -> Result<Dag, BeastError> {
        let settings: HashSet<&str> = space.settings.iter().map(|(n, _)| n.as_str()).collect();
        let entries = &parsed.entries;
        let mut g: DiGraph<usize, ()> = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..entries.len()).map(|i| g.add_node(i)).collect();
        for (ei, e) in entries.iter().enumerate() {
            for x in parsed.exprs_of(ei) {
                for (n, pos) in x.names() {
                    if let Some(&dep) = parsed.by_name.get(&n) {
                        g.update_edge(nodes[dep], nodes[ei], ());
                    } else if !settings.contains(n.as_str()) {
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
        match toposort(&g, None) {
            Ok(topo) => Ok(Dag { g, topo }),
            Err(_) => {
                let mut sccs: Vec<Vec<NodeIndex>> = tarjan_scc(&g)
                    .into_iter()
                    .filter(|s| s.len() > 1 || g.contains_edge(s[0], s[0]))
                    .collect();
                sccs.sort_by_key(|s| s.iter().map(|n| g[*n]).min());
                let names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
                Err(BeastError::Cycle {
                    cycle: cycle_names(&g, &sccs[0], &names),
                })
            }
        }
    }

    /// Derived values in topological order.
    pub fn derived_in_topo_order(&self, entries: &[Entry]) -> Vec<usize> {
        self.topo
            .iter()
            .filter_map(|&n| match entries[self.g[n]].kind {
                Kind::Derived(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    /// Derived value -> its position in the topological order of all entries.
    pub fn derived_ranks(&self, entries: &[Entry]) -> HashMap<usize, usize> {
        self.topo
            .iter()
            .enumerate()
            .filter_map(|(r, &n)| match entries[self.g[n]].kind {
                Kind::Derived(i) => Some((i, r)),
                _ => None,
            })
            .collect()
    }

    /// Section X level sets of the whole DAG (iterators, derived values, enabled constraints),
    /// for reporting: the longest-path layers.
    pub fn level_sets(&self, entries: &[Entry], disabled: &HashSet<usize>) -> Vec<Vec<String>> {
        let g = &self.g;
        let mut node_level = vec![0usize; entries.len()];
        for &n in &self.topo {
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
        level_sets
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
