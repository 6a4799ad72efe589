//! The DGEMM kernels in the CUDA emulator (every machine), compiled by NVRTC (every machine with
//! libnvrtc: CI installs it) and on a GPU against cuBLAS (ignored without one).

use super::*;
use crate::baselines::host_dgemm;
use crate::{DEFAULT_ARCH, Emulator, compile_source, nvrtc_available};
use std::sync::OnceLock;
use std::time::Instant;
use surge_codegen::gemm::cuda::{self as osf, OsfKernel};
use surge_codegen::target::CudaDevice;

/// The survivors of the H200 space (sorted), listed once per test binary.
fn h200() -> &'static [OsfKernel] {
    static S: OnceLock<Vec<OsfKernel>> = OnceLock::new();
    S.get_or_init(|| osf::survivors(&CudaDevice::builtin("h200").unwrap()).unwrap())
}

/// A handful of survivors: the paper's best (96x64x12, 128 threads), the smallest tile of the
/// fewest threads, a deep BLK_K with a narrow tile, the most threads per block, and a
/// non-power-of-two tile.
fn handful() -> Vec<OsfKernel> {
    let all = h200();
    let smallest = *all
        .iter()
        .min_by_key(|k| (k.threads(), k.blk_m * k.blk_n * k.blk_k, k.blk_k))
        .unwrap();
    let deep = *all
        .iter()
        .filter(|k| k.threads() == 64)
        .max_by_key(|k| (k.blk_k, k.blk_m))
        .unwrap();
    let widest = *all
        .iter()
        .filter(|k| k.threads() == 1024)
        .min_by_key(|k| k.blk_m * k.blk_n * k.blk_k)
        .unwrap();
    let odd = *all
        .iter()
        .find(|k| k.blk_m % 3 == 0 && k.blk_n % 5 == 0 && k.blk_k % 7 == 0 && k.threads() <= 256)
        .unwrap();
    let ks = vec![OsfKernel::PAPER_BEST, smallest, deep, widest, odd];
    for k in &ks {
        assert!(all.contains(k), "{k} survives on the H200");
    }
    ks
}

/// Awkward shapes: 1x1x1, empty C, k = 0, sizes one past and one short of the paper's best
/// tile, tall-skinny and short-wide.
const SHAPES: [(usize, usize, usize); 9] = [
    (1, 1, 1),
    (0, 5, 3),
    (4, 0, 3),
    (7, 5, 0),
    (97, 65, 13),
    (95, 63, 11),
    (301, 3, 17),
    (5, 131, 29),
    (33, 70, 40),
];

#[test]
fn the_emulator_runs_a_handful_of_survivors_on_awkward_shapes() {
    let ks = handful();
    let emu = Emulator::default();
    let t = Instant::now();
    let built = GemmKernels::build(&emu, &ks, KERNELS_PER_PROGRAM).unwrap();
    let compiled = t.elapsed();
    let t = Instant::now();
    for (m, n, k) in SHAPES {
        let a = operand(m * k, 3);
        let b = operand(k * n, 4);
        let reference = host_dgemm(m, n, k, &a, &b);
        let ops = built.upload(m, n, k, &a, &b).unwrap();
        for kernel in &ks {
            built
                .runtime()
                .fill(&ops.c, 0xff)
                .expect("C is filled with NaNs before each run");
            built
                .run(&ops, kernel)
                .unwrap_or_else(|e| panic!("{kernel} on {m}x{n}x{k}: {e}"));
            let c = built.result(&ops).unwrap();
            let err = max_rel_error((m, n, k), &a, &b, &c, &reference);
            assert!(
                err <= 1e-12,
                "{kernel} on {m}x{n}x{k}: relative error {err:e}"
            );
        }
    }
    eprintln!(
        "{} kernels: compiled for the emulator in {:.1} s, {} shapes run in {:.1} s",
        ks.len(),
        compiled.as_secs_f64(),
        SHAPES.len(),
        t.elapsed().as_secs_f64()
    );
}

#[test]
fn errors_name_the_kernel() {
    let emu = Emulator::default();
    let built = GemmKernels::build(&emu, &[OsfKernel::PAPER_BEST], 1).unwrap();
    let other = h200()[0];
    let ops = built.upload(3, 3, 3, &[1.0; 9], &[1.0; 9]).unwrap();
    let e = built.run(&ops, &other).unwrap_err().to_string();
    assert!(e.contains(&other.id()) && e.contains("not built"), "{e}");
    let e = built.upload(3, 3, 3, &[1.0; 8], &[1.0; 9]).err().unwrap();
    assert!(e.to_string().contains("a has 8 entries for 3x3"), "{e}");
    // One kernel, one call, the same C as the batch.
    let c = dgemm(
        &emu,
        &OsfKernel::PAPER_BEST,
        (2, 2, 1),
        &[1.0, 2.0],
        &[3.0, 4.0],
    )
    .unwrap();
    assert_eq!(c, [3.0, 6.0, 4.0, 8.0]);
}

/// Compiles `kernels` with NVRTC, `per` kernels per program on every core, and checks each
/// kernel's entry is in its PTX. Returns the seconds taken.
fn nvrtc_compile_all(kernels: &[OsfKernel], per: usize) -> f64 {
    nvrtc_available()
        .unwrap_or_else(|e| panic!("NVRTC is required (.ci/run installs libnvrtc): {e}"));
    let progs = osf::programs(kernels, per).unwrap();
    let t = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    crate::parallel::map(&progs, threads, |p| {
        let ptx = compile_source(&p.source, DEFAULT_ARCH)?.to_src();
        for k in &p.kernels {
            assert!(ptx.contains(&format!(".entry {}(", k.name())), "{k}");
        }
        Ok::<(), CudaError>(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let s = t.elapsed().as_secs_f64();
    eprintln!(
        "NVRTC ({DEFAULT_ARCH}): {} kernels in {} programs, {:.1} s on {threads} threads ({:.1} ms a kernel)",
        kernels.len(),
        progs.len(),
        s,
        1e3 * s / kernels.len().max(1) as f64
    );
    s
}

/// Every 2000th survivor of the H200 space and the paper's best compile with NVRTC (the full
/// space is the ignored test below: too long for CI on two cores).
#[test]
fn a_sample_of_the_h200_space_compiles_with_nvrtc() {
    let sample = osf::sample(h200(), CI_SAMPLE_EVERY);
    assert!(sample.contains(&OsfKernel::PAPER_BEST));
    nvrtc_compile_all(&sample, per_program(sample.len()));
}

/// The CI sample's stride through the sorted survivors.
const CI_SAMPLE_EVERY: usize = 2000;

#[test]
#[ignore = "long: NVRTC on every one of the H200 space's 39,623 survivors (hours on 2 cores)"]
fn every_survivor_of_the_h200_space_compiles_with_nvrtc() {
    nvrtc_compile_all(h200(), KERNELS_PER_PROGRAM);
}

/// GPU 0; these tests are ignored unless asked for, and then a missing GPU fails them.
fn device() -> crate::Device {
    crate::Device::open(0).unwrap_or_else(|e| panic!("no CUDA device: {e}"))
}

#[test]
#[ignore = "needs a GPU: every kernel of a sample against cuBLAS dgemm on n = 1024, 2048, 4096"]
fn a_sample_matches_cublas_on_a_gpu() {
    let dev = device();
    let sample = osf::sample(h200(), 2000);
    for n in [1024, 2048, 4096] {
        let r = tune(&dev, &sample, (n, n, n), 3).unwrap();
        eprintln!(
            "n = {n}: {} timed, {} failed; best {:?}, cuBLAS {:.0} GFLOP/s",
            r.timed.len(),
            r.failed.len(),
            r.best,
            r.cublas_gflops
        );
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        assert_eq!(r.timed.len(), sample.len());
    }
}

#[test]
#[ignore = "needs a GPU: tunes a sample of the H200 space at 4096^3 and reports the ratio to cuBLAS"]
fn tuning_finds_the_best_of_a_sample_against_cublas() {
    let dev = device();
    let sample = osf::sample(h200(), 200);
    let r = tune(&dev, &sample, (4096, 4096, 4096), 10).unwrap();
    let best = r.best.clone().expect("a kernel ran");
    eprintln!(
        "best of {} kernels: {} at {:.0} GFLOP/s, cuBLAS {:.0}: ratio {:.2} (goal 0.80); {} failed",
        sample.len(),
        best.kernel,
        best.gflops,
        r.cublas_gflops,
        r.ratio_vs_cublas.unwrap(),
        r.failed.len()
    );
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.ratio_vs_cublas.unwrap() > 0.0);
}
