//! `surge beast SPACE.toml [--count | --list [--limit N] | --stats] [--threads N]
//! [--disable NAME|CLASS]... [--json] [--plan]`
//!
//! Exit codes (DESIGN.md): 0 ok, 1 runtime failure (an expression failed while enumerating,
//! an output error), 2 usage or input error (unreadable or malformed TOML, parse errors,
//! unknown names, dependency cycles, unknown `--disable` name). clap's own usage errors also
//! exit with 2.
//!
//! The engine is the `surge-beast` crate.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use surge_beast::{BeastError, PlanOptions, RunOptions, Space};

/// Enumerate a BEAST search space (iterators, derived values, constraints in TOML).
#[derive(Debug, Clone, clap::Args)]
pub struct BeastArgs {
    /// The space description (TOML with Python expressions).
    pub space: PathBuf,
    /// Print the number of surviving points (the default).
    #[arg(long, conflicts_with_all = ["list", "stats"])]
    pub count: bool,
    /// Write every surviving point as one JSON object per line (JSON Lines).
    #[arg(long, conflicts_with = "stats")]
    pub list: bool,
    /// With --list: stop after N points.
    #[arg(long, value_name = "N", requires = "list")]
    pub limit: Option<u64>,
    /// Print per-loop and per-constraint statistics.
    #[arg(long)]
    pub stats: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Switch off a constraint, or a whole class (hard, soft, correctness). Repeatable.
    #[arg(long, value_name = "NAME|CLASS")]
    pub disable: Vec<String>,
    /// Machine-readable output (JSON) for --count and --stats.
    #[arg(long)]
    pub json: bool,
    /// Print the enumeration plan (loop order, hoisting, tightening) before running.
    #[arg(long)]
    pub plan: bool,
    /// Do not solve / clip ranges with constraints (for comparison; same results).
    #[arg(long, hide = true)]
    pub no_tighten: bool,
}

/// Failure of `surge beast`, carrying its exit code.
#[derive(Debug)]
pub enum BeastCliError {
    /// Bad input: exit code 2.
    Input(String),
    /// Failure while running: exit code 1.
    Runtime(String),
}

impl BeastCliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            BeastCliError::Input(_) => 2,
            BeastCliError::Runtime(_) => 1,
        }
    }
}

impl fmt::Display for BeastCliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BeastCliError::Input(m) | BeastCliError::Runtime(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for BeastCliError {}

impl From<BeastError> for BeastCliError {
    fn from(e: BeastError) -> Self {
        if e.is_input_error() {
            BeastCliError::Input(e.to_string())
        } else {
            BeastCliError::Runtime(e.to_string())
        }
    }
}

fn io_err(e: io::Error) -> BeastCliError {
    BeastCliError::Runtime(format!("writing output: {e}"))
}

/// Run `surge beast`.
pub fn run(args: &BeastArgs) -> Result<(), BeastCliError> {
    let space = Space::from_toml_file(&args.space)?;
    let mut popts = PlanOptions::default().tighten(!args.no_tighten);
    popts.disable = args.disable.clone();
    let plan = space.plan(&popts)?;
    let run = RunOptions {
        threads: args.threads,
        limit: args.limit,
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.plan {
        if args.json {
            let v = serde_json::json!({
                "loop_order": plan.loop_order(),
                "level_sets": plan.level_sets(),
                "tightened": plan.tightened(),
                "disabled": plan.disabled(),
            });
            writeln!(out, "{v}").map_err(io_err)?;
        } else {
            write!(out, "{}", plan.describe()).map_err(io_err)?;
        }
    }
    if args.list {
        let mut io_error = None;
        let r = plan.for_each(&run, |p| match writeln!(out, "{}", p.to_json_line()) {
            Ok(()) => true,
            Err(e) => {
                io_error = Some(e);
                false
            }
        });
        match io_error {
            // A closed pipe (`| head`) is a normal way to stop listing.
            Some(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            Some(e) => return Err(io_err(e)),
            None => {}
        }
        r?;
    } else {
        let stats = plan.count(&run)?;
        if args.stats {
            if args.json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&stats)
                        .map_err(|e| BeastCliError::Runtime(e.to_string()))?
                )
                .map_err(io_err)?;
            } else {
                write!(out, "{}", stats.to_text()).map_err(io_err)?;
            }
        } else if args.json {
            let mut v =
                serde_json::to_value(&stats).map_err(|e| BeastCliError::Runtime(e.to_string()))?;
            if let Some(o) = v.as_object_mut() {
                o.remove("visited_by_level");
            }
            writeln!(out, "{v}").map_err(io_err)?;
        } else {
            writeln!(out, "{}", stats.survivors).map_err(io_err)?;
        }
    }
    match out.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(io_err(e)),
        _ => Ok(()),
    }
}
