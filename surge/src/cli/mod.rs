//! Command-line interface: one module per subcommand.

mod analyze;
mod beast;
mod bench;
mod bench_gemm;
mod comd_args;
mod distributed;
mod emit;
mod plan;
mod run;
mod run_comd;
mod run_cuda;
mod run_kmeans;
#[cfg(feature = "mpi")]
mod run_kmeans_mpi;
#[cfg(feature = "mpi")]
mod run_spmv_mpi;
mod tune;
mod tune_comd;
mod tune_gemm;
#[cfg(feature = "mpi")]
mod tune_mpi;
mod variants;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use surge::SurgeError;

/// Surge: nested data-parallel computations, their code variants, and tuning.
///
/// Exit codes: 0 success, 1 the computation failed while running, 2 a usage or input error.
#[derive(Debug, Parser)]
#[command(name = "surge", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print an application's expression sequences, fusion groups and input features.
    Analyze(analyze::AnalyzeArgs),
    /// Run an application natively (or with the reference interpreter) and print a summary.
    ///
    /// `surge run kmeans` clusters points (--input, --k, --init); `surge run comd --potential
    /// FILE` runs CoMD's EAM molecular dynamics (FCC copper, velocity-Verlet steps) and prints
    /// CoMD's energy table.
    Run(run::RunArgs),
    /// Enumerate an application's schedules, policies and pruned variant space per platform.
    Variants(variants::VariantsArgs),
    /// Time every variant of an application against a reference (MKL, rayon, cuSPARSE, cuBLAS)
    /// and the memory bandwidth; JSON and SVG reports.
    ///
    /// Every variant is timed as the median of --runs runs after warm-up. On --platform cuda
    /// (GPU 0) the inputs are uploaded once and only kernel launches are timed, with CUDA
    /// events; each variant's result is first checked against the interpreter (against the CPU
    /// backend's default variant for inputs of over 4M elements), and a variant that fails its
    /// check is listed under `failed` instead of timed; one whose first run takes over 50 times
    /// the fastest so far is reported from that run (`runs: 1` in JSON). A phase's variants run
    /// with the other phases at their default, then the combination of each phase's fastest.
    /// Without a GPU --platform cuda exits 2 with "no CUDA device: ...". With SURGE_TRACE set,
    /// each stage's time goes to stderr (reference result, NVRTC and module loads, the runs).
    Bench(bench::BenchArgs),
    /// Print the generated CUDA source of an application's variants (all, or one with --variant).
    Emit(emit::EmitArgs),
    /// Enumerate a BEAST search space (TOML, Python-syntax expressions): count, list or explain it.
    Beast(beast::BeastArgs),
    /// Tune an application: time variants on inputs, learn input features → best variant.
    Tune(tune::TuneArgs),
    /// Predict the distributed SpMV's time and efficiency at rank counts not at hand (no MPI
    /// needed): `surge plan spmv --input X.mtx --ranks 2,16,128,1024`.
    ///
    /// For each rank count the exact partition is computed, the one `mpirun -np R surge run
    /// spmv` uses: contiguous row blocks balanced by nonzeros + rows (empty blocks when there are
    /// more ranks than rows); each rank's interior rows (no ghost column) and boundary rows, the
    /// ghost entries of x it receives and sends, its neighbours.
    ///
    /// The model. The local rate is measured here at the start: T1, the one-thread time of
    /// `surge run spmv`'s program and default variant on the whole matrix, gives seconds per
    /// nonzero and per row, s_nz = s_row = T1 / (nonzeros + rows) (the partition's cost). Per
    /// rank: time = max(compute(interior rows), exchange) + compute(boundary rows), where compute
    /// = nonzeros * s_nz + rows * s_row and exchange = neighbours * latency + 8 bytes * ghost
    /// entries received / bandwidth (--latency-us, --bandwidth-gbs). The predicted SpMV time
    /// T_R is the slowest rank's; parallel efficiency = T1 / (R * T_R), at most 1 (no term is
    /// superlinear). It is a prediction: memory bandwidth shared by a node's ranks, contention
    /// and the network's topology are not modelled.
    Plan(plan::PlanArgs),
}

/// A CLI failure with its exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl From<SurgeError> for CliError {
    fn from(e: SurgeError) -> Self {
        let code = match &e {
            SurgeError::Cpu(surge_cpu::CpuError::Runtime { .. })
            | SurgeError::Codegen(surge_codegen::CodegenError::Eval { .. })
            | SurgeError::Cuda(surge_cuda::CudaError::Runtime { .. }) => 1,
            _ => 2,
        };
        CliError {
            code,
            message: e.to_string(),
        }
    }
}

/// `surge bench` times MKL and BLIS between its own kernels and waits after each of their
/// multi-threaded runs until their OpenMP workers stop spinning (`Mkl::settle`). Intel OpenMP's
/// workers spin for `KMP_BLOCKTIME` after a parallel region, 200 ms by default; 20 ms keeps
/// them spinning between back-to-back calls (the timed loops) and shortens each wait tenfold.
/// A value the user set is kept.
fn short_openmp_spin() {
    if std::env::var_os("KMP_BLOCKTIME").is_none() {
        // SAFETY: called first thing in `main`, before any other thread exists, so nothing
        // reads the environment concurrently.
        unsafe { std::env::set_var("KMP_BLOCKTIME", "20") };
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Bench(_)) {
        short_openmp_spin();
    }
    let result = match &cli.command {
        c if surge::mpi::launch::is_multi_rank() => {
            distributed::run(c, surge::mpi::launch::launched_ranks().unwrap_or(1))
        }
        Command::Analyze(a) => analyze::run(a),
        Command::Run(a) => run::run(a),
        Command::Variants(a) => variants::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Emit(a) => emit::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Beast(a) => beast::run(a).map_err(|e| CliError {
            code: e.exit_code() as u8,
            message: e.to_string(),
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Under mpirun, a rank other than 0 says only what is its own (its message names
            // it); what every rank found alike, rank 0 says once.
            match surge::mpi::launch::launched_rank() {
                _ if e.message.is_empty() => {}
                0 => eprintln!("error: {}", e.message),
                r => eprintln!("error: rank {r}: {}", e.message),
            }
            ExitCode::from(e.code)
        }
    }
}

/// Arguments that choose an application and its input, shared by subcommands.
#[derive(Debug, clap::Args)]
pub struct AppArgs {
    /// The application: reduce, scan, spmv, kmeans or comd.
    pub app: String,
    /// Matrix Market file for spmv (default: a generated 256×256-grid Laplacian); points for
    /// kmeans (CSV, one point per row, comma-separated; or .npy of f64, shape (n, d)).
    #[arg(long, value_name = "FILE")]
    pub input: Option<std::path::PathBuf>,
    /// Number of generated input values for reduce and scan (default 1048576); of generated
    /// points for kmeans (default 100000, d = 32).
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl AppArgs {
    pub fn build(&self) -> Result<surge::apps::BuiltApp, CliError> {
        use surge::apps::{App, AppInput, BuiltApp};
        let app: App = self.app.parse()?;
        let input = match (&self.input, self.size) {
            (Some(_), Some(_)) => {
                return Err(CliError {
                    code: 2,
                    message: "give either --input or --size, not both".into(),
                });
            }
            (Some(p), None) => AppInput::Matrix(p.clone()),
            (None, Some(n)) => AppInput::Size(n),
            (None, None) => AppInput::Default,
        };
        Ok(BuiltApp::new(app, &input)?)
    }
}

fn print_json(v: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).expect("JSON serializes")
    );
}
