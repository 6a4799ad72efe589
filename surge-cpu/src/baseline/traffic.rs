//! A bandwidth probe with a kernel's own mix of traffic: it reads `read` bytes and writes
//! `write` bytes with streaming stores, as an SpMV in DRAM reads its matrix and `x` and
//! streams `y` out (the diagonal and SELL kernels' `store_block`).
//!
//! Why not the read probe ([`super::bandwidth`]): on this project's 2-core AMD EPYC VMs the
//! reads and the streaming writes of one kernel travel apart, so a kernel that does both moves
//! more bytes per second than a read-only pass can: in one run a pass reading 1 GiB ran at
//! 28.0 GB/s where one that also streamed out a sixth as many bytes moved 32.4 GB/s in all,
//! and the diagonal SpMV of a 5-point Laplacian (`surge bench spmv`, 2026-11-27) moved
//! 35.4 GB/s against a read probe of 31.0 taken before it: a fraction of the limit of 1.14, a
//! limit that was wrong. The machine's bandwidth also moves by up to 2× within seconds (other
//! tenants share its memory), so this probe is timed in the same interleaved rounds as the
//! kernels it limits (`surge::bench::confirm`), in each of [`Pattern::ALL`], and the limit is
//! its fastest batch. With the read probe taken before, a banded matrix's diagonal SpMV ran at
//! 1.16 of the limit; with one pattern in the rounds, at 1.01 of its 20th-percentile batch;
//! with the fastest batch of five patterns, at 1.03, 1.05 and 1.047 in three runs
//! (2026-11-27), the Laplacian's at 0.91; with the line sum vectorized (`add_line`), at 1.001
//! and 0.72. Not yet shown to be a limit on that matrix: before the vectorized sum the
//! kernel's fastest batches ran at 3.9 ms where no probe pass went under 5.4 ms over the same
//! bytes, and what the kernel does that the probes did not (it prefetches 8 lines of each
//! stream at once, reads `x` through overlapping windows, its two threads take 64-row chunks in
//! turn) is not pinned down.

use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Chunks one pass is cut into (spread over the current rayon pool).
const CHUNKS: usize = 256;
/// Doubles written at once, as the diagonal kernel's `store_block` writes its 64 rows.
const BLOCK: usize = 64;
/// Doubles ahead of the current read that each read line's prefetch asks for (8 KiB), as the
/// diagonal kernel's `prefetch_ahead` does.
const AHEAD: usize = 1024;

/// Arrays sized like one kernel call's traffic; see the module's notes.
#[derive(Debug)]
pub struct TrafficProbe {
    read: Vec<f64>,
    write: Vec<f64>,
    pattern: Pattern,
}

/// How a probe reads: one stream per chunk or several side by side, each line prefetched
/// [`AHEAD`] or not. Which is fastest changes with the load on the machine (in one quiet
/// minute here, 2 streams without prefetching moved 37.5 GB/s, 1 stream prefetched 31.5; under
/// load the prefetched one was ahead), so the limit is the best of [`Pattern::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    pub streams: usize,
    pub prefetch: bool,
    /// The threads take the next few blocks in turn (a dynamic schedule over small chunks),
    /// so they read neighbouring memory, instead of a range of chunks each.
    pub shared: bool,
}

impl Pattern {
    /// The patterns a limit is the best of.
    pub const ALL: [Pattern; 5] = [
        Pattern::new(1, false, false),
        Pattern::new(2, false, false),
        Pattern::new(2, true, false),
        Pattern::new(1, false, true),
        Pattern::new(1, true, true),
    ];

    pub const fn new(streams: usize, prefetch: bool, shared: bool) -> Pattern {
        Pattern {
            streams,
            prefetch,
            shared,
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.streams == 1 { "" } else { "s" };
        let pf = if self.prefetch { ", prefetched" } else { "" };
        let sh = if self.shared {
            ", threads side by side"
        } else {
            ""
        };
        write!(f, "{} read stream{s}{pf}{sh}", self.streams)
    }
}

impl TrafficProbe {
    /// A probe that reads `read_bytes` and writes `write_bytes` per pass (the reads rounded up
    /// to whole lines per chunk, the writes to whole blocks per chunk), filled in parallel so
    /// their pages are spread as the kernels' are.
    pub fn new(read_bytes: usize, write_bytes: usize, pattern: Pattern) -> TrafficProbe {
        let n =
            |bytes: usize, unit: usize| (bytes / 8).div_ceil(unit * CHUNKS).max(1) * unit * CHUNKS;
        TrafficProbe {
            read: (0..n(read_bytes, 8))
                .into_par_iter()
                .map(|i| (i % 11) as f64)
                .collect(),
            write: (0..n(write_bytes, BLOCK))
                .into_par_iter()
                .map(|_| 0.0)
                .collect(),
            pattern,
        }
    }

    /// The bytes one pass moves (reads plus writes).
    pub fn bytes(&self) -> f64 {
        8.0 * (self.read.len() + self.write.len()) as f64
    }

    /// One pass on the current rayon pool: each chunk of the read array is summed (in its
    /// pattern), and after every stretch of it the matching block of the write
    /// array is written with streaming stores (the running sum, so the reads cannot be
    /// skipped), as a kernel writes its output block by block.
    pub fn pass(&mut self) {
        if self.pattern.shared {
            self.pass_shared();
            return;
        }
        // The lengths are multiples of 8 · CHUNKS and BLOCK · CHUNKS: CHUNKS chunks each.
        let rc = self.read.len() / CHUNKS;
        let wc = self.write.len() / CHUNKS;
        self.read
            .par_chunks(rc)
            .zip(self.write.par_chunks_mut(wc))
            .for_each(|(r, w)| read_then_stream(r, w, self.pattern));
    }
}

impl TrafficProbe {
    /// [`TrafficProbe::pass`] with the threads of the current pool taking [`GRAB`] blocks at a
    /// time from one counter: each block reads its stretch of the read array, then streams out
    /// its block of the write array (the stretch's sum).
    fn pass_shared(&mut self) {
        let blocks = self.write.len() / BLOCK;
        let stretch = (self.read.len() / blocks) / 8 * 8;
        let next = AtomicUsize::new(0);
        let (r, w, prefetching) = (
            &self.read[..],
            Blocks(self.write.as_mut_ptr()),
            self.pattern.prefetch,
        );
        rayon::broadcast(|_| {
            let w = &w;
            loop {
                let g = next.fetch_add(GRAB, Ordering::Relaxed);
                if g >= blocks {
                    break;
                }
                for b in g..(g + GRAB).min(blocks) {
                    let mut acc = [0.0f64; 8];
                    let hi = if b + 1 == blocks {
                        r.len()
                    } else {
                        (b + 1) * stretch
                    };
                    for at in (b * stretch..hi).step_by(8) {
                        if prefetching {
                            prefetch(r, at + AHEAD);
                        }
                        add_line(&mut acc, &r[at..(at + 8).min(hi)]);
                    }
                    // SAFETY: block `b` is handed to this thread alone by the counter, and
                    // lies inside the write array (b < blocks).
                    let dst = unsafe { std::slice::from_raw_parts_mut(w.0.add(b * BLOCK), BLOCK) };
                    stream_block(dst, acc.iter().sum());
                }
            }
            fence();
        });
    }
}

/// Blocks taken from the shared counter at a time (about 90 KiB of reads on a banded matrix
/// of 11 diagonals: the counter is not contended).
const GRAB: usize = 16;

/// The write array shared by the threads of [`TrafficProbe::pass_shared`], each writing the
/// blocks the counter gave it.
struct Blocks(*mut f64);
// SAFETY: the threads write disjoint blocks (one counter hands each block out once).
unsafe impl Sync for Blocks {}

/// Reads `r` in as many stretches as `w` has blocks, streaming one block out after each; with
/// `p.streams` > 1, `r` is cut into that many parts read side by side, line by line.
fn read_then_stream(r: &[f64], w: &mut [f64], p: Pattern) {
    let blocks = (w.len() / BLOCK).max(1);
    let part_len = (r.len() / p.streams.max(1)).next_multiple_of(8);
    let parts: Vec<(usize, &[f64])> = r
        .chunks(part_len.max(8))
        .enumerate()
        .map(|(i, c)| (i * part_len, c))
        .collect();
    let stretch = part_len.div_ceil(blocks).next_multiple_of(8);
    let mut acc = [0.0f64; 8];
    for b in 0..blocks {
        let lo = b * stretch;
        for l in (lo..lo + stretch).step_by(8) {
            for (start, part) in &parts {
                let Some(line) = part.get(l..(l + 8).min(part.len())) else {
                    continue;
                };
                if p.prefetch {
                    prefetch(r, start + l + AHEAD);
                }
                add_line(&mut acc, line);
            }
        }
        stream_block(&mut w[b * BLOCK..(b + 1) * BLOCK], acc.iter().sum());
    }
    fence();
}

/// Adds one line (8 doubles, fewer at an end) to `acc`: a whole line as one fixed-size add, which
/// the compiler makes a vector add (through `zip` over a slice it stayed scalar, and a quiet
/// standalone pass of that shape read 40.6 GB/s where the probe's best batch was 37.9).
#[inline(always)]
fn add_line(acc: &mut [f64; 8], line: &[f64]) {
    if let Ok(l) = <&[f64; 8]>::try_from(line) {
        for k in 0..8 {
            acc[k] += l[k];
        }
    } else {
        for (a, v) in acc.iter_mut().zip(line) {
            *a += v;
        }
    }
}

/// Asks for the line holding `r[at]` (nothing past the end).
#[inline(always)]
fn prefetch(r: &[f64], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < r.len() {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch never faults; the address is inside `r` anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(r.as_ptr().add(at).cast()) };
    }
}

/// Writes `v` to every element of `dst` with streaming stores where the target allows.
fn stream_block(dst: &mut [f64], v: f64) {
    #[cfg(target_arch = "x86_64")]
    if (dst.as_ptr() as usize).is_multiple_of(16) && dst.len().is_multiple_of(2) {
        use std::arch::x86_64::{_mm_set1_pd, _mm_stream_pd};
        let p = dst.as_mut_ptr();
        for j in (0..dst.len()).step_by(2) {
            // SAFETY: `p + j` holds two f64 of `dst` and is 16-byte aligned; SSE2 is part of
            // x86_64.
            unsafe { _mm_stream_pd(p.add(j), _mm_set1_pd(v)) };
        }
        return;
    }
    dst.fill(v);
}

/// Orders this thread's streaming stores before its part of the pass is done (each thread
/// fences its own, as the kernels' `store_fence` does).
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a fence has no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_writes_every_block_from_the_reads_and_counts_its_bytes() {
        let mut p = TrafficProbe::new(8 * 100_000, 8 * 20_000, Pattern::ALL[2]);
        let mut q = TrafficProbe::new(8 * 100_000, 8 * 20_000, Pattern::ALL[4]);
        q.pass();
        assert!(q.write.iter().all(|v| *v > 0.0));
        // Reads rounded up to 8 · 256, writes to 64 · 256 doubles.
        assert_eq!(p.bytes(), 8.0 * (100_352.0 + 32_768.0));
        p.pass();
        // Every block holds one running sum of the reads (all ≥ 0 and growing, since the
        // read array holds i % 11).
        for b in p.write.chunks(BLOCK) {
            assert!(b.iter().all(|v| *v == b[0] && *v > 0.0), "{b:?}");
        }
    }

    #[test]
    fn every_pattern_reads_every_element_once() {
        // The last block's sum of each chunk is the chunk's sum: all of it read, once.
        for pattern in Pattern::ALL {
            let mut p = TrafficProbe::new(8 * 8 * 3 * CHUNKS, 8 * BLOCK * 2 * CHUNKS, pattern);
            p.read.iter_mut().for_each(|v| *v = 1.0);
            p.pass();
            if pattern.shared {
                // Each block holds its stretch's sum.
                let total: f64 = p.write.chunks(BLOCK).map(|b| b[0]).sum();
                assert_eq!(total, p.read.len() as f64, "{pattern}");
                continue;
            }
            let (rc, wc) = (p.read.len() / CHUNKS, p.write.len() / CHUNKS);
            for c in p.write.chunks(wc) {
                assert_eq!(c[wc - 1], rc as f64, "{pattern}");
            }
        }
    }

    #[test]
    fn tiny_sizes_still_give_every_chunk_work() {
        let mut p = TrafficProbe::new(0, 0, Pattern::ALL[0]);
        assert_eq!(p.bytes(), 8.0 * (8.0 + 64.0) * CHUNKS as f64);
        p.pass();
        assert!(p.write.iter().all(|v| *v > 0.0));
    }
}
