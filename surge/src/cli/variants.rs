//! `surge variants APP`: the schedules, inferred parameters (as Table 5.5 lays them out), the
//! space size before and after pruning, and per-constraint pruning counts, per phase and in total.

use super::{AppArgs, CliError, print_json};
use serde_json::json;
use std::collections::BTreeMap;
use surge::SurgeError;
use surge_codegen::passes::{self, PASSES};
use surge_codegen::policy::Param;
use surge_codegen::target::Platform;

#[derive(Debug, clap::Args)]
pub struct VariantsArgs {
    #[command(flatten)]
    pub app: AppArgs,
    /// Target platform: cpu or cuda.
    #[arg(long, default_value = "cuda")]
    pub platform: String,
    /// CUDA device (k20c, k40c, v100, a100, h100, h200, or `live` for the GPU present; default
    /// h200) or CPU machine
    /// (host, haswell32; default host).
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Print only one pass's result: analysis, strongest, rewrite, platform, policy, space, prune.
    #[arg(long, value_name = "NAME")]
    pub pass: Option<String>,
    /// Leave the variant ids out of the JSON output.
    #[arg(long)]
    pub no_ids: bool,
}

fn usage(message: String) -> CliError {
    CliError { code: 2, message }
}

pub fn run(args: &VariantsArgs) -> Result<(), CliError> {
    let built = args.app.build()?;
    let platform = match (args.platform.as_str(), args.device.as_deref()) {
        ("cuda", Some("live")) => surge::Target::cuda(0).platform().map_err(|e| CliError {
            code: 1,
            message: format!("--device live: {e}"),
        })?,
        (p, d) => Platform::from_names(p, d).map_err(|e| usage(e.to_string()))?,
    };
    let analysis = built.computation.analyze()?;
    let set = surge::codegen::variant_set::VariantSet::new(&analysis, &platform)
        .map_err(SurgeError::from)?;
    let phases = set.passes();
    if let Some(pass) = &args.pass {
        if !PASSES.contains(&pass.as_str()) {
            return Err(usage(format!(
                "unknown pass `{pass}`; the passes are {}",
                PASSES.join(", ")
            )));
        }
        let text = passes::print_pass(pass, phases).map_err(SurgeError::from)?;
        print!("{text}");
        return Ok(());
    }
    let total: usize = phases.iter().map(|p| p.total_variants()).sum();
    let before: u64 = phases.iter().map(|p| p.size_before()).sum();
    let mut pruned: BTreeMap<String, u64> = BTreeMap::new();
    for p in phases {
        for (k, v) in p.pruned_by() {
            *pruned.entry(k).or_insert(0) += v;
        }
    }
    if args.app.json {
        let schedules_of = |p: &passes::PhaseVariants| -> Vec<serde_json::Value> {
            p.spaces
                .iter()
                .map(|sp| {
                    let mut o = json!({
                        "schedule": sp.schedule.to_string(),
                        "parameters": sp.parameters.iter().map(Param::name).collect::<Vec<_>>(),
                        "ranges": sp.parameters.iter().map(|q| (q.short(), json!(q.values))).collect::<serde_json::Map<_, _>>(),
                        "size_before": sp.size_before,
                        "variants": sp.variants.len(),
                        "pruned_by": sp.pruned_by,
                    });
                    if !args.no_ids {
                        o["variant_ids"] =
                            json!(sp.variants.iter().map(|v| v.to_string()).collect::<Vec<_>>());
                    }
                    o
                })
                .collect()
        };
        let phase_json: Vec<_> = phases
            .iter()
            .map(|p| {
                json!({
                    "phase": p.phase,
                    "expression_sequence": p.expression_sequence,
                    "strongest": p.strongest.to_string(),
                    "schedules": schedules_of(p),
                    "size_before": p.size_before(),
                    "total_variants": p.total_variants(),
                    "pruned_by": p.pruned_by(),
                })
            })
            .collect();
        print_json(&json!({
            "app": built.app.name(),
            "platform": platform.to_string(),
            "target": platform,
            "expression_sequence": analysis.expression_sequence(),
            "schedules": phases.iter().flat_map(schedules_of).collect::<Vec<_>>(),
            "phases": phase_json,
            "size_before": before,
            "total_variants": total,
            "pruned_by": pruned,
        }));
    } else {
        println!("app:       {}", built.app);
        println!("platform:  {platform}");
        for p in phases {
            println!();
            println!(
                "phase {} ({}): strongest {}",
                p.phase, p.expression_sequence, p.strongest
            );
            println!(
                "  {:<26} {:>9} {:>9}  inferred parameters",
                "schedule", "space", "variants"
            );
            for sp in &p.spaces {
                let names: Vec<String> = sp.parameters.iter().map(Param::name).collect();
                println!(
                    "  {:<26} {:>9} {:>9}  {}",
                    sp.schedule.to_string(),
                    sp.size_before,
                    sp.variants.len(),
                    names.join(", ")
                );
            }
            println!(
                "  {:<26} {:>9} {:>9}",
                "phase total",
                p.size_before(),
                p.total_variants()
            );
        }
        println!();
        println!("total: {before} points before pruning, {total} variants after");
        println!("pruned by (BEAST rejections, counted where each constraint is evaluated):");
        for (k, v) in &pruned {
            println!("  {k:<28} {v:>8}");
        }
    }
    Ok(())
}
