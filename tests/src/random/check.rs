//! The differential check of one program: the reference interpreter against every CPU variant
//! (compiled with rustc), and the emitted CUDA source through NVRTC.
//!
//! - The interpreter's result must be every variant's, under `surge::oracle`'s rule.
//! - A program the interpreter rejects at run time must be an error in every variant.
//! - A program the analysis or an emitter refuses is a *refusal*, counted by class (the
//!   operator and the message), not a failure; anything else going wrong (a rustc or NVRTC
//!   error in emitted code, a panic, a wrong answer) is a [`Failure`].

use super::build::lower;
use super::program::Program;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use surge::{Computation, Kernels, SurgeError, Target};
use surge_codegen::CodegenError;
use surge_codegen::ir::{self, Value};
use surge_codegen::oracle::{Expected, Flat};
use surge_cpu::CpuError;

/// What checking one program found (a failure is reported separately).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not accepted by the IR's typing or validation (the generator's program is discarded).
    IllTyped(String),
    /// Every CPU variant matched the interpreter (`rejected`: all rejected what it rejected).
    Agreed { variants: usize, rejected: bool },
    /// The analysis or the CPU emitter refused it: the refusal's class.
    Refused(String),
    /// The interpreter failed but a variant returned a result, in a program with an operator
    /// that reads only some elements of an operand (`length`, `index`, `gather`, `striding`,
    /// `join`, `replicate`, `transpose`, `select`): the variants evaluate sequences lazily, so a
    /// check on an element the result never reads (`len(&gather(..))`) does not run, where the
    /// interpreter evaluates every operand whole. Counted by class (the operator whose check
    /// failed); `SURGE_RANDOM_STRICT=1` makes it a failure, and without such an operator it is
    /// one.
    Unchecked(String),
}

/// A disagreement with the interpreter, a panic, or emitted code that does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

/// Counts over a run: outcomes, refusal classes, operators seen.
#[derive(Debug, Default)]
pub struct Stats {
    pub programs: usize,
    pub ill_typed: BTreeMap<String, usize>,
    pub agreed: usize,
    pub rejected: usize,
    pub variants: usize,
    pub cpu_refusals: BTreeMap<String, usize>,
    pub unchecked: BTreeMap<String, usize>,
    /// The shortest program (as DSEL source) seen for each refusal or unchecked class.
    pub examples: BTreeMap<String, String>,
    pub cuda_refusals: BTreeMap<String, usize>,
    pub cuda_compiled: usize,
    /// Programs whose every CUDA variant ran in the emulator and agreed.
    pub cuda_emulated: usize,
    /// Programs whose every CUDA variant ran on a GPU and agreed (`SURGE_RANDOM_GPU=1`).
    pub cuda_on_gpu: usize,
    pub cuda_skipped: usize,
    pub operators: BTreeMap<&'static str, usize>,
    pub failures: usize,
    /// Programs checked after the first failure: proptest's shrinking steps (not counted above).
    pub shrink_steps: usize,
}

pub static STATS: Mutex<Stats> = Mutex::new(Stats {
    programs: 0,
    ill_typed: BTreeMap::new(),
    agreed: 0,
    rejected: 0,
    variants: 0,
    cpu_refusals: BTreeMap::new(),
    unchecked: BTreeMap::new(),
    examples: BTreeMap::new(),
    cuda_refusals: BTreeMap::new(),
    cuda_compiled: 0,
    cuda_emulated: 0,
    cuda_on_gpu: 0,
    cuda_skipped: 0,
    operators: BTreeMap::new(),
    failures: 0,
    shrink_steps: 0,
});

impl Stats {
    pub fn report(&self) -> String {
        let mut s = format!(
            "{} programs: {} agreed on every CPU variant ({} of them rejected at run time by \
             the interpreter and every variant), {} variants run, {} refused by the CPU side, \
             {} ill-typed (discarded), {} failures (then {} shrinking steps)\n",
            self.programs,
            self.agreed,
            self.rejected,
            self.variants,
            self.cpu_refusals.values().sum::<usize>(),
            self.ill_typed.values().sum::<usize>(),
            self.failures,
            self.shrink_steps,
        );
        s.push_str(&format!(
            "CUDA: {} programs compiled with NVRTC, {} run in the emulator and {} on a GPU with every variant agreeing, {} not compiled (no NVRTC)\n",
            self.cuda_compiled, self.cuda_emulated, self.cuda_on_gpu, self.cuda_skipped
        ));
        for (what, m) in [
            ("CPU refusal", &self.cpu_refusals),
            ("unchecked error", &self.unchecked),
            ("CUDA refusal", &self.cuda_refusals),
            ("ill-typed", &self.ill_typed),
        ] {
            for (class, n) in m {
                s.push_str(&format!("  {what} ×{n}: {class}\n"));
            }
        }
        let ops: Vec<String> = self
            .operators
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        s.push_str(&format!("operators used: {}\n", ops.join(", ")));
        for (class, src) in &self.examples {
            s.push_str(&format!("\nshortest program for `{class}`:\n{src}"));
        }
        s
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(a panic without a message)".into())
}

/// A refusal's class: who refused, the operator, the message (without node ids).
fn refusal_class(e: &CodegenError) -> Option<String> {
    match e {
        CodegenError::Analysis { op, message, .. } => {
            Some(format!("analysis of `{op}`: {message}"))
        }
        CodegenError::Emit {
            backend,
            op,
            message,
            ..
        } if *op != "template" => Some(format!("{backend} emitter, `{op}`: {}", coarse(message))),
        CodegenError::EmitVariant { what, message } => {
            Some(without_ids(&format!("emitting {what}: {message}")))
        }
        _ => None,
    }
}

/// "a phase result of type seq<(f32, u32)> cannot be stored .." → "a phase result of tuples
/// cannot be stored ..": one class per kind of type, not per type.
fn coarse(message: &str) -> String {
    let (Some(a), Some(b)) = (message.find("of type "), message.find(" cannot be stored")) else {
        return message.to_string();
    };
    let ty = &message[a + "of type ".len()..b];
    let kind = if ty.starts_with("seq<seq<seq<") {
        "three levels of sequences"
    } else if ty.contains('(') {
        "tuples"
    } else if ty.contains("bool") {
        "booleans"
    } else {
        ty
    };
    let rest = message[b..].split(" (").next().unwrap_or("");
    format!("{}of {kind}{rest}", &message[..a])
}

fn cpu_refusal(e: &SurgeError) -> Option<String> {
    match e {
        SurgeError::Codegen(c) | SurgeError::Cpu(CpuError::Invalid(c)) => refusal_class(c),
        _ => None,
    }
}

/// Whether NVRTC can be loaded here (checked once).
pub fn nvrtc() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| surge_cuda::nvrtc_available().is_ok())
}

/// Checks `p`; the stats go to [`STATS`].
pub fn check(p: &Program, cuda: bool) -> Result<Outcome, Failure> {
    let r = check_inner(p, cuda);
    let mut st = STATS.lock().unwrap_or_else(|e| e.into_inner());
    if st.failures > 0 {
        st.shrink_steps += 1;
        return r;
    }
    match &r {
        Ok(Outcome::IllTyped(m)) => *st.ill_typed.entry(m.clone()).or_default() += 1,
        Ok(o) => {
            st.programs += 1;
            let mut ops = vec![];
            p.root.operators(&mut ops);
            ops.sort_unstable();
            ops.dedup();
            for o in ops {
                *st.operators.entry(o).or_default() += 1;
            }
            match o {
                Outcome::Agreed { variants, rejected } => {
                    st.agreed += 1;
                    st.variants += variants;
                    st.rejected += *rejected as usize;
                }
                Outcome::Refused(class) => {
                    *st.cpu_refusals.entry(class.clone()).or_default() += 1;
                    example(&mut st, class, p);
                }
                Outcome::Unchecked(class) => {
                    *st.unchecked.entry(class.clone()).or_default() += 1;
                    example(&mut st, class, p);
                }
                Outcome::IllTyped(_) => {}
            }
        }
        Err(_) => {
            st.programs += 1;
            st.failures += 1;
        }
    }
    r
}

/// Whether `e` has an operator that reads only some elements of an operand.
fn reads_partially(e: &super::program::Expr) -> bool {
    use super::program::Expr as E;
    if matches!(
        e,
        E::Length(_)
            | E::Index(..)
            | E::Gather(..)
            | E::Striding(..)
            | E::Join(_)
            | E::Replicate(..)
            | E::Transpose(_)
            | E::Select(..)
    ) {
        return true;
    }
    let mut found = false;
    e.for_each_child(&mut |c| found |= reads_partially(c));
    found
}

fn example(st: &mut Stats, class: &str, p: &Program) {
    let src = super::dsel::print(p);
    let e = st
        .examples
        .entry(class.to_string())
        .or_insert_with(|| src.clone());
    if src.len() < e.len() {
        *e = src;
    }
}

/// A message without node ids and phase numbers (`node %7`, `phase 1` → `node %N`, `phase N`).
fn without_ids(m: &str) -> String {
    let mut out = String::new();
    let mut rest = m;
    while let Some(k) = rest.find(|c: char| c.is_ascii_digit()) {
        let (head, tail) = rest.split_at(k);
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(head);
        if head.ends_with('%') || head.ends_with("phase ") {
            out.push('N');
        } else {
            out.push_str(&tail[..digits]);
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// A message with its numbers replaced by `N` (a class of run-time errors).
fn without_numbers(m: &str) -> String {
    let mut out = String::new();
    for c in m.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The IR's typing message without the node id (`` `zip` (node %5): .. `` → `` `zip`: .. ``).
fn typing_class(e: &ir::IrError) -> String {
    format!("`{}`: {}", e.op, e.message)
}

/// `SURGE_RANDOM_CPU=0` skips the CPU variants (no rustc call): a quick run of the CUDA side.
fn cuda_only() -> bool {
    std::env::var("SURGE_RANDOM_CPU").is_ok_and(|v| v == "0")
}

fn check_inner(p: &Program, cuda: bool) -> Result<Outcome, Failure> {
    let fail = |m: String| Err(Failure(m));
    let ir = match catch_unwind(|| lower(p)) {
        Ok(Ok(ir)) => ir,
        Ok(Err(e)) => return Ok(Outcome::IllTyped(typing_class(&e))),
        Err(pn) => return fail(format!("typing panicked: {}", panic_text(pn))),
    };
    let c = match Computation::from_ir(ir, p.inputs.clone()) {
        Ok(c) => c,
        Err(SurgeError::Codegen(CodegenError::Ir(e))) | Err(SurgeError::Build(e)) => {
            return Ok(Outcome::IllTyped(typing_class(&e)));
        }
        Err(e) => return Ok(Outcome::IllTyped(format!("validation: {e}"))),
    };
    let reference = match catch_unwind(|| ir::interpret(c.ir(), c.buffers())) {
        Ok(r) => r,
        Err(pn) => return fail(format!("the interpreter panicked: {}", panic_text(pn))),
    };
    let expected = match &reference {
        Ok(want) => Some(expected(&c, want)),
        Err(_) => None,
    };
    if cuda && cuda_only() {
        check_cuda(&c, &expected, p)?;
        return Ok(Outcome::Agreed {
            variants: 0,
            rejected: reference.is_err(),
        });
    }
    let kernels = match catch_unwind(AssertUnwindSafe(|| Kernels::build(&c, &Target::cpu()))) {
        Ok(Ok(k)) => k,
        Ok(Err(e)) => {
            if let Some(class) = cpu_refusal(&e) {
                if cuda {
                    check_cuda(&c, &expected, p)?;
                }
                return Ok(Outcome::Refused(class));
            }
            return fail(format!("building CPU kernels: {e}"));
        }
        Err(pn) => return fail(format!("building CPU kernels panicked: {}", panic_text(pn))),
    };
    let variants = kernels.variants().to_vec();
    for v in &variants {
        let id = v.id();
        let got = match catch_unwind(AssertUnwindSafe(|| kernels.run(&c, v))) {
            Ok(r) => r,
            Err(pn) => return fail(format!("variant {id} panicked: {}", panic_text(pn))),
        };
        match (&expected, got, &reference) {
            (Some(exp), Ok(out), _) => {
                if let Err(m) = exp.check(&Flat::of_output(&out)) {
                    return fail(format!(
                        "variant {id}: {m}\n  got:       {out:?}\n  want:      {:?}",
                        reference.as_ref().ok()
                    ));
                }
            }
            (Some(_), Err(e), _) => {
                return fail(format!(
                    "variant {id} failed where the interpreter succeeded: {e}"
                ));
            }
            (None, Ok(_), Err(CodegenError::Eval { op, message, .. })) if partial(p) => {
                return Ok(Outcome::Unchecked(format!(
                    "a variant returned a result where `{op}` failed in the interpreter: {}",
                    without_numbers(message)
                )));
            }
            (None, Ok(out), Err(why)) => {
                return fail(format!(
                    "variant {id} returned {out:?} where the interpreter failed: {why}"
                ));
            }
            (None, Err(_), _) => {}
            (None, Ok(_), Ok(_)) => unreachable!(),
        }
    }
    if cuda {
        check_cuda(&c, &expected, p)?;
    }
    Ok(Outcome::Agreed {
        variants: variants.len(),
        rejected: reference.is_err(),
    })
}

/// The interpreter's result with the oracle's tolerance. The bound comes from the interpreter's
/// run on the inputs' absolute values; where that run fails (an index computed from a negative
/// value becomes valid or invalid), the result's own magnitudes bound it instead.
fn expected(c: &Computation, want: &Value) -> Expected {
    Expected::interpret(c.ir(), c.buffers()).unwrap_or_else(|_| {
        let flat = Flat::of_value(want);
        Expected::new(
            flat.clone(),
            &flat,
            surge_codegen::oracle::terms(c.buffers()),
            "interpreter",
        )
    })
}

/// Whether an error the interpreter finds may go unchecked by a backend that computes only the
/// elements the result reads (see `Outcome::Unchecked`; `SURGE_RANDOM_STRICT=1` says never).
fn partial(p: &Program) -> bool {
    std::env::var_os("SURGE_RANDOM_STRICT").is_none() && reads_partially(&p.root)
}

/// Emits the CUDA program of every variant, compiles it with NVRTC (when it can be loaded) and
/// runs every variant in the CUDA emulator against the interpreter (`expected`: its result, or
/// `None` where it failed, so every variant must fail too, unless `partial`).
fn check_cuda(c: &Computation, expected: &Option<Expected>, p: &Program) -> Result<(), Failure> {
    let partial = partial(p);
    use surge_codegen::emit::cuda;
    use surge_codegen::target::Platform;
    let platform = Platform::from_names("cuda", Some("h200")).expect("a built-in device");
    let emitted = catch_unwind(AssertUnwindSafe(|| -> Result<_, CodegenError> {
        let analysis = c.analyze().map_err(|e| match e {
            SurgeError::Codegen(e) => e,
            e => panic!("internal: analysis failed with {e}"),
        })?;
        let set = match c.variants(&platform) {
            Ok(s) => s,
            Err(SurgeError::Codegen(e)) => return Err(e),
            Err(e) => panic!("internal: variants failed with {e}"),
        };
        cuda::emit(c.ir(), &analysis, set.phases())
    }));
    let program = match emitted {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            let mut st = STATS.lock().unwrap_or_else(|e| e.into_inner());
            return match refusal_class(&e) {
                Some(class) => {
                    if st.failures == 0 {
                        *st.cuda_refusals.entry(class.clone()).or_default() += 1;
                        example(&mut st, &class, p);
                    }
                    Ok(())
                }
                None => Err(Failure(format!("emitting CUDA: {e}"))),
            };
        }
        Err(pn) => {
            return Err(Failure(format!(
                "emitting CUDA panicked: {}",
                panic_text(pn)
            )));
        }
    };
    if !nvrtc() {
        let mut st = STATS.lock().unwrap_or_else(|e| e.into_inner());
        st.cuda_skipped += (st.failures == 0) as usize;
    } else if let Err(e) = surge_cuda::compile_source(&program.source, surge_cuda::DEFAULT_ARCH) {
        return Err(Failure(format!("NVRTC rejected the emitted CUDA: {e}")));
    } else {
        let mut st = STATS.lock().unwrap_or_else(|e| e.into_inner());
        st.cuda_compiled += (st.failures == 0) as usize;
    }
    emulate(c, expected, partial)
}

/// The GPU that `SURGE_RANDOM_GPU=1` asks for (opened once); that setting without a GPU fails
/// every program, saying why, rather than passing in the emulator.
fn gpu() -> Result<surge_cuda::Device, Failure> {
    static GPU: std::sync::OnceLock<Result<surge_cuda::Device, String>> =
        std::sync::OnceLock::new();
    GPU.get_or_init(|| surge_cuda::Device::open(0).map_err(|e| e.to_string()))
        .clone()
        .map_err(|e| Failure(format!("SURGE_RANDOM_GPU=1 but no GPU: {e}")))
}

/// Every CUDA variant of `c` in the emulator, or on the GPU with `SURGE_RANDOM_GPU=1` (each
/// phase's variants, the others at their first), checked like the CPU's.
fn emulate(c: &Computation, expected: &Option<Expected>, partial: bool) -> Result<(), Failure> {
    if std::env::var("SURGE_RANDOM_GPU").is_ok_and(|v| v == "1") {
        run_cuda(&gpu()?, "GPU", c, expected, partial)?;
        let mut st = STATS.lock().unwrap_or_else(|e| e.into_inner());
        st.cuda_on_gpu += (st.failures == 0) as usize;
    } else {
        run_cuda(
            &surge_cuda::Emulator::default(),
            "emulated",
            c,
            expected,
            partial,
        )?;
        let mut st = STATS.lock().unwrap_or_else(|e| e.into_inner());
        st.cuda_emulated += (st.failures == 0) as usize;
    }
    Ok(())
}

/// Every CUDA variant of `c` on `rt` (`on`: "emulated" or "GPU", for the messages).
fn run_cuda<R: surge_cuda::Runtime>(
    rt: &R,
    on: &str,
    c: &Computation,
    expected: &Option<Expected>,
    partial: bool,
) -> Result<(), Failure> {
    use surge_codegen::target::Platform;
    let set = c
        .variants(&Platform::Cuda(rt.info().clone()))
        .map_err(|e| Failure(format!("CUDA variants: {e}")))?;
    let run = || surge_cuda::run_each(rt, c.ir(), c.buffers(), set.phases());
    let results = match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(Failure(format!("building the {on} CUDA variants: {e}"))),
        Err(pn) => {
            return Err(Failure(format!(
                "the {on} CUDA run panicked: {}",
                panic_text(pn)
            )));
        }
    };
    for (p, v, got) in results {
        let id = format!("phase {p}: {v}");
        match (expected, got) {
            (Some(exp), Ok(out)) => exp
                .check(&Flat::of_output(&out))
                .map_err(|m| Failure(format!("{on} CUDA variant {id}: {m}")))?,
            (Some(_), Err(e)) => {
                return Err(Failure(format!(
                    "{on} CUDA variant {id} failed where the interpreter succeeded: {e}"
                )));
            }
            (None, Ok(out)) if !partial => {
                return Err(Failure(format!(
                    "{on} CUDA variant {id} returned {out:?} where the interpreter failed"
                )));
            }
            (None, _) => {}
        }
    }
    Ok(())
}
