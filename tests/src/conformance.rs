//! Backend conformance: one set of test bodies, instantiated per backend by
//! [`backend_conformance!`](crate::backend_conformance). Every body runs **every** variant a
//! backend enumerates against the reference interpreter.
//!
//! Results are compared by `surge::oracle` (one tolerance rule for run, bench, tune and tests:
//! exact shapes and integers, floats within the reassociation bound `n·ε·Σ|x|`).

use crate::operator_table::not_emitted;
use surge::apps::{matgen, reduce_app, scan_app, spmv_app};
use surge::mtx::CsrMatrix;
use surge::prelude::*;
use surge::{Output, oracle};

/// Per variant: its id and its result (or the error's text).
pub type VariantResults = Vec<(String, Result<Output, String>)>;

/// What a backend must provide to be checked.
pub trait Backend {
    fn name(&self) -> &str;
    /// `Some(reason)` when the backend cannot run here (the tests then skip, saying why).
    fn unavailable(&self) -> Option<String>;
    /// Runs every variant of `c` (on its own buffers): (variant id, result or error text).
    fn run_all(&self, c: &Computation) -> Result<VariantResults, String> {
        self.run_every(c, 1)
    }
    /// Runs every `stride`-th variant of each phase (1: all of them), the first always.
    fn run_every(&self, c: &Computation, stride: usize) -> Result<VariantResults, String>;
    /// The variant stride [`spmv_matches_interpreter_on_shared_matrices`] uses on a matrix of
    /// `rows` rows: 1 (every variant) unless running every variant there is too slow for CI.
    fn stride_for_rows(&self, _rows: usize) -> usize {
        1
    }
}

/// The native CPU backend.
#[derive(Debug, Clone, Copy)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &str {
        "cpu"
    }
    fn unavailable(&self) -> Option<String> {
        match std::process::Command::new("rustc").arg("-V").output() {
            Ok(o) if o.status.success() => None,
            _ => Some("rustc is not on PATH".into()),
        }
    }
    fn run_every(&self, c: &Computation, stride: usize) -> Result<VariantResults, String> {
        let k = surge::Kernels::build(c, &surge::Target::cpu()).map_err(|e| e.to_string())?;
        Ok(k.variants()
            .iter()
            .step_by(stride.max(1))
            .map(|v| (v.id(), k.run(c, v).map_err(|e| e.to_string())))
            .collect())
    }
}

/// The CUDA backend on GPU 0: every variant of each phase (the other phases at their first
/// variant), compiled with NVRTC for the device and launched through cudarc.
#[derive(Debug, Clone, Copy)]
pub struct CudaBackend;

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }
    fn unavailable(&self) -> Option<String> {
        surge_cuda::Device::open(0)
            .err()
            .map(|e| format!("no CUDA device ({e})"))
    }
    fn run_every(&self, c: &Computation, stride: usize) -> Result<VariantResults, String> {
        let dev = surge_cuda::Device::open(0).map_err(|e| e.to_string())?;
        run_cuda(&dev, c, stride)
    }
}

/// The CUDA emulator: the same emitted source compiled for the host and run with CUDA's
/// execution model (fibers per thread, warps in lock step, checked global pointers). `full`:
/// every SpMV variant on every shared matrix (else a sample on the large ones, for CI).
#[derive(Debug, Clone, Copy)]
pub struct CudaEmuBackend {
    pub full: bool,
}

impl Backend for CudaEmuBackend {
    fn name(&self) -> &str {
        "cuda-emu"
    }
    fn unavailable(&self) -> Option<String> {
        surge_cuda::emu::compile::available()
            .err()
            .map(|e| e.to_string())
    }
    fn run_every(&self, c: &Computation, stride: usize) -> Result<VariantResults, String> {
        run_cuda(&surge_cuda::Emulator::default(), c, stride)
    }
    /// Emulation costs about 10 ms per matrix row for all 320 SpMV variants (measured: 19 s for
    /// hangGlider_2's 1647 rows; a fiber switch per thread at every barrier and shuffle), so in
    /// CI matrices of over 1000 rows run every 16th variant; `full` runs them all.
    fn stride_for_rows(&self, rows: usize) -> usize {
        if rows <= EMU_EVERY_VARIANT_ROWS || self.full {
            1
        } else {
            16
        }
    }
}

/// The largest matrix (rows) on which the emulator runs every SpMV variant in CI.
pub const EMU_EVERY_VARIANT_ROWS: usize = 1000;

/// Every `stride`-th variant of each phase of `c` (the other phases at their first variant) on
/// a CUDA runtime: the variants compiled once, the input uploaded once, each combination run.
fn run_cuda<R: surge_cuda::Runtime>(
    rt: &R,
    c: &Computation,
    stride: usize,
) -> Result<VariantResults, String> {
    use surge_codegen::target::Platform;
    let set = c
        .variants(&Platform::Cuda(rt.info().clone()))
        .map_err(|e| e.to_string())?;
    let lists: Vec<Vec<surge_codegen::variant::Variant>> = set
        .phases()
        .iter()
        .map(|vs| vs.iter().step_by(stride.max(1)).cloned().collect())
        .collect();
    let runs = surge_cuda::run_each(rt, c.ir(), c.buffers(), &lists).map_err(|e| e.to_string())?;
    Ok(runs
        .into_iter()
        .map(|(p, v, r)| (format!("phase {p}: {v}"), r.map_err(|e| e.to_string())))
        .collect())
}

/// A backend the suite is asked to check must be able to run here: a test that cannot run is
/// ignored where it is instantiated (`backend_conformance!(cuda, .., #[ignore = ".."])`), never
/// passed without running.
fn require(b: &dyn Backend) {
    if let Some(why) = b.unavailable() {
        panic!("the {} backend cannot run here: {why}", b.name());
    }
}

/// Checks every variant of `c` against the interpreter under the oracle's tolerance rule
/// (`surge::oracle`); returns how many variants ran.
pub fn check_all(b: &dyn Backend, what: &str, c: &Computation) -> usize {
    check_every(b, what, c, 1)
}

/// [`check_all`] on every `stride`-th variant of each phase.
pub fn check_every(b: &dyn Backend, what: &str, c: &Computation, stride: usize) -> usize {
    let expected = oracle::Expected::interpret(c.ir(), c.buffers())
        .unwrap_or_else(|e| panic!("{what}: interpreter: {e}"));
    let results = b
        .run_every(c, stride)
        .unwrap_or_else(|e| panic!("{what}: {} backend: {e}", b.name()));
    assert!(!results.is_empty(), "{what}: no variants");
    for (id, r) in &results {
        let got = r
            .as_ref()
            .unwrap_or_else(|e| panic!("{what}: variant {id} failed: {e}"));
        if let Err(m) = expected.check(&oracle::Flat::of_output(got)) {
            panic!("{what}: variant {id}: {m}");
        }
    }
    results.len()
}

/// `n` pseudo-random values in [-1, 1) (xorshift, seeded): test data for every backend.
pub fn values(n: usize, seed: u64) -> Vec<f64> {
    surge_codegen::data::uniform_values(n, seed)
}

/// [`values`] as `f32`.
pub fn f32s(n: usize, seed: u64) -> Vec<f32> {
    values(n, seed).into_iter().map(|v| v as f32).collect()
}

/// Row offsets over `n` values: rows of 0..7 values, some empty, the last ending at `n`.
pub fn offsets(n: usize, seed: u64) -> Vec<u32> {
    let mut off = vec![0u32];
    let mut k = seed;
    while (*off.last().unwrap() as usize) < n {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let step = ((k >> 33) % 8) as u32;
        off.push((off.last().unwrap() + step).min(n as u32));
    }
    off
}

/// Sizes 0, 1, small primes and a large one, with a small tile so that many tiles form.
const SIZES: [usize; 8] = [0, 1, 2, 7, 61, 1021, 4099, 300_007];

pub fn reduce_matches_interpreter(b: &dyn Backend) {
    require(b);
    for n in SIZES {
        let tile = if n > 100_000 { 4096 } else { 64 };
        let s = Seq::input("s", values(n, n as u64)).unwrap();
        let c = Computation::new(&reduce_app(&s, tile).unwrap()).unwrap();
        check_all(b, &format!("reduce n={n}"), &c);
    }
}

pub fn scan_matches_interpreter(b: &dyn Backend) {
    require(b);
    for n in SIZES {
        let tile = if n > 100_000 { 4096 } else { 64 };
        let s = Seq::input("s", values(n, 7 + n as u64)).unwrap();
        let c = Computation::new(&scan_app(&s, tile).unwrap()).unwrap();
        if n == 0 && not_emitted(b.name()).contains(&"scan") {
            // The empty scan is the bare `split` of its input, a phase the CUDA emitter does
            // not generate (a reshape with no map): refused by name, never run wrongly.
            refused(b, "scan n=0", &c, "split");
            continue;
        }
        check_all(b, &format!("scan n={n}"), &c);
    }
}

/// Asserts that `b` refuses `c`, naming the phase or operator `what` it cannot generate.
pub fn refused(b: &dyn Backend, case: &str, c: &Computation, what: &str) {
    let e = b.run_all(c).err().unwrap_or_else(|| {
        panic!(
            "{case}: the {} backend generates `{what}` now: check it instead",
            b.name()
        )
    });
    let named = format!("cannot generate `{what}`");
    assert!(
        e.contains(&named),
        "{case}: expected the emitter's refusal, got: {e}"
    );
    eprintln!("{}: {case} is refused as declared: {e}", b.name());
}

fn spmv(m: &CsrMatrix, seed: u64) -> Computation {
    let x: Vec<f64> = values(m.cols, seed);
    Computation::new(&spmv_app(m, &x).unwrap()).unwrap()
}

pub fn spmv_matches_interpreter_on_generated_matrices(b: &dyn Backend) {
    require(b);
    let empty_rows = CsrMatrix {
        rows: 5,
        cols: 3,
        row_offsets: vec![0, 0, 2, 2, 5, 5],
        col_indices: vec![0, 2, 0, 1, 2],
        values: vec![1.5, -2.0, 3.0, 0.25, 4.0],
    };
    let one_row_long = matgen::random(1, 5000, 4000, 3);
    for (name, m) in [
        ("laplacian 17x17", matgen::laplacian_2d(17)),
        ("random 300x200, 9/row", matgen::random(300, 200, 9, 1)),
        ("empty rows", empty_rows),
        ("one long row", one_row_long),
        // Rows longer than a block row, several per group: every lane holds a partial, and a
        // group's next row must not overwrite shared memory a reduction still reads.
        ("random 96x2000, 700/row", matgen::random(96, 2000, 700, 5)),
    ] {
        check_all(b, &format!("spmv {name}"), &spmv(&m, 5));
    }
}

pub fn spmv_matches_interpreter_on_shared_matrices(b: &dyn Backend) {
    require(b);
    let (mut checked, mut sampled) = (0, 0);
    for path in crate::shared_matrix_files() {
        let Ok(m) = surge::mtx::read_mtx(&path) else {
            continue; // young1c is complex; the mtx tests check that error
        };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let stride = b.stride_for_rows(m.rows);
        let t = std::time::Instant::now();
        let n = check_every(b, &format!("spmv {name}"), &spmv(&m, 11), stride);
        eprintln!(
            "{}: spmv {name} ({} rows): {n} variants in {:.1} s",
            b.name(),
            m.rows,
            t.elapsed().as_secs_f64()
        );
        sampled += usize::from(stride > 1);
        checked += 1;
    }
    eprintln!(
        "{}: spmv checked on {checked} shared matrices ({sampled} on a sample of variants)",
        b.name()
    );
}

/// An integer map.reduce with wrapping arithmetic: every variant must match exactly.
pub fn integer_results_match_exactly(b: &dyn Backend) {
    require(b);
    for n in [0usize, 1, 100, 5000] {
        let data: Vec<i64> = (0..n as i64)
            .map(|i| i.wrapping_mul(0x5851_F42D_4C95_7F2D) >> 3)
            .collect();
        let s = Seq::input("s", data).unwrap();
        let tiles = split(&s, 37u64).unwrap();
        let r = map(
            |t: Seq<i64>| {
                let sq = map(|x: Scalar<i64>| x.clone() * x + 3i64, &t)?;
                reduce_prefix(add, &sq, 0i64)
            },
            &tiles,
        )
        .unwrap();
        check_all(
            b,
            &format!("integer map.reduce n={n}"),
            &Computation::new(&r).unwrap(),
        );
    }
}

/// NaN and ±∞ (in inputs and literals) pass through every variant as through the interpreter:
/// sums, min/max over tiles that are all NaN, partly NaN or hold ∞, scans and SpMV.
pub fn non_finite_values_pass_through(b: &dyn Backend) {
    require(b);
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let mut data = values(300, 3);
    data[0..37].fill(nan); // tile 0: all NaN
    data[40] = nan; // tile 1: one NaN
    data[80] = inf; // tile 2: +∞ ...
    data[90] = -inf; // ... and -∞: its sum is NaN
    data[120] = -inf;
    let s = Seq::input("s", data).unwrap();
    for (what, tile) in [("reduce", 64u64), ("reduce, large tile", 4096)] {
        let c = Computation::new(&reduce_app(&s, tile).unwrap()).unwrap();
        check_all(b, &format!("non-finite {what}"), &c);
        let c = Computation::new(&scan_app(&s, tile).unwrap()).unwrap();
        check_all(b, &format!("non-finite scan, tile {tile}"), &c);
    }
    let tiles = split(&s, 37u64).unwrap();
    for (name, op) in [("min", min::<f64> as fn(_, _) -> _), ("max", max::<f64>)] {
        let r = map(|t: Seq<f64>| reduce(op, &t), &tiles).unwrap();
        check_all(
            b,
            &format!("non-finite {name} per tile"),
            &Computation::new(&r).unwrap(),
        );
    }
    // Literals: NaN ignored by max, ∞ chosen by select, NaN scaled.
    let r = map(
        |x: Scalar<f64>| {
            let y = x.max(nan) + select(&x.gt(0.5), inf, 0.0);
            y * lit(1.0) + x.min(-inf)
        },
        &s,
    )
    .unwrap();
    check_all(b, "non-finite literals", &Computation::new(&r).unwrap());
    let m = matgen::random(300, 200, 9, 1);
    let mut x = values(m.cols, 5);
    (x[3], x[7], x[11]) = (nan, inf, -inf);
    let c = Computation::new(&spmv_app(&m, &x).unwrap()).unwrap();
    check_all(b, "non-finite spmv", &c);
}

/// Out-of-range data is an error naming the operator in every variant, never a wrong answer.
pub fn bad_indices_are_errors(b: &dyn Backend) {
    require(b);
    let m = CsrMatrix {
        rows: 2,
        cols: 3,
        row_offsets: vec![0, 2, 3],
        col_indices: vec![0, 1, 7],
        values: vec![1.0, 2.0, 3.0],
    };
    let c = spmv(&m, 1);
    let results = b.run_all(&c).expect("kernels build");
    for (id, r) in results {
        let e = r.expect_err(&format!(
            "variant {id} accepted an out-of-range column index"
        ));
        assert!(
            e.contains("gather") && e.contains("index 7"),
            "variant {id}: {e}"
        );
    }
}

/// Every row of the operator table through compiled kernels, every variant, against the
/// interpreter; a row the backend's emitter does not generate yet must fail naming its operator.
pub fn operator_table_matches_interpreter(b: &dyn Backend) {
    use crate::operator_table::OPERATORS;
    require(b);
    let pending = not_emitted(b.name());
    for row in OPERATORS {
        let c = (row.build)().unwrap_or_else(|e| panic!("operator {}: building: {e}", row.op));
        if pending.contains(&row.op) {
            refused(b, &format!("operator {}", row.op), &c, row.op);
            continue;
        }
        let n = check_all(b, &format!("operator {}", row.op), &c);
        eprintln!(
            "{}: operator {}: {n} variants match the interpreter",
            b.name(),
            row.op
        );
    }
}

/// Instantiates the conformance tests for a backend: `backend_conformance!(cpu, CpuBackend);`,
/// with attributes for every test after it (`#[ignore = "needs a CUDA GPU"]`).
#[macro_export]
macro_rules! backend_conformance {
    ($name:ident, $backend:expr $(, #[$attr:meta])*) => {
        mod $name {
            use $crate::conformance::*;
            #[test]
            $(#[$attr])*
            fn reduce_matches_interpreter_every_variant() {
                reduce_matches_interpreter(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn scan_matches_interpreter_every_variant() {
                scan_matches_interpreter(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn spmv_generated_every_variant() {
                spmv_matches_interpreter_on_generated_matrices(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn spmv_shared_matrices_every_variant() {
                spmv_matches_interpreter_on_shared_matrices(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn integers_exact_every_variant() {
                integer_results_match_exactly(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn operator_table_every_variant() {
                operator_table_matches_interpreter(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn non_finite_values_every_variant() {
                non_finite_values_pass_through(&$backend)
            }
            #[test]
            $(#[$attr])*
            fn bad_indices_are_errors_every_variant() {
                bad_indices_are_errors(&$backend)
            }
        }
    };
}
