//! Peak double-precision FLOP/s probe on all cores: independent chains of vector FMAs (enough
//! of them to cover the FMA latency on two pipes), run on every thread of a pool at once. The
//! compute limit GEMM results are reported against; the best of several passes, as STREAM does
//! for bandwidth.

use std::time::Instant;

/// A measured peak.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Peak {
    /// 10⁹ double-precision flops per second (an FMA counts 2).
    pub gflops: f64,
    pub threads: usize,
    /// The instruction set the loop used: `avx512`, `avx2` or `scalar`.
    pub isa: &'static str,
}

/// Measures with `threads` threads, each running `iters` iterations of the FMA loop per pass,
/// best of `passes`.
pub fn probe(threads: usize, iters: u64, passes: usize) -> Peak {
    let pool = crate::native::skeleton::pool(threads);
    let (isa, flops_per_iter) = isa();
    let mut best = f64::INFINITY;
    for _ in 0..passes.max(1) {
        let t = Instant::now();
        pool.broadcast(|_| std::hint::black_box(fma_loop(iters)));
        best = best.min(t.elapsed().as_secs_f64());
    }
    Peak {
        gflops: threads as f64 * iters as f64 * flops_per_iter / best / 1e9,
        threads,
        isa,
    }
}

/// Chains of independent FMAs per iteration: 12 covers 2 pipes × 5 cycles of latency.
const CHAINS: usize = 12;

/// The instruction set the probe uses on this CPU (`avx512`, `avx2` or `scalar`).
pub fn isa_name() -> &'static str {
    isa().0
}

fn isa() -> (&'static str, f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            return ("avx512", (CHAINS * 8 * 2) as f64);
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            return ("avx2", (CHAINS * 4 * 2) as f64);
        }
    }
    ("scalar", (CHAINS * 2) as f64)
}

fn fma_loop(iters: u64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the feature was detected.
            return unsafe { x86::fma512(iters) };
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the features were detected.
            return unsafe { x86::fma256(iters) };
        }
    }
    scalar(iters)
}

fn scalar(iters: u64) -> f64 {
    let mut acc = [1.0f64; CHAINS];
    let (a, b) = (
        std::hint::black_box(0.999_999_9),
        std::hint::black_box(1e-9),
    );
    for _ in 0..iters {
        for x in &mut acc {
            *x = x.mul_add(a, b);
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CHAINS;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma256(iters: u64) -> f64 {
        let a = _mm256_set1_pd(std::hint::black_box(0.999_999_9));
        let b = _mm256_set1_pd(std::hint::black_box(1e-9));
        let mut acc = [_mm256_set1_pd(1.0); CHAINS];
        for _ in 0..iters {
            for x in &mut acc {
                *x = _mm256_fmadd_pd(*x, a, b);
            }
        }
        let mut out = [0.0f64; 4];
        let s = acc
            .iter()
            .fold(_mm256_setzero_pd(), |s, x| _mm256_add_pd(s, *x));
        // SAFETY: `out` holds 4 doubles.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), s) };
        out.iter().sum()
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma512(iters: u64) -> f64 {
        let a = _mm512_set1_pd(std::hint::black_box(0.999_999_9));
        let b = _mm512_set1_pd(std::hint::black_box(1e-9));
        let mut acc = [_mm512_set1_pd(1.0); CHAINS];
        for _ in 0..iters {
            for x in &mut acc {
                *x = _mm512_fmadd_pd(*x, a, b);
            }
        }
        let mut out = [0.0f64; 8];
        let s = acc
            .iter()
            .fold(_mm512_setzero_pd(), |s, x| _mm512_add_pd(s, *x));
        // SAFETY: `out` holds 8 doubles.
        unsafe { _mm512_storeu_pd(out.as_mut_ptr(), s) };
        out.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_peak_is_positive_and_counts_threads() {
        let p = super::probe(1, 1000, 2);
        assert!(p.gflops > 0.0 && p.gflops.is_finite(), "{p:?}");
        assert_eq!(p.threads, 1);
    }
}
