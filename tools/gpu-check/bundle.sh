#!/usr/bin/env bash
# Builds everything the GPU check runs into .dev/ (git-excluded) at the repository root, for a
# device machine with a GPU and CUDA 13 but no Rust toolchain and no network:
#   - the release `surge` binary and the release test executables that hold the GPU tests,
#     stripped;
#   - the shared matrices the tests and benches read;
#   - a stand-in `rustc` that answers `-vV` as this machine's does and refuses to compile: the
#     checks run against the interpreter (inputs of at most 4M elements; the CPU reference of
#     larger ones would need rustc, and the device's core count gives other CPU variants).
# Then run `.dev/run.sh` there (see README.md, "GPU tests"): `bash .dev/run.sh` with `.dev` carried.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
rm -rf .dev /tmp/surge-gpu-bundle && mkdir -p .dev /tmp/surge-gpu-bundle/bin
stage=/tmp/surge-gpu-bundle
cargo build --release -p surge --bin surge
log=$(mktemp)
{
  cargo test --release --no-run -p tests --test conformance_cuda --test cuda_checks --test random_programs
  cargo test --release --no-run -p surge-cuda --lib
  cargo test --release --no-run -p surge --test tune_backends
} 2>&1 | tee "$log"
grep -o 'Executable [^(]*(\([^)]*\))' "$log" | sed 's/.*(\(.*\))/\1/' | while read -r exe; do
  name=$(basename "$exe" | sed 's/-[0-9a-f]*$//')
  cp "$exe" "$stage/bin/$name"
done
cp target/release/surge "$stage/bin/"
strip "$stage"/bin/*
cp -rL ../shared/matrices "$stage/matrices"
mkdir -p "$stage/comd" && cp -L ../shared/comd/Cu_u6.eam "$stage/comd/"
rustc -vV > .dev/rustc-vV.txt
cp tools/gpu-check/fakerustc tools/gpu-check/run.sh .dev/
(cd "$stage" && tar cf - bin matrices comd) | xz -T0 -6 > .dev/bundle.tar.xz
rm -f "$log"
du -sh .dev/bundle.tar.xz
echo "ready: carry .dev and run 'bash .dev/run.sh' on the GPU machine (from $root)"
