//! One `rustc` call per program, cached on disk by a hash of the source (which embeds the IR's
//! structure and the variant set, not its sizes: those are kernel arguments), the rustc version
//! and the target; checked against its checksum (`cache.rs`) and loaded with libloading.

use crate::CpuError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use surge_codegen::cache;
use surge_codegen::emit::cpu::CpuProgram;
use surge_codegen::ir::fnv1a128;

/// A loaded kernel library.
#[derive(Debug)]
pub struct Loaded {
    pub lib: libloading::Library,
    /// The generated source, kept for inspection.
    pub source_path: PathBuf,
    pub library_path: PathBuf,
    /// Whether this load compiled (false: found in the cache).
    pub compiled: bool,
    /// Why the cached library was damaged, when it was rebuilt (a missing or mismatched
    /// checksum, or it did not load).
    pub rebuilt: Option<String>,
}

/// The ABI version of the generated runtime (`surge_abi_version`): 2 since the slot table ends
/// with the literal table, 3 since a run-id slot follows it.
pub const ABI_VERSION: u32 = 3;

/// The kernel cache directory (see [`surge_codegen::cache::dir`]).
pub fn cache_dir() -> PathBuf {
    cache::dir()
}

fn rustc() -> String {
    std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())
}

/// `rustc -vV`, once per process.
fn rustc_version() -> Result<&'static str, CpuError> {
    static V: OnceLock<Result<String, String>> = OnceLock::new();
    V.get_or_init(|| {
        let out = Command::new(rustc())
            .arg("-vV")
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", rustc()))?;
        if !out.status.success() {
            return Err(format!("`{} -vV` failed", rustc()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    })
    .as_ref()
    .map(|s| s.as_str())
    .map_err(|e| CpuError::Compile {
        variants: vec![],
        message: e.clone(),
        source_path: None,
    })
}

/// The CPU's model name (`/proc/cpuinfo`), or `unknown CPU`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The cache key of a program on this machine.
pub fn cache_key(program: &CpuProgram) -> Result<String, CpuError> {
    let mut text = program.source.clone();
    text.push_str(rustc_version()?);
    text.push_str("target-cpu=native;");
    // `native` means this CPU: key on its model too.
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo")
        && let Some(l) = info.lines().find(|l| l.starts_with("model name"))
    {
        text.push_str(l);
    }
    Ok(format!("{:032x}", fnv1a128(text.as_bytes())))
}

/// The libraries loaded by this process, by path: each is loaded (and checked) once.
fn loaded_libraries() -> &'static Mutex<HashMap<PathBuf, Arc<Loaded>>> {
    static M: OnceLock<Mutex<HashMap<PathBuf, Arc<Loaded>>>> = OnceLock::new();
    M.get_or_init(Default::default)
}

static RUSTC_CALLS: AtomicUsize = AtomicUsize::new(0);

/// How many times this process has run `rustc` on generated kernels (a kernel-cache miss each;
/// tests check that a new size of a computation compiles nothing).
pub fn rustc_calls() -> usize {
    RUSTC_CALLS.load(Ordering::Relaxed)
}

/// Compiles (or finds in the cache) and loads `program`.
pub fn load(program: &CpuProgram) -> Result<Arc<Loaded>, CpuError> {
    load_in(program, &cache_dir())
}

/// [`load`] with the kernel cache in `dir`.
pub fn load_in(program: &CpuProgram, dir: &Path) -> Result<Arc<Loaded>, CpuError> {
    let key = cache_key(program)?;
    let so = dir.join(format!("libsurge_{key}.so"));
    if let Some(l) = loaded_libraries().lock().expect("library table").get(&so) {
        return Ok(l.clone());
    }
    let l = Arc::new(load_from_disk(program, dir, &key)?);
    loaded_libraries()
        .lock()
        .expect("library table")
        .insert(so, l.clone());
    Ok(l)
}

/// Loads the cached library of `program` from `dir` after checking it against its checksum, or
/// compiles it: when it is missing, and when it is damaged (no checksum, a mismatch, or it does
/// not load), which is said on stderr and recorded in [`Loaded::rebuilt`].
fn load_from_disk(program: &CpuProgram, dir: &Path, key: &str) -> Result<Loaded, CpuError> {
    std::fs::create_dir_all(dir).map_err(|e| CpuError::Compile {
        variants: vec![],
        message: format!("cannot create the kernel cache {}: {e}", dir.display()),
        source_path: None,
    })?;
    let src = dir.join(format!("surge_{key}.rs"));
    let so = dir.join(format!("libsurge_{key}.so"));
    let mut rebuilt = None;
    if so.exists()
        && let Err(why) = cache::verify(&so)
    {
        cache::discard(&so, &why);
        rebuilt = Some(why);
    }
    let compiled = !so.exists();
    if compiled {
        compile(program, &src, &so, key)?;
        cache::trim::trim(dir, cache::trim::max_bytes(), Some(&so));
    } else {
        cache::trim::touch(&so);
    }
    let lib = match open(&so, &src) {
        Ok(lib) => lib,
        Err(e) if !compiled => {
            let why = format!("it does not load: {e}");
            cache::discard(&so, &why);
            rebuilt = Some(why);
            compile(program, &src, &so, key)?;
            return Ok(Loaded {
                lib: open(&so, &src)?,
                source_path: src,
                library_path: so,
                compiled: true,
                rebuilt,
            });
        }
        Err(e) => return Err(e),
    };
    Ok(Loaded {
        lib,
        source_path: src,
        library_path: so,
        compiled,
        rebuilt,
    })
}

/// Loads library `so` (generated from `src`), checks that it is a Surge kernel library of this
/// ABI and initializes it.
fn open(so: &Path, src: &Path) -> Result<libloading::Library, CpuError> {
    let err = |message: String| CpuError::Compile {
        variants: vec![],
        message,
        source_path: Some(src.to_path_buf()),
    };
    // SAFETY: the library is one we generated and checked against its checksum; loading runs no
    // initializers beyond std's.
    let lib = unsafe { libloading::Library::new(so) }
        .map_err(|e| err(format!("cannot load {}: {e}", so.display())))?;
    // SAFETY: symbols of the generated runtime with the declared signatures.
    unsafe {
        let abi: libloading::Symbol<'_, unsafe extern "C" fn() -> u32> =
            lib.get(b"surge_abi_version").map_err(|e| {
                err(format!(
                    "{} is not a Surge kernel library: {e}",
                    so.display()
                ))
            })?;
        if abi() != ABI_VERSION {
            return Err(err(format!(
                "{} has ABI version {}, expected {ABI_VERSION}",
                so.display(),
                abi()
            )));
        }
        let init: libloading::Symbol<'_, unsafe extern "C" fn()> = lib
            .get(b"surge_init")
            .map_err(|e| err(format!("{} lacks surge_init: {e}", so.display())))?;
        init();
    }
    Ok(lib)
}

/// Line ranges of the generated modules in a (possibly reformatted) file, from their markers.
fn module_ranges(text: &str) -> Vec<(usize, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.trim().strip_prefix("// ---- module m")
            && let Some(k) = rest.strip_suffix(" ----").and_then(|k| k.parse().ok())
        {
            let end_marker = format!("// ---- end of module m{k} ----");
            let end = lines[i..]
                .iter()
                .position(|x| x.trim() == end_marker)
                .map_or(lines.len(), |p| i + p + 1);
            out.push((k, i + 1, end));
        }
    }
    out
}

/// Compiles `program` into `so`. rustc writes its intermediate files (object files named after
/// the crate) beside its output, so each compile gets a directory of its own: two threads or
/// processes building the same program at once would otherwise overwrite each other's objects
/// and fail to link (seen when two tests built one k-means program concurrently).
fn compile(program: &CpuProgram, src: &Path, so: &Path, key: &str) -> Result<(), CpuError> {
    let dir = so.parent().unwrap_or(Path::new("."));
    let build = dir.join(format!(".build-{key}-{}", cache::temp_suffix()));
    std::fs::create_dir_all(&build).map_err(|e| CpuError::Compile {
        variants: vec![],
        message: format!("cannot create {}: {e}", build.display()),
        source_path: Some(src.to_path_buf()),
    })?;
    let tmp_so = build.join(format!("libsurge_{key}.so"));
    let result = compile_to(program, src, so, key, &tmp_so);
    let _ = std::fs::remove_dir_all(&build);
    result
}

/// How long rustfmt may format a generated source before it is left unformatted.
const RUSTFMT_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

fn compile_to(
    program: &CpuProgram,
    src: &Path,
    so: &Path,
    key: &str,
    tmp_so: &Path,
) -> Result<(), CpuError> {
    let err = |message: String, variants: Vec<String>| CpuError::Compile {
        variants,
        message,
        source_path: Some(src.to_path_buf()),
    };
    let tmp_src = src.with_extension(format!("rs.{}", cache::temp_suffix()));
    std::fs::write(&tmp_src, &program.source)
        .map_err(|e| err(format!("cannot write {}: {e}", tmp_src.display()), vec![]))?;
    // Formatting is for the reader; a missing, failing or slow rustfmt is not an error. It is
    // given RUSTFMT_LIMIT (CoMD's 727 KB force program kept it busy for minutes); whatever
    // it did not finish, the unformatted source is written back.
    let mut fmt = Command::new("rustfmt");
    fmt.args(["--edition", "2021"]).arg(&tmp_src);
    if !cache::child::output_within(&mut fmt, RUSTFMT_LIMIT)
        .is_ok_and(|o| o.is_some_and(|o| o.status.success()))
    {
        std::fs::write(&tmp_src, &program.source)
            .map_err(|e| err(format!("cannot write {}: {e}", tmp_src.display()), vec![]))?;
    }
    std::fs::rename(&tmp_src, src)
        .map_err(|e| err(format!("cannot write {}: {e}", src.display()), vec![]))?;
    RUSTC_CALLS.fetch_add(1, Ordering::Relaxed);
    let mut cmd = Command::new(rustc());
    cmd.args([
        "--edition",
        "2021",
        "--crate-type",
        "cdylib",
        "--crate-name",
        &format!("surge_{key}"),
        "-C",
        "opt-level=3",
        "-C",
        "target-cpu=native",
        "-C",
        "panic=unwind",
        "-C",
        "debuginfo=0",
        "--error-format",
        "short",
        "-o",
    ])
    .arg(tmp_so)
    .arg(src);
    let limit = cache::child::compile_limit();
    let out = cache::child::output_within(&mut cmd, limit)
        .map_err(|e| err(format!("cannot run `{}`: {e}", rustc()), vec![]))?
        .ok_or_else(|| {
            err(
                format!(
                    "rustc ran longer than {} s on the generated kernels (kept at {}) and was \
                     stopped; set SURGE_RUSTC_TIMEOUT (seconds) to allow more",
                    limit.as_secs(),
                    src.display()
                ),
                vec![],
            )
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let text = std::fs::read_to_string(src).unwrap_or_default();
        let ranges = module_ranges(&text);
        let name = src.display().to_string();
        let mut variants: Vec<String> = Vec::new();
        let mut diagnostics = Vec::new();
        for l in stderr.lines() {
            if !l.contains("error") {
                continue;
            }
            if diagnostics.len() < 5 {
                diagnostics.push(l.to_string());
            }
            // `path:line:col: error...`
            if let Some(rest) = l.strip_prefix(&name).and_then(|r| r.strip_prefix(':'))
                && let Some(line) = rest.split(':').next().and_then(|x| x.parse::<usize>().ok())
            {
                for (k, a, b) in &ranges {
                    if *a <= line && line <= *b {
                        for v in &program.modules[*k].variants {
                            if !variants.contains(v) {
                                variants.push(v.clone());
                            }
                        }
                    }
                }
            }
        }
        return Err(err(
            format!(
                "rustc failed on the generated kernels (kept at {}):\n{}",
                src.display(),
                diagnostics.join("\n")
            ),
            variants,
        ));
    }
    // The checksum is of the complete library, written after it is renamed into place: a crash
    // in between leaves a library without a sum, which the next load rebuilds.
    let bytes = std::fs::read(tmp_so)
        .map_err(|e| err(format!("cannot read {}: {e}", tmp_so.display()), vec![]))?;
    std::fs::rename(tmp_so, so)
        .map_err(|e| err(format!("cannot write {}: {e}", so.display()), vec![]))?;
    cache::write_sum(so, &bytes).map_err(|m| err(m, vec![]))
}
