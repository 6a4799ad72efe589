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

    /// This machine's CPU with `cores` of its cores: an MPI rank's share of its node (ranks that
    /// mpirun did not bind each see every core, `surge::mpi::world::World::threads_per_rank`).
    /// The variants use at most that many threads; the platform names that many.
    pub fn with_cores(cores: usize) -> CpuBackend {
        let mut b = CpuBackend::new();
        b.machine.cores = u32::try_from(cores.max(1)).unwrap_or(u32::MAX);
        b
    }

    /// The compiled variants for the input's program (built on first use).
    fn kernels(&self, input: &TuneInput) -> std::result::Result<Arc<Kernels>, String> {
        let key = input.computation.ir().structure_hash();
        let mut map = self
            .kernels
            .lock()
            .map_err(|_| "the kernel cache lock is poisoned".to_string())?;
        map.entry(key)
            .or_insert_with(|| {
                Kernels::build(&input.computation, &Target::Cpu(self.machine.clone()))
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
            k.run_in(&input.computation, v, &mut ws)
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
                let a = crate::vendor::mkl_csr(m, 100).map_err(|e| e.to_string())?;
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

    /// Linux: CPU time others took from this process: the hypervisor's steal (`/proc/stat`)
    /// plus the busy time of every other process (the machine's busy time in `/proc/stat` less
    /// this process's own and its waited-for children's, e.g. rustc, from `/proc/self/stat`).
    /// A build or another benchmark on the same cores disturbs a measurement as steal does.
    /// A process bound to some of the CPUs (an MPI rank bound to a core) counts only theirs
    /// (`super::affinity`).
    fn stolen(&self) -> Option<(Duration, usize)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let (mut steal, mut busy, mut cpus) = proc_stat_times(&stat)?;
        let allowed = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| super::affinity::allowed_cpus(&s));
        if let Some(mine) = allowed.filter(|c| c.len() < cpus)
            && let Some((s, b)) = super::affinity::cpus_ticks(&stat, &mine)
        {
            (steal, busy, cpus) = (ticks(s), ticks(b), mine.len());
        }
        let own = proc_self_cpu(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        Some((steal + busy.saturating_sub(own), cpus))
    }

    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        let k = self.kernels(input).map_err(crate::SurgeError::Tune)?;
        Ok(k.default_variant().id())
    }
}

/// `/proc/stat` and `/proc/[pid]/stat` count in USER_HZ ticks, 100 per second on every Linux
/// architecture Surge builds for.
const USER_HZ: u64 = 100;

fn ticks(t: u64) -> Duration {
    Duration::from_millis(t * 1000 / USER_HZ)
}

/// The machine's steal time, busy time (user, nice, system, irq, softirq; guest time is part of
/// user) and CPU count from the text of `/proc/stat`.
fn proc_stat_times(stat: &str) -> Option<(Duration, Duration, usize)> {
    let mut lines = stat.lines();
    let (steal, busy) = super::affinity::line_ticks(lines.next()?.strip_prefix("cpu ")?)?;
    let cpus = lines
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    (cpus > 0).then(|| (ticks(steal), ticks(busy), cpus))
}

/// This process's user and system time plus its waited-for children's, from the text of
/// `/proc/self/stat` (fields 14-17; the command name before them may hold spaces and parens).
fn proc_self_cpu(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // Field 3 (the state) is the first after the name.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let sum = f
        .get(11..15)?
        .iter()
        .map(|x| x.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(ticks(sum))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MPI rank's share of the node: the platform names its thread count, and every variant
    /// runs at most that many threads (what `mpirun surge tune` times and `--tuned` opens).
    #[test]
    fn a_backend_with_one_core_names_it_and_runs_one_thread() {
        let b = CpuBackend::with_cores(1);
        assert!(b.platform().ends_with(" (1 threads)"), "{}", b.platform());
        let m = crate::apps::matgen::laplacian_2d(4);
        let input = TuneInput::spmv("grid", m).unwrap();
        let variants = b.variants(&input).unwrap();
        assert!(!variants.is_empty());
        assert!(
            variants.iter().all(|v| !v.contains("threads=2")),
            "{variants:?}"
        );
        assert_eq!(
            CpuBackend::with_cores(0).machine.cores,
            1,
            "at least one core"
        );
    }

    #[test]
    fn steal_and_busy_time_are_read_from_proc_stat() {
        let stat = "cpu  4871828 210942 312031 1901913 20587 0 3755 89140 0 0\n\
                    cpu0 2381565 100888 147870 1021001 6537 0 1560 45206 0 0\n\
                    cpu1 2490262 110054 164160 880911 14050 0 2195 43934 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(
            proc_stat_times(stat),
            Some((
                Duration::from_millis(891_400),
                Duration::from_millis((4_871_828 + 210_942 + 312_031 + 3_755) * 10),
                2
            ))
        );
        assert_eq!(proc_stat_times("cpu 1 2 3\n"), None);
        assert_eq!(proc_stat_times("cpu 1 2 3 4 5 6 x 8\ncpu0 1\n"), None);
        assert_eq!(proc_stat_times(""), None);
        // This machine's, where there is one.
        if let Ok(s) = std::fs::read_to_string("/proc/stat") {
            assert!(proc_stat_times(&s).is_some());
        }
    }

    #[test]
    fn own_cpu_time_is_read_from_proc_self_stat() {
        // A command name with a space and a paren; utime 250, stime 50, cutime 100, cstime 0.
        let stat = "4242 (surge (x) y) R 1 4242 4242 0 -1 4194304 1000 0 0 0 \
                    250 50 100 0 20 0 3 0 12345 1000000 500";
        assert_eq!(proc_self_cpu(stat), Some(Duration::from_millis(4000)));
        assert_eq!(proc_self_cpu("4242 (surge) R 1 2"), None);
        assert_eq!(proc_self_cpu("no parens"), None);
        if let Ok(s) = std::fs::read_to_string("/proc/self/stat") {
            assert!(proc_self_cpu(&s).is_some());
        }
    }

    /// Our own busy thread for 300 ms, then a busy child process for 300 ms: the time taken
    /// from us in each window (seconds).
    fn own_and_child_windows(b: &CpuBackend) -> (f64, f64) {
        let (t0, _) = b
            .stolen()
            .expect("/proc/stat is readable (Linux is the test platform)");
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(300) {
            std::hint::black_box(0u64.wrapping_add(1));
        }
        let (t1, _) = b.stolen().unwrap();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("sh");
        let (t2, _) = b.stolen().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let (t3, _) = b.stolen().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        (
            t1.saturating_sub(t0).as_secs_f64(),
            t3.saturating_sub(t2).as_secs_f64(),
        )
    }

    /// Another process busy on this machine's cores is counted as taken from us; our own
    /// threads are not. Other processes busy during the own window count there too (a build
    /// beside the test once gave 0.29 s against the child's 0.36), so up to three tries.
    #[test]
    fn other_processes_busy_time_counts_as_taken() {
        let b = CpuBackend::new();
        let mut tries = Vec::new();
        for _ in 0..3 {
            let (own, child) = own_and_child_windows(&b);
            eprintln!("own 300 ms -> {own:.3} s taken, child -> {child:.3} s");
            // Tick accounting (10 ms) and the machine's other processes leave some slack.
            if child > own + 0.1 {
                return;
            }
            tries.push((own, child));
        }
        panic!("a busy child was not counted as taken in three tries (own, child): {tries:?}");
    }
}
