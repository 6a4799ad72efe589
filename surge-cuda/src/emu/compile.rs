//! The emulator's compiler: the emitted CUDA source, unchanged, compiled for the host by the
//! system C++ compiler (`$CXX`, else `c++`) with `surge_emu.h` included first, into a shared
//! library cached on disk (`<cache>/cuda-emu/`, keyed by the source, the header and the
//! compiler; checked against a checksum beside it like the CPU backend's libraries) and loaded
//! with libloading.

use crate::CudaError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use surge_codegen::cache;
use surge_codegen::emit::cuda::CudaProgram;
use surge_codegen::ir::fnv1a128;

/// The emulator's header: CUDA's built-ins on fibers (see its opening comment).
pub const HEADER: &str = include_str!("../../emu/surge_emu.h");

/// A loaded emulator library.
#[derive(Debug)]
pub struct Library {
    pub lib: libloading::Library,
    /// The emitted source it was built from, kept for inspection.
    pub source_path: PathBuf,
}

fn cxx() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".into())
}

/// The compiler's `--version` line (part of the cache key).
fn cxx_version() -> Result<&'static str, CudaError> {
    static V: OnceLock<Result<String, String>> = OnceLock::new();
    V.get_or_init(|| {
        let out = Command::new(cxx())
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run the C++ compiler `{}`: {e}", cxx()))?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string())
    })
    .as_deref()
    .map_err(|e| CudaError::Unavailable {
        library: "the CUDA emulator's C++ compiler",
        reason: format!("{e} (set CXX to a C++20 compiler)"),
    })
}

fn loaded() -> &'static Mutex<HashMap<PathBuf, Arc<Library>>> {
    static L: OnceLock<Mutex<HashMap<PathBuf, Arc<Library>>>> = OnceLock::new();
    L.get_or_init(Default::default)
}

/// The host library of `program`: loaded before, cached on disk, or compiled now.
pub fn load(program: &CudaProgram) -> Result<Arc<Library>, CudaError> {
    load_source(&program.source)
}

/// The host library of emitted CUDA `source` (the prelude and kernels, each kernel followed by
/// `SURGE_EMU_ENTRY(name)`).
pub fn load_source(source: &str) -> Result<Arc<Library>, CudaError> {
    let dir = cache::dir().join("cuda-emu");
    let key = {
        let k = format!("{}\n{}\n{}", cxx_version()?, HEADER, source);
        format!("{:032x}", fnv1a128(k.as_bytes()))
    };
    let so = dir.join(format!("libsurge_emu_{key}.so"));
    if let Some(l) = loaded().lock().expect("library table").get(&so) {
        return Ok(l.clone());
    }
    std::fs::create_dir_all(&dir).map_err(|e| {
        CudaError::Input(format!(
            "cannot create the kernel cache {}: {e}",
            dir.display()
        ))
    })?;
    let src = dir.join(format!("surge_emu_{key}.cu"));
    if so.exists()
        && let Err(why) = cache::verify(&so)
    {
        cache::discard(&so, &why);
    }
    if !so.exists() {
        compile(source, &dir, &src, &so)?;
        cache::trim::trim(&dir, cache::trim::max_bytes(), Some(&so));
    } else {
        cache::trim::touch(&so);
    }
    // SAFETY: a library we compiled from our own source and checked against its checksum; it
    // has no initializers beyond the C++ runtime's.
    let lib = unsafe { libloading::Library::new(&so) }.map_err(|e| {
        cache::discard(&so, &format!("it does not load: {e}"));
        CudaError::Input(format!("cannot load {}: {e}", so.display()))
    })?;
    let l = Arc::new(Library {
        lib,
        source_path: src,
    });
    loaded()
        .lock()
        .expect("library table")
        .insert(so, l.clone());
    Ok(l)
}

/// Compiles `source` into `so` (through temporary files renamed into place) and writes its
/// checksum.
fn compile(source: &str, dir: &Path, src: &Path, so: &Path) -> Result<(), CudaError> {
    let header = dir.join(format!("surge_emu_{:032x}.h", fnv1a128(HEADER.as_bytes())));
    let write = |path: &Path, text: &str| {
        let tmp = path.with_extension(format!("tmp.{}", cache::temp_suffix()));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| CudaError::Input(format!("cannot write {}: {e}", path.display())))
    };
    if !header.exists() {
        write(&header, HEADER)?;
    }
    write(src, source)?;
    let tmp_so = so.with_extension(format!("so.{}.tmp", cache::temp_suffix()));
    let mut cmd = Command::new(cxx());
    cmd.args(["-std=c++20", "-O1", "-fPIC", "-shared", "-w", "-include"])
        .arg(&header)
        .args(["-x", "c++"])
        .arg(src)
        .arg("-o")
        .arg(&tmp_so);
    let limit = cache::child::compile_limit();
    let fail = |message: String, log: String| CudaError::HostCompile { message, log };
    let out = cache::child::output_within(&mut cmd, limit)
        .map_err(|e| fail(format!("cannot run the C++ compiler `{}`: {e}", cxx()), String::new()))?
        .ok_or_else(|| {
            let _ = std::fs::remove_file(&tmp_so);
            fail(
                format!(
                    "the C++ compiler ran longer than {} s on {} and was stopped (SURGE_RUSTC_TIMEOUT)",
                    limit.as_secs(),
                    src.display()
                ),
                String::new(),
            )
        })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp_so);
        let log: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("error"))
            .take(10)
            .collect::<Vec<_>>()
            .join("\n");
        return Err(fail(
            format!(
                "the C++ compiler failed on the emulated CUDA source {}",
                src.display()
            ),
            log,
        ));
    }
    let bytes = std::fs::read(&tmp_so).map_err(|e| {
        fail(
            format!("cannot read {}: {e}", tmp_so.display()),
            String::new(),
        )
    })?;
    std::fs::rename(&tmp_so, so)
        .map_err(|e| fail(format!("cannot write {}: {e}", so.display()), String::new()))?;
    cache::write_sum(so, &bytes).map_err(|m| fail(m, String::new()))
}

/// Whether the C++ compiler the emulator needs is here.
pub fn available() -> Result<(), CudaError> {
    cxx_version().map(|_| ())
}
