//! NVRTC compilation of emitted programs, cached by source hash and architecture.

use crate::CudaError;
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use surge_codegen::emit::cuda::CudaProgram;

/// The virtual architecture compiled for when no GPU says otherwise (H100/H200; the newest
/// NVRTC 11.8 accepts).
pub const DEFAULT_ARCH: &str = "compute_90";

/// Whether an NVRTC library can be loaded (cudarc would panic on first use otherwise).
pub fn nvrtc_available() -> Result<(), CudaError> {
    // SAFETY: probing loads the library by name and drops it; no symbol is called.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(CudaError::Unavailable {
            library: crate::Library::Nvrtc.name(),
            reason: format!(
                "no libnvrtc.so found on the library path (on Debian install libnvrtc11.2 and \
                 libnvrtc-builtins11.8 and link libnvrtc.so to libnvrtc.so.11.2); probe: {}",
                match crate::probe(crate::Library::Nvrtc) {
                    Ok(n) => format!("{n} loads but is not a name cudarc searches"),
                    Err(e) => e.to_string(),
                }
            ),
        })
    }
}

type Cache = Mutex<HashMap<(u128, String), Arc<Ptx>>>;

fn cache() -> &'static Cache {
    static C: OnceLock<Cache> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// Normalizes `sm_90` / `90` / `compute_90` to `compute_90`.
fn normalize_arch(arch: &str) -> Result<String, CudaError> {
    let digits = arch
        .trim_start_matches("compute_")
        .trim_start_matches("sm_");
    if digits.len() >= 2 && digits.chars().all(|c| c.is_ascii_digit()) {
        Ok(format!("compute_{digits}"))
    } else {
        Err(CudaError::Input(format!(
            "architecture `{arch}` is not of the form sm_90 or compute_90"
        )))
    }
}

/// Compiles a whole program (all its kernels in one NVRTC program) to PTX for `arch`
/// (`sm_90`, `compute_90`); cached by source hash. A failure names the variants whose kernels
/// the NVRTC log points at.
pub fn compile(program: &CudaProgram, arch: &str) -> Result<Arc<Ptx>, CudaError> {
    let arch = normalize_arch(arch)?;
    let key = (program.hash(), arch.clone());
    if let Some(p) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(p);
    }
    let ptx = Arc::new(compile_source(&program.source, &arch)?);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, ptx.clone());
    }
    Ok(ptx)
}

/// Compiles CUDA source with NVRTC for `arch`, uncached. Errors name the variants whose
/// `// variant: ID` sections contain the lines the log complains about.
pub fn compile_source(source: &str, arch: &str) -> Result<Ptx, CudaError> {
    nvrtc_available()?;
    let arch = normalize_arch(arch)?;
    if source.contains('\0') {
        return Err(CudaError::Input("CUDA source contains a NUL byte".into()));
    }
    let opts = CompileOptions {
        options: vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()],
        name: Some("surge.cu".into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| match e {
        CompileError::CompileError { nvrtc, log, .. } => {
            let log = log.to_string_lossy().into_owned();
            CudaError::Compile {
                variants: variants_in_log(source, &log),
                message: format!("{nvrtc:?}"),
                log,
            }
        }
        other => CudaError::Compile {
            variants: Vec::new(),
            message: format!("{other:?}"),
            log: String::new(),
        },
    })
}

/// The variant ids of the kernels containing the lines `surge.cu(LINE)` of an NVRTC log.
fn variants_in_log(source: &str, log: &str) -> Vec<String> {
    let headers: Vec<(usize, &str)> = source
        .lines()
        .enumerate()
        .filter_map(|(i, l)| l.strip_prefix("// variant: ").map(|id| (i + 1, id)))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for part in log.split("surge.cu(").skip(1) {
        let Some(line) = part.split(')').next().and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        if let Some((_, id)) = headers.iter().rev().find(|(l, _)| *l <= line)
            && !out.iter().any(|o| o == id)
        {
            out.push((*id).to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_map_to_variants() {
        let src = "a\n// variant: v1\nb\nc\n// variant: v2\nd\n";
        let log = "surge.cu(4): error: x\nsurge.cu(6): error: y\nsurge.cu(1): warning";
        assert_eq!(variants_in_log(src, log), ["v1", "v2"]);
        assert_eq!(normalize_arch("sm_90").unwrap(), "compute_90");
        assert!(normalize_arch("hopper").is_err());
    }

    #[test]
    fn broken_kernel_error_names_variant_and_log() {
        nvrtc_available()
            .unwrap_or_else(|e| panic!("NVRTC is required (.ci/run installs libnvrtc): {e}"));
        let src = "// variant: cuda:h200/independent/bx=64\nextern \"C\" __global__ void k() { undefined_thing(); }\n";
        let e = compile_source(src, "sm_90").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("cuda:h200/independent/bx=64"), "{text}");
        assert!(text.contains("undefined_thing"), "{text}");
        match e {
            CudaError::Compile { variants, log, .. } => {
                assert_eq!(variants, ["cuda:h200/independent/bx=64"]);
                assert!(log.contains("error"), "{log}");
            }
            other => panic!("{other}"),
        }
    }
}
