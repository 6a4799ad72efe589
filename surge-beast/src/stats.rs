//! Enumeration statistics.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::plan::Plan;
use super::space::Class;

/// Raw counters, one set per worker, summed at the end (so totals never depend on threads).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Counters {
    /// Points (partial assignments) visited at each loop level.
    pub visited: Vec<u64>,
    /// Points rejected by each enabled constraint (the first that rejected them).
    pub rejected: Vec<u64>,
    pub survivors: u64,
}

impl Counters {
    pub fn new(levels: usize, constraints: usize) -> Counters {
        Counters {
            visited: vec![0; levels],
            rejected: vec![0; constraints],
            survivors: 0,
        }
    }

    pub fn merge(&mut self, o: &Counters) {
        for (a, b) in self.visited.iter_mut().zip(&o.visited) {
            *a += b;
        }
        for (a, b) in self.rejected.iter_mut().zip(&o.rejected) {
            *a += b;
        }
        self.survivors += o.survivors;
    }
}

/// Points visited at one loop level.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LevelStats {
    pub iterator: String,
    pub visited: u64,
}

/// Points rejected by one constraint.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RejectStats {
    pub constraint: String,
    pub class: Class,
    pub rejected: u64,
}

/// Statistics of one enumeration.
///
/// `visited` is the total number of (partial) points visited over all loop levels, i.e. the sum
/// of `levels[*].visited`; a point rejected at level `k` was visited at levels `0..=k`. Each
/// rejected point is attributed to the *first* constraint that rejected it, in evaluation order
/// (loop level, then a solved constraint first, then declaration order). Counts are the same
/// with and without bound tightening and for any number of threads.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub space: String,
    pub survivors: u64,
    pub visited: u64,
    pub levels: Vec<LevelStats>,
    pub rejected: Vec<RejectStats>,
    pub disabled: Vec<String>,
    pub seconds: f64,
    pub threads: usize,
    /// False when the enumeration stopped early (a `limit` or the consumer asked to stop).
    pub complete: bool,
}

impl Stats {
    pub(super) fn from_counters(
        plan: &Plan,
        c: &Counters,
        seconds: f64,
        threads: usize,
        complete: bool,
    ) -> Stats {
        Stats {
            space: plan.space_name.clone(),
            survivors: c.survivors,
            visited: c.visited.iter().sum(),
            levels: plan
                .levels
                .iter()
                .zip(&c.visited)
                .map(|(l, &v)| LevelStats {
                    iterator: l.name.clone(),
                    visited: v,
                })
                .collect(),
            rejected: plan
                .constraints
                .iter()
                .zip(&c.rejected)
                .map(|(ci, &r)| RejectStats {
                    constraint: ci.name.clone(),
                    class: ci.class,
                    rejected: r,
                })
                .collect(),
            disabled: plan.disabled.clone(),
            seconds,
            threads,
            complete,
        }
    }

    /// Rejections of constraint `name`, if it is enabled.
    pub fn rejected_by(&self, name: &str) -> Option<u64> {
        self.rejected
            .iter()
            .find(|r| r.constraint == name)
            .map(|r| r.rejected)
    }

    /// The counts only (no timing), for comparisons in tests.
    pub fn counts(&self) -> (u64, Vec<u64>, Vec<u64>) {
        (
            self.survivors,
            self.levels.iter().map(|l| l.visited).collect(),
            self.rejected.iter().map(|r| r.rejected).collect(),
        )
    }

    /// Human-readable report.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(s, "space      {}", self.space);
        let _ = writeln!(s, "survivors  {}", self.survivors);
        let _ = writeln!(s, "visited    {}", self.visited);
        let _ = writeln!(
            s,
            "seconds    {:.3} ({} threads)",
            self.seconds, self.threads
        );
        if !self.complete {
            let _ = writeln!(s, "(stopped early: counts are partial)");
        }
        let _ = writeln!(s, "\nloop level            visited");
        for (k, l) in self.levels.iter().enumerate() {
            let _ = writeln!(s, "{:>2} {:<18} {:>14}", k, l.iterator, l.visited);
        }
        let _ = writeln!(s, "\nconstraint                    class         rejected");
        for r in &self.rejected {
            let _ = writeln!(
                s,
                "{:<29} {:<12} {:>10}",
                r.constraint,
                r.class.name(),
                r.rejected
            );
        }
        if !self.disabled.is_empty() {
            let _ = writeln!(s, "\ndisabled: {}", self.disabled.join(", "));
        }
        s
    }
}

/// A list of (name, count) pairs serialised as a JSON object in order.
struct OrderedMap<'a, T: Serialize>(Vec<(&'a str, T)>);

impl<T: Serialize> Serialize for OrderedMap<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Stats {
    /// `{"space", "survivors", "visited", "rejected_by": {name: n}, "rejected_by_class",
    /// "visited_by_level": {iterator: n}, "disabled", "seconds", "threads", "complete"}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("space", &self.space)?;
        m.serialize_entry("survivors", &self.survivors)?;
        m.serialize_entry("visited", &self.visited)?;
        m.serialize_entry(
            "rejected_by",
            &OrderedMap(
                self.rejected
                    .iter()
                    .map(|r| (r.constraint.as_str(), r.rejected))
                    .collect(),
            ),
        )?;
        let by_class: Vec<(&str, u64)> = Class::ALL
            .iter()
            .map(|c| {
                (
                    c.name(),
                    self.rejected
                        .iter()
                        .filter(|r| r.class == *c)
                        .map(|r| r.rejected)
                        .sum(),
                )
            })
            .collect();
        m.serialize_entry("rejected_by_class", &OrderedMap(by_class))?;
        m.serialize_entry(
            "visited_by_level",
            &OrderedMap(
                self.levels
                    .iter()
                    .map(|l| (l.iterator.as_str(), l.visited))
                    .collect(),
            ),
        )?;
        m.serialize_entry("disabled", &self.disabled)?;
        m.serialize_entry("seconds", &self.seconds)?;
        m.serialize_entry("threads", &self.threads)?;
        m.serialize_entry("complete", &self.complete)?;
        m.end()
    }
}
