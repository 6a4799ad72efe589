/* PETSc's MatMult timed as Surge's distributed SpMV is (surge/examples/mpi_spmv_bench.rs):
 * per matrix, the median over 7 rounds of the time per product, each round a batch of
 * back-to-back products (about 0.1 s) between two barriers, the slowest rank's time.
 *
 * The partition is Surge's (surge/src/mpi/partition.rs, Blocks::balanced): contiguous row
 * blocks balanced by nonzeros + rows, x owned in the same blocks for a square matrix, so both
 * programs run the same rows on the same ranks. Every rank reads the Matrix Market file itself
 * (coordinate real/integer/pattern, general/symmetric/skew-symmetric; reading is not timed)
 * and builds its rows as an MPIAIJ matrix (PETSc's diagonal and off-diagonal blocks).
 *
 *   mpicc -O3 -march=native matmult.c $(pkg-config --cflags --libs PETSc) -o petsc_matmult
 *   mpirun -np 2 ./petsc_matmult A.mtx [B.mtx ...]
 *
 * Prints one line per matrix: ranks, microseconds per MatMult, GFLOP/s, the rows per rank and
 * sum(y) for x = 1 (the sum of A's entries), to compare with Surge's line.
 */
#include <petscmat.h>
#ifndef PETSC_SUCCESS
#define PETSC_SUCCESS 0 /* PETSc before 3.19 */
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
  PetscInt rows, cols, nnz;
  PetscInt *ptr, *col;
  PetscScalar *val;
} Csr;

static int cmp_entry(const void *a, const void *b) {
  const PetscInt *x = a, *y = b;
  return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Reads `path` into CSR (columns sorted within each row, duplicates summed). */
static PetscErrorCode read_mtx(const char *path, Csr *m) {
  FILE *f = fopen(path, "r");
  char line[1024], obj[64], fmt[64], field[64], sym[64];
  long r, c, n, k = 0;
  PetscFunctionBeginUser;
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open %s", path);
  PetscCheck(fgets(line, sizeof line, f) && sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) == 4,
             PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: line 1 is not a Matrix Market header", path);
  PetscCheck(!strcasecmp(fmt, "coordinate") && strcasecmp(field, "complex"), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "%s: only real, integer or pattern coordinate matrices", path);
  int pattern = !strcasecmp(field, "pattern"), symmetric = !strcasecmp(sym, "symmetric"), skew = !strcasecmp(sym, "skew-symmetric");
  do {
    PetscCheck(fgets(line, sizeof line, f), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no size line", path);
  } while (line[0] == '%');
  PetscCheck(sscanf(line, "%ld %ld %ld", &r, &c, &n) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad size line", path);
  long cap = (symmetric || skew) ? 2 * n : n;
  PetscInt *e = malloc(sizeof(PetscInt) * 2 * cap);
  double *v = malloc(sizeof(double) * cap), *vv = malloc(sizeof(double) * cap);
  for (long t = 0; t < n; t++) {
    long i, j;
    double x = 1.0;
    PetscCheck(fgets(line, sizeof line, f), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %ld of %ld entries", path, t, n);
    if (line[0] == '%') { t--; continue; }
    int got = pattern ? sscanf(line, "%ld %ld", &i, &j) : sscanf(line, "%ld %ld %lf", &i, &j, &x);
    PetscCheck(got == (pattern ? 2 : 3), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad entry line %s", path, line);
    e[2 * k] = i - 1; e[2 * k + 1] = j - 1; v[k] = x; k++;
    if ((symmetric || skew) && i != j) { e[2 * k] = j - 1; e[2 * k + 1] = i - 1; v[k] = skew ? -x : x; k++; }
  }
  fclose(f);
  /* Sort (row, col, value) triples by row then column. */
  PetscInt *idx = malloc(sizeof(PetscInt) * 3 * k);
  for (long t = 0; t < k; t++) { idx[3 * t] = e[2 * t]; idx[3 * t + 1] = e[2 * t + 1]; idx[3 * t + 2] = t; }
  qsort(idx, k, 3 * sizeof(PetscInt), cmp_entry);
  m->rows = r; m->cols = c;
  m->ptr = calloc(r + 1, sizeof(PetscInt));
  m->col = malloc(sizeof(PetscInt) * k);
  m->val = malloc(sizeof(PetscScalar) * k);
  long out = 0;
  for (long t = 0; t < k; t++) {
    if (out > 0 && t > 0 && idx[3 * t] == idx[3 * (t - 1)] && idx[3 * t + 1] == idx[3 * (t - 1) + 1]) {
      m->val[out - 1] += v[idx[3 * t + 2]];
      continue;
    }
    m->col[out] = idx[3 * t + 1]; m->val[out] = v[idx[3 * t + 2]]; m->ptr[idx[3 * t] + 1]++; out++;
  }
  for (long i = 0; i < r; i++) m->ptr[i + 1] += m->ptr[i];
  m->nnz = out;
  free(e); free(v); free(vv); free(idx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Surge's Blocks::balanced: row bounds by cost = nonzeros + rows, the nearer row either side. */
static void balanced(const Csr *m, int ranks, PetscInt *bounds) {
  unsigned long long total = (unsigned long long)(m->ptr[m->rows] + m->rows), prev = 0;
  bounds[0] = 0;
  for (int r = 1; r <= ranks; r++) {
    unsigned long long target = (total * r + ranks - 1) / ranks;
    PetscInt lo = 0, hi = m->rows;
    while (lo < hi) {
      PetscInt mid = lo + (hi - lo) / 2;
      if ((unsigned long long)(m->ptr[mid] + mid) < target) lo = mid + 1; else hi = mid;
    }
    if (lo > 0 && target - (unsigned long long)(m->ptr[lo - 1] + lo - 1) < (unsigned long long)(m->ptr[lo] + lo) - target) lo--;
    if ((unsigned long long)lo < prev) lo = (PetscInt)prev;
    bounds[r] = lo; prev = lo;
  }
  bounds[ranks] = m->rows;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static PetscErrorCode bench(const char *path) {
  PetscMPIInt rank, size;
  Csr m;
  Mat A;
  Vec x, y;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(read_mtx(path, &m));
  PetscInt *b = malloc(sizeof(PetscInt) * (size + 1));
  balanced(&m, size, b);
  PetscInt lo = b[rank], hi = b[rank + 1];
  PetscInt clo = lo, chi = hi;
  if (m.cols != m.rows) { clo = (PetscInt)((long long)m.cols * rank / size); chi = (PetscInt)((long long)m.cols * (rank + 1) / size); }
  PetscInt *ip = malloc(sizeof(PetscInt) * (hi - lo + 1));
  for (PetscInt i = lo; i <= hi; i++) ip[i - lo] = m.ptr[i] - m.ptr[lo];
  PetscCall(MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, hi - lo, chi - clo, m.rows, m.cols, ip, m.col + m.ptr[lo], m.val + m.ptr[lo], &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  double t = MPI_Wtime(), once, local;
  PetscCall(MatMult(A, x, y));
  local = MPI_Wtime() - t;
  PetscCallMPI(MPI_Allreduce(&local, &once, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  long batch = (long)(0.1 / (once > 1e-7 ? once : 1e-7));
  if (batch < 1) batch = 1;
  if (batch > 10000) batch = 10000;
  double rounds[7];
  for (int k = 0; k < 7; k++) {
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    t = MPI_Wtime();
    for (long s = 0; s < batch; s++) PetscCall(MatMult(A, x, y));
    local = (MPI_Wtime() - t) / batch;
    PetscCallMPI(MPI_Allreduce(&local, &rounds[k], 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  }
  qsort(rounds, 7, sizeof(double), cmp_double);
  PetscScalar sum;
  PetscCall(VecSum(y, &sum));
  if (rank == 0) {
    printf("%s: %d ranks: %.1f us per MatMult, %.2f GFLOP/s (%ld nonzeros; rows per rank", path, size, rounds[3] * 1e6,
           2.0 * m.nnz / rounds[3] * 1e-9, (long)m.nnz);
    for (int r = 0; r < size; r++) printf(" %ld", (long)(b[r + 1] - b[r]));
    printf("; sum(y) %.17g)\n", (double)sum);
    fflush(stdout);
  }
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  free(ip); free(b); free(m.ptr); free(m.col); free(m.val);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (int k = 1; k < argc; k++) {
    if (argv[k][0] == '-') continue; /* PETSc options */
    PetscCall(bench(argv[k]));
  }
  PetscCall(PetscFinalize());
  return 0;
}
