//! Does MKL win SpMV by exploiting diagonal structure? Times MKL (after `mkl_sparse_optimize`)
//! and hand-written CSR loops on a structured matrix and on the same matrix with its columns
//! permuted inside aligned blocks of 64: rows, row lengths and the cache lines of `x` touched stay
//! the same, but the offsets from the diagonal no longer repeat. If MKL's lead disappears on the
//! shuffled copy, it comes from an index-free (diagonal-like) storage its inspector chose, not from
//! a better CSR loop.
//!
//! Also times an AVX-512 row kernel with hardware gathers, which are slow on CPUs with the Gather
//! Data Sampling microcode mitigation.
//!
//! `cargo run --release -p benchmarks --bin spmv_structure -- [laplacian|banded|FILE.mtx]`

use std::time::Instant;
use surge::apps::matgen;
use surge::bench::measure;
use surge::bench::mkl_csr;
use surge::mtx::CsrMatrix;
use surge_cpu::baseline::mkl::{Mkl, MklCsr};

/// `y[lo..hi]` by the textbook CSR loop: one accumulator per row.
fn csr_one_accumulator(m: &CsrMatrix, x: &[f64], y: &mut [f64], lo: usize) {
    for (r, yi) in y.iter_mut().enumerate() {
        let i = lo + r;
        let (a, b) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
        let mut s = 0.0;
        for (v, c) in m.values[a..b].iter().zip(&m.col_indices[a..b]) {
            s += v * x[*c as usize];
        }
        *yi = s;
    }
}

/// The same with four accumulators over consecutive elements.
fn csr_four_accumulators(m: &CsrMatrix, x: &[f64], y: &mut [f64], lo: usize) {
    for (r, yi) in y.iter_mut().enumerate() {
        let i = lo + r;
        let (a, b) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
        let (vals, cols) = (&m.values[a..b], &m.col_indices[a..b]);
        let mut s = [0.0f64; 4];
        let mut vc = vals.chunks_exact(4);
        let mut cc = cols.chunks_exact(4);
        for (v, c) in (&mut vc).zip(&mut cc) {
            for l in 0..4 {
                s[l] += v[l] * x[c[l] as usize];
            }
        }
        for (v, c) in vc.remainder().iter().zip(cc.remainder()) {
            s[0] += v * x[*c as usize];
        }
        *yi = (s[0] + s[1]) + (s[2] + s[3]);
    }
}

/// Eight elements of a row at a time with `vgatherdpd`; `None` without AVX-512.
fn csr_avx512_gather(m: &CsrMatrix, x: &[f64], y: &mut [f64], lo: usize) -> Option<()> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
    {
        assert!(m.col_indices.iter().all(|&c| (c as usize) < x.len()));
        // SAFETY: the features were detected above and every column index is below x.len().
        unsafe { gather_rows(m, x, y, lo) };
        return Some(());
    }
    let _ = (m, x, y, lo);
    None
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn gather_rows(m: &CsrMatrix, x: &[f64], y: &mut [f64], lo: usize) {
    use std::arch::x86_64::*;
    let (vp, cp, xp) = (m.values.as_ptr(), m.col_indices.as_ptr(), x.as_ptr());
    for (r, yi) in y.iter_mut().enumerate() {
        let i = lo + r;
        let (a, b) = (m.row_offsets[i] as usize, m.row_offsets[i + 1] as usize);
        let mut acc = _mm512_setzero_pd();
        let mut k = a;
        // SAFETY: k + 8 <= b (then a mask of b - k lanes) keeps every load inside the row, and
        // the caller checked the column indices.
        unsafe {
            while k + 8 <= b {
                let idx = _mm256_loadu_si256(cp.add(k) as *const __m256i);
                let g = _mm512_i32gather_pd::<8>(idx, xp);
                acc = _mm512_fmadd_pd(_mm512_loadu_pd(vp.add(k)), g, acc);
                k += 8;
            }
            if k < b {
                let mask = ((1u32 << (b - k)) - 1) as __mmask8;
                let idx = _mm256_maskz_loadu_epi32(mask, cp.add(k) as *const i32);
                let g = _mm512_mask_i32gather_pd::<8>(_mm512_setzero_pd(), mask, idx, xp);
                acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(mask, vp.add(k)), g, acc);
            }
        }
        *yi = _mm512_reduce_add_pd(acc);
    }
}

/// Rows split into `threads` equal contiguous ranges, one scoped thread each.
fn rows_in_parallel(threads: usize, y: &mut [f64], f: impl Fn(&mut [f64], usize) + Sync) {
    let per = y.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (t, part) in y.chunks_mut(per).enumerate() {
            let f = &f;
            s.spawn(move || f(part, t * per));
        }
    });
}

/// Permutes columns inside aligned blocks of 64 (one fixed random permutation), keeping rows sorted.
fn shuffle_within_blocks(mut m: CsrMatrix) -> CsrMatrix {
    let mut rng = matgen::Rng::new(11);
    let mut perm: Vec<u32> = (0..64).collect();
    for i in (1..64).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let cols = m.cols as u32;
    for c in m.col_indices.iter_mut() {
        let p = *c / 64 * 64 + perm[(*c % 64) as usize];
        // The last, partial block keeps its columns.
        if cols - *c / 64 * 64 >= 64 {
            *c = p;
        }
    }
    for r in 0..m.rows {
        let (a, b) = (m.row_offsets[r] as usize, m.row_offsets[r + 1] as usize);
        let mut row: Vec<(u32, f64)> = (a..b).map(|k| (m.col_indices[k], m.values[k])).collect();
        row.sort_by_key(|e| e.0);
        for (k, (c, v)) in (a..b).zip(row) {
            m.col_indices[k] = c;
            m.values[k] = v;
        }
    }
    m
}

/// One SpMV into `y`; false when the kernel cannot run here.
type Kernel<'a> = dyn Fn(&CsrMatrix, &[f64], &mut [f64]) -> bool + 'a;

fn main() {
    let which = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "laplacian".into());
    let structured = match which.as_str() {
        "laplacian" => matgen::laplacian_2d(2048),
        "banded" => matgen::banded(2_000_000, 5, 7),
        path => match surge::mtx::read_mtx(std::path::Path::new(path)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        },
    };
    let t = Instant::now();
    let shuffled = shuffle_within_blocks(structured.clone());
    eprintln!("shuffled copy built in {:.1} s", t.elapsed().as_secs_f64());
    let mkl = Mkl::get();
    if let Err(e) = &mkl {
        eprintln!("MKL is not available ({e}); timing the CSR loops only");
    }
    println!(
        "GFLOP/s, median of 10 runs; {which}: {} rows, {} nonzeros",
        structured.rows,
        structured.nnz()
    );
    println!("{:<36} {:>10} {:>10}", "kernel", "structured", "shuffled");
    for threads in [1, 2] {
        let row = |name: &str, f: &Kernel<'_>| {
            let mut cells = Vec::new();
            for m in [&structured, &shuffled] {
                let x: Vec<f64> = (0..m.cols).map(|j| 1.0 + (j % 7) as f64 * 0.125).collect();
                let mut y = vec![0.0; m.rows];
                if !f(m, &x, &mut y) {
                    return;
                }
                let t = measure(2, 10, || f(m, &x, &mut y));
                cells.push(2.0 * m.nnz() as f64 / t.median / 1e9);
            }
            println!(
                "{:<36} {:>10.2} {:>10.2}",
                format!("{name}, {threads} thread(s)"),
                cells[0],
                cells[1]
            );
        };
        row("CSR, one accumulator", &|m, x, y| {
            rows_in_parallel(threads, y, |p, lo| csr_one_accumulator(m, x, p, lo));
            true
        });
        row("CSR, four accumulators", &|m, x, y| {
            rows_in_parallel(threads, y, |p, lo| csr_four_accumulators(m, x, p, lo));
            true
        });
        row("CSR, AVX-512 gathers", &|m, x, y| {
            let ok = std::sync::atomic::AtomicBool::new(true);
            rows_in_parallel(threads, y, |p, lo| {
                if csr_avx512_gather(m, x, p, lo).is_none() {
                    ok.store(false, std::sync::atomic::Ordering::Relaxed);
                }
            });
            ok.into_inner()
        });
        if let Ok(lib) = mkl {
            // A handle runs on the threads it was optimized under: set them first.
            let set = lib.set_threads(threads).is_ok();
            let handles: Vec<Option<MklCsr>> = [&structured, &shuffled]
                .iter()
                .map(|m| mkl_csr(m, 1000).ok())
                .collect();
            if set {
                row("MKL (optimized)", &|m, x, y| {
                    let h = if std::ptr::eq(m, &structured) {
                        &handles[0]
                    } else {
                        &handles[1]
                    };
                    h.as_ref().is_some_and(|h| h.mv(x, y).is_ok())
                });
                lib.settle();
            }
        }
    }
}
