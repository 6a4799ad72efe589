//! Prints the kernels of a set of GEMM variants as one Rust library (`templates/cpu/gemm.rs.tera`):
//! one module per distinct [`Kernel`], exporting `surge_gemm_<kernel>_{pack_a,pack_b,macro}`.

use super::{GemmVariant, Kernel};
use crate::CodegenError;
use crate::emit::cpu::{CpuProgram, Module};
use serde::Serialize;
use std::collections::BTreeMap;

const TEMPLATE: &str = include_str!("../../templates/cpu/gemm.rs.tera");

/// The ABI version the generated library reports (the CPU backend's).
const ABI: u32 = 3;

#[derive(Serialize)]
struct KernelCtx {
    name: String,
    mr: usize,
    nr: usize,
    ku: usize,
    lanes: usize,
    vecs: usize,
    bits: usize,
    variants: String,
}

#[derive(Serialize)]
struct SimdCtx {
    bits: usize,
    lanes: usize,
}

/// The exported symbol of function `what` (`pack_a`, `pack_b`, `macro`) of `kernel`.
pub fn kernel_symbol(kernel: &Kernel, what: &str) -> String {
    format!("surge_gemm_{}_{what}", kernel.name())
}

/// The library of `variants`' kernels. Its modules are in [`Kernel`] order, each listing the
/// variant ids it serves (so a compile error names them).
pub fn emit(variants: &[GemmVariant]) -> Result<CpuProgram, CodegenError> {
    let mut by_kernel: BTreeMap<Kernel, Vec<String>> = BTreeMap::new();
    for v in variants {
        check(v)?;
        by_kernel.entry(v.kernel()).or_default().push(v.id());
    }
    let kernels: Vec<KernelCtx> = by_kernel
        .iter()
        .map(|(k, ids)| KernelCtx {
            name: k.name(),
            mr: k.mr,
            nr: k.nr,
            ku: k.ku,
            lanes: k.lanes(),
            vecs: k.nr / k.lanes(),
            bits: if k.lanes() == 1 { 64 } else { k.simd_bits },
            variants: ids.len().to_string(),
        })
        .collect();
    let mut simds: Vec<SimdCtx> = kernels
        .iter()
        .map(|k| SimdCtx {
            bits: k.bits,
            lanes: k.lanes,
        })
        .collect();
    simds.sort_by_key(|s| s.bits);
    simds.dedup_by_key(|s| s.bits);
    let mut ctx = tera::Context::new();
    ctx.insert("abi", &ABI);
    ctx.insert("kernels", &kernels);
    ctx.insert("simds", &simds);
    let source =
        tera::Tera::one_off(TEMPLATE, &ctx, false).map_err(|e| CodegenError::EmitVariant {
            what: "the GEMM library".into(),
            message: format!("{e:?}"),
        })?;
    let modules = module_lines(&source, by_kernel.values().cloned().collect());
    Ok(CpuProgram::library(source, modules))
}

/// A variant the template can print: NR a multiple of the lanes, positive sizes.
fn check(v: &GemmVariant) -> Result<(), CodegenError> {
    let k = v.kernel();
    let bad = |m: String| {
        Err(CodegenError::Variant {
            id: v.id(),
            message: m,
        })
    };
    if ![64, 256, 512].contains(&v.simd_bits) {
        return bad(format!(
            "SIMD width {} is not 64, 256 or 512 bits",
            v.simd_bits
        ));
    }
    if v.mr == 0 || v.nr == 0 || v.ku == 0 || v.kc == 0 || v.mc == 0 || v.nc == 0 {
        return bad("every blocking parameter must be positive".into());
    }
    if !v.nr.is_multiple_of(k.lanes()) {
        return bad(format!(
            "NR = {} is not a multiple of {} lanes",
            v.nr,
            k.lanes()
        ));
    }
    if !v.mc.is_multiple_of(v.mr) || !v.nc.is_multiple_of(v.nr) {
        return bad(format!(
            "MC = {} must be a multiple of MR = {} and NC = {} of NR = {}",
            v.mc, v.mr, v.nc, v.nr
        ));
    }
    Ok(())
}

/// The 1-based line range of each `// ---- module mK ----` block.
fn module_lines(source: &str, variants: Vec<Vec<String>>) -> Vec<Module> {
    let lines: Vec<&str> = source.lines().collect();
    let find = |marker: &str| lines.iter().position(|l| l.trim() == marker);
    variants
        .into_iter()
        .enumerate()
        .map(|(index, variants)| {
            let a = find(&format!("// ---- module m{index} ----")).expect("module marker");
            let b = find(&format!("// ---- end of module m{index} ----")).expect("end marker");
            Module {
                index,
                variants,
                lines: (a + 1, b + 1),
            }
        })
        .collect()
}
