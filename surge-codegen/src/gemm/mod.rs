//! Dense GEMM (`C = A·B`, f64, row-major) as a family of generated CPU variants: a BLIS-style
//! blocked algorithm (packed panels, an MR×NR register-blocked micro-kernel, KC/MC/NC cache
//! blocking, threads over the MC or the NR-panel loop) whose parameters come from a BEAST space
//! constrained by the machine (`space.rs`, `machine.rs`). `emit.rs` prints the micro-kernels,
//! macro-kernels and packing routines of a set of variants as one Rust library;
//! `surge_cpu::gemm` compiles, loads and drives it. See `README.md`. [`cuda`] is the CUDA
//! DGEMM of the one-sided-factorizations paper (its own README).

pub mod cuda;
mod emit;
mod machine;
mod space;
#[cfg(test)]
mod tests;
mod variant;

pub use emit::{emit, kernel_symbol};

pub use machine::{Machine, SHIPPED as SHIPPED_MACHINE};
pub use space::{space_toml, variants};
pub use variant::{from_variant, is_gemm, to_variant};

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which loop of the blocked algorithm the threads split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Parallel {
    /// The MC loop over blocks of rows of A and C: each thread packs its own A block.
    Ic,
    /// The NR-panel loop inside the macro-kernel: threads share one packed A block.
    Jr,
}

/// One GEMM variant: the code-shaping parameters (`mr`, `nr`, `ku`, `simd_bits`: one compiled
/// kernel each) and the host's blocking and threading (`kc`, `mc`, `nc`, `parallel`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GemmVariant {
    pub mr: usize,
    pub nr: usize,
    /// Unrolling of the micro-kernel's k loop.
    pub ku: usize,
    pub kc: usize,
    pub mc: usize,
    pub nc: usize,
    pub parallel: Parallel,
    /// 512 (AVX-512F), 256 (AVX2 + FMA) or 64 (scalar).
    pub simd_bits: usize,
}

/// The code-shaping part of a variant: variants with equal kernels share compiled code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Kernel {
    pub mr: usize,
    pub nr: usize,
    pub ku: usize,
    pub simd_bits: usize,
}

impl GemmVariant {
    pub fn kernel(&self) -> Kernel {
        Kernel {
            mr: self.mr,
            nr: self.nr,
            ku: self.ku,
            simd_bits: self.simd_bits,
        }
    }

    /// `gemm:k6x8u4.kc256.mc96.nc4096.ic` (the SIMD width is the machine's, not part of the id).
    pub fn id(&self) -> String {
        let k = self.kernel();
        format!(
            "gemm:{}.kc{}.mc{}.nc{}.{}",
            k.name(),
            self.kc,
            self.mc,
            self.nc,
            match self.parallel {
                Parallel::Ic => "ic",
                Parallel::Jr => "jr",
            }
        )
    }

    /// The variant an id names (with the machine's SIMD width).
    pub fn parse(id: &str, simd_bits: usize) -> Option<GemmVariant> {
        let rest = id.strip_prefix("gemm:k")?;
        let mut parts = rest.split('.');
        let (mr, rest) = parts.next()?.split_once('x')?;
        let (nr, ku) = rest.split_once('u')?;
        let num = |p: Option<&str>, pre: &str| p?.strip_prefix(pre)?.parse::<usize>().ok();
        let kc = num(parts.next(), "kc")?;
        let mc = num(parts.next(), "mc")?;
        let nc = num(parts.next(), "nc")?;
        let parallel = match parts.next()? {
            "ic" => Parallel::Ic,
            "jr" => Parallel::Jr,
            _ => return None,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(GemmVariant {
            mr: mr.parse().ok()?,
            nr: nr.parse().ok()?,
            ku: ku.parse().ok()?,
            kc,
            mc,
            nc,
            parallel,
            simd_bits,
        })
    }
}

impl Kernel {
    /// `k6x8u4`.
    pub fn name(&self) -> String {
        format!("k{}x{}u{}", self.mr, self.nr, self.ku)
    }
    pub fn lanes(&self) -> usize {
        (self.simd_bits / 64).max(1)
    }
}

impl fmt::Display for GemmVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

/// The variant a careful programmer writes first: the tile with the most accumulators (ties:
/// the wider NR), k unrolled, KC = 256 where allowed, the largest MC, the widest NC, threads
/// over the MC loop. `None` for an empty list.
pub fn default_variant(variants: &[GemmVariant]) -> Option<&GemmVariant> {
    variants.iter().max_by_key(|v| {
        (
            v.mr * v.nr,
            v.nr,
            v.ku,
            v.parallel == Parallel::Ic,
            v.kc == 256,
            v.kc,
            v.mc,
            v.nc,
        )
    })
}
