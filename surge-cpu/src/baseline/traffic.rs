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
//!
//! On the 2026-11-28 VM (AMD EPYC, Zen 5, 2 vCPUs) the patterns read line by line through
//! slices, and that loop, not memory, was their bound: 41-45 GB/s in every state of the machine,
//! while a windowed read of the same bytes moved 60-87 GB/s when the machine's bandwidth was high,
//! and the banded diagonal SpMV ran at 1.10-1.19 and once at 1.84 of the limit. The patterns now
//! read windows of [`BLOCK`] elements as fixed-size arrays (`add_stretch`), an SpMV's values and
//! `x` as two arrays read in step ([`TrafficProbe::with_arrays`]), one more pattern prefetches a
//! single stream, and [`Pattern::READS_ONLY`] reads every byte. In four full `surge bench spmv`
//! runs with this code (the fraction the median over rounds of each round's fraction,
//! `Confirmation::limit_fractions`) the banded matrix ran at 1.01-1.03 of the limit and the
//! Laplacian at 0.93-1.00: in the machine's slow state (about 50 GB/s) the diagonal kernel still
//! moves these bytes 1-3% faster than any probe, so the limit is still a little low there
//! (`examples/probe_cmp.rs` compares the patterns with a plain read).

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
    /// The arrays read, each once per pass (an SpMV's values and its `x`), read side by side.
    reads: Vec<Vec<f64>>,
    write: Vec<f64>,
    pattern: Pattern,
}

/// How a probe reads its first array (the others are read beside it, in step): one stream per
/// chunk or several side by side, each window of [`BLOCK`] elements prefetched [`AHEAD`] or
/// not. Which is fastest changes with the load on the machine (in one quiet
/// minute here, 2 streams without prefetching moved 37.5 GB/s, 1 stream prefetched 31.5; under
/// load the prefetched one was ahead), so the limit is the best of [`Pattern::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    pub streams: usize,
    pub prefetch: bool,
    /// The threads take the next few blocks in turn (a dynamic schedule over small chunks),
    /// so they read neighbouring memory, instead of a range of chunks each.
    pub shared: bool,
    /// Whether the pass streams out its write bytes (else it reads them too).
    pub writes: bool,
}

impl Pattern {
    /// The patterns a limit is the best of.
    pub const ALL: [Pattern; 6] = [
        Pattern::new(1, false, false),
        Pattern::new(1, true, false),
        Pattern::new(2, true, false),
        Pattern::new(1, false, true),
        Pattern::new(1, true, true),
        Pattern::READS_ONLY,
    ];

    /// The same bytes, all read (the write array's bytes added to the first array), prefetched,
    /// over chunks of 2^16 elements as the read probe (`super::bandwidth`) reads. Why: the
    /// machine's bandwidth moves between states minutes apart (see the module's notes), and in
    /// the fast one a plain read moved more bytes per second than the write patterns.
    pub const READS_ONLY: Pattern = Pattern {
        streams: 1,
        prefetch: true,
        shared: false,
        writes: false,
    };

    pub const fn new(streams: usize, prefetch: bool, shared: bool) -> Pattern {
        Pattern {
            streams,
            prefetch,
            shared,
            writes: true,
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.writes {
            return write!(f, "reads only");
        }
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
    /// A probe that reads `read_bytes` and writes `write_bytes` per pass (see
    /// [`TrafficProbe::with_arrays`]).
    pub fn new(read_bytes: usize, write_bytes: usize, pattern: Pattern) -> TrafficProbe {
        TrafficProbe::with_arrays(&[read_bytes], write_bytes, pattern)
    }

    /// A probe that reads arrays of `read_bytes` each (an SpMV's values and its `x`: any
    /// storage reads both, in step) and writes `write_bytes` per pass (each array rounded up to
    /// whole lines per chunk, the writes to whole blocks per chunk), filled in parallel so their
    /// pages are spread as the kernels' are. [`Pattern::READS_ONLY`] reads the write bytes too,
    /// in the first array.
    pub fn with_arrays(read_bytes: &[usize], write_bytes: usize, pattern: Pattern) -> TrafficProbe {
        let n =
            |bytes: usize, unit: usize| (bytes / 8).div_ceil(unit * CHUNKS).max(1) * unit * CHUNKS;
        let extra = if pattern.writes { 0 } else { write_bytes };
        let reads = read_bytes
            .iter()
            .enumerate()
            .map(|(k, &b)| {
                let bytes = if k == 0 { b + extra } else { b };
                (0..n(bytes, 8))
                    .into_par_iter()
                    .map(|i| (i % 11) as f64)
                    .collect()
            })
            .collect();
        let write_len = if pattern.writes {
            n(write_bytes, BLOCK)
        } else {
            0
        };
        TrafficProbe {
            reads,
            write: (0..write_len).into_par_iter().map(|_| 0.0).collect(),
            pattern,
        }
    }

    /// How this probe reads.
    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// The bytes one pass moves (reads plus writes).
    pub fn bytes(&self) -> f64 {
        let read: usize = self.reads.iter().map(Vec::len).sum();
        8.0 * (read + self.write.len()) as f64
    }

    /// One pass on the current rayon pool: the arrays are cut into [`CHUNKS`] chunks each; each
    /// chunk of the arrays is summed in its pattern, and after every stretch of it the matching
    /// block of the write array is written with streaming stores (the running sum, so the reads
    /// cannot be skipped), as a kernel writes its output block by block.
    pub fn pass(&mut self) {
        if !self.pattern.writes {
            let sum: f64 = self
                .reads
                .iter()
                .map(|a| {
                    a.par_chunks(1 << 16)
                        .map(|c| sum_lines(c, self.pattern.prefetch))
                        .sum::<f64>()
                })
                .sum();
            std::hint::black_box(sum);
            return;
        }
        if self.pattern.shared {
            self.pass_shared();
            return;
        }
        // The lengths are multiples of 8 · CHUNKS and BLOCK · CHUNKS: CHUNKS chunks each.
        let wc = self.write.len() / CHUNKS;
        let (reads, pattern) = (&self.reads, self.pattern);
        self.write
            .par_chunks_mut(wc)
            .enumerate()
            .for_each(|(c, w)| {
                let chunks: Vec<&[f64]> = reads
                    .iter()
                    .map(|a| {
                        let ac = a.len() / CHUNKS;
                        &a[c * ac..(c + 1) * ac]
                    })
                    .collect();
                read_then_stream(&chunks, w, pattern);
            });
    }
}

impl TrafficProbe {
    /// [`TrafficProbe::pass`] with the threads of the current pool taking [`GRAB`] blocks at a
    /// time from one counter: each block reads its stretch of every array, then streams out
    /// its block of the write array (the stretches' sum).
    fn pass_shared(&mut self) {
        let blocks = self.write.len() / BLOCK;
        let stretches: Vec<usize> = self
            .reads
            .iter()
            .map(|a| (a.len() / blocks) / 8 * 8)
            .collect();
        let next = AtomicUsize::new(0);
        let (reads, w, prefetching) = (
            &self.reads,
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
                    for (r, &stretch) in reads.iter().zip(&stretches) {
                        let hi = if b + 1 == blocks {
                            r.len()
                        } else {
                            (b + 1) * stretch
                        };
                        add_stretch(&mut acc, r, b * stretch, hi, prefetching);
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

/// Reads `chunks` (one chunk of each array) in as many stretches as `w` has blocks, streaming
/// one block out after each; the first chunk is cut into `p.streams` parts, and every part and
/// every other chunk is read side by side, a stretch of each per block.
fn read_then_stream(chunks: &[&[f64]], w: &mut [f64], p: Pattern) {
    let blocks = (w.len() / BLOCK).max(1);
    let mut parts: Vec<(&[f64], usize, usize)> = Vec::new();
    for (k, r) in chunks.iter().enumerate() {
        let cuts = if k == 0 {
            parts_of(r.len(), p.streams)
        } else {
            vec![(0, r.len())]
        };
        parts.extend(cuts.into_iter().map(|(lo, hi)| (*r, lo, hi)));
    }
    let stretches: Vec<usize> = parts
        .iter()
        .map(|(_, lo, hi)| (hi - lo).div_ceil(blocks).next_multiple_of(8))
        .collect();
    let mut acc = [0.0f64; 8];
    for b in 0..blocks {
        for (&(r, lo, hi), st) in parts.iter().zip(&stretches) {
            let from = (lo + b * st).min(hi);
            add_stretch(&mut acc, r, from, (from + st).min(hi), p.prefetch);
        }
        stream_block(&mut w[b * BLOCK..(b + 1) * BLOCK], acc.iter().sum());
    }
    fence();
}

/// `len` elements cut into `streams` equal ranges starting on whole lines.
fn parts_of(len: usize, streams: usize) -> Vec<(usize, usize)> {
    let cut = |at: usize| at.next_multiple_of(8).min(len);
    let step = cut(len.div_ceil(streams.max(1))).max(8);
    (0..streams.max(1))
        .map(|k| (cut(k * step), cut((k + 1) * step)))
        .collect()
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

/// The sum of `c` in eight independent lanes (see [`add_stretch`]).
fn sum_lines(c: &[f64], prefetching: bool) -> f64 {
    let mut acc = [0.0f64; 8];
    add_stretch(&mut acc, c, 0, c.len(), prefetching);
    acc.iter().sum()
}

/// Adds `r[lo..hi]` to `acc`: whole windows of [`BLOCK`] elements (8 lines) as fixed-size
/// arrays, each window's lines [`AHEAD`] prefetched first when `prefetching` (as the diagonal
/// kernel reads its copy: `prefetch_ahead` in the kernels' runtime), then the rest line by line.
/// Why windows: a pass that stepped line by line through a slice was bound by its own loop on the
/// 2026-11-28 VM (Zen 5): 41-45 GB/s on 2 threads where a window loop over the same bytes read
/// 70-81 in the same minute (`surge-cpu/examples/probe_cmp.rs`).
#[inline(always)]
fn add_stretch(acc: &mut [f64; 8], r: &[f64], lo: usize, hi: usize, prefetching: bool) {
    let mut windows = r[lo..hi].chunks_exact(BLOCK);
    for (i, w) in (&mut windows).enumerate() {
        if prefetching {
            for l in 0..BLOCK / 8 {
                prefetch(r, lo + i * BLOCK + AHEAD + 8 * l);
            }
        }
        let w: &[f64; BLOCK] = w.try_into().expect("a window of BLOCK elements");
        for l in 0..BLOCK / 8 {
            for k in 0..8 {
                acc[k] += w[8 * l + k];
            }
        }
    }
    for line in windows.remainder().chunks(8) {
        add_line(acc, line);
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
        // The last block's sum of each chunk is the chunks' sum: all of them read, once.
        let second = [vec![], vec![8 * 8 * 3 * CHUNKS]];
        for (pattern, more) in Pattern::ALL.into_iter().flat_map(|p| [(p, 0), (p, 1)]) {
            let mut reads = vec![8 * 8 * 30 * CHUNKS];
            reads.extend(&second[more]);
            let mut p = TrafficProbe::with_arrays(&reads, 8 * BLOCK * 2 * CHUNKS, pattern);
            p.reads.iter_mut().flatten().for_each(|v| *v = 1.0);
            let read: usize = p.reads.iter().map(Vec::len).sum();
            p.pass();
            if !pattern.writes {
                // The same bytes as the other patterns, all of them read.
                let with_writes =
                    TrafficProbe::with_arrays(&reads, 8 * BLOCK * 2 * CHUNKS, Pattern::ALL[0]);
                assert!(p.write.is_empty());
                assert_eq!(p.bytes(), with_writes.bytes());
                continue;
            }
            if pattern.shared {
                // Each block holds its stretches' sum.
                let total: f64 = p.write.chunks(BLOCK).map(|b| b[0]).sum();
                assert_eq!(total, read as f64, "{pattern}");
                continue;
            }
            let wc = p.write.len() / CHUNKS;
            for c in p.write.chunks(wc) {
                assert_eq!(c[wc - 1], (read / CHUNKS) as f64, "{pattern}, {more}");
            }
        }
    }

    #[test]
    fn parts_cover_the_reads_on_whole_lines() {
        assert_eq!(parts_of(100, 1), vec![(0, 100)]);
        assert_eq!(parts_of(1000, 2), vec![(0, 504), (504, 1000)]);
        assert_eq!(parts_of(100, 3), vec![(0, 40), (40, 80), (80, 100)]);
    }

    #[test]
    fn the_reads_only_sum_adds_every_element() {
        let v: Vec<f64> = (1..=1003).map(f64::from).collect();
        assert_eq!(sum_lines(&v, true), 1003.0 * 1004.0 / 2.0);
        assert_eq!(sum_lines(&v, false), 1003.0 * 1004.0 / 2.0);
        assert_eq!(Pattern::READS_ONLY.to_string(), "reads only");
    }

    #[test]
    fn tiny_sizes_still_give_every_chunk_work() {
        let mut p = TrafficProbe::new(0, 0, Pattern::ALL[0]);
        assert_eq!(p.bytes(), 8.0 * (8.0 + 64.0) * CHUNKS as f64);
        p.pass();
        assert!(p.write.iter().all(|v| *v > 0.0));
    }
}
