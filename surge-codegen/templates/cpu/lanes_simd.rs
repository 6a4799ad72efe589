
// ---- Rows in four partial sums (`lanes` kernels; templates/cpu/lanes.rs.tera) ----

/// Checks that rows `lo..hi` have starts and that their last element is within `len`.
#[inline(always)]
fn lanes_extent(starts: &[u64], (lo, hi): (usize, usize), len: usize, op: &str, node: u64) {
    match (starts.get(lo), starts.get(hi)) {
        (Some(&a), Some(&e)) if lo <= hi && a <= e && e <= len as u64 => {}
        _ => fail(op, node, format!("rows {lo}..{hi} outside the lanes layout ({} starts, {len} elements)", starts.len())),
    }
}

/// The lanes kernel for the layout the host built: `narrow` (the column indices as `u16`, the
/// inspector's copy where `x` has at most 65,536 elements; empty: `idx`) and `iso` (the one
/// value every element of the rows has, bit for bit; empty: `vals`). Every form computes the
/// same products in the same order, so the result is the same bits: narrower indices and no
/// values array only move fewer bytes (2 or 4 instead of 12 per element).
///
/// # Safety
/// As for [`lanes_f64`], for the indices and values that are read (`narrow` as long as `idx`
/// when not empty).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn lanes_any<const VF: bool>(
    starts: &[u64],
    vals: &[f64],
    idx: &[u32],
    narrow: &[u16],
    iso: &[f64],
    xs: &[f64],
    rows: (usize, usize),
    out: *mut f64,
) {
    // SAFETY: the caller's contract.
    unsafe {
        match (narrow.is_empty(), iso.first()) {
            (true, None) => lanes_f64::<VF, false, false>(starts, (vals, 0.0), (idx, narrow), xs, rows, out),
            (false, None) => lanes_f64::<VF, true, false>(starts, (vals, 0.0), (idx, narrow), xs, rows, out),
            (true, Some(&v)) => lanes_f64::<VF, false, true>(starts, (vals, v), (idx, narrow), xs, rows, out),
            (false, Some(&v)) => lanes_f64::<VF, true, true>(starts, (vals, v), (idx, narrow), xs, rows, out),
        }
    }
}

/// Rows `lo..hi` of `y = A·x` in `f64`, each row's products in four partial sums (element `k`
/// of the row into sum `k mod 4`, each sum from `+0.0`, one multiply then one add, never fused),
/// the row `(s0 + s2) + (s1 + s3)`. The column indices are `idx` (`u32`) or, with `U16`, `narrow`;
/// the values `vals` or, with `ISO`, the one value `iso` (`(vals, iso)`). AVX2 where the CPU has
/// it (`simd_level`), else the same order in scalar code: bit for bit the same result either way.
/// Why four sums: one row's sum is one chain of dependent adds; four chains in one vector keep
/// the adds' latency off the critical path, as MKL's CSR kernel does with its two 2-lane sums.
///
/// # Safety
/// `starts[lo..=hi]` increase, `starts[hi] <= vals.len(), idx.len()` (and `narrow.len()` with
/// `U16`), and every index of those rows is below `xs.len()`; `out` holds rows `lo..hi`.
#[inline(always)]
unsafe fn lanes_f64<const VF: bool, const U16: bool, const ISO: bool>(
    starts: &[u64],
    (vals, iso): (&[f64], f64),
    (idx, narrow): (&[u32], &[u16]),
    xs: &[f64],
    rows: (usize, usize),
    out: *mut f64,
) {
    #[cfg(target_arch = "x86_64")]
    if simd_level() >= 1 {
        // SAFETY: AVX2 was detected; the rest is the caller's contract.
        unsafe { lanes_f64_avx2::<VF, U16, ISO>(starts, (vals, iso), (idx, narrow), xs, rows, out) };
        return;
    }
    for i in rows.0..rows.1 {
        let mut s = [0.0f64; 4];
        for (j, k) in (starts[i] as usize..starts[i + 1] as usize).enumerate() {
            let c = if U16 { narrow[k] as usize } else { idx[k] as usize };
            let (v, x) = (if ISO { iso } else { vals[k] }, xs[c]);
            s[j % 4] += if VF { v * x } else { x * v };
        }
        // SAFETY: row `i` of `out` (the caller's contract).
        unsafe { *out.add(i) = (s[0] + s[2]) + (s[1] + s[3]) };
    }
}

/// Four elements of `x` at the `u16` positions `ip[0..4]`, as one vector (see [`sell_x4`]; `hw`
/// as there).
///
/// # Safety
/// As for [`sell_x4`], with `u16` positions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lanes_x4_u16(ip: *const u16, xp: *const f64, hw: bool) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract (four `u16` readable at `ip`, each a position of `x`).
    unsafe {
        let w = (ip as *const u64).read_unaligned() as usize;
        if hw {
            return _mm256_i32gather_pd::<8>(xp, _mm_cvtepu16_epi32(_mm_cvtsi64_si128(w as i64)));
        }
        let a = _mm_loadh_pd(_mm_load_sd(xp.add(w & 0xffff)), xp.add((w >> 16) & 0xffff));
        let b = _mm_loadh_pd(_mm_load_sd(xp.add((w >> 32) & 0xffff)), xp.add(w >> 48));
        _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(a), b)
    }
}

/// [`lanes_f64`] on AVX2: four elements of a row per step (`sell_x4` or `lanes_x4_u16` loads
/// their `x`), the last one to three with their values masked (loaded through the mask, or the
/// one value and-ed with it) and their `x` zero, so the other lanes add `0 · 0 = +0.0` (a partial
/// sum starts at `+0.0` and is never `-0.0` under round-to-nearest, so adding `+0.0` leaves it
/// unchanged; a masked value is `+0.0` even where the one value is infinite or NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_f64_avx2<const VF: bool, const U16: bool, const ISO: bool>(
    starts: &[u64],
    (vals, iso): (&[f64], f64),
    (idx, narrow): (&[u32], &[u16]),
    xs: &[f64],
    (lo, hi): (usize, usize),
    out: *mut f64,
) {
    use std::arch::x86_64::*;
    let (xp, vp, sp) = (xs.as_ptr(), vals.as_ptr(), starts.as_ptr());
    let (ip, np) = (idx.as_ptr(), narrow.as_ptr());
    let hw = gather_hw::<4>();
    let lane = _mm256_setr_epi64x(0, 1, 2, 3);
    let one = _mm256_set1_pd(iso);
    // SAFETY (loads): `starts[lo..=hi]` increase up to `vals.len()` and the indices' length, so
    // every `k` below is a position of both, and `xs` holds every index (the caller's contract).
    unsafe {
        let col = |k: usize| if U16 { *np.add(k) as usize } else { *ip.add(k) as usize };
        let mut e = *sp.add(lo) as usize;
        for i in lo..hi {
            let mut k = e;
            e = *sp.add(i + 1) as usize;
            let mut acc = _mm256_setzero_pd();
            while k + 4 <= e {
                let x = if U16 { lanes_x4_u16(np.add(k), xp, hw) } else { sell_x4(ip.add(k), xp, hw) };
                let m = if ISO { one } else { _mm256_loadu_pd(vp.add(k)) };
                acc = _mm256_add_pd(acc, if VF { _mm256_mul_pd(m, x) } else { _mm256_mul_pd(x, m) });
                k += 4;
            }
            let r = e - k;
            if r > 0 {
                let at = |j: usize| if j < r { *xp.add(col(k + j)) } else { 0.0 };
                let x = _mm256_setr_pd(at(0), at(1), at(2), 0.0);
                let live = _mm256_cmpgt_epi64(_mm256_set1_epi64x(r as i64), lane);
                let m = if ISO {
                    _mm256_and_pd(_mm256_castsi256_pd(live), one)
                } else {
                    _mm256_maskload_pd(vp.add(k), live)
                };
                acc = _mm256_add_pd(acc, if VF { _mm256_mul_pd(m, x) } else { _mm256_mul_pd(x, m) });
            }
            let s = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd::<1>(acc));
            *out.add(i) = _mm_cvtsd_f64(s) + _mm_cvtsd_f64(_mm_unpackhi_pd(s, s));
        }
    }
}
