//! A root `reduce_by_key` run cooperatively (`Inner::Runs`): the input split into the inner
//! level's chunks, scheduled in ranges of chunks; each range's runs folded in parallel by one
//! call of the kernel's `runs` into its own buffer, then the buffers joined in order, a range's
//! first run combined with the previous range's last when it continues it. One pass over the data, like a hand-written rayon version.

use super::abi::buffer_ptr;
use super::plan::by_chunk;
use super::run::{PhaseCall, Shared};
use super::skeleton::{LevelPlan, for_chunks};
use super::workspace::{PhaseResult, reuse};
use crate::CpuError;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cpu::ACC_SLOT_WORDS;

/// One chunk's runs: their values (packed elements in `u64` storage, for alignment; room for a
/// run per position, left uninitialized: the kernel writes `count` of them, and zeroing room
/// for a run per position wrote 8 bytes per input position, which made every parallel variant
/// of a 10^7-key histogram slower than the sequential one), how many, and whether the first
/// continues the previous chunk's last run.
#[derive(Default)]
struct ChunkRuns {
    words: Vec<std::mem::MaybeUninit<u64>>,
    count: usize,
    cont: bool,
}

impl PhaseCall<'_> {
    /// The whole `reduce_by_key` result as one row.
    pub(super) fn runs(&self, old_data: Option<Buffer>) -> Result<PhaseResult, CpuError> {
        let LevelPlan::Parallel { chunk, .. } = self.plan.inner else {
            panic!("internal: runs of a sequential level")
        };
        let inner_lens = self.f.inner_lens.expect("inner_lens");
        let mut m = 0u64;
        // SAFETY: `m` holds one length.
        self.check(unsafe { inner_lens(self.bufs.0, 0, 1, &mut m) })?;
        let (m, chunk) = (m as usize, chunk.max(1));
        let mut parts: Vec<ChunkRuns> = (0..m.div_ceil(chunk))
            .map(|_| ChunkRuns::default())
            .collect();
        let pptr = Shared(parts.as_mut_ptr());
        let runs = self.f.runs.expect("runs");
        let plan = by_chunk(self.plan.inner);
        for_chunks::<CpuError>(
            self.pool,
            parts.len(),
            plan,
            self.plan.threads,
            &|c0, c1| {
                let (p, b) = (pptr, self.bufs);
                // One call per scheduled range of chunks, its runs kept in the range's first part
                // (the others stay empty): a call and a buffer per chunk cost more than the
                // runs of a 4096-key chunk.
                let (lo, hi) = (c0 * chunk, (c1 * chunk).min(m));
                // SAFETY: the parts of chunks c0..c1 are this range's own.
                let part = unsafe { &mut *p.0.add(c0) };
                part.words = Vec::with_capacity(hi - lo);
                // SAFETY: MaybeUninit needs no initialization.
                unsafe { part.words.set_len(hi - lo) };
                let mut cont = 0u8;
                let out = part.words.as_mut_ptr() as *mut u8;
                // SAFETY: `words` has room for a run per position of the range.
                self.check(unsafe { runs(b.0, lo, hi, out, &mut part.count, &mut cont) })?;
                part.cont = cont != 0;
                Ok(())
            },
        )?;
        let total = parts.iter().map(|p| p.count - usize::from(p.cont)).sum();
        let data = reuse(self.abi.elem, total, old_data);
        self.join_runs(&parts, buffer_ptr(&data) as *mut u8)?;
        Ok((data, vec![vec![0, total as u64]]))
    }

    /// Writes the chunks' runs in order to `dst`, a continued run combined with its start.
    fn join_runs(&self, parts: &[ChunkRuns], dst: *mut u8) -> Result<(), CpuError> {
        let size = self.abi.elem.size_bytes();
        let combine = self.f.combine.expect("combine");
        let mut pos = 0usize;
        for part in parts {
            let src = part.words.as_ptr() as *const u8;
            let mut start = 0;
            if part.cont && pos > 0 {
                let (mut a, mut b, mut out) = (
                    [0u64; ACC_SLOT_WORDS],
                    [0u64; ACC_SLOT_WORDS],
                    [0u64; ACC_SLOT_WORDS],
                );
                let last = unsafe { dst.add((pos - 1) * size) };
                // SAFETY: elements of `size` bytes within `dst` and `words`; aligned slots.
                unsafe {
                    std::ptr::copy_nonoverlapping(last, a.as_mut_ptr() as *mut u8, size);
                    std::ptr::copy_nonoverlapping(src, b.as_mut_ptr() as *mut u8, size);
                }
                let (pa, pb) = (a.as_ptr() as *const u8, b.as_ptr() as *const u8);
                // SAFETY: three accumulator slots.
                self.check(unsafe {
                    combine(self.bufs.0, 0, pa, pb, out.as_mut_ptr() as *mut u8)
                })?;
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(out.as_ptr() as *const u8, last, size) };
                start = 1;
            }
            let n = part.count - start;
            // SAFETY: `dst` holds `total` elements; these are positions pos..pos + n.
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(start * size), dst.add(pos * size), n * size)
            };
            pos += n;
        }
        Ok(())
    }
}
