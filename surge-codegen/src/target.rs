//! Targets: the platform a variant is generated for, and the hardware descriptions its value
//! ranges and constraints come from.

use crate::CodegenError;
use serde::Serialize;
use std::fmt;

/// A CUDA device description (what the policy ranges and constraints read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CudaDevice {
    /// Short lower-case name used in variant ids, e.g. `h200`.
    pub name: String,
    pub compute_capability: (u32, u32),
    pub max_threads_per_block: u32,
    pub warp_size: u32,
    /// Shared memory per SM, bytes.
    pub shared_memory_per_sm: u32,
    pub registers_per_sm: u32,
    pub sm_count: u32,
}

/// Built-in device descriptions (vendor data sheets / CUDA programming guide tables).
/// (name, compute capability, shared memory per SM in KiB, registers per SM, SMs).
type Builtin = (&'static str, (u32, u32), u32, u32, u32);

const BUILTIN: [Builtin; 6] = [
    // name, cc, shared memory per SM (KiB), registers per SM, SMs
    ("k20c", (3, 5), 48, 65536, 13),
    ("k40c", (3, 5), 48, 65536, 15),
    ("v100", (7, 0), 96, 65536, 80),
    ("a100", (8, 0), 164, 65536, 108),
    ("h100", (9, 0), 228, 65536, 132),
    ("h200", (9, 0), 228, 65536, 132),
];

impl CudaDevice {
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|b| b.0).collect()
    }
    /// A built-in description by (case-insensitive) name.
    pub fn builtin(name: &str) -> Result<CudaDevice, CodegenError> {
        let lower = name.to_ascii_lowercase();
        BUILTIN
            .iter()
            .find(|b| b.0 == lower)
            .map(|&(n, cc, smem_kib, regs, sms)| CudaDevice {
                name: n.to_string(),
                compute_capability: cc,
                max_threads_per_block: 1024,
                warp_size: 32,
                shared_memory_per_sm: smem_kib * 1024,
                registers_per_sm: regs,
                sm_count: sms,
            })
            .ok_or_else(|| CodegenError::Target {
                part: name.to_string(),
                message: format!(
                    "unknown CUDA device; the built-in devices are {}",
                    Self::builtin_names().join(", ")
                ),
            })
    }
}

/// A CPU description: core count and cache sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuMachine {
    pub name: String,
    pub cores: u32,
    /// Per-core L1 data and L2, and shared last-level cache sizes, bytes.
    pub l1d_bytes: u64,
    pub l2_bytes: u64,
    pub llc_bytes: u64,
}

impl CpuMachine {
    /// The machine this runs on: cores from `available_parallelism`, caches from
    /// `/sys/devices/system/cpu/cpu0/cache` when readable (fallbacks 32 KiB / 1 MiB / 8 MiB).
    pub fn detect() -> CpuMachine {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let (mut l1d, mut l2, mut llc) = (32 << 10, 1 << 20, 8 << 20);
        for i in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
            let (Some(level), Some(size)) = (read("level"), read("size")) else {
                continue;
            };
            let kind = read("type").unwrap_or_default();
            let Some(bytes) = parse_size(size.trim()) else {
                continue;
            };
            match level.trim() {
                "1" if kind.trim() != "Instruction" => l1d = bytes,
                "2" => l2 = bytes,
                "3" => llc = bytes,
                _ => {}
            }
        }
        CpuMachine {
            name: "host".into(),
            cores,
            l1d_bytes: l1d,
            l2_bytes: l2,
            llc_bytes: llc,
        }
    }
    /// The dissertation's CPU: dual-socket 32-core Xeon E5-2698 v3 (Haswell), for reproducible
    /// counts.
    pub fn haswell32() -> CpuMachine {
        CpuMachine {
            name: "haswell32".into(),
            cores: 32,
            l1d_bytes: 32 << 10,
            l2_bytes: 256 << 10,
            llc_bytes: 40 << 20,
        }
    }
    /// `host` (detected) or `haswell32`.
    pub fn named(name: &str) -> Result<CpuMachine, CodegenError> {
        match name.to_ascii_lowercase().as_str() {
            "host" => Ok(CpuMachine::detect()),
            "haswell32" => Ok(CpuMachine::haswell32()),
            _ => Err(CodegenError::Target {
                part: name.to_string(),
                message: "unknown CPU machine; known: host, haswell32".into(),
            }),
        }
    }
}

fn parse_size(s: &str) -> Option<u64> {
    let (num, mul) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

/// The platform a variant targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Platform {
    Cpu(CpuMachine),
    Cuda(CudaDevice),
}

impl Platform {
    /// `cpu` or `cuda`.
    pub fn kind(&self) -> &'static str {
        match self {
            Platform::Cpu(_) => "cpu",
            Platform::Cuda(_) => "cuda",
        }
    }
    /// Parses a platform kind and optional device/machine name (`cuda` defaults to `h200`,
    /// `cpu` to the detected host).
    pub fn from_names(kind: &str, device: Option<&str>) -> Result<Platform, CodegenError> {
        match kind {
            "cuda" => Ok(Platform::Cuda(CudaDevice::builtin(
                device.unwrap_or("h200"),
            )?)),
            "cpu" => Ok(Platform::Cpu(CpuMachine::named(device.unwrap_or("host"))?)),
            _ => Err(CodegenError::Target {
                part: kind.to_string(),
                message: "unknown platform (expected cpu or cuda)".into(),
            }),
        }
    }
}

/// `cpu:haswell32`, `cpu:host`, `cuda:h200`: the platform part of a variant id.
impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Platform::Cpu(m) => write!(f, "cpu:{}", m.name),
            Platform::Cuda(d) => write!(f, "cuda:{}", d.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn builtins() {
        let h = CudaDevice::builtin("H200").unwrap();
        assert_eq!(h.compute_capability, (9, 0));
        assert_eq!(h.sm_count, 132);
        assert_eq!(h.shared_memory_per_sm, 228 * 1024);
        assert_eq!(CudaDevice::builtin("k20c").unwrap().sm_count, 13);
        let e = CudaDevice::builtin("p100").unwrap_err().to_string();
        assert!(e.contains("p100"), "{e}");
        assert!(CpuMachine::detect().cores >= 1);
        assert_eq!(parse_size("36608K"), Some(36608 << 10));
    }
}
