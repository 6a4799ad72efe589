#!/usr/bin/env bash
# The GPU check, run on the device machine from the repository root with .dev carried:
# the ignored GPU tests, then the CUDA benches with stage timings. Logs and JSON go to $OUT
# (eight files at most come back). Every step has its own time limit.
cd "$(dirname "$0")"; D=$PWD; OUT=${OUT:-$D/out}; mkdir -p "$OUT"
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
el "GPU tests (in parallel)"
# Every survivor of the H200 GEMM space through NVRTC takes hours: not part of the check.
timeout 170 bin/surge_cuda --ignored --skip every_survivor_of_the_h200_space_compiles_with_nvrtc > "$OUT/t-surge-cuda.log" 2>&1 &
timeout 170 bin/conformance_cuda --ignored > "$OUT/t-conformance-cuda.log" 2>&1 &
timeout 170 bin/cuda_checks --ignored > "$OUT/t-cuda-checks.log" 2>&1 &
timeout 170 bin/tune_backends --ignored > "$OUT/t-tune-backends.log" 2>&1 &
wait
for f in "$OUT"/t-*.log; do echo "== $f"; grep -E "^test result|FAILED|panicked" "$f" | head -8; done
# Eight files at most come back: the four logs as one.
for f in "$OUT"/t-*.log; do echo "==== $f"; cat "$f"; done > "$OUT/tests.log"; rm -f "$OUT"/t-*.log
# k-means on the GPU: the first run NVRTC-compiles both programs, the second finds them cached.
el "kmeans"; for n in 1000000 100000; do timeout 60 bin/surge run kmeans --platform cuda --size $n --iterations 20 --seed 1 --json > "$OUT/k-$n.json"; echo "rc=$?"; done
el "bench gemm"; timeout 80 bin/surge bench gemm --platform cuda --shapes square --sizes 2048 --json > "$OUT/b-gemm.json"; echo "rc=$?"
el "bench spmv"; timeout 80 bin/surge bench spmv --platform cuda --vs cusparse --inputs matrices --json > "$OUT/b-spmv.json"; echo "rc=$?"
el "bench reduce"; timeout 60 bin/surge bench reduce --platform cuda --size 4194304 --json > "$OUT/b-reduce.json"; echo "rc=$?"
el done
