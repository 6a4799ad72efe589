//! `surge analyze APP`: expression sequences, fusion groups, input features.

use super::{AppArgs, CliError, print_json};
use serde_json::json;

#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub app: AppArgs,
}

pub fn run(args: &AnalyzeArgs) -> Result<(), CliError> {
    let built = args.app.build()?;
    let c = &built.computation;
    let analysis = c.analyze()?;
    let features = c.features()?;
    let phases: Vec<_> = analysis
        .phases
        .iter()
        .map(|p| {
            json!({
                "expression_sequence": p.expression_sequence(),
                "levels": p.levels.iter().map(|l| json!({
                    "op": l.op.name(),
                    "node": l.node.0,
                    "fused": l.fused.iter().map(|f| f.op.name()).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let fusion: Vec<_> = analysis
        .phases
        .iter()
        .flat_map(|p| p.levels.iter())
        .filter(|l| !l.fused.is_empty())
        .map(|l| json!({"consumer": l.op.name(), "node": l.node.0, "fused": l.fused.iter().map(|f| f.op.name()).collect::<Vec<_>>()}))
        .collect();
    if args.app.json {
        print_json(&json!({
            "app": built.app.name(),
            "input": built.input_name,
            "expression_sequence": analysis.expression_sequence(),
            "phases": phases,
            "fusion": fusion,
            "features": features,
            "ir_hash": format!("{:032x}", c.ir().stable_hash()),
            "nodes": c.ir().nodes.len(),
        }));
    } else {
        println!("app:                 {}", built.app);
        println!("input:               {}", built.input_name);
        println!("expression sequence: {}", analysis.expression_sequence());
        for (i, p) in analysis.phases.iter().enumerate() {
            println!("phase {i}: {}", p.expression_sequence());
            for l in &p.levels {
                let fused: Vec<_> = l.fused.iter().map(|f| f.op.name()).collect();
                println!("  {} ({}) fuses [{}]", l.op, l.node, fused.join(", "));
            }
        }
        println!("features:");
        println!("  source:         {}", features.source);
        println!("  length:         {}", features.length);
        println!("  elements:       {}", features.elements);
        if let Some(a) = features.aspect_ratio {
            println!("  aspect ratio:   {a:.4}");
        }
        if let Some(a) = features.avg_row_length {
            println!("  avg row length: {a:.4}");
        }
    }
    Ok(())
}
