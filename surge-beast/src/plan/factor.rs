//! Stage 14: what counting may factor out and remember (used only by [`Plan::count`]).
//!
//! For each loop level `d` this computes, from the slots every level reads and defines:
//!
//! - the *rest key*: the slots defined outside levels `d..` that levels `d..` read. The
//!   counters of the sub-nest from `d` (visited, rejected, survivors) are a function of the
//!   values in these slots (and of constants), so they can be remembered under that key;
//! - a *cut*: the first level `m > d` such that levels `m..` read nothing levels `d..m` define.
//!   The sub-nest from `d` is then a product: every survivor of the block `d..m` sees the same
//!   sub-nest from `m`, so that sub-nest is counted once and multiplied by the block's
//!   survivors. The block's own counters are remembered under the *block key* (the slots
//!   defined outside `d..m` that `d..m` read).
//!
//! A key slot whose value is a function of the other key slots (a hoisted domain or
//! invariant, or a derived value, computed at an outer level from them) is dropped from the
//! key. Levels with closure generators or native functions are never remembered or factored
//! (closures are not known to be pure).

use std::collections::HashSet;

use super::nest::{DomainPlan, Level, SolveForm, Step};
use crate::expr::{Expr, ExprKind};

/// A cut at a level: the block `d..end` is independent of what follows it.
#[derive(Clone, Debug)]
pub(crate) struct Cut {
    pub end: usize,
    /// Slots the block's counters depend on (None: do not remember them).
    pub key: Option<Box<[u32]>>,
}

/// Per level: the memo key of the sub-nest from it, and its cut; and which constraints the
/// levels can reject (the columns of a remembered delta).
#[derive(Clone, Debug, Default)]
pub(crate) struct Factoring {
    pub rest_key: Vec<Option<Box<[u32]>>>,
    pub cut: Vec<Option<Cut>>,
    pub columns: Columns,
}

/// The constraints that a run of levels can reject, as a contiguous run: every constraint
/// checked in a loop is checked at exactly one level (its steps, its tightening, or the
/// divisor pair of the level before, which rejects the next level's solved constraint), so
/// ordering constraints by that level makes the constraints of levels `lo..hi` the slice
/// `order[start[lo]..start[hi]]`. A remembered delta keeps only these columns (the others
/// are zero), which makes entries smaller and adding them cheaper.
#[derive(Clone, Debug, Default)]
pub(crate) struct Columns {
    order: Vec<usize>,
    start: Vec<usize>,
    /// Every range has every column (`order`): a constraint was found at two levels.
    all: bool,
}

impl Columns {
    /// The columns of levels `levels` (constraints checked before all loops have none).
    pub(crate) fn new(levels: &[Level]) -> Columns {
        let mut at: Vec<(usize, usize)> = Vec::new();
        for (j, l) in levels.iter().enumerate() {
            for s in &l.steps {
                if let Step::Check { ci, .. } = s {
                    at.push((j, *ci));
                }
            }
            if let Some(p) = &l.pair {
                at.push((j + 1, p.ci));
            }
            if let Some(sv) = &l.solve {
                at.push((j, sv.ci));
            }
            if let Some(cl) = &l.clip {
                at.push((j, cl.ci));
            }
        }
        at.sort_unstable();
        at.dedup();
        let mut cis: Vec<usize> = at.iter().map(|&(_, ci)| ci).collect();
        cis.sort_unstable();
        cis.dedup();
        if cis.len() != at.len() {
            // A constraint at two levels (not planned today): every delta keeps every
            // constraint checked in a loop, which is always right.
            return Columns {
                order: cis,
                start: Vec::new(),
                all: true,
            };
        }
        let start = (0..=levels.len())
            .map(|j| at.partition_point(|&(l, _)| l < j))
            .collect();
        Columns {
            order: at.into_iter().map(|(_, ci)| ci).collect(),
            start,
            all: false,
        }
    }

    /// The constraints levels `lo..hi` can reject.
    #[inline]
    pub(crate) fn of(&self, lo: usize, hi: usize) -> &[usize] {
        if self.all {
            return &self.order;
        }
        &self.order[self.start[lo]..self.start[hi]]
    }
}

/// Every slot an expression reads, including the slots of hoisted sub-expressions.
fn reads_into(e: &Expr, out: &mut HashSet<u32>, pure: &mut bool) {
    match &e.kind {
        ExprKind::Slot(s) | ExprKind::Cached(s, _) => {
            out.insert(*s);
        }
        ExprKind::Native(..) => *pure = false,
        _ => {}
    }
    for c in e.child_refs() {
        reads_into(c, out, pure);
    }
}

fn domain_reads(d: &DomainPlan, out: &mut HashSet<u32>, pure: &mut bool) {
    match d {
        DomainPlan::Cached { slot, .. } => {
            out.insert(*slot);
        }
        DomainPlan::Gen { .. } => *pure = false,
        DomainPlan::Set(_, a, b) => {
            domain_reads(a, out, pure);
            domain_reads(b, out, pure);
        }
        _ => {}
    }
    for e in d.exprs() {
        reads_into(e, out, pure);
    }
}

/// Slots read by level `j` (its domain, steps and tightening; a divisor pair also evaluates
/// the next level's domain), and whether everything it evaluates is known to be pure.
fn level_reads(levels: &[Level], j: usize) -> (HashSet<u32>, bool) {
    let (mut out, mut pure) = (HashSet::new(), true);
    let l = &levels[j];
    domain_reads(&l.domain, &mut out, &mut pure);
    for s in &l.steps {
        let e = match s {
            Step::Derive { expr, .. }
            | Step::Check { expr, .. }
            | Step::Domain { expr, .. }
            | Step::Cache { expr, .. } => expr,
        };
        reads_into(e, &mut out, &mut pure);
    }
    if let Some(sv) = &l.solve {
        reads_into(&sv.rhs, &mut out, &mut pure);
        if let SolveForm::Mul(c) | SolveForm::Add(c) | SolveForm::Sub(c) = &sv.form {
            reads_into(c, &mut out, &mut pure);
        }
    }
    let mut clip = l.clip.as_ref();
    while let Some(cl) = clip {
        reads_into(&cl.pred, &mut out, &mut pure);
        for (e, _) in &cl.conds {
            reads_into(e, &mut out, &mut pure);
        }
        clip = cl.then.as_deref();
    }
    if let Some(p) = &l.pair {
        reads_into(&p.rhs, &mut out, &mut pure);
        if let Some(next) = levels.get(j + 1) {
            domain_reads(&next.domain, &mut out, &mut pure);
        }
    }
    (out, pure)
}

/// Slots level `j` writes, with the expression each step slot is computed from.
fn level_defs(l: &Level) -> Vec<(u32, Option<&Expr>)> {
    let mut v = vec![(l.slot, None)];
    for s in &l.steps {
        match s {
            Step::Derive { slot, expr, .. }
            | Step::Domain { slot, expr }
            | Step::Cache { slot, expr } => v.push((*slot, Some(expr))),
            Step::Check { .. } => {}
        }
    }
    v
}

struct Analysis<'a> {
    reads: Vec<HashSet<u32>>,
    pure: Vec<bool>,
    /// The level that writes each slot (None: a constant or a pre-loop value).
    def_level: Vec<Option<usize>>,
    def_expr: Vec<Option<&'a Expr>>,
}

impl<'a> Analysis<'a> {
    fn new(levels: &'a [Level], n_slots: usize) -> Analysis<'a> {
        let (mut reads, mut pure) = (Vec::new(), Vec::new());
        for j in 0..levels.len() {
            let (r, p) = level_reads(levels, j);
            reads.push(r);
            pure.push(p);
        }
        let mut def_level = vec![None; n_slots];
        let mut def_expr = vec![None; n_slots];
        for (j, l) in levels.iter().enumerate() {
            for (s, e) in level_defs(l) {
                def_level[s as usize] = Some(j);
                def_expr[s as usize] = e;
            }
        }
        Analysis {
            reads,
            pure,
            def_level,
            def_expr,
        }
    }

    fn defined_in(&self, s: u32, lo: usize, hi: usize) -> bool {
        matches!(self.def_level[s as usize], Some(j) if lo <= j && j < hi)
    }

    /// The slots defined before level `lo` that levels `lo..hi` read, without those that are
    /// functions of the others; None when a level in `lo..hi` is not known to be pure.
    fn key(&self, lo: usize, hi: usize) -> Option<Box<[u32]>> {
        if !self.pure[lo..hi].iter().all(|&p| p) {
            return None;
        }
        let mut key: HashSet<u32> = HashSet::new();
        for r in &self.reads[lo..hi] {
            key.extend(r.iter().copied().filter(|&s| self.defined_in(s, 0, lo)));
        }
        let mut sorted: Vec<u32> = key.iter().copied().collect();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        for s in sorted {
            if let Some(e) = self.def_expr[s as usize] {
                let (mut r, mut pure) = (HashSet::new(), true);
                reads_into(e, &mut r, &mut pure);
                let derivable = pure
                    && r.iter().all(|x| {
                        *x != s && (key.contains(x) || self.def_level[*x as usize].is_none())
                    });
                if derivable {
                    key.remove(&s);
                }
            }
        }
        // Outer levels first (constants and pre-loop values before them), so that the last
        // words of a memo key are the innermost iterators (`memo::hash` keeps their locality).
        let mut v: Vec<u32> = key.into_iter().collect();
        v.sort_unstable_by_key(|&s| (self.def_level[s as usize].map_or(0, |j| j + 1), s));
        Some(v.into())
    }

    /// The first `m` in `d + 1..n` such that levels `m..` read nothing `d..m` defines.
    fn cut(&self, d: usize) -> Option<usize> {
        let n = self.reads.len();
        if !self.pure[d..].iter().all(|&p| p) {
            return None;
        }
        (d + 1..n).find(|&m| {
            self.reads[m..]
                .iter()
                .all(|r| r.iter().all(|&s| !self.defined_in(s, d, m)))
        })
    }
}

/// A key worth remembering under: it leaves out at least one outer iterator, so different
/// outer points can share an entry (a key holding every outer iterator never repeats).
fn worth(levels: &[Level], d: usize, key: Option<Box<[u32]>>) -> Option<Box<[u32]>> {
    key.filter(|k| levels[..d].iter().any(|l| !k.contains(&l.slot)))
}

/// The levels as counting runs them: a hoisted domain whose loop lies past a level where
/// counting remembers (a rest or a cut block with a key) is not computed ahead; its slot stays
/// `None`, so its loop evaluates it when it runs (on a miss), instead of every pass computing
/// a value a remembered entry makes unnecessary.
pub(super) fn counting_levels(levels: &[Level], f: &Factoring) -> Vec<Level> {
    let remembers = |j: usize| {
        matches!(f.rest_key.get(j), Some(Some(_)))
            || matches!(f.cut.get(j), Some(Some(Cut { key: Some(_), .. })))
    };
    let consumer = |slot: u32| {
        levels
            .iter()
            .position(|l| matches!(l.domain, DomainPlan::Cached { slot: s, .. } if s == slot))
    };
    let mut out = levels.to_vec();
    for (j, l) in out.iter_mut().enumerate() {
        l.steps.retain(|s| match s {
            Step::Domain { slot, .. } => {
                !matches!(consumer(*slot), Some(u) if (j + 1..=u).any(remembers))
            }
            _ => true,
        });
    }
    out
}

/// Rest keys and cuts of every level.
pub(super) fn factor(levels: &[Level], n_slots: usize) -> Factoring {
    let a = Analysis::new(levels, n_slots);
    let n = levels.len();
    Factoring {
        columns: Columns::new(levels),
        rest_key: (0..n).map(|d| worth(levels, d, a.key(d, n))).collect(),
        cut: (0..n)
            .map(|d| {
                a.cut(d).map(|m| Cut {
                    end: m,
                    key: worth(levels, d, a.key(d, m)),
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, ExprKind};
    use crate::plan::nest::{Dom, Pair};
    use crate::value::{PyRange, Value};

    /// A level checking constraints `cis`, with a divisor pair for constraint `pair`.
    fn level(cis: &[usize], pair: Option<usize>) -> Level {
        let f = Expr::new(ExprKind::Const(Value::Bool(false)), 0);
        Level {
            pair: pair.map(|ci| Pair { ci, rhs: f.clone() }),
            name: "i".into(),
            slot: 0,
            domain: DomainPlan::Const(Dom::Range(PyRange {
                start: 0,
                stop: 2,
                step: 1,
            })),
            solve: None,
            clip: None,
            steps: cis
                .iter()
                .map(|&ci| Step::Check {
                    ci,
                    expr: f.clone(),
                })
                .collect(),
            progs: Vec::new(),
            fused: None,
            level_set: 0,
        }
    }

    #[test]
    fn columns_are_the_constraints_of_the_levels() {
        // Level 1's pair rejects through constraint 0, which level 2 checks.
        let c = Columns::new(&[
            level(&[2, 3], None),
            level(&[1], Some(0)),
            level(&[0], None),
        ]);
        assert_eq!(c.of(0, 3), &[2, 3, 1, 0]);
        assert_eq!(c.of(0, 1), &[2, 3]);
        assert_eq!(c.of(1, 2), &[1]);
        assert_eq!(c.of(2, 3), &[0]);
        assert!(c.of(1, 1).is_empty());
        assert!(Columns::new(&[]).of(0, 0).is_empty());
        // A constraint at two levels: every range keeps every column.
        let c = Columns::new(&[level(&[1], None), level(&[], None), level(&[1, 4], None)]);
        assert_eq!(c.of(1, 2), &[1, 4]);
        assert_eq!(c.of(0, 3), &[1, 4]);
    }
}
