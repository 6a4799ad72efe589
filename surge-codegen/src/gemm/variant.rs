//! GEMM variants as the `Variant`s of a computation with a dense contraction (see
//! `analysis/contraction.rs`): the phase's schedule with the parameters `gemm` (the kernel,
//! `k6x8u4`), `kc`, `mc`, `nc` and `gpar` (`ic` or `jr`), so they are listed, tuned, stored and
//! parsed like every other variant.

use super::{GemmVariant, Parallel};
use crate::policy::PValue;
use crate::schedule::Schedule;
use crate::target::Platform;
use crate::variant::Variant;

/// The computation variant of `g` on `platform` with the phase's `schedule`.
pub fn to_variant(g: &GemmVariant, platform: &Platform, schedule: &Schedule) -> Variant {
    let k = g.kernel().name();
    Variant {
        platform: platform.clone(),
        schedule: schedule.clone(),
        params: vec![
            ("gemm".into(), PValue::Str(k)),
            ("kc".into(), PValue::Int(g.kc as i64)),
            ("mc".into(), PValue::Int(g.mc as i64)),
            ("nc".into(), PValue::Int(g.nc as i64)),
            (
                "gpar".into(),
                PValue::Str(match g.parallel {
                    Parallel::Ic => "ic".into(),
                    Parallel::Jr => "jr".into(),
                }),
            ),
        ],
    }
}

/// Whether `v` is a GEMM variant.
pub fn is_gemm(v: &Variant) -> bool {
    v.get("gemm").is_some()
}

/// The GEMM variant `v` names (on a machine of `simd_bits`), or `None` if `v` is not one or
/// is malformed.
pub fn from_variant(v: &Variant, simd_bits: usize) -> Option<GemmVariant> {
    let PValue::Str(k) = v.get("gemm")? else {
        return None;
    };
    let int = |n: &str| match v.get(n)? {
        PValue::Int(i) if *i > 0 => Some(*i as usize),
        _ => None,
    };
    let par = match v.get("gpar")? {
        PValue::Str(s) => s.as_str(),
        PValue::Int(_) => return None,
    };
    let id = format!(
        "gemm:{k}.kc{}.mc{}.nc{}.{par}",
        int("kc")?,
        int("mc")?,
        int("nc")?
    );
    GemmVariant::parse(&id, simd_bits)
}
