//! The CUDA form checks shared by `cuda_forms.rs` and `cuda_deep.rs`: a program's CUDA variants
//! emitted, NVRTC-compiled where NVRTC loads, and run in the CUDA emulator against the
//! interpreter.

use crate::conformance::{CudaEmuBackend, check_every};
use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};
use surge::Computation;
use surge_codegen::target::Platform;

/// Whether NVRTC already compiled `source` in this test process (recording it). Sizes are kernel
/// arguments, so a test that runs one program structure on several shapes emits the same source
/// for each, and compiling it again proves nothing new; the emulator still runs every shape.
fn compiled_before(source: &str) -> bool {
    static SEEN: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    !seen.insert(source.to_string())
}

/// Every `STRIDE`-th variant of each phase: NVRTC took 15.7 s for one small program's ~90
/// variants on a cold cache here (the emulator 2.4 s for every 8th), and the whole of
/// `cuda_forms.rs` with every variant 604 s on 2 cores.
pub const STRIDE: usize = 8;

/// Every `STRIDE`-th CUDA variant of `c` compiles with NVRTC and agrees with the interpreter in
/// the emulator. `SURGE_DEBUG_PHASES=1` prints the program's IR and phases first (to see which
/// phase a refusal names).
pub fn on_cuda(what: &str, c: &Computation) {
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    let set = c.variants(&platform).unwrap();
    let lists: Vec<Vec<_>> = set
        .phases()
        .iter()
        .map(|vs| vs.iter().step_by(STRIDE).cloned().collect())
        .collect();
    let analysis = c.analyze().unwrap();
    if std::env::var_os("SURGE_DEBUG_PHASES").is_some() {
        eprintln!("{}", c.ir());
        for (k, p) in analysis.phases.iter().enumerate() {
            eprintln!(
                "phase {k}: root {:?} levels {:?} deps {:?}",
                p.root, p.levels, p.depends_on
            );
        }
    }
    let program = surge_codegen::emit::cuda::emit(c.ir(), &analysis, &lists)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    match surge_cuda::nvrtc_available() {
        Ok(()) if compiled_before(&program.source) => {}
        Ok(()) => {
            surge_cuda::compile_source(&program.source, surge_cuda::DEFAULT_ARCH)
                .unwrap_or_else(|e| panic!("{what}: NVRTC: {e}"));
        }
        Err(e) => eprintln!("{what}: NVRTC cannot be loaded here, not compiled: {e}"),
    }
    assert!(check_every(&CudaEmuBackend { full: true }, what, c, STRIDE) > 1);
}

/// `c` fails in the emulator with the interpreter's message.
pub fn fails_as_the_interpreter(c: &Computation) {
    let want = c.interpret().unwrap_err().to_string();
    let got = surge::execute(c, &surge::Target::cuda_emulated())
        .unwrap_err()
        .to_string();
    assert_eq!(got, want);
}
