#!/usr/bin/env bash
# The MPI tests: builds surge with the `mpi` feature (debug) and runs, under `mpirun -np 2` and
# `mpirun -np 3 --oversubscribe` on this machine (shared-memory transport):
#   - the distributed SpMV against the one-rank product, bit for bit, on every shared matrix and
#     on a 2x2 matrix (fewer rows than ranks: empty partitions);
#   - `surge run spmv` under mpirun: rows, cols, nnz, sum_y and norm2_y exactly as one process
#     prints them; `surge run kmeans`: the counts and iterations as one process prints them;
#     a complex matrix and a command without a distributed form refused (exit 2);
#   - conjugate gradients on the distributed SpMV, with its true-residual check;
#   - distributed k-means against one rank's (generated points, iris, wine; a rank with no
#     point): equal iterations and counts, centroids to 1e-12;
#   - a tuning campaign over the ranks, stopped midway and resumed from its journal;
#   - an spmv campaign whose test inputs are scored over the ranks: each once, all in the
#     report, the summary's fields as one process's.
# SURGE_MATRICES_DIR overrides ../shared/matrices.
set -euo pipefail
cd "$(dirname "$0")/../.."
M=${SURGE_MATRICES_DIR:-../shared/matrices}
[ -d "$M" ] || { echo "the shared matrices are required: $M not found" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mpirun is required (openmpi-bin, libopenmpi-dev)" >&2; exit 1; }
# Open MPI refuses root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build -q -p surge --features mpi --bin surge --example mpi_spmv_check --example mpi_cg \
  --example mpi_kmeans_check
out=${CARGO_TARGET_DIR:-target}/debug
# Private copies: a target directory shared with other builds may be rewritten meanwhile.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cp "$out/surge" "$out/examples/mpi_spmv_check" "$out/examples/mpi_cg" "$out/examples/mpi_kmeans_check" "$bin/"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 2.5\n2 1 -1.5\n2 2 3.25\n' >"$bin/tiny.mtx"

fail() { echo "FAIL: $*" >&2; exit 1; }
# The lines of `surge run spmv` that must equal one process's.
keys() { grep -E '^(rows|cols|nnz|sum_y|norm2_y) '; }
kmeans_keys() { grep -E '^(input|points|dimension|k|init|counts|iterations|converged) '; }

for np in 2 3; do
  run="mpirun -np $np --oversubscribe"
  echo "== $np ranks"
  $run "$bin/mpi_spmv_check" "$M" "$bin/tiny.mtx"
  for f in "$M/bcsstk13.mtx" "$M/arrow.mtx" "$M/lp_e226.mtx" "$bin/tiny.mtx"; do
    one=$("$bin/surge" run spmv --input "$f" | keys)
    many=$($run "$bin/surge" run spmv --input "$f")
    [ "$one" = "$(keys <<<"$many")" ] || fail "surge run spmv on $np ranks differs from one process on $f: $many"
    grep -q "^partition " <<<"$many" || fail "no partition summary on $f"
  done
  echo "surge run spmv: rows, cols, nnz, sum_y, norm2_y as one process on 4 matrices"
  for f in tests/data/kmeans/iris.csv tests/data/kmeans/wine.csv; do
    one=$("$bin/surge" run kmeans --input "$f" --k 3 | kmeans_keys)
    many=$($run "$bin/surge" run kmeans --input "$f" --k 3)
    [ "$one" = "$(kmeans_keys <<<"$many")" ] || fail "surge run kmeans on $np ranks differs from one process on $f: $many"
  done
  echo "surge run kmeans: points, k, counts, iterations, converged as one process on iris and wine"
  set +e
  err=$($run "$bin/surge" run spmv --input "$M/young1c.mtx" 2>&1 >/dev/null); code=$?
  set -e
  [ $code -ne 0 ] && grep -q complex <<<"$err" || fail "a complex matrix under mpirun: exit $code, $err"
  [ "$(grep -c '^error:' <<<"$err")" = 1 ] || fail "the complex matrix's error is said once: $err"
  set +e
  err=$($run "$bin/surge" run reduce 2>&1 >/dev/null); code=$?
  set -e
  [ $code -ne 0 ] && grep -q "no distributed form" <<<"$err" || fail "surge run reduce under mpirun: exit $code, $err"
  set +e
  err=$(SURGE_DATA="$bin" $run "$bin/surge" run spmv --tuned --input "$M/arrow.mtx" 2>&1 >/dev/null); code=$?
  set -e
  [ $code -eq 2 ] && grep -q "no tuning store for \`spmv\`" <<<"$err" || fail "run spmv --tuned without a store under mpirun: exit $code, $err"
  [ "$(grep -c '^error:' <<<"$err")" = 1 ] || fail "the missing store is said once: $err"
  echo "refused: a complex matrix, a command without a distributed form, --tuned without a store"
  $run "$bin/mpi_cg" --grid 48
  $run "$bin/mpi_cg" --grid 31 --tol 1e-12
  $run "$bin/mpi_kmeans_check" tests/data/kmeans/iris.csv tests/data/kmeans/wine.csv
  # A tuning campaign over the ranks (simulated timings): stopped after 10 records as if the
  # job died, then resumed from the journal: every training input labelled, the journal gone.
  t=$(mktemp -d)
  tune="$bin/surge tune reduce --platform sim --scale small --json --out $t/s.json"
  set +e
  SURGE_DATA=$t $run $tune --stop-after 10 >/dev/null 2>&1; code=$?
  set -e
  [ $code -ne 0 ] || fail "a campaign stopped after 10 records exited 0"
  [ "$(wc -l <"$t/s.json.journal")" = 11 ] || fail "the journal holds a header and 10 records"
  out=$(SURGE_DATA=$t $run $tune --resume)
  grep -q '"ranks": '"$np" <<<"$out" && grep -q '"labelled_inputs": 31' <<<"$out" \
    || fail "the resumed campaign on $np ranks: $out"
  [ ! -e "$t/s.json.journal" ] && [ -s "$t/s.json" ] || fail "store written, journal removed"
  rm -rf "$t"
  echo "surge tune over $np ranks: stopped, resumed from its journal, 31 inputs labelled"
done
# A distributed campaign writes the store for the ranks' platform (one core each); `run spmv
# --tuned` on the same ranks then lets each rank's model pick for its own rows.
t=$(mktemp -d)
mkdir "$t/in" "$t/test"
cp "$M/494_bus.mtx" "$M/Erdos971.mtx" "$M/lp_e226.mtx" "$t/in/"
cp "$M/west0479.mtx" "$M/arrow.mtx" "$M/dwt_992.mtx" "$t/test/"
run="mpirun -np 2 --oversubscribe"
quick=(--platform cpu --inputs "$t/in" --test "$t/test" --repetitions 1 --retime-within -1
  --confirm-rounds 1 --selection-rows 0 --min-class-inputs 1 --json)
SURGE_DATA=$t SURGE_TRACE=1 $run "$bin/surge" tune spmv "${quick[@]}" --report "$t/report" \
  >"$t/tune.json" 2>"$t/trace"
grep -q '"labelled_inputs": 3' "$t/tune.json" || fail "the distributed spmv campaign: $(cat "$t/tune.json")"
# The test inputs are handed out over the ranks too: each scored once, by one rank or the
# other, and every one in the report with its score.
for f in west0479.mtx arrow.mtx dwt_992.mtx; do
  [ "$(grep -c "^trace: rank [01] test input $f " "$t/trace")" = 1 ] \
    || fail "test input $f not scored once on 2 ranks: $(grep 'test input' "$t/trace")"
  grep -q "\"name\": \"$f\"" "$t/report/report.json" || fail "test input $f not in the report"
done
[ "$(grep -c '"tuned_vs_best": [0-9]' "$t/report/report.json")" = 3 ] \
  || fail "the report on 2 ranks scores fewer than 3 test inputs"
grep -q '"test_inputs": 3' "$t/tune.json" || fail "the summary on 2 ranks: $(cat "$t/tune.json")"
# The same summary fields as one process's (and the rank count).
SURGE_DATA=$t "$bin/surge" tune spmv "${quick[@]}" --out "$t/one.json" --report "$t/report-one" \
  >"$t/one-summary.json" 2>/dev/null
fields() { grep -o '^  "[a-z_]*":' "$1" | sort; }
[ "$( (fields "$t/one-summary.json"; echo '  "ranks":') | sort)" = "$(fields "$t/tune.json")" ] \
  || fail "the summary fields on 2 ranks differ from one process's: $(diff <(fields "$t/one-summary.json") <(fields "$t/tune.json"))"
echo "surge tune spmv on 2 ranks: 3 test inputs scored over the ranks, each once, the summary's fields as one process's"
f="$M/bcsstk13.mtx"
many=$(SURGE_DATA=$t $run "$bin/surge" run spmv --tuned --input "$f" 2>/dev/null)
[ "$(grep -c '^tuned  *rank' <<<"$many")" = 2 ] || fail "run spmv --tuned on 2 ranks names no picks: $many"
one=$("$bin/surge" run spmv --input "$f" | grep -E '^(rows|cols|nnz) ')
[ "$one" = "$(grep -E '^(rows|cols|nnz) ' <<<"$many")" ] || fail "run spmv --tuned on 2 ranks: $many"
rm -rf "$t"
echo "surge run spmv --tuned on 2 ranks: each rank's model picked from a distributed campaign's store"
echo "MPI tests passed"
