#!/usr/bin/env bash
# Surge's distributed SpMV against PETSc's MatMult on the same matrices, ranks and partition
# (issue 25). Needs Debian's petsc-dev and OpenMPI (`apt-get install petsc-dev openmpi-bin
# libopenmpi-dev`); builds both benchmarks, then per rank count and matrix runs Surge (one thread
# per rank, as PETSc's MPI-only MatMult) and PETSc alternately, ROUNDS times, and prints each
# run's line. Each line is a median of 7 rounds of ~0.1 s batches (the slowest rank's time).
#
#   benchmarks/petsc/run.sh [--ranks "1 2"] [--rounds N] [--variant ID | --tuned] FILE.mtx ...
# (--variant: the Surge variant every rank runs; --tuned: each rank's variant picked by the model
# that `mpirun -np R surge tune spmv` stored on this machine; default: the default at one thread).
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks="1 2"
rounds=2
files=()
variant=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --variant) variant=(--variant "$2"); shift 2 ;;
    --tuned) variant=(--tuned); shift ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) files+=("$1"); shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || { echo "usage: $0 [--ranks \"1 2\"] [--rounds N] FILE.mtx ..." >&2; exit 2; }
pkg-config --exists PETSc || { echo "PETSc is not installed (apt-get install petsc-dev)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mpirun is required (openmpi-bin, libopenmpi-dev)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
out=target/petsc
mkdir -p "$out"
mpicc -O3 -march=native benchmarks/petsc/matmult.c $(pkg-config --cflags --libs PETSc) -o "$out/petsc_matmult"
cargo build --release -q -p surge --features mpi --example mpi_spmv_bench
surge=target/release/examples/mpi_spmv_bench
echo "# PETSc $(pkg-config --modversion PETSc), $(mpirun --version | head -1), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for np in $ranks; do
  for f in "${files[@]}"; do
    for _ in $(seq "$rounds"); do
      mpirun -np "$np" --bind-to none "$surge" --threads 1 "${variant[@]}" "$f"
      mpirun -np "$np" --bind-to none "$out/petsc_matmult" "$f"
    done
  done
done
