//! Running a GEMM variant of a dense contraction (`surge_codegen::analysis::Contraction`): the
//! operands are the inputs A (m×k) and B (k×n) with k and n the split tiles of this run, or B
//! given by its columns (the n rows of k of the second input: `C = A·Btᵀ`); the result C is
//! nested m rows of n. Only conforming, non-empty operands go to the GEMM kernels;
//! everything else (a ragged split, unequal lengths, a zero tile, an empty A or B) takes the
//! reference semantics, so errors and edge cases are the interpreter's own.

use super::Workspace;
use crate::CpuError;
use crate::gemm::{GemmKernels, MatRef};
use std::collections::HashMap;
use surge_codegen::analysis::{Analysis, Contraction, tile_value};
use surge_codegen::data::Buffer;
use surge_codegen::gemm::{GemmVariant, Machine, from_variant};
use surge_codegen::ir::{Computation, Value, interpret};
use surge_codegen::variant::Variant;

/// The GEMM variants of a contraction, resolved once when the kernels are built: where the
/// operands are, each variant's GEMM parameters by id, and their compiled kernels.
pub(super) struct GemmFamily {
    contraction: Contraction,
    by_id: HashMap<String, GemmVariant>,
    kernels: GemmKernels,
}

impl std::fmt::Debug for GemmFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GemmFamily({} variants)", self.by_id.len())
    }
}

impl GemmFamily {
    /// The family of `variants` (GEMM variants of a one-phase contraction analyzed as
    /// `analysis`), compiled.
    pub(super) fn build(analysis: &Analysis, variants: &[Variant]) -> Result<GemmFamily, CpuError> {
        let unknown = |v: &Variant| CpuError::UnknownVariant {
            id: v.id(),
            known: variants.len(),
        };
        let contraction = match &analysis.phases[..] {
            [phase] => phase.contraction.clone(),
            _ => None,
        }
        .ok_or_else(|| unknown(&variants[0]))?;
        let simd = Machine::query().simd_bits;
        let by_id: HashMap<String, GemmVariant> = variants
            .iter()
            .map(|v| Ok((v.id(), from_variant(v, simd).ok_or_else(|| unknown(v))?)))
            .collect::<Result<_, CpuError>>()?;
        let gs: Vec<GemmVariant> = by_id.values().cloned().collect();
        Ok(GemmFamily {
            contraction,
            kernels: GemmKernels::build(&gs)?,
            by_id,
        })
    }

    /// Runs GEMM variant `variant` of `ir` (of the structure the family was built for) on
    /// `buffers` into `ws`.
    pub(super) fn run(
        &self,
        ir: &Computation,
        variant: &Variant,
        buffers: &[Buffer],
        threads: usize,
        ws: &mut Workspace,
    ) -> Result<(), CpuError> {
        let gv = self
            .by_id
            .get(&variant.id())
            .ok_or_else(|| CpuError::UnknownVariant {
                id: variant.id(),
                known: self.by_id.len(),
            })?;
        run(
            &self.kernels,
            &self.contraction,
            gv,
            ir,
            buffers,
            threads,
            ws,
        )
    }
}

/// Runs `gv` for the contraction `c` of `ir` on `buffers` into `ws`.
fn run(
    g: &GemmKernels,
    c: &Contraction,
    gv: &GemmVariant,
    ir: &Computation,
    buffers: &[Buffer],
    threads: usize,
    ws: &mut Workspace,
) -> Result<(), CpuError> {
    let (Buffer::F64(a), Buffer::F64(b)) = (&buffers[c.a], &buffers[c.b]) else {
        panic!("internal: a contraction's operands are f64 inputs");
    };
    let tiles = (tile_value(ir, c.k_tile), tile_value(ir, c.n_tile));
    let (Some(k), Some(n)) = (tiles.0.map(|v| v as usize), tiles.1.map(|v| v as usize)) else {
        return reference(ir, buffers, ws);
    };
    // B's split tile t is its rows' length: n (k rows), or k when B is given by its columns (n
    // rows). Either way B is whole rows of t and holds k·n values.
    let t = n;
    let n = match c.b_by_columns {
        false => t,
        true => b.len().checked_div(t).unwrap_or(0),
    };
    let conforming = k > 0
        && t > 0
        && n > 0
        && !a.is_empty()
        && !b.is_empty()
        && a.len() % k == 0
        && b.len() % t == 0
        && b.len() == k * n;
    if !conforming {
        return reference(ir, buffers, ws);
    }
    let m = a.len() / k;
    let offsets = (0..=m).map(|i| (i * n) as u64).collect();
    let a = MatRef::new(a, m, k);
    ws.set_nested(m * n, offsets, |out| match c.b_by_columns {
        false => g.gemm(gv, threads, a, MatRef::new(b, k, n), out),
        true => g.gemm_bt(gv, threads, a, MatRef::new(b, n, k), out),
    })
}

/// The interpreter's result (or error) for operands the GEMM kernels do not take.
fn reference(ir: &Computation, buffers: &[Buffer], ws: &mut Workspace) -> Result<(), CpuError> {
    let rows = match interpret(ir, buffers)? {
        Value::Seq(rows) => rows,
        other => panic!("internal: a contraction evaluated to {other:?}"),
    };
    let mut flat = Vec::new();
    let mut offsets = vec![0u64];
    for r in rows {
        let Value::Seq(xs) = r else {
            panic!("internal: a contraction row that is not a sequence");
        };
        for x in xs {
            let v = match x {
                Value::Scalar(s) => s.as_f64().expect("an f64 element"),
                other => panic!("internal: a contraction element {other:?}"),
            };
            flat.push(v);
        }
        offsets.push(flat.len() as u64);
    }
    ws.set_nested(flat.len(), offsets, |out| {
        out.copy_from_slice(&flat);
        Ok(())
    })
}
