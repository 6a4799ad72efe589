//! Cooperative inner levels: an element whose inner sequence is long enough is split across the
//! inner level's chunks (partial reductions combined in order; a scan's rows written in two
//! passes, or an inner map's chunks in parallel).

use super::plan::by_chunk;
use super::run::{PhaseCall, Shared};
use super::skeleton::{LevelPlan, for_chunks};
use crate::CpuError;
use surge_codegen::emit::cpu::{ACC_SLOT_WORDS, Inner};

/// One accumulator as the kernels read and write it: a scalar or a tuple of scalars (argmin's
/// `(f64, u32)`) of at most `ACC_SLOT_WORDS` words; the library checks its accumulator type fits
/// at compile time.
pub(super) type Acc = [u64; ACC_SLOT_WORDS];

impl PhaseCall<'_> {
    /// Elements of `lo..hi` whose inner sequence is long enough to split across the inner
    /// level's chunks (at least two chunks), with their lengths.
    pub(super) fn long_rows(&self, lo: usize, hi: usize) -> Result<Vec<(usize, usize)>, CpuError> {
        let LevelPlan::Parallel { chunk, .. } = self.plan.inner else {
            return Ok(vec![]);
        };
        let inner_lens = self.f.inner_lens.expect("inner_lens");
        let mut lens = vec![0u64; hi - lo];
        // SAFETY: `lens` holds `hi - lo` values.
        self.check(unsafe { inner_lens(self.bufs.0, lo, hi, lens.as_mut_ptr()) })?;
        let min = 2 * chunk.max(1) as u64;
        Ok(lens
            .iter()
            .enumerate()
            .filter(|(_, m)| **m >= min)
            .map(|(k, m)| (lo + k, *m as usize))
            .collect())
    }

    /// The reduction of element `i`'s inner sequence (`m` elements) from partial reductions
    /// over the inner level's chunks, combined in order.
    pub(super) fn cooperative_reduce(&self, i: usize, m: usize) -> Result<Acc, CpuError> {
        let partials = self.partials(i, m)?;
        self.fold(i, &partials)
    }

    fn partials(&self, i: usize, m: usize) -> Result<Vec<Acc>, CpuError> {
        let inner = self.plan.inner;
        let LevelPlan::Parallel { chunk, .. } = inner else {
            panic!("internal: partials of a sequential level")
        };
        let chunk = chunk.max(1);
        let mut parts = vec![[0u64; ACC_SLOT_WORDS]; m.div_ceil(chunk)];
        let pptr = Shared(parts.as_mut_ptr());
        let partial = self.f.partial.expect("partial");
        // The schedule deals out chunk indices, so partial `c` is always chunk `c`.
        let threads = self.plan.threads;
        for_chunks::<CpuError>(
            self.pool,
            parts.len(),
            by_chunk(inner),
            threads,
            &|c0, c1| {
                let (p, b) = (pptr, self.bufs);
                for c in c0..c1 {
                    let (a, e) = (c * chunk, ((c + 1) * chunk).min(m));
                    // SAFETY: slot `c` is this chunk's own.
                    self.check(unsafe { partial(b.0, i, a, e, p.0.add(c) as *mut u8) })?;
                }
                Ok(())
            },
        )?;
        Ok(parts)
    }

    fn fold(&self, i: usize, parts: &[Acc]) -> Result<Acc, CpuError> {
        let combine = self.f.combine.expect("combine");
        let mut acc = parts[0];
        for p in &parts[1..] {
            let mut out = [0u64; ACC_SLOT_WORDS];
            // SAFETY: accumulators are stored in `Acc` slots.
            self.check(unsafe {
                combine(
                    self.bufs.0,
                    i,
                    &acc as *const Acc as *const u8,
                    p as *const Acc as *const u8,
                    &mut out as *mut Acc as *mut u8,
                )
            })?;
            acc = out;
        }
        Ok(acc)
    }

    /// Writes row `i` (`m` elements) cooperatively: a two-pass scan, or a parallel inner map.
    pub(super) fn cooperative_row(
        &self,
        i: usize,
        m: usize,
        row: Shared<*mut u8>,
    ) -> Result<(), CpuError> {
        let inner = self.plan.inner;
        let LevelPlan::Parallel { chunk, .. } = inner else {
            panic!("internal: a cooperative row of a sequential level")
        };
        let chunk = chunk.max(1);
        let chunk_fn = self.f.chunk.expect("chunk");
        let carries: Vec<Option<Acc>> = if self.abi.inner == Some(Inner::Scan) {
            let parts = self.partials(i, m)?;
            let mut carries = vec![None];
            let mut acc: Option<Acc> = None;
            for p in &parts[..parts.len() - 1] {
                acc = Some(match acc {
                    None => *p,
                    Some(a) => self.fold(i, &[a, *p])?,
                });
                carries.push(acc);
            }
            carries
        } else {
            vec![None; m.div_ceil(chunk)]
        };
        let threads = self.plan.threads;
        for_chunks::<CpuError>(
            self.pool,
            carries.len(),
            by_chunk(inner),
            threads,
            &|c0, c1| {
                let (r, b) = (row, self.bufs);
                for (ci, carry) in carries.iter().enumerate().take(c1).skip(c0) {
                    let (a, e) = (ci * chunk, ((ci + 1) * chunk).min(m));
                    let carry = *carry;
                    let c = carry.unwrap_or([0u64; ACC_SLOT_WORDS]);
                    // SAFETY: positions a..e of the row are this chunk's own.
                    self.check(unsafe {
                        chunk_fn(
                            b.0,
                            i,
                            a,
                            e,
                            u8::from(carry.is_some()),
                            &c as *const Acc as *const u8,
                            r.0,
                        )
                    })?;
                }
                Ok(())
            },
        )
    }
}
