//! The CPU tuning backend: the computation's variants compiled (rustc, cached on disk) by
//! [`Kernels`](crate::Kernels) and run natively. Kernels are kept per IR structure hash: inputs
//! of one app mostly share one program (other sizes, other matrices), but e.g. a tiled reduction
//! on a multiple of the tile is uniformly nested and on other sizes irregularly nested, which
//! are two programs.

use super::{TuneInput, TuningBackend};
use crate::{Kernels, Result, Target};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use surge_codegen::target::CpuMachine;

#[derive(Debug)]
pub struct CpuBackend {
    machine: CpuMachine,
    kernels: Mutex<HashMap<u128, std::result::Result<Arc<Kernels>, String>>>,
    /// Phase buffers reused across runs, so timings do not include page faults.
    workspace: Mutex<crate::Workspace>,
    /// MKL's optimized handle of the last spmv input (the reference is timed per input).
    mkl: Mutex<Option<(String, surge_cpu::baseline::mkl::MklCsr)>>,
}

impl Default for CpuBackend {
    fn default() -> Self {
        CpuBackend::new()
    }
}

impl CpuBackend {
    /// This machine's CPU.
    pub fn new() -> CpuBackend {
        CpuBackend {
            machine: CpuMachine::detect(),
            kernels: Mutex::new(HashMap::new()),
            workspace: Mutex::new(crate::Workspace::default()),
            mkl: Mutex::new(None),
        }
    }

    /// The compiled variants for the input's program (built on first use).
    fn kernels(&self, input: &TuneInput) -> std::result::Result<Arc<Kernels>, String> {
        let key = input.built.computation.ir().structure_hash();
        let mut map = self
            .kernels
            .lock()
            .map_err(|_| "the kernel cache lock is poisoned".to_string())?;
        map.entry(key)
            .or_insert_with(|| {
                Kernels::build(&input.built.computation, &Target::Cpu(self.machine.clone()))
                    .map(Arc::new)
                    .map_err(|e| format!("compiling the variants (input `{}`): {e}", input.name))
            })
            .clone()
    }
}

impl TuningBackend for CpuBackend {
    fn platform(&self) -> String {
        format!(
            "cpu:{} ({} threads)",
            surge_cpu::native::compile::cpu_model(),
            self.machine.cores
        )
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        let k = self.kernels(input).map_err(crate::SurgeError::Tune)?;
        Ok(k.variants().iter().map(|v| v.id()).collect())
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        self.run_batch(input, variant, 1)
    }

    /// One timer around the whole batch; the kernel cache and workspace are locked once.
    fn run_batch(
        &self,
        input: &TuneInput,
        variant: &str,
        runs: u32,
    ) -> std::result::Result<Duration, String> {
        let k = self.kernels(input)?;
        let v = k.variant(variant).map_err(|e| e.to_string())?;
        let mut ws = self
            .workspace
            .lock()
            .map_err(|_| "the workspace lock is poisoned".to_string())?;
        let t = Instant::now();
        for _ in 0..runs.max(1) {
            k.run_in(&input.built.computation, v, &mut ws)
                .map_err(|e| format!("`{variant}` on `{}`: {e}", input.name))?;
        }
        Ok(t.elapsed())
    }

    /// MKL's `mkl_sparse_d_mv` (after `mkl_sparse_optimize`) on spmv inputs, all threads.
    fn reference(&self, input: &TuneInput) -> Option<std::result::Result<Duration, String>> {
        use surge_cpu::baseline::mkl::Mkl;
        let m = input.matrix.as_ref()?;
        let run = || -> std::result::Result<Duration, String> {
            let mut slot = self
                .mkl
                .lock()
                .map_err(|_| "the MKL lock is poisoned".to_string())?;
            if slot.as_ref().is_none_or(|(n, _)| *n != input.name) {
                let a = crate::bench::mkl_csr(m, 100).map_err(|e| e.to_string())?;
                Mkl::get()
                    .and_then(|k| k.set_threads(self.machine.cores as usize))
                    .map_err(|e| e.to_string())?;
                *slot = Some((input.name.clone(), a));
            }
            let (_, a) = slot.as_ref().expect("set above");
            let x = vec![1.0; m.cols];
            let mut y = vec![0.0; m.rows];
            a.mv(&x, &mut y).map_err(|e| e.to_string())?; // warm-up
            let t = Instant::now();
            a.mv(&x, &mut y).map_err(|e| e.to_string())?;
            let elapsed = t.elapsed();
            // Whatever is timed next must not share the cores with spinning MKL workers.
            if let Ok(lib) = Mkl::get() {
                lib.settle();
            }
            Ok(elapsed)
        };
        Some(run())
    }

    /// Linux: the `steal` column of `/proc/stat`'s `cpu` line (USER_HZ ticks, 100 per second
    /// on every Linux architecture Surge builds for), over the `cpuN` lines' count.
    fn stolen(&self) -> Option<(Duration, usize)> {
        proc_stat_steal(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        let k = self.kernels(input).map_err(crate::SurgeError::Tune)?;
        Ok(k.default_variant().id())
    }
}

/// The machine's steal time and CPU count from the text of `/proc/stat`.
fn proc_stat_steal(stat: &str) -> Option<(Duration, usize)> {
    const USER_HZ: u64 = 100;
    let mut lines = stat.lines();
    let total = lines.next()?;
    let mut fields = total.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    // user nice system idle iowait irq softirq steal
    let steal: u64 = fields.nth(7)?.parse().ok()?;
    let cpus = lines
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    (cpus > 0).then(|| (Duration::from_millis(steal * 1000 / USER_HZ), cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_read_from_proc_stat() {
        let stat = "cpu  4871828 210942 312031 1901913 20587 0 3755 89140 0 0\n\
                    cpu0 2381565 100888 147870 1021001 6537 0 1560 45206 0 0\n\
                    cpu1 2490262 110054 164160 880911 14050 0 2195 43934 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(
            proc_stat_steal(stat),
            Some((Duration::from_millis(891_400), 2))
        );
        assert_eq!(proc_stat_steal("cpu 1 2 3\n"), None);
        assert_eq!(proc_stat_steal(""), None);
        // This machine's, where there is one.
        if let Ok(s) = std::fs::read_to_string("/proc/stat") {
            assert!(proc_stat_steal(&s).is_some());
        }
    }
}
