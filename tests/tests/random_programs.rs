//! Differential testing of the whole language with random programs (issue 19, item 4): each
//! generated program (`tests::random`) runs in the reference interpreter and in every CPU variant
//! (compiled with rustc), and its CUDA source goes through NVRTC. A wrong answer, a panic, a
//! variant that accepts what the interpreter rejects, or emitted code that does not compile
//! fails the test with the shrunk program printed as DSEL source; refusals of the analysis or an
//! emitter are counted by class and printed at the end.
//!
//! The CI test runs a fixed seed and a bounded number of cases (kernels are cached on disk under
//! `$SURGE_CACHE`, so a rerun mostly loads them). The large run is ignored:
//!
//! ```sh
//! cargo test -p tests --test random_programs -- --ignored --nocapture
//! # other seeds or sizes:
//! SURGE_RANDOM_SEED=7 SURGE_RANDOM_CASES=2000 cargo test -p tests --test random_programs -- --ignored --nocapture
//! (`SURGE_RANDOM_TRACE=1` prints each program before it runs; `SURGE_RANDOM_CPU=0` checks the
//! CUDA side only, without a rustc call; `SURGE_RANDOM_GPU=1` runs every CUDA variant on GPU 0
//! instead of the emulator, and fails every program, saying why, where there is no GPU).
//! ```

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::time::Instant;
use tests::random::check::{self, Outcome, STATS};
use tests::random::strategy::programs;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn run(cases: u32, seed: u64) {
    let cases = env_u64("SURGE_RANDOM_CASES").map_or(cases, |c| c as u32);
    let seed = env_u64("SURGE_RANDOM_SEED").unwrap_or(seed);
    let config = Config {
        cases,
        // Each shrinking step compiles a program: bound the time a failure takes to shrink.
        max_shrink_iters: 3000,
        max_shrink_time: 300_000,
        max_global_rejects: cases * 4,
        failure_persistence: None,
        ..Config::default()
    };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let cuda = check::nvrtc();
    if !cuda {
        eprintln!("NVRTC cannot be loaded here: CUDA sources are emitted but not compiled");
    }
    let t = Instant::now();
    // SURGE_RANDOM_TRACE=1 prints each program before it runs (a crash names its program).
    let trace = std::env::var_os("SURGE_RANDOM_TRACE").is_some();
    let result = runner.run(&programs(), |case| {
        if trace {
            eprintln!("[case] {case:?}");
        }
        match check::check(&case.program, true) {
            Ok(Outcome::IllTyped(why)) => Err(TestCaseError::reject(why)),
            Ok(_) => Ok(()),
            Err(f) => Err(TestCaseError::fail(f.0)),
        }
    });
    let stats = STATS.lock().unwrap_or_else(|e| e.into_inner());
    eprintln!(
        "seed {seed}, {cases} cases, {:.1} s\n{}",
        t.elapsed().as_secs_f64(),
        stats.report()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn random_programs_agree_with_the_interpreter() {
    run(48, 19);
}

#[test]
#[ignore = "a long run (minutes): cargo test -p tests --test random_programs -- --ignored --nocapture"]
fn many_random_programs_agree_with_the_interpreter() {
    run(500, 4);
}

/// The generator without compiling anything: most programs are well typed and pass validation,
/// and together they use every data-parallel operator, `index` and `length`.
#[test]
fn the_generator_covers_every_operator_with_well_typed_programs() {
    use proptest::strategy::{Strategy, ValueTree};
    use std::collections::BTreeMap;
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[3; 32]),
    );
    let (mut typed, n) = (0, 2000);
    let mut ops: BTreeMap<&str, usize> = BTreeMap::new();
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    for k in 0..n {
        let case = programs().new_tree(&mut runner).unwrap().current();
        match tests::random::build::lower(&case.program)
            .map_err(|e| format!("`{}`: {}", e.op, e.message))
            .and_then(|ir| {
                surge::Computation::from_ir(ir, case.program.inputs.clone())
                    .map_err(|e| e.to_string())
            }) {
            Ok(_) => {
                typed += 1;
                let mut v = vec![];
                case.program.root.operators(&mut v);
                for o in v {
                    *ops.entry(o).or_default() += 1;
                }
                if k < 3 {
                    eprintln!("{case:?}");
                }
            }
            Err(e) => *why.entry(e).or_default() += 1,
        }
    }
    eprintln!("{typed} of {n} well typed; operators: {ops:?}");
    for (w, c) in &why {
        eprintln!("  ill-typed ×{c}: {w}");
    }
    assert!(
        typed * 10 >= n * 7,
        "only {typed} of {n} programs are well typed"
    );
    for k in surge_codegen::ir::OpKind::data_parallel() {
        assert!(ops.contains_key(k.name()), "no program uses `{k}`");
    }
    for k in ["index", "length"] {
        assert!(ops.contains_key(k), "no program uses `{k}`");
    }
}
