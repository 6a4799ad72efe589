//! The variant-generation pipeline as named passes:
//! `analysis → strongest → rewrite → platform → policy → space → prune`.
//! Each pass's result can be printed alone ([`print_pass`]); the schedule invariants are
//! checked after every pass that produces schedules, and the variants after pruning.

use crate::CodegenError;
use crate::analysis::Analysis;
use crate::ir::OpKind;
use crate::policy::{Param, infer_with};
use crate::schedule::{self, Schedule};
use crate::space::{ScheduleSpace, schedule_space_with};
use crate::target::Platform;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The pass names, in order.
pub const PASSES: [&str; 7] = [
    "analysis",
    "strongest",
    "rewrite",
    "platform",
    "policy",
    "space",
    "prune",
];

/// Everything the passes computed for one phase.
#[derive(Debug, Clone)]
pub struct PhaseVariants {
    pub phase: usize,
    pub expression_sequence: String,
    /// One operator per schedule element.
    pub ops: Vec<OpKind>,
    pub strongest: Schedule,
    /// {s} ∪ w(s), strongest first.
    pub rewritten: Vec<Schedule>,
    /// After platform rewriting (deduplicated).
    pub schedules: Vec<Schedule>,
    /// Inferred parameters per schedule.
    pub policies: Vec<(Schedule, Vec<Param>)>,
    /// The pruned space per schedule.
    pub spaces: Vec<ScheduleSpace>,
}

impl PhaseVariants {
    pub fn total_variants(&self) -> usize {
        self.spaces.iter().map(|s| s.variants.len()).sum()
    }
    pub fn size_before(&self) -> u64 {
        self.spaces.iter().map(|s| s.size_before).sum()
    }
    pub fn pruned_by(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for s in &self.spaces {
            for (k, v) in &s.pruned_by {
                *m.entry(k.clone()).or_insert(0) += v;
            }
        }
        m
    }
}

fn invariant(schedule: &Schedule, message: String) -> CodegenError {
    CodegenError::Schedule {
        schedule: schedule.to_string(),
        message,
    }
}

/// Runs every pass on every phase of an analyzed computation.
pub fn run(analysis: &Analysis, platform: &Platform) -> Result<Vec<PhaseVariants>, CodegenError> {
    analysis
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            run_phase_with(
                i,
                &p.expression_sequence(),
                &p.ops(),
                platform,
                p.diagonal.is_some(),
            )
        })
        .collect()
}

/// Runs the passes on one expression sequence (given as its nesting-level operators).
pub fn run_phase(
    phase: usize,
    expression_sequence: &str,
    level_ops: &[OpKind],
    platform: &Platform,
) -> Result<PhaseVariants, CodegenError> {
    run_phase_with(phase, expression_sequence, level_ops, platform, false)
}

/// [`run_phase`] for a phase that may have a diagonal pattern (the `layout1` parameter).
pub fn run_phase_with(
    phase: usize,
    expression_sequence: &str,
    level_ops: &[OpKind],
    platform: &Platform,
    diagonal: bool,
) -> Result<PhaseVariants, CodegenError> {
    // strongest
    let ops = schedule::expand(level_ops)?;
    let strongest = schedule::strongest(level_ops)?;
    strongest.check(level_ops)?;
    // rewrite
    let rewritten = schedule::enumerate(level_ops)?;
    for s in &rewritten {
        s.check(level_ops)?;
    }
    let bottom = Schedule::all_sequential(strongest.depth());
    if !rewritten.contains(&bottom) {
        return Err(invariant(
            &strongest,
            "w(s) misses the all-sequential schedule".into(),
        ));
    }
    // platform
    let schedules = schedule::platform_rewrite_all(&rewritten, platform);
    for s in &schedules {
        s.check(level_ops)?;
        if !schedule::satisfies(s, platform) {
            return Err(invariant(
                s,
                format!("fails the {} constraints after rewriting", platform.kind()),
            ));
        }
    }
    // policy
    let policies: Vec<(Schedule, Vec<Param>)> = schedules
        .iter()
        .map(|s| (s.clone(), infer_with(&ops, s, platform, diagonal)))
        .collect();
    for (s, ps) in &policies {
        let mut names: Vec<String> = ps.iter().map(Param::short).collect();
        names.sort();
        names.dedup();
        if names.len() != ps.len() || ps.iter().any(|p| p.values.is_empty()) {
            return Err(invariant(s, "duplicate or empty parameter".into()));
        }
    }
    // space + prune
    let spaces = schedules
        .iter()
        .map(|s| schedule_space_with(&ops, s, platform, diagonal))
        .collect::<Result<Vec<_>, _>>()?;
    for sp in &spaces {
        for v in &sp.variants {
            if v.params.len() != sp.parameters.len() || !sp.schedule.at_least(&v.schedule) {
                return Err(invariant(
                    &v.schedule,
                    format!("variant {v} does not match its space"),
                ));
            }
        }
    }
    Ok(PhaseVariants {
        phase,
        expression_sequence: expression_sequence.to_string(),
        ops,
        strongest,
        rewritten,
        schedules,
        policies,
        spaces,
    })
}

fn list(v: &[Schedule]) -> String {
    v.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Text of one pass's result for every phase (`pass` is one of [`PASSES`]).
pub fn print_pass(pass: &str, phases: &[PhaseVariants]) -> Result<String, CodegenError> {
    let mut s = String::new();
    for p in phases {
        let _ = writeln!(s, "phase {} ({}):", p.phase, p.expression_sequence);
        match pass {
            "analysis" => {
                let ops: Vec<&str> = p.ops.iter().map(|o| o.name()).collect();
                let _ = writeln!(s, "  operators per schedule element: {}", ops.join(", "));
            }
            "strongest" => {
                let _ = writeln!(s, "  {}", p.strongest);
            }
            "rewrite" => {
                let _ = writeln!(s, "  {}", list(&p.rewritten));
            }
            "platform" => {
                let _ = writeln!(s, "  {}", list(&p.schedules));
            }
            "policy" => {
                for (sch, ps) in &p.policies {
                    let names: Vec<String> = ps.iter().map(Param::name).collect();
                    let _ = writeln!(s, "  {sch:<26} {}", names.join(", "));
                }
            }
            "space" => {
                for sp in &p.spaces {
                    let _ = writeln!(s, "  {:<26} {} points", sp.schedule, sp.size_before);
                }
            }
            "prune" => {
                for sp in &p.spaces {
                    let _ = writeln!(
                        s,
                        "  {:<26} {} of {} survive",
                        sp.schedule,
                        sp.variants.len(),
                        sp.size_before
                    );
                    for (k, v) in &sp.pruned_by {
                        let _ = writeln!(s, "    {k:<28} -{v}");
                    }
                }
            }
            _ => {
                return Err(CodegenError::Schedule {
                    schedule: String::new(),
                    message: format!(
                        "unknown pass `{pass}`; the passes are {}",
                        PASSES.join(", ")
                    ),
                });
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{CpuMachine, CudaDevice};

    #[test]
    fn every_pass_prints_alone() {
        for plat in [
            Platform::Cuda(CudaDevice::builtin("h200").unwrap()),
            Platform::Cpu(CpuMachine::haswell32()),
        ] {
            let p = run_phase(0, "map.reduce", &[OpKind::Map, OpKind::Reduce], &plat).unwrap();
            for pass in PASSES {
                let text = print_pass(pass, std::slice::from_ref(&p)).unwrap();
                assert!(text.starts_with("phase 0 (map.reduce):"), "{pass}: {text}");
                assert!(text.lines().count() >= 2, "{pass}: {text}");
            }
            let e = print_pass("nope", &[p]).unwrap_err().to_string();
            assert!(e.contains("nope"), "{e}");
        }
    }
}
