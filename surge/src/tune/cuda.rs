//! The CUDA tuning backend: the computation's CUDA variants compiled with NVRTC (all cores) and
//! loaded once per IR structure, each input uploaded once, launches timed with CUDA events, as
//! `surge bench --platform cuda` times them.
//!
//! The tuner's variant ids are the final phase's CUDA variants, with earlier phases (scan's
//! tile reductions) at their default, which is what [`crate::execute_variant`] runs for one id;
//! spmv and reduce have one phase. Every variant's result is checked once per input against the
//! reference result (the interpreter, or for large inputs the CPU backend's default variant)
//! before it is timed: a wrong or failing variant becomes a recorded failure, never a time.
//!
//! Without a GPU, [`CudaBackend::open`] is an `Err` that says why, and nothing else runs.
//! [`CudaBackend::emulated`] is the same backend on the CUDA emulator: every variant checked the
//! same way, timed in host time, and keyed `cuda-emu:` so its models are never taken for a GPU's.

use super::{TuneInput, TuningBackend};
use crate::Result;
use crate::check::Expected;
use crate::execute::cuda_variant_lists as variant_lists;
use crate::vendor::csr_i32;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use surge_codegen::variant::Variant;
use surge_cuda::{Device, DeviceKernels, Emulator, Prepared, Runtime};

/// The compiled variants of one program (IR structure). Leaked on purpose, once per program
/// and process (an app has one or two): an input's [`Prepared`] borrows them for as long as the
/// backend measures that input.
#[derive(Debug)]
struct Program<R: Runtime> {
    lists: Vec<Vec<Variant>>,
    ids: Vec<String>,
    kernels: DeviceKernels<R>,
}

impl<R: Runtime> Program<R> {
    /// The variants of every phase for final-phase variant `i` (earlier phases at default).
    fn chosen(&self, i: usize) -> Vec<&Variant> {
        let last = self.lists.len() - 1;
        self.lists
            .iter()
            .enumerate()
            .map(|(p, l)| if p == last { &l[i] } else { &l[0] })
            .collect()
    }
}

/// The input on the device now, and what its variants' checks found.
#[derive(Debug)]
struct Current<R: Runtime + 'static> {
    input: String,
    key: u128,
    prepared: Prepared<'static, R>,
    expected: Option<Expected>,
    /// Per final-phase variant index: `Ok` once its result matched, or why it failed.
    checked: HashMap<usize, std::result::Result<(), String>>,
}

/// A program's compiled variants, or why they failed to build.
type Built<R> = std::result::Result<&'static Program<R>, String>;

#[derive(Debug)]
pub struct CudaBackend<R: Runtime + 'static = Device> {
    dev: R,
    programs: Mutex<HashMap<u128, Built<R>>>,
    current: Mutex<Option<Current<R>>>,
}

/// Launches timed per reference measurement (cuSPARSE), after its warm-up.
const REFERENCE_RUNS: usize = 10;

impl CudaBackend {
    /// GPU `ordinal`; no driver, no GPU or no NVRTC is an error that says which.
    pub fn open(ordinal: usize) -> Result<CudaBackend> {
        surge_cuda::nvrtc_available()?;
        Ok(CudaBackend::on(Device::open(ordinal)?))
    }
}

impl CudaBackend<Emulator> {
    /// The CUDA emulator, describing the default device (its timings are host time).
    pub fn emulated() -> Result<CudaBackend<Emulator>> {
        surge_cuda::emu::compile::available()?;
        Ok(CudaBackend::on(Emulator::default()))
    }
}

impl<R: Runtime + 'static> CudaBackend<R> {
    /// The backend on runtime `dev`.
    pub fn on(dev: R) -> CudaBackend<R> {
        CudaBackend {
            dev,
            programs: Mutex::new(HashMap::new()),
            current: Mutex::new(None),
        }
    }

    /// The compiled variants of the input's program (built on first use; a build failure is
    /// kept and returned again), with its key: the IR structure hash, which `with_input` reuses.
    fn program(
        &self,
        input: &TuneInput,
    ) -> std::result::Result<(u128, &'static Program<R>), String> {
        let c = &input.computation;
        let key = c.ir().structure_hash();
        let mut map = self
            .programs
            .lock()
            .map_err(|_| "the CUDA program cache lock is poisoned".to_string())?;
        map.entry(key)
            .or_insert_with(|| {
                let build = || -> Result<Program<R>> {
                    let lists = variant_lists(self.dev.info(), c)?;
                    let kernels = DeviceKernels::build(&self.dev, c.ir(), &lists)?;
                    let ids = final_phase_ids(&lists);
                    Ok(Program {
                        lists,
                        ids,
                        kernels,
                    })
                };
                build().map(|p| &*Box::leak(Box::new(p))).map_err(|e| {
                    format!("building the CUDA variants (input `{}`): {e}", input.name)
                })
            })
            .clone()
            .map(|p| (key, p))
    }

    /// Runs `f` with `input` on the device (uploaded when another input was there).
    fn with_input<T>(
        &self,
        input: &TuneInput,
        (key, program): (u128, &'static Program<R>),
        f: impl FnOnce(&mut Current<R>) -> std::result::Result<T, String>,
    ) -> std::result::Result<T, String> {
        let c = &input.computation;
        let mut slot = self
            .current
            .lock()
            .map_err(|_| "the device input lock is poisoned".to_string())?;
        if slot
            .as_ref()
            .is_none_or(|cur| cur.input != input.name || cur.key != key)
        {
            // Free the previous input's device memory before uploading this one.
            *slot = None;
            let prepared = program
                .kernels
                .prepare_for(c.ir(), c.buffers(), &program.chosen(0))
                .map_err(|e| format!("uploading `{}`: {e}", input.name))?;
            *slot = Some(Current {
                input: input.name.clone(),
                key,
                prepared,
                expected: None,
                checked: HashMap::new(),
            });
        }
        f(slot.as_mut().expect("set above"))
    }
}

/// The tuner's variant ids: the final phase's.
fn final_phase_ids(lists: &[Vec<Variant>]) -> Vec<String> {
    lists
        .last()
        .map_or(Vec::new(), |l| l.iter().map(Variant::id).collect())
}

impl<R: Runtime + 'static> TuningBackend for CudaBackend<R> {
    fn platform(&self) -> String {
        let kind = if self.dev.gpu().is_some() {
            "cuda"
        } else {
            "cuda-emu"
        };
        format!("{kind}:{}", self.dev.info().name)
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        let (_, p) = self.program(input).map_err(crate::SurgeError::Tune)?;
        Ok(p.ids.clone())
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        self.run_batch(input, variant, 1)
    }

    /// `runs` launches between CUDA events (kernels only: the input stays on the device),
    /// after the variant's result on this input was checked once.
    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        let keyed @ (_, program) = self.program(input)?;
        let i = program
            .ids
            .iter()
            .position(|v| v == variant)
            .ok_or_else(|| format!("unknown CUDA variant `{variant}`"))?;
        let chosen = program.chosen(i);
        self.with_input(input, keyed, |cur| {
            if !cur.checked.contains_key(&i) {
                if cur.expected.is_none() {
                    cur.expected =
                        Some(Expected::of(&input.computation).map_err(|e| {
                            format!("the reference result of `{}`: {e}", input.name)
                        })?);
                }
                let expected = cur.expected.as_ref().expect("set above");
                let verdict = cur
                    .prepared
                    .run(&chosen)
                    .and_then(|()| cur.prepared.output())
                    .map_err(|e| e.to_string())
                    .and_then(|o| expected.check(&o).map_err(|e| format!("wrong result: {e}")));
                cur.checked.insert(i, verdict);
            }
            cur.checked[&i].clone()?;
            let t = cur
                .prepared
                .time(&chosen, 0, runs.max(1) as usize)
                .map_err(|e| e.to_string())?;
            Ok(Duration::from_secs_f64(t.total_ms * 1e-3))
        })
    }

    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        let (_, p) = self.program(input).map_err(crate::SurgeError::Tune)?;
        Ok(p.ids[0].clone())
    }

    /// cuSPARSE's `cusparseSpMV` (CSR) on spmv inputs: the mean time per call over
    /// [`REFERENCE_RUNS`] calls after a warm-up. None in the emulator (nothing to compare).
    fn reference(&self, input: &TuneInput) -> Option<std::result::Result<Duration, String>> {
        let m = input.matrix.as_ref()?;
        let gpu = self.dev.gpu()?;
        let run = || -> std::result::Result<Duration, String> {
            let (off, col) = csr_i32(m).map_err(|e| e.to_string())?;
            let a = surge_cuda::baselines::Csr {
                rows: m.rows,
                cols: m.cols,
                row_offsets: &off,
                col_indices: &col,
                values: &m.values,
            };
            let x = vec![1.0; m.cols];
            let (_, ms) = surge_cuda::baselines::cusparse_spmv(gpu, &a, &x, REFERENCE_RUNS)
                .map_err(|e| e.to_string())?;
            Ok(Duration::from_secs_f64(ms * 1e-3))
        };
        Some(run())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::{App, matgen};
    use surge_codegen::target::CudaDevice;

    /// The tuner needs one variant set per app whatever the input (the store is keyed by its
    /// checksum); the CUDA variants come from codegen alone, so this holds without a GPU.
    #[test]
    fn every_input_of_an_app_has_the_same_cuda_variant_ids() {
        let dev = CudaDevice::builtin("h200").unwrap();
        let ids = |i: &TuneInput| final_phase_ids(&variant_lists(&dev, &i.computation).unwrap());
        let spmv = [
            TuneInput::spmv("lap", matgen::laplacian_2d(20)).unwrap(),
            TuneInput::spmv("rand", matgen::random(300, 200, 7, 1)).unwrap(),
        ];
        let reduce = [100, 4096 * 3, 4096 * 3 + 1, 1_000_000]
            .map(|n| TuneInput::sized(App::Reduce, n).unwrap());
        let scan = [100, 4096 * 3, 4096 * 3 + 1, 1_000_000]
            .map(|n| TuneInput::sized(App::Scan, n).unwrap());
        for set in [&spmv[..], &reduce[..], &scan[..]] {
            let first = ids(&set[0]);
            assert!(first.len() > 1, "{}: {first:?}", set[0].name);
            assert!(
                first.iter().all(|v| v.starts_with("cuda:h200/")),
                "{first:?}"
            );
            for i in &set[1..] {
                assert_eq!(ids(i), first, "{} vs {}", i.name, set[0].name);
            }
        }
    }
}
