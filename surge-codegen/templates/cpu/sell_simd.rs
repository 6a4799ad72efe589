
// ---- SELL-C-σ with explicit SIMD (templates/cpu/sell_simd.rs; see `emit/cpu/README.md`) ----

/// The explicit SIMD path the `sell<C>` kernels of the `f64` SpMV form take: 2 AVX-512F,
/// 1 AVX2, 0 none (the kernel's own loop). Detected once per process;
/// `SURGE_CPU_SIMD=avx2` or `none` lowers it, so one machine measures and tests every path.
#[inline(always)]
fn simd_level() -> u8 {
    use std::sync::atomic::{AtomicU8, Ordering};
    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
    let l = LEVEL.load(Ordering::Relaxed);
    if l != u8::MAX {
        return l;
    }
    #[cfg(target_arch = "x86_64")]
    let detected: u8 = if std::arch::is_x86_feature_detected!("avx512f") {
        2
    } else if std::arch::is_x86_feature_detected!("avx2") {
        1
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let detected: u8 = 0;
    let l = match std::env::var("SURGE_CPU_SIMD").as_deref() {
        Ok("none") => 0,
        Ok("avx2") => detected.min(1),
        _ => detected,
    };
    LEVEL.store(l, Ordering::Relaxed);
    l
}

/// Whether the kernels load `W` (4 or 8) elements of `x` at a vector of positions with the
/// hardware gather (`vgatherdpd`) rather than as pairs of scalar loads joined into a vector
/// ([`sell_pairs`]): both load the same elements, so the results are the same bits, and which is
/// faster depends on the CPU. Pairs won on AMD Zen 4 (0.26 against 0.36 ns per element in a
/// SELL-16 loop); on an Intel Xeon with AVX-512 (2026-11-29) the gather took one thread's SELL-16
/// SpMV on cti from 37.2 to 27.8 µs and on EX5 from 110 to 66.7 µs. So it is measured, once per
/// process and width ([`gather_calibrate`], about 0.1 ms); `SURGE_CPU_GATHER=hw` or `pairs`
/// sets it instead, which is how the tests check both ways on one machine.
#[inline(always)]
fn gather_hw<const W: usize>() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static G4: AtomicU8 = AtomicU8::new(u8::MAX);
    static G8: AtomicU8 = AtomicU8::new(u8::MAX);
    let g = if W == 8 { &G8 } else { &G4 };
    let l = g.load(Ordering::Relaxed);
    if l != u8::MAX {
        return l == 1;
    }
    let l = match std::env::var("SURGE_CPU_GATHER").as_deref() {
        Ok("hw") => 1,
        Ok("pairs") => 0,
        _ => u8::from(gather_calibrate::<W>()),
    };
    g.store(l, Ordering::Relaxed);
    l == 1
}

/// Times loading `W` elements of `x` at a time both ways on 2,048 pseudo-random positions of an
/// `x` of 4,096 elements (in the L1 cache, as the kernels' `x` is when the gather's cost
/// matters), seven alternating samples of each, and says whether the hardware gather's fastest
/// sample beat the pairs' fastest. `false` where the CPU lacks the width's SIMD path.
#[inline(never)]
fn gather_calibrate<const W: usize>() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if simd_level() < if W == 8 { 2 } else { 1 } {
            return false;
        }
        const N: u32 = 4096;
        let xs: Vec<f64> = (0..N).map(f64::from).collect();
        let mut s: u32 = 0x9e37_79b9;
        let pos: Vec<u32> = (0..2048)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) % N
            })
            .collect();
        let mut best = [f64::INFINITY; 2];
        for round in 0..14 {
            let hw = round % 2 == 1;
            let t = std::time::Instant::now();
            // SAFETY: the SIMD path of the width was detected; every position is below `N`.
            let sum = unsafe { if W == 8 { gather_pass8(&pos, &xs, hw) } else { gather_pass4(&pos, &xs, hw) } };
            std::hint::black_box(sum);
            let e = t.elapsed().as_secs_f64();
            best[usize::from(hw)] = best[usize::from(hw)].min(e);
        }
        best[1] < best[0]
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Sixteen passes over `pos`, eight elements of `xs` at a time, summed.
///
/// # Safety
/// AVX-512F is present; `pos.len()` is a multiple of 8 and every position is below `xs.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather_pass8(pos: &[u32], xs: &[f64], hw: bool) -> f64 {
    use std::arch::x86_64::*;
    let mut acc = _mm512_setzero_pd();
    for _ in 0..16 {
        for k in (0..pos.len()).step_by(8) {
            // SAFETY: the caller's contract.
            acc = _mm512_add_pd(acc, unsafe { sell_x8(pos.as_ptr().add(k), xs.as_ptr(), hw) });
        }
    }
    _mm512_reduce_add_pd(acc)
}

/// [`gather_pass8`] four elements at a time, on AVX2.
///
/// # Safety
/// AVX2 is present; `pos.len()` is a multiple of 4 and every position is below `xs.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_pass4(pos: &[u32], xs: &[f64], hw: bool) -> f64 {
    use std::arch::x86_64::*;
    let mut acc = _mm256_setzero_pd();
    for _ in 0..16 {
        for k in (0..pos.len()).step_by(4) {
            // SAFETY: the caller's contract.
            acc = _mm256_add_pd(acc, unsafe { sell_x4(pos.as_ptr().add(k), xs.as_ptr(), hw) });
        }
    }
    let s = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd::<1>(acc));
    _mm_cvtsd_f64(s) + _mm_cvtsd_f64(_mm_unpackhi_pd(s, s))
}

/// The SELL chunks `lo..hi` of `y = A·x` in `f64` with `u32` column indices, one SIMD lane per
/// row of a chunk; `false` when no SIMD path applies (the caller runs its own loop). Each lane
/// folds its row's products in column order from `+0.0`, one multiply (`VF`: the value is the
/// left operand) then one add, never fused, and the ragged columns are added under a mask of the
/// row lengths, so every row is bit for bit the scalar loop's. With `Some(v)` for the values
/// (`v` the one value every element has, bit for bit) the values are not read: the same
/// products, 4 instead of 12 bytes per element.
///
/// # Safety
/// Every stored index is below `xs.len()` (the host's invariant for `sell_gather`), and `out`
/// holds every row of the layout.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn sell_f64_simd<const C: usize, const VF: bool>(
    sell: (&[u32], &[u32], &[u64]),
    (vals, iso): (&[f64], Option<f64>),
    idx: &[u32],
    xs: &[f64],
    (lo, hi): (usize, usize),
    out: *mut f64,
    node: u64,
) -> bool {
    let (one, v) = (iso.is_some(), iso.unwrap_or(0.0));
    let vals = (vals, v);
    #[cfg(target_arch = "x86_64")]
    match (simd_level(), one) {
        // SAFETY: the features were detected; the rest is the caller's contract.
        (2, false) if C % 8 == 0 => {
            unsafe { sell_f64_avx512::<C, VF, false>(sell, vals, idx, xs, (lo, hi), out, node) };
            return true;
        }
        (2, true) if C % 8 == 0 => {
            unsafe { sell_f64_avx512::<C, VF, true>(sell, vals, idx, xs, (lo, hi), out, node) };
            return true;
        }
        (1 | 2, false) if C % 4 == 0 => {
            unsafe { sell_f64_avx2::<C, VF, false>(sell, vals, idx, xs, (lo, hi), out, node) };
            return true;
        }
        (1 | 2, true) if C % 4 == 0 => {
            unsafe { sell_f64_avx2::<C, VF, true>(sell, vals, idx, xs, (lo, hi), out, node) };
            return true;
        }
        _ => {}
    }
    let _ = (sell, vals, idx, xs, lo, hi, out, node);
    false
}

/// A chunk's checked extent: `(width, values, indices, rows, lengths)`.
#[inline(always)]
fn sell_simd_chunk<'a, const C: usize>(
    (perm, lens, starts): (&'a [u32], &'a [u32], &'a [u64]),
    vals: &'a [f64],
    idx: &'a [u32],
    q: usize,
    node: u64,
) -> (usize, &'a [f64], &'a [u32], &'a [u32; C], &'a [u32; C]) {
    let (a, e) = sell_chunk(starts, q, C, "map", node);
    let vq = sell_span(vals, a, e, "map", node);
    let iq = sell_span(idx, a, e, "map", node);
    let pq: &[u32; C] = sell_window(perm, q * C, "map", node);
    let lq: &[u32; C] = sell_window(lens, q * C, "map", node);
    ((e - a) / C, vq, iq, pq, lq)
}

/// Writes lane `r` of `lanes` to `out[pq[r]]` for the chunk's rows (`lq[r] > 0`).
#[inline(always)]
unsafe fn sell_simd_store<const C: usize>(lanes: &[f64; C], pq: &[u32; C], lq: &[u32; C], out: *mut f64) {
    for r in 0..C {
        if lq[r] > 0 {
            // SAFETY: the host's layout holds each output row once, below its length.
            unsafe { *out.add(pq[r] as usize) = lanes[r] };
        }
    }
}

/// Eight elements of `x` at the `u32` positions `ip[0..8]`, as one vector: the positions in one
/// vector load, then with `hw` one `vgatherdpd` ([`gather_hw`]), else the positions taken out two
/// at a time as 64-bit words and four pairs of scalar loads joined.
/// On the AMD EPYC (Zen 4) here, a SELL-16 loop over 11k rows of 13 near-diagonal columns (one
/// thread, best of ten alternating rounds at load 2-2.5) took 0.26 ns per element this way,
/// 0.30 with one scalar load per position, 0.36 with `vgatherdpd` and 0.49 as LLVM vectorized
/// the scalar loop.
///
/// # Safety
/// `ip[0..8]` are readable and each is a position of `x` (`xp`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn sell_x8(ip: *const u32, xp: *const f64, hw: bool) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let iv = _mm256_loadu_si256(ip as *const __m256i);
        if hw {
            return _mm512_i32gather_pd::<8>(iv, xp);
        }
        let (l, h) = (_mm256_castsi256_si128(iv), _mm256_extracti128_si256::<1>(iv));
        let lo = sell_pairs(xp, _mm_cvtsi128_si64(l) as u64, _mm_extract_epi64::<1>(l) as u64);
        let hi = sell_pairs(xp, _mm_cvtsi128_si64(h) as u64, _mm_extract_epi64::<1>(h) as u64);
        _mm512_insertf64x4::<1>(_mm512_castpd256_pd512(lo), hi)
    }
}

/// Four elements of `x` at the two pairs of `u32` positions packed in `p` and `q` (low half
/// first), as one vector.
///
/// # Safety
/// Each position is a position of `x` (`xp`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn sell_pairs(xp: *const f64, p: u64, q: u64) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let at = |w: u64, high: bool| xp.add(if high { w >> 32 } else { w & 0xffff_ffff } as usize);
        let a = _mm_loadh_pd(_mm_load_sd(at(p, false)), at(p, true));
        let b = _mm_loadh_pd(_mm_load_sd(at(q, false)), at(q, true));
        _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(a), b)
    }
}

/// Four elements of `x` at the `u32` positions `ip[0..4]`, as one vector (see [`sell_x8`]; `hw`
/// as there).
///
/// # Safety
/// As for [`sell_x8`], with four positions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn sell_x4(ip: *const u32, xp: *const f64, hw: bool) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let v = _mm_loadu_si128(ip as *const __m128i);
        if hw {
            return _mm256_i32gather_pd::<8>(xp, v);
        }
        sell_pairs(xp, _mm_cvtsi128_si64(v) as u64, _mm_extract_epi64::<1>(v) as u64)
    }
}

/// [`sell_f64_simd`] on AVX-512F: a chunk column is `C / 8` vectors (eight `x` elements loaded
/// by [`sell_x8`], a multiply and an add each).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sell_f64_avx512<const C: usize, const VF: bool, const ISO: bool>(
    sell: (&[u32], &[u32], &[u64]),
    (vals, iso): (&[f64], f64),
    idx: &[u32],
    xs: &[f64],
    (lo, hi): (usize, usize),
    out: *mut f64,
    node: u64,
) {
    use std::arch::x86_64::*;
    const MAX: usize = 2;
    let nv = C / 8;
    let (xp, hw) = (xs.as_ptr(), gather_hw::<8>());
    let one = _mm512_set1_pd(iso);
    for q in lo..hi {
        let (w, vq, iq, pq, lq) = sell_simd_chunk::<C>(sell, vals, idx, q, node);
        let full = (lq.iter().copied().min().unwrap_or(0) as usize).min(w);
        let mut acc = [_mm512_setzero_pd(); MAX];
        let (vp, ip) = (vq.as_ptr(), iq.as_ptr());
        // SAFETY (loads): `k < w`, so `k * C + v * 8 + 8 <= w * C = vq.len() = iq.len()`; the
        // loaded positions are stored indices, below `xs.len()` (the caller's contract).
        for k in 0..full {
            for (v, a) in acc.iter_mut().enumerate().take(nv) {
                let o = k * C + v * 8;
                let x = unsafe { sell_x8(ip.add(o), xp, hw) };
                let m = if ISO { one } else { unsafe { _mm512_loadu_pd(vp.add(o)) } };
                let p = if VF { _mm512_mul_pd(m, x) } else { _mm512_mul_pd(x, m) };
                *a = _mm512_add_pd(*a, p);
            }
        }
        if full < w {
            let mut len = [_mm512_setzero_si512(); MAX];
            for (v, l) in len.iter_mut().enumerate().take(nv) {
                // SAFETY: `v * 8 + 8 <= C`.
                *l = _mm512_cvtepu32_epi64(unsafe {
                    _mm256_loadu_si256(lq.as_ptr().add(v * 8) as *const __m256i)
                });
            }
            for k in full..w {
                let kk = _mm512_set1_epi64(k as i64);
                for (v, a) in acc.iter_mut().enumerate().take(nv) {
                    let o = k * C + v * 8;
                    let x = unsafe { sell_x8(ip.add(o), xp, hw) };
                    let m = if ISO { one } else { unsafe { _mm512_loadu_pd(vp.add(o)) } };
                    let p = if VF { _mm512_mul_pd(m, x) } else { _mm512_mul_pd(x, m) };
                    let live = _mm512_cmpgt_epu64_mask(len[v], kk);
                    *a = _mm512_mask_add_pd(*a, live, *a, p);
                }
            }
        }
        let mut lanes = [0.0f64; C];
        for (v, a) in acc.iter().enumerate().take(nv) {
            // SAFETY: `v * 8 + 8 <= C`.
            unsafe { _mm512_storeu_pd(lanes.as_mut_ptr().add(v * 8), *a) };
        }
        unsafe { sell_simd_store(&lanes, pq, lq, out) };
    }
}

/// [`sell_f64_simd`] on AVX2: a chunk column is `C / 4` vectors of four lanes ([`sell_x4`]), the ragged
/// columns blended by a compare of the row lengths.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sell_f64_avx2<const C: usize, const VF: bool, const ISO: bool>(
    sell: (&[u32], &[u32], &[u64]),
    (vals, iso): (&[f64], f64),
    idx: &[u32],
    xs: &[f64],
    (lo, hi): (usize, usize),
    out: *mut f64,
    node: u64,
) {
    use std::arch::x86_64::*;
    const MAX: usize = 4;
    let nv = C / 4;
    let (xp, hw) = (xs.as_ptr(), gather_hw::<4>());
    let one = _mm256_set1_pd(iso);
    for q in lo..hi {
        let (w, vq, iq, pq, lq) = sell_simd_chunk::<C>(sell, vals, idx, q, node);
        let full = (lq.iter().copied().min().unwrap_or(0) as usize).min(w);
        let mut acc = [_mm256_setzero_pd(); MAX];
        let (vp, ip) = (vq.as_ptr(), iq.as_ptr());
        // SAFETY (loads): as in `sell_f64_avx512`, with vectors of 4.
        for k in 0..full {
            for (v, a) in acc.iter_mut().enumerate().take(nv) {
                let o = k * C + v * 4;
                let x = unsafe { sell_x4(ip.add(o), xp, hw) };
                let m = if ISO { one } else { unsafe { _mm256_loadu_pd(vp.add(o)) } };
                let p = if VF { _mm256_mul_pd(m, x) } else { _mm256_mul_pd(x, m) };
                *a = _mm256_add_pd(*a, p);
            }
        }
        if full < w {
            let mut len = [_mm256_setzero_si256(); MAX];
            for (v, l) in len.iter_mut().enumerate().take(nv) {
                // SAFETY: `v * 4 + 4 <= C`.
                *l = _mm256_cvtepu32_epi64(unsafe {
                    _mm_loadu_si128(lq.as_ptr().add(v * 4) as *const __m128i)
                });
            }
            for k in full..w {
                let kk = _mm256_set1_epi64x(k as i64);
                for (v, a) in acc.iter_mut().enumerate().take(nv) {
                    let o = k * C + v * 4;
                    let x = unsafe { sell_x4(ip.add(o), xp, hw) };
                    let m = if ISO { one } else { unsafe { _mm256_loadu_pd(vp.add(o)) } };
                    let p = if VF { _mm256_mul_pd(m, x) } else { _mm256_mul_pd(x, m) };
                    // Lengths and `k` are below 2^32: the signed compare is exact.
                    let live = _mm256_castsi256_pd(_mm256_cmpgt_epi64(len[v], kk));
                    *a = _mm256_blendv_pd(*a, _mm256_add_pd(*a, p), live);
                }
            }
        }
        let mut lanes = [0.0f64; C];
        for (v, a) in acc.iter().enumerate().take(nv) {
            // SAFETY: `v * 4 + 4 <= C`.
            unsafe { _mm256_storeu_pd(lanes.as_mut_ptr().add(v * 4), *a) };
        }
        unsafe { sell_simd_store(&lanes, pq, lq, out) };
    }
}
