//! A deep phase (a result three or more levels of sequences deep, `Shape::Deep`): the lengths of
//! the elements' sequences through `lens`, then of each lower level through `sublens`, each turned
//! into that level's offsets, then the innermost rows through `deep_rows`
//! (`surge-codegen/src/emit/cpu/deep.rs`). Every call walks a chunk of the outer elements, so
//! the outer level's schedule deals them to the threads as for any phase.

use super::abi::{Buf, buffer_ptr};
use super::run::{PhaseCall, Shared};
use super::skeleton::for_chunks;
use super::workspace::{PhaseResult, reuse};
use crate::CpuError;
use surge_codegen::data::Buffer;

/// `off` set to the offsets of `lens` (`lens.len() + 1` entries from 0), reusing its storage.
fn offsets_of(lens: &[u64], mut off: Vec<u64>) -> Vec<u64> {
    off.clear();
    off.push(0);
    let mut total = 0u64;
    for l in lens {
        total += l;
        off.push(total);
    }
    off
}

/// The table of offsets slots the kernels read: the levels computed so far, then empty slots up
/// to the `depth - 1` levels the kernels bind.
fn slot_table(levels: &[Vec<u64>], depth: usize) -> Vec<Buf> {
    let mut t: Vec<Buf> = levels.iter().map(|o| Buf::of_slice(o)).collect();
    t.resize(depth - 1, Buf::of_slice::<u64>(&[]));
    t
}

impl PhaseCall<'_> {
    /// A deep phase of `depth` levels over `n` elements, writing over the previous run's
    /// buffers where they fit.
    pub(super) fn deep(
        &self,
        n: usize,
        depth: usize,
        old_data: Option<Buffer>,
        mut old_offsets: Vec<Vec<u64>>,
    ) -> Result<PhaseResult, CpuError> {
        old_offsets.resize_with(depth - 1, Vec::new);
        let mut old = old_offsets.into_iter();
        let mut lens = vec![0u64; n];
        let l = Shared(lens.as_mut_ptr());
        let lens_fn = self.f.lens.expect("lens of a deep phase");
        self.each_chunk(n, &|b, lo, hi| {
            let out = l;
            // SAFETY: disjoint chunks of `lens`.
            unsafe { lens_fn(b, lo, hi, out.0) }
        })?;
        let mut levels = vec![offsets_of(&lens, old.next().unwrap_or_default())];
        let sublens = self.f.sublens.expect("sublens of a deep phase");
        for level in 2..depth {
            let count = *levels.last().and_then(|o| o.last()).expect("offsets") as usize;
            let mut lens = vec![0u64; count];
            let table = slot_table(&levels, depth);
            let (t, l) = (Shared(table.as_ptr()), Shared(lens.as_mut_ptr()));
            self.each_chunk(n, &|b, lo, hi| {
                let (t, l) = (t, l);
                // SAFETY: each element's sequences are a disjoint range of `lens`, by the
                // offsets of the levels above.
                unsafe { sublens(b, level, lo, hi, t.0, l.0) }
            })?;
            levels.push(offsets_of(&lens, old.next().unwrap_or_default()));
        }
        let total = *levels.last().and_then(|o| o.last()).expect("offsets") as usize;
        let data = reuse(self.abi.elem, total * self.abi.width(), old_data);
        let table = slot_table(&levels, depth);
        let (t, d) = (Shared(table.as_ptr()), Shared(buffer_ptr(&data) as *mut u8));
        let rows = self.f.deep_rows.expect("deep_rows of a deep phase");
        self.each_chunk(n, &|b, lo, hi| {
            let (t, d) = (t, d);
            // SAFETY: each element's innermost rows are a disjoint range of `data`.
            unsafe { rows(b, lo, hi, d.0, t.0) }
        })?;
        Ok((data, levels))
    }

    /// Calls `f(bufs, lo, hi)` on the chunks of `n` outer elements, as the outer level deals them.
    fn each_chunk(
        &self,
        n: usize,
        f: &(dyn Fn(*const Buf, usize, usize) -> i32 + Sync),
    ) -> Result<(), CpuError> {
        let (outer, threads) = (self.plan.outer, self.plan.threads);
        for_chunks::<CpuError>(self.pool, n, outer, threads, &|lo, hi| {
            self.check(f(self.bufs.0, lo, hi))
        })
    }
}
