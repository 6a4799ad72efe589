//! `surge run APP`: evaluate an application and summarize its result.

use super::{AppArgs, CliError, print_json};
use serde_json::json;
use std::time::Instant;
use surge::apps::App;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub app: AppArgs,
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let built = args.app.build()?;
    let start = Instant::now();
    let value = built.computation.interpret()?;
    let seconds = start.elapsed().as_secs_f64();
    let flat: Vec<f64> = match built.app {
        // The scan's result is tiled; its rows concatenated are the prefix sum.
        App::Scan => value
            .as_seq()
            .into_iter()
            .flatten()
            .filter_map(|r| r.to_f64_vec())
            .flatten()
            .collect(),
        _ => value.to_f64_vec().expect("apps return numeric sequences"),
    };
    let sum: f64 = flat.iter().sum();
    let norm2 = flat.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut out = json!({
        "app": built.app.name(),
        "input": built.input_name,
        "engine": "interpreter",
        "seconds": seconds,
    });
    let o = out.as_object_mut().expect("object");
    match built.app {
        App::Spmv => {
            let m = built.matrix.expect("spmv has a matrix");
            o.insert("rows".into(), json!(m.rows));
            o.insert("cols".into(), json!(m.cols));
            o.insert("nnz".into(), json!(m.nnz));
            o.insert("sum_y".into(), json!(sum));
            o.insert("norm2_y".into(), json!(norm2));
        }
        App::Reduce => {
            o.insert("n".into(), json!(built.size));
            o.insert("sum".into(), json!(flat.first().copied().unwrap_or(0.0)));
        }
        App::Scan => {
            o.insert("n".into(), json!(built.size));
            o.insert("last".into(), json!(flat.last().copied()));
            o.insert("sum_y".into(), json!(sum));
        }
    }
    if args.app.json {
        print_json(&out);
    } else {
        for (k, v) in o.iter() {
            println!("{k:8} {v}");
        }
    }
    Ok(())
}
