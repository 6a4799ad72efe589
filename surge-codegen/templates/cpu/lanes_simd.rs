
// ---- Rows in four partial sums (`lanes` kernels; templates/cpu/lanes.rs.tera) ----

/// Checks that rows `lo..hi` have starts and that their last element is within `len`.
#[inline(always)]
fn lanes_extent(starts: &[u64], (lo, hi): (usize, usize), len: usize, op: &str, node: u64) {
    match (starts.get(lo), starts.get(hi)) {
        (Some(&a), Some(&e)) if lo <= hi && a <= e && e <= len as u64 => {}
        _ => fail(op, node, format!("rows {lo}..{hi} outside the lanes layout ({} starts, {len} elements)", starts.len())),
    }
}

/// Rows `lo..hi` of `y = A·x` in `f64` with `u32` column indices, each row's products in four
/// partial sums (element `k` of the row into sum `k mod 4`, each sum from `+0.0`, one multiply
/// then one add, never fused), the row `(s0 + s2) + (s1 + s3)`. AVX2 where the CPU has it
/// (`simd_level`), else the same order in scalar code: bit for bit the same result either way.
/// Why four sums: one row's sum is one chain of dependent adds; four chains in one vector keep
/// the adds' latency off the critical path, as MKL's CSR kernel does with its two 2-lane sums.
///
/// # Safety
/// `starts[lo..=hi]` increase, `starts[hi] <= vals.len(), idx.len()`, and every index of those
/// rows is below `xs.len()`; `out` holds rows `lo..hi`.
#[inline(always)]
unsafe fn lanes_f64<const VF: bool>(
    starts: &[u64],
    vals: &[f64],
    idx: &[u32],
    xs: &[f64],
    rows: (usize, usize),
    out: *mut f64,
) {
    #[cfg(target_arch = "x86_64")]
    if simd_level() >= 1 {
        // SAFETY: AVX2 was detected; the rest is the caller's contract.
        unsafe { lanes_f64_avx2::<VF>(starts, vals, idx, xs, rows, out) };
        return;
    }
    for i in rows.0..rows.1 {
        let mut s = [0.0f64; 4];
        for (j, k) in (starts[i] as usize..starts[i + 1] as usize).enumerate() {
            let (v, x) = (vals[k], xs[idx[k] as usize]);
            s[j % 4] += if VF { v * x } else { x * v };
        }
        // SAFETY: row `i` of `out` (the caller's contract).
        unsafe { *out.add(i) = (s[0] + s[2]) + (s[1] + s[3]) };
    }
}

/// [`lanes_f64`] on AVX2: four elements of a row per step (`sell_x4` loads their `x`), the last
/// one to three through masked loads whose other lanes add `0 · 0 = +0.0` (a partial sum starts
/// at `+0.0` and is never `-0.0` under round-to-nearest, so adding `+0.0` leaves it unchanged).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_f64_avx2<const VF: bool>(
    starts: &[u64],
    vals: &[f64],
    idx: &[u32],
    xs: &[f64],
    (lo, hi): (usize, usize),
    out: *mut f64,
) {
    use std::arch::x86_64::*;
    let (xp, vp, ip, sp) = (xs.as_ptr(), vals.as_ptr(), idx.as_ptr(), starts.as_ptr());
    let lane = _mm256_setr_epi64x(0, 1, 2, 3);
    // SAFETY (loads): `starts[lo..=hi]` increase up to `vals.len()` and `idx.len()`, so every `k`
    // below is a position of both, and `xs` holds every index (the caller's contract).
    unsafe {
        let mut e = *sp.add(lo) as usize;
        for i in lo..hi {
            let mut k = e;
            e = *sp.add(i + 1) as usize;
            let mut acc = _mm256_setzero_pd();
            while k + 4 <= e {
                let x = sell_x4(ip.add(k), xp);
                let m = _mm256_loadu_pd(vp.add(k));
                acc = _mm256_add_pd(acc, if VF { _mm256_mul_pd(m, x) } else { _mm256_mul_pd(x, m) });
                k += 4;
            }
            let r = e - k;
            if r > 0 {
                let at = |j: usize| if j < r { *xp.add(*ip.add(k + j) as usize) } else { 0.0 };
                let x = _mm256_setr_pd(at(0), at(1), at(2), 0.0);
                let live = _mm256_cmpgt_epi64(_mm256_set1_epi64x(r as i64), lane);
                let m = _mm256_maskload_pd(vp.add(k), live);
                acc = _mm256_add_pd(acc, if VF { _mm256_mul_pd(m, x) } else { _mm256_mul_pd(x, m) });
            }
            let s = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd::<1>(acc));
            *out.add(i) = _mm_cvtsd_f64(s) + _mm_cvtsd_f64(_mm_unpackhi_pd(s, s));
        }
    }
}
