//! The machine quantities a GEMM variant space is constrained by: SIMD width and register count,
//! the cache sizes, the cores. Queried at run time (`Machine::query`); a TOML of the development
//! machine is shipped (`machines/amd-epyc-2c.toml`) and used where /sys has no cache sizes.

use crate::CodegenError;
use serde::{Deserialize, Serialize};

/// A machine's SIMD and cache parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub name: String,
    pub cores: usize,
    /// Width of the widest usable vector unit for f64 FMA: 512 (AVX-512F), 256 (AVX2 + FMA) or
    /// 64 (no vector FMA: scalar code).
    pub simd_bits: usize,
    pub vector_registers: usize,
    pub fma: bool,
    /// Per-core L1 data and L2 sizes, the (shared) L3 size.
    pub l1d_bytes: usize,
    pub l2_bytes: usize,
    pub l3_bytes: usize,
}

/// The shipped description of the development machine.
pub const SHIPPED: &str = include_str!("../../machines/amd-epyc-2c.toml");

impl Machine {
    /// The development machine (`machines/amd-epyc-2c.toml`).
    pub fn shipped() -> Machine {
        Machine::from_toml(SHIPPED).expect("the shipped machine file parses")
    }

    /// A machine from TOML text (the fields of [`Machine`]).
    pub fn from_toml(text: &str) -> Result<Machine, CodegenError> {
        toml::from_str(text).map_err(|e| CodegenError::Target {
            part: "machine".into(),
            message: format!("bad machine description: {e}"),
        })
    }

    /// f64 lanes per vector register (1 for scalar code).
    pub fn lanes(&self) -> usize {
        (self.simd_bits / 64).max(1)
    }

    /// This machine: SIMD from the CPU's features, caches from /sys (the shipped file's sizes
    /// where /sys does not say), cores from the OS. Read once per process.
    pub fn query() -> Machine {
        static M: std::sync::OnceLock<Machine> = std::sync::OnceLock::new();
        M.get_or_init(Machine::read).clone()
    }

    fn read() -> Machine {
        let shipped = Machine::shipped();
        let (simd_bits, vector_registers, fma) = simd();
        let cache = |level: u32, fallback: usize| cache_size(level).unwrap_or(fallback);
        Machine {
            name: "this machine".into(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            simd_bits,
            vector_registers,
            fma,
            l1d_bytes: cache(1, shipped.l1d_bytes),
            l2_bytes: cache(2, shipped.l2_bytes),
            l3_bytes: cache(3, shipped.l3_bytes),
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn simd() -> (usize, usize, bool) {
    if is_x86_feature_detected!("avx512f") {
        (512, 32, true)
    } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        (256, 16, true)
    } else {
        (64, 16, false)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn simd() -> (usize, usize, bool) {
    (64, 16, false)
}

/// The size of cpu0's data (or unified) cache of `level`, from
/// `/sys/devices/system/cpu/cpu0/cache/index*/`.
fn cache_size(level: u32) -> Option<usize> {
    cache_size_in(
        std::path::Path::new("/sys/devices/system/cpu/cpu0/cache"),
        level,
    )
}

/// [`cache_size`] under `base`. Entries that are not a readable cache description (the
/// directory's `uevent` file, listed before `index2` on the development machine) are skipped:
/// stopping at the first one made every level fall back to the shipped sizes, so the space was
/// built for a 512 KiB L2 on a machine with 1 MiB.
pub(crate) fn cache_size_in(base: &std::path::Path, level: u32) -> Option<usize> {
    for entry in std::fs::read_dir(base).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(lv), Some(ty), Some(size)) = (read("level"), read("type"), read("size")) else {
            continue;
        };
        if lv.trim().parse::<u32>().ok() == Some(level) && ty.trim() != "Instruction" {
            return parse_size(size.trim());
        }
    }
    None
}

/// `32K`, `1024K`, `32M`, or bytes.
pub(crate) fn parse_size(s: &str) -> Option<usize> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mult)
}
