//! `surge emit APP --platform cuda [--variant ID] [--arch sm_90]`: prints the generated source of
//! an application's variants (all of them, or one), optionally checking it compiles with NVRTC.

use super::{AppArgs, CliError};
use surge_codegen::emit::cuda;
use surge_codegen::target::Platform;
use surge_codegen::variant::Variant;

#[derive(Debug, clap::Args)]
pub struct EmitArgs {
    #[command(flatten)]
    pub app: AppArgs,
    /// Target platform (cuda).
    #[arg(long, default_value = "cuda")]
    pub platform: String,
    /// CUDA device description the variants are enumerated for (default h200).
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Emit only this variant (an id printed by `surge variants APP --json`).
    #[arg(long, value_name = "ID")]
    pub variant: Option<String>,
    /// Also compile the source with NVRTC for this architecture (sm_90, compute_90) and report.
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
}

fn usage(message: String) -> CliError {
    CliError { code: 2, message }
}

pub fn run(args: &EmitArgs) -> Result<(), CliError> {
    if args.platform != "cuda" {
        return Err(usage(format!(
            "`surge emit --platform {}`: this command emits CUDA (use --platform cuda)",
            args.platform
        )));
    }
    let built = args.app.build()?;
    let platform =
        Platform::from_names("cuda", args.device.as_deref()).map_err(|e| usage(e.to_string()))?;
    let analysis = built.computation.analyze()?;
    let all = built.computation.variants(&platform)?.phases().to_vec();
    let lists = match &args.variant {
        None => all,
        Some(id) => {
            let v: Variant = id
                .parse()
                .map_err(|e: surge_codegen::CodegenError| usage(e.to_string()))?;
            let lists: Vec<Vec<Variant>> = all
                .iter()
                .map(|l| l.iter().filter(|x| **x == v).cloned().collect())
                .collect();
            if lists.iter().all(Vec::is_empty) {
                return Err(usage(format!(
                    "variant `{id}` is not a variant of {} on {platform} (list them with `surge variants {} --json`)",
                    built.app, built.app
                )));
            }
            lists
        }
    };
    let program =
        cuda::emit(built.computation.ir(), &analysis, &lists).map_err(|e| usage(e.to_string()))?;
    print!("{}", program.source);
    if let Some(arch) = &args.arch {
        let t = std::time::Instant::now();
        surge_cuda::compile(&program, arch).map_err(|e| CliError {
            code: 1,
            message: e.to_string(),
        })?;
        eprintln!(
            "compiled {} kernel(s) for {arch} with NVRTC in {:.2} s",
            program.kernels.len(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
