//! The four-partial-sum row layout (`layout1 = lanes`): a phase of the `f64` SpMV form (the
//! explicit SIMD form of `sell.rs`) also exports `lanes`, its kernel over the original rows with
//! each row's sum in four partial sums (see `README.md`; the host inspector is
//! `surge-cpu/src/native/lanes.rs`).

use super::code::R;
use super::render;
use super::sell::simd_form;
use crate::analysis::DiagonalPattern;
use crate::ir::Computation;
use serde::Serialize;

const LANES: &str = include_str!("../../../templates/cpu/lanes.rs.tera");

/// What the `lanes` template reads: the input buffers of the values, the indices and `x`.
#[derive(Serialize)]
struct Lanes {
    values: usize,
    index: usize,
    gathered: usize,
    values_first: bool,
    map_node: u64,
}

/// The phase's `lanes` function, rendered over the phase's context `ctx` (its prefix and
/// prelude): only for the `f64` SpMV form with `u32` indices (nothing for other phases; the
/// host finds the kernel by its symbol).
pub(super) fn emit_lanes(
    c: &Computation,
    pat: Option<&DiagonalPattern>,
    ctx: &tera::Context,
) -> R<String> {
    let Some((pat, form)) = pat.and_then(|p| Some((p, simd_form(c, p)?))) else {
        return Ok(String::new());
    };
    let mut ctx = ctx.clone();
    ctx.insert(
        "lanes",
        &Lanes {
            values: pat.rows[form.values].buffer,
            index: pat.rows[form.index].buffer,
            gathered: pat.gathered,
            values_first: form.values_first,
            map_node: pat.map.0,
        },
    );
    render(LANES, &ctx)
}
