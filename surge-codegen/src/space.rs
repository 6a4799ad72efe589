//! The variant space of one phase on one platform: per schedule, the Cartesian product of the
//! inferred parameters' ranges, pruned by platform constraints expressed as a BEAST space, so
//! that per-constraint pruning counts come from the engine.

use crate::CodegenError;
use crate::ir::OpKind;
use crate::policy::{PValue, Param, infer_with};
use crate::schedule::{Schedule, ScheduleElem};
use crate::target::Platform;
use crate::variant::Variant;
use serde::Serialize;
use std::collections::BTreeMap;
use surge_beast::{Class, Domain, PlanOptions, RunOptions, Space, Value};

/// The variants of one schedule.
#[derive(Debug, Clone, Serialize)]
pub struct ScheduleSpace {
    #[serde(serialize_with = "ser_display")]
    pub schedule: Schedule,
    pub parameters: Vec<Param>,
    /// Size of the unpruned Cartesian product.
    pub size_before: u64,
    #[serde(skip)]
    pub variants: Vec<Variant>,
    /// Points removed by each constraint (BEAST statistics).
    pub pruned_by: BTreeMap<String, u64>,
}

fn ser_display<S: serde::Serializer>(v: &Schedule, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// A constraint: name, class and the Python expression that *rejects* a point when true.
pub type Constraint = (String, Class, String);

/// The platform constraints of a schedule's space (see the schedule README for why each).
pub fn constraints(schedule: &Schedule, platform: &Platform) -> Vec<Constraint> {
    use ScheduleElem::*;
    let e = schedule.elems();
    let mut c: Vec<Constraint> = Vec::new();
    let mut push = |n: &str, class: Class, x: String| c.push((n.to_string(), class, x));
    match platform {
        Platform::Cuda(_) => {
            push(
                "threads_per_block",
                Class::Hard,
                "bx * by > max_threads_per_block".into(),
            );
            push(
                "logical_warp_size",
                Class::Hard,
                "lw > warp_size or (lw & (lw - 1)) != 0".into(),
            );
            push("block_multiple_of_warp", Class::Hard, "bx % lw != 0".into());
            let mut res = Vec::new();
            for (i, s) in e.iter().enumerate() {
                let d = i + 1;
                if s.is_parallel() {
                    res.push(format!("res{d}"));
                }
                if *s == Independent {
                    match e.get(i + 1) {
                        Some(Cooperative) => push(
                            &format!("same_group{d}"),
                            Class::Correctness,
                            format!("res{d} != res{}", d + 1),
                        ),
                        Some(Independent) => {}
                        _ => push(
                            &format!("sequential_body_on_thread{d}"),
                            Class::Correctness,
                            format!("res{d} != 'thread'"),
                        ),
                    }
                }
            }
            let any = |v: &str| {
                if res.is_empty() {
                    "False".to_string()
                } else {
                    format!(
                        "({})",
                        res.iter()
                            .map(|r| format!("{r} == '{v}'"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )
                }
            };
            if !res.is_empty() {
                push(
                    "warp_needs_lanes",
                    Class::Correctness,
                    format!("lw == 1 and {}", any("warp")),
                );
            }
            push(
                "unused_logical_warp",
                Class::Correctness,
                format!("lw != 1 and not {}", any("warp")),
            );
            push(
                "unused_block_size_y",
                Class::Correctness,
                format!("by != 1 and not {}", any("block")),
            );
            if res.is_empty() {
                push("single_thread_block", Class::Correctness, "bx != 64".into());
            }
        }
        Platform::Cpu(_) => {
            push("threads_le_cores", Class::Hard, "threads > cores".into());
            let p = schedule.parallel_levels();
            if p > 1 {
                push(
                    "nesting_required",
                    Class::Correctness,
                    "nesting == 0".into(),
                );
            } else {
                push("unused_nesting", Class::Correctness, "nesting == 1".into());
            }
            if p == 0 {
                push("unused_threads", Class::Correctness, "threads != 1".into());
            }
        }
    }
    c
}

/// The BEAST description of one schedule's space: settings from the target, one list iterator per
/// inferred parameter, and the platform constraints. Kept as data so it can be built with the
/// Rust builder or written out as a TOML space file (`surge-codegen/spaces/surge_*.toml`).
#[derive(Debug, Clone)]
pub struct SpaceSpec {
    pub name: String,
    pub settings: Vec<(String, i64)>,
    pub parameters: Vec<Param>,
    pub constraints: Vec<Constraint>,
}

impl SpaceSpec {
    pub fn new(ops: &[OpKind], schedule: &Schedule, platform: &Platform) -> SpaceSpec {
        Self::new_with(ops, schedule, platform, false)
    }

    /// [`SpaceSpec::new`] for a phase with a diagonal pattern (see [`infer_with`]).
    pub fn new_with(
        ops: &[OpKind],
        schedule: &Schedule,
        platform: &Platform,
        diagonal: bool,
    ) -> SpaceSpec {
        let settings = match platform {
            Platform::Cuda(d) => vec![
                (
                    "max_threads_per_block".to_string(),
                    d.max_threads_per_block as i64,
                ),
                ("warp_size".to_string(), d.warp_size as i64),
            ],
            Platform::Cpu(m) => vec![("cores".to_string(), m.cores as i64)],
        };
        let parameters = infer_with(ops, schedule, platform, diagonal);
        let mut constraints = constraints(schedule, platform);
        if parameters.iter().any(|p| p.kind == "layout") {
            // The diagonal and SELL kernels are row-parallel over a block or chunk; the row loop's
            // unroll is unused.
            constraints.push((
                "unused_unroll".into(),
                Class::Correctness,
                "layout1 != 'rows' and unroll2 == 1".into(),
            ));
        }
        SpaceSpec {
            name: format!("{platform}/{schedule}"),
            settings,
            parameters,
            constraints,
        }
    }

    /// The space through the BEAST builder.
    pub fn build(&self) -> Result<Space, CodegenError> {
        let mut b = Space::builder(self.name.clone());
        for (k, v) in &self.settings {
            b = b.setting(k.clone(), *v);
        }
        for p in &self.parameters {
            let vals: Vec<Value> = p.values.iter().map(PValue::to_beast).collect();
            b = b.iterator(p.short(), Domain::values(vals));
        }
        for (name, class, expr) in &self.constraints {
            b = b.constraint(name.clone(), *class, expr.clone());
        }
        b.build().map_err(beast_err)
    }

    /// The same space as a TOML file for `surge beast` (Python expression syntax).
    pub fn to_toml(&self) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let mut out = format!(
            "# Surge policy space, generated by `surge_codegen::space::SpaceSpec::to_toml`\n\
             # (the tests check this file is current). Constraints reject a point when true.\n\n\
             [space]\nname = {}\n\n[settings]\n",
            q(&self.name)
        );
        for (k, v) in &self.settings {
            out += &format!("{k} = {v}\n");
        }
        out += "\n[iterators]\n";
        for p in &self.parameters {
            let vals: Vec<String> = p
                .values
                .iter()
                .map(|v| match v {
                    PValue::Int(i) => i.to_string(),
                    PValue::Str(s) => format!("'{s}'"),
                })
                .collect();
            out += &format!("{} = {}\n", p.short(), q(&format!("[{}]", vals.join(", "))));
        }
        for class in [Class::Hard, Class::Soft, Class::Correctness] {
            let cs: Vec<_> = self.constraints.iter().filter(|c| c.1 == class).collect();
            if !cs.is_empty() {
                out += &format!("\n[constraints.{}]\n", class.name());
                for (name, _, expr) in cs {
                    out += &format!("{name} = {}\n", q(expr));
                }
            }
        }
        out
    }
}

/// Builds, plans and enumerates the BEAST space of one schedule.
pub fn schedule_space(
    ops: &[OpKind],
    schedule: &Schedule,
    platform: &Platform,
) -> Result<ScheduleSpace, CodegenError> {
    schedule_space_with(ops, schedule, platform, false)
}

/// [`schedule_space`] for a phase with a diagonal pattern (see [`infer_with`]).
pub fn schedule_space_with(
    ops: &[OpKind],
    schedule: &Schedule,
    platform: &Platform,
    diagonal: bool,
) -> Result<ScheduleSpace, CodegenError> {
    let spec = SpaceSpec::new_with(ops, schedule, platform, diagonal);
    let space = spec.build()?;
    let parameters = spec.parameters;
    let plan = space.plan(&PlanOptions::default()).map_err(beast_err)?;
    let (points, stats) = plan.collect(&RunOptions::threads(1)).map_err(beast_err)?;
    let names: Vec<String> = parameters.iter().map(Param::short).collect();
    let variants = points
        .into_iter()
        .map(|pt| Variant {
            platform: platform.clone(),
            schedule: schedule.clone(),
            params: names
                .iter()
                .cloned()
                .zip(pt.iter().map(from_beast))
                .collect(),
        })
        .collect();
    let size_before = parameters.iter().map(|p| p.values.len() as u64).product();
    let pruned_by = stats
        .rejected
        .iter()
        .map(|r| (r.constraint.clone(), r.rejected))
        .collect();
    Ok(ScheduleSpace {
        schedule: schedule.clone(),
        parameters,
        size_before,
        variants,
        pruned_by,
    })
}

fn beast_err(e: surge_beast::BeastError) -> CodegenError {
    CodegenError::Beast(e.to_string())
}

fn from_beast(v: &Value) -> PValue {
    match (v.as_i64(), v.as_str()) {
        (Some(i), _) => PValue::Int(i),
        (_, Some(s)) => PValue::Str(s.to_string()),
        _ => PValue::Str(v.to_string()),
    }
}
