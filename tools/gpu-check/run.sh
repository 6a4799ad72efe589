#!/usr/bin/env bash
# The GPU check, run on the device machine from the repository root with .dev carried:
# `bash .dev/run.sh tests` runs the ignored GPU tests and random programs on the GPU (about 300 s),
# `bash .dev/run.sh benches` the CUDA benches with stage timings (about 300 s); no argument runs
# both (over one call's 600 s limit on a cold machine). Logs and JSON go to $OUT (eight files at
# most come back). Every step has its own time limit.
#
# Building is the slow part: NVRTC and the driver's PTX JIT take 30-40 s for one random program's
# variants on 16 cores. The driver caches what it JITs, so on a machine still warm from an earlier
# call the same tests take a fraction (the conformance suite: 3 of 8 done in 265 s cold, all 8 in
# 60 s warm, on an H200).
cd "$(dirname "$0")"; D=$PWD; OUT=${OUT:-$D/out}; mkdir -p "$OUT"; what=${1:-all}
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
tar xJf bundle.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# cudarc looks for libnvrtc.so, libcublas.so, libcusparse.so: link CUDA's own (PyTorch's venv
# ships CUDA 13's as Python packages).
mkdir -p /tmp/cl; LP=/tmp/cl
for n in nvrtc cublas cusparse; do
  f=$(find /usr/local/cuda*/ /opt /usr/lib -name "lib$n.so.*" -type f 2>/dev/null | sort | head -1)
  echo "lib$n: ${f:-not found}"; [ -n "$f" ] && ln -sf "$f" /tmp/cl/lib$n.so && LP="$LP:$(dirname "$f")"
done
export LD_LIBRARY_PATH="$LP:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"
# The tests read ../../shared/matrices relative to their crate's build-time path.
mkdir -p /work/main/tests /work/main/surge /work/shared
[ -e /work/shared/matrices ] || ln -s "$D/matrices" /work/shared/matrices
export RUSTC=$D/fakerustc SURGE_CACHE=$D/cache SURGE_TRACE=1  # an empty cache: no rustc there
if [ "$what" != benches ]; then
el "GPU tests (in parallel)"
# The random programs (CI's seed, then others) with every CUDA variant run on the GPU, not in the
# emulator: the emulator's verdicts checked against the device's.
# Each run prints its report only when it finishes: three seeds of six cases, side by side (CI's
# seed 19; 31 and 34 hold scans inside element expressions, read lazily since 2026-11-27).
rg() { SURGE_RANDOM_CPU=0 SURGE_RANDOM_GPU=1 SURGE_RANDOM_SEED=$1 SURGE_RANDOM_CASES=6 \
  timeout 250 bin/random_programs --ignored --nocapture many_random; echo "seed $1: rc=$?"; }
( rg 19 & rg 31 & rg 34 & wait ) > "$OUT/random-gpu.log" 2>&1 &
rp=$!
# Every survivor of the H200 GEMM space through NVRTC takes hours: not part of the check.
timeout 170 bin/surge_cuda --ignored --skip every_survivor_of_the_h200_space_compiles_with_nvrtc > "$OUT/t-surge-cuda.log" 2>&1 & ts=($!)
timeout 250 bin/conformance_cuda --ignored > "$OUT/t-conformance-cuda.log" 2>&1 & ts+=($!)
timeout 170 bin/cuda_checks --ignored > "$OUT/t-cuda-checks.log" 2>&1 & ts+=($!)
timeout 170 bin/tune_backends --ignored > "$OUT/t-tune-backends.log" 2>&1 & ts+=($!)
wait "${ts[@]}"
for f in "$OUT"/t-*.log; do echo "== $f"; grep -E "^test result|FAILED|panicked" "$f" | head -8; done
# Eight files at most come back: the four logs as one.
for f in "$OUT"/t-*.log; do echo "==== $f"; cat "$f"; done > "$OUT/tests.log"; rm -f "$OUT"/t-*.log
wait $rp; grep -E "^seed|^CUDA|FAILED|panicked" "$OUT/random-gpu.log"
fi
if [ "$what" != tests ]; then
# k-means on the GPU: the first run NVRTC-compiles both programs, the second finds them cached.
el "kmeans"; for n in 1000000 100000; do timeout 50 bin/surge run kmeans --platform cuda --size $n --iterations 20 --seed 1 --json > "$OUT/k-$n.json"; echo "rc=$?"; done
el "bench gemm"; timeout 100 bin/surge bench gemm --platform cuda --shapes square --sizes 2048 --json > "$OUT/b-gemm.json"; echo "rc=$?"
el "bench spmv"; timeout 60 bin/surge bench spmv --platform cuda --vs cusparse --inputs matrices --json > "$OUT/b-spmv.json"; echo "rc=$?"
# CoMD's force on the GPU (both algorithms' default CUDA variants, 32,000 atoms) beside the
# plain-Rust reference on the machine's cores: million force calculations per second.
el "comd"; for v in surge/direct surge/redistributed reference/rayon; do
  p=cuda; [ $v = reference/rayon ] && p=cpu
  timeout 40 bin/surge run comd --potential comd/Cu_u6.eam --platform $p --variant $v --cells 20 --steps 10 --print-rate 10 2>&1 | grep -E "steps in|error" | sed "s|^|$v: |"; done
el "bench reduce"; timeout 60 bin/surge bench reduce --platform cuda --size 4194304 --json > "$OUT/b-reduce.json"; echo "rc=$?"
fi
el done
