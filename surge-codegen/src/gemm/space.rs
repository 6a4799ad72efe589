//! The CPU GEMM variant space as a BEAST space whose settings are the machine's (SIMD lanes,
//! vector registers, cache sizes) and whose constraints are the register and cache rules of a
//! BLIS-style GEMM (see `gemm/README.md` for why each). The shipped
//! `spaces/surge_gemm_cpu.toml` is this text for the development machine (a test keeps it
//! current); `surge beast spaces/surge_gemm_cpu.toml --count` counts it.

use super::{GemmVariant, Machine, Parallel};
use crate::CodegenError;
use surge_beast::{PlanOptions, RunOptions, Space};

/// The space's TOML for `machine`.
pub fn space_toml(machine: &Machine) -> String {
    format!(
        r#"# Surge's CPU DGEMM space (surge_codegen::gemm::space_toml; the tests check this file is
# current for machines/{name}.toml). Constraints reject a point when true.
#
# C (m x n) += A (m x k) B (k x n), row-major. The micro-kernel keeps an MR x NR tile of C in
# MR * NR / lanes vector registers, broadcasting one element of A and loading NR / lanes vectors
# of B per k; KC x NR slivers of packed B stay in L1, MC x KC blocks of packed A in L2, a
# KC x NC panel of packed B in L3.

[space]
name = "surge_gemm_cpu:{name}"

[settings]
lanes = {lanes}
vector_registers = {regs}
l1d_bytes = {l1}
l2_bytes = {l2}
l3_bytes = {l3}
cores = {cores}

[iterators]
nr = "range(lanes, 4 * lanes + 1, lanes)"
mr = "range(1, 17)"
ku = "[1, 4]"
kc = "[128, 256, 384, 512]"
mc = "[mr * 4, mr * 8, mr * 12, mr * 16, mr * 24, mr * 32]"
nc = "[(1024 // nr) * nr, (4096 // nr) * nr]"
par = "['ic', 'jr']"

[constraints.hard]
# The C tile, one row of B and the broadcast A element must fit the vector registers.
registers = "mr * (nr // lanes) + nr // lanes + 1 > vector_registers"
# A KC x NR sliver of packed B is reused by every MR panel of the A block: at most the L1
# (what A's stream pushes out comes back from L2, at a few bytes a cycle).
l1_b_sliver = "kc * nr * 8 > l1d_bytes"
# An MC x KC block of packed A stays in three quarters of L2.
l2_a_block = "mc * kc * 8 > l2_bytes * 3 // 4"
# A KC x NC panel of packed B stays in half of the shared L3.
l3_b_panel = "kc * nc * 8 > l3_bytes // 2"

[constraints.soft]
# Two FMA pipes of 4 cycles latency need 8 independent accumulators (scalar code: any).
fma_latency = "lanes > 1 and mr * (nr // lanes) < 8"
"#,
        name = machine.name,
        lanes = machine.lanes(),
        regs = machine.vector_registers,
        l1 = machine.l1d_bytes,
        l2 = machine.l2_bytes,
        l3 = machine.l3_bytes,
        cores = machine.cores,
    )
}

/// The surviving variants of the space on `machine`, in the engine's order.
pub fn variants(machine: &Machine) -> Result<Vec<GemmVariant>, CodegenError> {
    let err = |e: surge_beast::BeastError| CodegenError::Beast(e.to_string());
    let space = Space::from_toml_str(&space_toml(machine)).map_err(err)?;
    let plan = space.plan(&PlanOptions::default()).map_err(err)?;
    let mut out = Vec::new();
    plan.for_each(&RunOptions::threads(1), |pt| {
        out.push(variant_of(&pt, machine.simd_bits));
        true
    })
    .map_err(err)?;
    if out.is_empty() {
        return Err(CodegenError::Target {
            part: "gemm space".into(),
            message: format!(
                "the GEMM space leaves no variant on {} ({} f64 lanes, {} vector registers, \
                 L1 {} B, L2 {} B): its constraints reject every point",
                machine.name,
                machine.lanes(),
                machine.vector_registers,
                machine.l1d_bytes,
                machine.l2_bytes
            ),
        });
    }
    Ok(out)
}

/// The variant of one surviving point.
fn variant_of(pt: &surge_beast::Point<'_>, simd_bits: usize) -> GemmVariant {
    let int = |n: &str| pt.int(n).expect("an integer iterator of the GEMM space") as usize;
    GemmVariant {
        mr: int("mr"),
        nr: int("nr"),
        ku: int("ku"),
        kc: int("kc"),
        mc: int("mc"),
        nc: int("nc"),
        parallel: match pt.get("par").and_then(|v| v.as_str()) {
            Some("jr") => Parallel::Jr,
            _ => Parallel::Ic,
        },
        simd_bits,
    }
}
