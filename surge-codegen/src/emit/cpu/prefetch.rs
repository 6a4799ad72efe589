//! Software prefetch of gathered rows. A sequential loop that reads rows of a split input in the
//! order of an index sequence (`gather(split(x, d), order)`, Listing 5.5's points in label order)
//! jumps between rows the hardware prefetchers cannot predict; the loop asks for the row it will
//! read `GATHER_AHEAD` positions later. The address is computed without checks (a prefetch never
//! faults; the position's own read checks its index when it gets there), so errors stay the
//! interpreter's. Measured on the k-means recalculation (4·10^5 points of 32 f64 in label order,
//! one thread): 72 ms without, 32 / 30 / 35 ms prefetching 4 / 8 / 16 rows ahead; a pass in point
//! order takes 16 ms.

use super::code::{Env, Gen, R};
use crate::ir::{NodeId, Op};

/// How many positions ahead a gathered row is prefetched.
const GATHER_AHEAD: usize = 8;

impl<'a> Gen<'a> {
    /// A statement prefetching the row that element `i + GATHER_AHEAD` of sequence `n` reads,
    /// when `n` gathers rows of a split input by an input index sequence; None otherwise.
    pub(super) fn prefetch_gathered(&self, n: NodeId, i: &str, env: &Env<'a>) -> R<Option<String>> {
        let Op::Gather { source, indices } = &self.c.node(n).op else {
            return Ok(None);
        };
        let (Op::Split { input, tile }, Op::Input { buffer: ib }) =
            (&self.c.node(*source).op, &self.c.node(*indices).op)
        else {
            return Ok(None);
        };
        let Op::Input { buffer } = &self.c.node(*input).op else {
            return Ok(None);
        };
        let Some(elem) = self.flat_elem(*input) else {
            return Ok(None);
        };
        let t = self.int(*tile, env)?;
        Ok(Some(format!(
            "prefetch_row(b{buffer}.as_ptr().wrapping_add(((b{ib}.get(({i}) + {GATHER_AHEAD}).copied().unwrap_or_default()) as usize).wrapping_mul(({t}) as usize)) as *const u8, (({t}) as usize).wrapping_mul({}));",
            elem.size_bytes()
        )))
    }
}
