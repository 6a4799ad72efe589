//! `surge plan spmv --input X.mtx --ranks 2,16,128,1024`: the distributed SpMV at rank counts
//! not at hand, on paper (the computation is `surge::mpi::plan`).

use super::{CliError, print_json};
use serde_json::json;
use surge::apps::{DEFAULT_GRID, matgen};
use surge::mpi::plan::{self, FORMULA, Model, Plan, rate};
use surge::mtx;

/// The arguments of `surge plan` (its help, with the model, is on `Command::Plan`).
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The application: spmv.
    pub app: String,
    /// Matrix Market file (default: the generated 256×256-grid Laplacian).
    #[arg(long, value_name = "FILE")]
    pub input: Option<std::path::PathBuf>,
    /// Rank counts, comma-separated (each at least 1; more than the rows leaves ranks empty).
    #[arg(long, value_name = "R,..", value_delimiter = ',', value_parser = rank_count,
          default_value = "2,16,128,1024")]
    pub ranks: Vec<usize>,
    /// The network's latency per message, microseconds (default: a 100 Gb/s InfiniBand-class
    /// fabric).
    #[arg(long, value_name = "US", default_value_t = 1.5, value_parser = non_negative,
          allow_negative_numbers = true)]
    pub latency_us: f64,
    /// The bandwidth each rank receives at, GB/s (default 12.5: 100 Gb/s).
    #[arg(long, value_name = "GBS", default_value_t = 12.5, value_parser = positive,
          allow_negative_numbers = true)]
    pub bandwidth_gbs: f64,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the predicted time and efficiency per rank count as an SVG chart.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
}

fn rank_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("a rank count must be at least 1".into()),
        Ok(r) => Ok(r),
        Err(_) => Err("a rank count is a positive integer".into()),
    }
}

fn number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err("not a finite number".into()),
    }
}

fn non_negative(s: &str) -> Result<f64, String> {
    number(s).and_then(|v| {
        (v >= 0.0)
            .then_some(v)
            .ok_or_else(|| "must be at least 0".into())
    })
}

fn positive(s: &str) -> Result<f64, String> {
    number(s).and_then(|v| {
        (v > 0.0)
            .then_some(v)
            .ok_or_else(|| "must be above 0".into())
    })
}

pub fn run(args: &PlanArgs) -> Result<(), CliError> {
    if args.app != "spmv" {
        return Err(CliError {
            code: 2,
            message: format!(
                "surge plan has no plan for '{}': only spmv (surge plan spmv --input X.mtx)",
                args.app
            ),
        });
    }
    let (a, name) = match &args.input {
        Some(p) => (
            mtx::read_mtx(p).map_err(surge::SurgeError::from)?,
            p.display().to_string(),
        ),
        None => (
            matgen::laplacian_2d(DEFAULT_GRID),
            format!("laplacian_2d {0}x{0} (built-in)", DEFAULT_GRID),
        ),
    };
    let measured = rate::measure_one_thread(&a)?;
    let model = Model {
        seconds_per_nonzero: measured.seconds_per_unit,
        seconds_per_row: measured.seconds_per_unit,
        latency_seconds: args.latency_us * 1e-6,
        bandwidth_bytes_per_second: args.bandwidth_gbs * 1e9,
    };
    let t1 = measured.seconds;
    let plans: Vec<Plan> = args
        .ranks
        .iter()
        .map(|&r| plan::plan(&a, r, &model, t1))
        .collect();
    if let Some(path) = &args.svg {
        let short = args.input.as_ref().and_then(|p| p.file_name());
        let title = short.map_or(name.clone(), |f| f.to_string_lossy().into_owned());
        plan::svg::write_svg(path, &title, &plans, t1)?;
    }
    if args.json {
        print_json(&json!({
            "input": name,
            "rows": a.rows,
            "cols": a.cols,
            "nnz": a.nnz(),
            "measured": measured,
            "model": {
                "formula": FORMULA,
                "parameters": model,
                "latency_us": args.latency_us,
                "bandwidth_gbs": args.bandwidth_gbs,
                "local_rate": "measured here: the one-thread time of the default variant on the \
                               whole matrix, over nonzeros + rows",
            },
            "plans": plans,
        }));
    } else {
        print_table(&name, &a, &measured, args, &plans);
    }
    Ok(())
}

fn print_table(
    name: &str,
    a: &mtx::CsrMatrix,
    m: &rate::Measured,
    args: &PlanArgs,
    plans: &[Plan],
) {
    println!(
        "{name}: {} rows, {} nonzeros; measured here on 1 thread ({}): T1 = {:.1} us",
        a.rows,
        a.nnz(),
        m.variant,
        m.seconds * 1e6
    );
    println!(
        "network: {} us latency, {} GB/s; a prediction (surge plan --help states the model)",
        args.latency_us, args.bandwidth_gbs
    );
    println!(
        "{:>6} {:>9} {:>9} {:>9} {:>6} {:>10} {:>10} {:>6} {:>9} {:>10} {:>10} {:>8} {:>6}",
        "ranks",
        "rows/rk",
        "nnz max",
        "imbalance",
        "empty",
        "ghosts in",
        "ghosts out",
        "nbrs",
        "boundary",
        "exch us",
        "T_R us",
        "speedup",
        "eff"
    );
    for p in plans {
        println!(
            "{:>6} {:>9.0} {:>9.0} {:>9.3} {:>6} {:>10.0} {:>10.0} {:>6.0} {:>8.1}% {:>10.2} {:>10.2} {:>8.2} {:>6.3}",
            p.ranks,
            p.rows.mean,
            p.nnz.max,
            p.imbalance,
            p.empty_ranks,
            p.ghosts_received.max,
            p.ghosts_sent.max,
            p.neighbours.max,
            100.0 * p.boundary_rows.mean / p.rows.mean.max(1e-300),
            p.exchange_seconds.max * 1e6,
            p.predicted_seconds * 1e6,
            p.speedup,
            p.efficiency
        );
    }
}
