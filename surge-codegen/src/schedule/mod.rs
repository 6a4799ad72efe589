//! Schedules: how each nesting level of an expression sequence is mapped onto execution
//! resources (dissertation Section 5.2.2, Tables 5.2 and 5.3, Figure 5.2). See `README.md` here.

use crate::CodegenError;
use crate::ir::{OpKind, Strongest};
use crate::target::Platform;
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// One element of a nested schedule (Table 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScheduleElem {
    /// Several execution resources work in parallel, without coordinating.
    Independent,
    /// Several resources work in parallel and may coordinate (a reduction tree, a scan).
    Cooperative,
    /// One thread, a loop.
    Sequential,
}

impl ScheduleElem {
    pub const ALL: [ScheduleElem; 3] = [
        ScheduleElem::Independent,
        ScheduleElem::Cooperative,
        ScheduleElem::Sequential,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ScheduleElem::Independent => "independent",
            ScheduleElem::Cooperative => "cooperative",
            ScheduleElem::Sequential => "sequential",
        }
    }
    /// The rewrite rules RR: independent → sequential, cooperative → sequential.
    pub fn rewrites(self) -> &'static [ScheduleElem] {
        match self {
            ScheduleElem::Independent | ScheduleElem::Cooperative => &[ScheduleElem::Sequential],
            ScheduleElem::Sequential => &[],
        }
    }
    /// Whether `self` is at least as strong as `other` (reflexive closure of RR+).
    pub fn at_least(self, other: ScheduleElem) -> bool {
        self == other || other == ScheduleElem::Sequential
    }
    pub fn is_parallel(self) -> bool {
        self != ScheduleElem::Sequential
    }
}

impl fmt::Display for ScheduleElem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ScheduleElem {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ScheduleElem::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown schedule element `{s}` (expected independent, cooperative or sequential)"
                )
            })
    }
}

/// A nested schedule, outermost level first, e.g. `independent.cooperative`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Schedule(pub Vec<ScheduleElem>);

impl Schedule {
    pub fn elems(&self) -> &[ScheduleElem] {
        &self.0
    }
    pub fn depth(&self) -> usize {
        self.0.len()
    }
    /// The weakest schedule of this depth: all sequential (the lattice's bottom).
    pub fn all_sequential(depth: usize) -> Schedule {
        Schedule(vec![ScheduleElem::Sequential; depth])
    }
    /// Number of parallel (non-sequential) levels.
    pub fn parallel_levels(&self) -> usize {
        self.0.iter().filter(|e| e.is_parallel()).count()
    }
    /// `self ≥ other` in the strength order: `other` is reachable from `self` by rewrite rules
    /// (or equal). Schedules of different depths are incomparable.
    pub fn at_least(&self, other: &Schedule) -> bool {
        self.depth() == other.depth() && self.0.iter().zip(&other.0).all(|(a, b)| a.at_least(*b))
    }
    /// One rewrite step: every schedule obtained by rewriting one element (RR applied once).
    pub fn rewrite_once(&self) -> Vec<Schedule> {
        let mut out = Vec::new();
        for (i, e) in self.0.iter().enumerate() {
            for r in e.rewrites() {
                let mut s = self.clone();
                s.0[i] = *r;
                out.push(s);
            }
        }
        out
    }
    /// w(s) = {x : (s → x) ∈ RR+}: all strictly weaker schedules, by transitive closure of
    /// one-element rewrites.
    pub fn weaker(&self) -> BTreeSet<Schedule> {
        let mut seen = BTreeSet::new();
        let mut stack = self.rewrite_once();
        while let Some(s) = stack.pop() {
            if seen.insert(s.clone()) {
                stack.extend(s.rewrite_once());
            }
        }
        seen
    }
    /// Checks the schedule invariants against the expression sequence it schedules (one
    /// operator per nesting level): same depth, and every element no stronger than the lookup
    /// table allows for its operator.
    pub fn check(&self, level_ops: &[OpKind]) -> Result<(), CodegenError> {
        let strongest = strongest(level_ops)?;
        if !strongest.at_least(self) {
            return Err(CodegenError::Schedule {
                schedule: self.to_string(),
                message: format!(
                    "not reachable by rewrite rules from the strongest schedule `{strongest}`"
                ),
            });
        }
        Ok(())
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(e.name())?;
        }
        Ok(())
    }
}

impl FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("empty schedule".into());
        }
        s.split('.')
            .map(str::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(Schedule)
    }
}

/// The schedule lookup table (Table 5.3): the strongest schedule of one operator, from its row of
/// the operator table ([`OpKind::info`]). `split` and `nest` (and `transpose`, which like them
/// yields a nested sequence) give two elements.
/// The dissertation's `cyclic` has no counterpart among Surge's Rust operators.
pub fn lookup(op: OpKind) -> Option<&'static [ScheduleElem]> {
    use ScheduleElem::*;
    match op.info().strongest {
        Strongest::Independent => Some(&[Independent]),
        Strongest::Nested => Some(&[Independent, Independent]),
        Strongest::Cooperative => Some(&[Cooperative]),
        Strongest::None => None,
    }
}

/// The operator of each schedule element (an operator with a two-element entry appears twice),
/// so that Algorithm 3 can walk operators and schedule elements in step.
pub fn expand(ops: &[OpKind]) -> Result<Vec<OpKind>, CodegenError> {
    let mut out = Vec::new();
    for &op in ops {
        let elems = lookup(op).ok_or_else(|| CodegenError::Schedule {
            schedule: String::new(),
            message: format!("`{op}` is not a data-parallel operator; it has no schedule"),
        })?;
        out.extend(std::iter::repeat_n(op, elems.len()));
    }
    Ok(out)
}

/// Schedule construction: the strongest schedule of an expression sequence (Table 5.3 lookups
/// in order).
pub fn strongest(ops: &[OpKind]) -> Result<Schedule, CodegenError> {
    let mut out = Vec::new();
    for &op in ops {
        let elems = lookup(op).ok_or_else(|| CodegenError::Schedule {
            schedule: String::new(),
            message: format!("`{op}` is not a data-parallel operator; it has no schedule"),
        })?;
        out.extend_from_slice(elems);
    }
    if out.is_empty() {
        return Err(CodegenError::Schedule {
            schedule: String::new(),
            message: "empty expression sequence".into(),
        });
    }
    Ok(Schedule(out))
}

/// Schedule construction and rewriting: {s} ∪ w(s), strongest first.
pub fn enumerate(ops: &[OpKind]) -> Result<Vec<Schedule>, CodegenError> {
    let s = strongest(ops)?;
    let mut all: Vec<Schedule> = std::iter::once(s.clone()).chain(s.weaker()).collect();
    sort_strongest_first(&mut all);
    Ok(all)
}

/// Orders schedules by decreasing number of parallel levels, then lexicographically
/// (independent before cooperative before sequential), so the order is stable.
pub fn sort_strongest_first(v: &mut Vec<Schedule>) {
    v.sort_by(|a, b| {
        b.parallel_levels()
            .cmp(&a.parallel_levels())
            .then_with(|| a.cmp(b))
    });
    v.dedup();
}

/// Whether a schedule satisfies the platform's schedule constraints. CUDA realizes at most two
/// parallel levels (grid/block or warp, then thread): every element past the second level must
/// be sequential. The CPU realizes any nesting (nested parallelism is a policy choice,
/// `enable_nesting`, checked during pruning).
pub fn satisfies(s: &Schedule, platform: &Platform) -> bool {
    match platform {
        Platform::Cuda(_) => s.0.iter().skip(2).all(|e| !e.is_parallel()),
        Platform::Cpu(_) => true,
    }
}

/// Platform rewriting: a schedule that fails a constraint becomes the nearest weaker schedule
/// that passes (never dropped; the all-sequential bottom always passes).
pub fn platform_rewrite(s: &Schedule, platform: &Platform) -> Schedule {
    if satisfies(s, platform) {
        return s.clone();
    }
    match platform {
        Platform::Cuda(_) => {
            let mut out = s.clone();
            for e in out.0.iter_mut().skip(2) {
                *e = ScheduleElem::Sequential;
            }
            out
        }
        Platform::Cpu(_) => s.clone(),
    }
}

/// Platform rewriting of a whole set, deduplicated, strongest first.
pub fn platform_rewrite_all(v: &[Schedule], platform: &Platform) -> Vec<Schedule> {
    let mut out: Vec<Schedule> = v.iter().map(|s| platform_rewrite(s, platform)).collect();
    sort_strongest_first(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScheduleElem::*;

    #[test]
    fn spmv_figure_5_2() {
        let set: BTreeSet<String> = enumerate(&[OpKind::Map, OpKind::Reduce])
            .unwrap()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let want: BTreeSet<String> = [
            "independent.cooperative",
            "independent.sequential",
            "sequential.cooperative",
            "sequential.sequential",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(set, want);
    }

    #[test]
    fn lookup_table() {
        assert_eq!(
            strongest(&[OpKind::Nest]).unwrap().to_string(),
            "independent.independent"
        );
        assert_eq!(strongest(&[OpKind::Scan]).unwrap().0, vec![Cooperative]);
        assert!(strongest(&[OpKind::Scalar]).is_err());
    }

    #[test]
    fn cuda_rewrites_third_level() {
        let p = Platform::Cuda(crate::target::CudaDevice::builtin("h200").unwrap());
        let s: Schedule = "independent.independent.cooperative".parse().unwrap();
        let r = platform_rewrite(&s, &p);
        assert_eq!(r.to_string(), "independent.independent.sequential");
        assert!(s.at_least(&r));
        assert_eq!(Schedule(vec![Independent]).to_string(), "independent");
    }

    #[test]
    fn check_rejects_too_strong_or_wrong_depth() {
        let ops = [OpKind::Map, OpKind::Reduce];
        let bad: Schedule = "cooperative.cooperative".parse().unwrap();
        let e = bad.check(&ops).unwrap_err().to_string();
        assert!(e.contains("cooperative.cooperative"), "{e}");
        assert!(Schedule(vec![Sequential]).check(&ops).is_err());
        assert!(Schedule::all_sequential(2).check(&ops).is_ok());
        assert!("independent..sequential".parse::<Schedule>().is_err());
        assert!(Schedule::all_sequential(3).weaker().is_empty());
    }
}
