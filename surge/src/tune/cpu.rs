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
        format!("cpu:{}", self.machine.name)
    }

    fn variants(&self, input: &TuneInput) -> Result<Vec<String>> {
        let k = self.kernels(input).map_err(crate::SurgeError::Tune)?;
        Ok(k.variants().iter().map(|v| v.id()).collect())
    }

    fn run_once(&self, input: &TuneInput, variant: &str) -> std::result::Result<Duration, String> {
        let k = self.kernels(input)?;
        let v = k.variant(variant).map_err(|e| e.to_string())?;
        let t = Instant::now();
        let out = k
            .run(&input.built.computation, v)
            .map_err(|e| format!("`{variant}` on `{}`: {e}", input.name))?;
        let d = t.elapsed();
        drop(std::hint::black_box(out));
        Ok(d)
    }

    fn default_variant(&self, input: &TuneInput) -> Result<String> {
        let k = self.kernels(input).map_err(crate::SurgeError::Tune)?;
        Ok(k.default_variant().id())
    }
}
