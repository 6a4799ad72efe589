// Surge CUDA prelude: element types and our own warp/block primitives (CUB does not compile under
// NVRTC 11.8). Every primitive takes the combining operator as a functor and its identity.
// Global-memory parameters are `SURGE_PTR(T)`, a row of shared memory passed to a primitive is
// `SURGE_SHARED(T)`, dynamic shared memory is `SURGE_DYNAMIC_SHARED(T, name)`, and each kernel is
// followed by `SURGE_EMU_ENTRY(name)`. Under NVRTC these are a restrict pointer, a pointer, an
// `extern __shared__` array and nothing; the CUDA emulator (surge-cuda/emu/) defines them as
// bounds-checked pointers and the host entry that runs one block of the kernel.
#ifndef SURGE_EMULATED
#define SURGE_PTR(T) T *__restrict__
#define SURGE_SHARED(T) T *
#define SURGE_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#define SURGE_EMU_ENTRY(name)
#endif

typedef float f32;
typedef double f64;
typedef int i32;
typedef long long i64;
typedef unsigned int u32;
typedef unsigned long long u64;

// A tuple of up to eight scalars returned whole by a fold of tuples (`tuple_fold.rs`); unused
// components are chars.
template <class T0, class T1, class T2 = char, class T3 = char, class T4 = char, class T5 = char,
          class T6 = char, class T7 = char>
struct surge_tuple {
  T0 c0; T1 c1; T2 c2; T3 c3; T4 c4; T5 c5; T6 c6; T7 c7;
};
// A float converted to an integer type as Rust's `as` does it (NaN 0, out of range saturated,
// else truncated): `lo` and `hi` are the type's range as floats, `hi` exclusive.
template <class T, class F>
__device__ __forceinline__ T surge_fcast(F x, F lo, F hi, T tmin, T tmax) {
  return x != x ? (T)0 : x < lo ? tmin : x >= hi ? tmax : (T)x;
}
template <class T> __device__ __forceinline__ T surge_min(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T surge_max(T a, T b) { return a < b ? b : a; }

// Barrier over the BX threads of block row `row` (named barrier row + 1; barrier 0 when BY == 1).
template <int BX, int BY> __device__ __forceinline__ void surge_row_sync(int row) {
  if (BY == 1) {
    __syncthreads();
  } else {
#ifdef SURGE_EMULATED
    surge_emu::bar_sync(row + 1, BX);
#else
    asm volatile("bar.sync %0, %1;" ::"r"(row + 1), "r"(BX) : "memory");
#endif
  }
}

// The minimum (MIN) or the sum of one u64 per thread over the block's T threads, every thread
// of the block calling (a barrier tree); every thread gets the result.
template <unsigned T, bool MIN>
__device__ __forceinline__ u64 surge_block_u64(u64 v, SURGE_SHARED(u64) sm, unsigned tid) {
  sm[tid] = v;
  __syncthreads();
  unsigned h = 1;
  while (h < T) h <<= 1;
  for (unsigned s = h / 2; s > 0; s >>= 1) {
    if (tid < s && tid + s < T) {
      const u64 a = sm[tid], b = sm[tid + s];
      sm[tid] = MIN ? (a < b ? a : b) : a + b;
    }
    __syncthreads();
  }
  const u64 r = sm[0];
  __syncthreads();
  return r;
}

// This block's contiguous range [lo, hi) of the positions 0..len, when the first min(gridDim.x,
// CAP) blocks take part; false when it has none (every thread of the block gets the same
// answer, so the block returns as one).
template <unsigned CAP>
__device__ __forceinline__ bool surge_block_range(u64 len, u64 &lo, u64 &hi) {
  const u64 blocks = gridDim.x < CAP ? gridDim.x : CAP;
  if (blockIdx.x >= blocks) return false;
  const u64 chunk = (len + blocks - 1) / blocks;
  lo = blockIdx.x * chunk < len ? blockIdx.x * chunk : len;
  hi = lo + chunk < len ? lo + chunk : len;
  return lo < hi;
}

// How many runs start before position `lo` (`starts(p)`: a run starts at p), counted by the
// block's T threads; every thread gets the count.
template <unsigned T, class Starts>
__device__ __forceinline__ u64 surge_runs_before(u64 lo, Starts starts, SURGE_SHARED(u64) sm,
                                                 unsigned tid) {
  u64 n = 0;
  for (u64 p = tid; p < lo; p += T) n += starts(p) ? 1 : 0;
  return surge_block_u64<T, false>(n, sm, tid);
}

// The lanes of the logical warp of `LW` lanes the calling thread belongs to.
template <int LW> __device__ __forceinline__ unsigned surge_lw_mask(unsigned physical_lane) {
  return LW == 32 ? 0xffffffffu : (((1u << LW) - 1u) << (physical_lane / LW * LW));
}

// Reduction over a logical warp of LW lanes; the result is valid in lane 0.
template <int LW, class T, class Op>
__device__ __forceinline__ T surge_warp_reduce(T v, Op op, unsigned mask) {
#pragma unroll
  for (int d = LW / 2; d > 0; d >>= 1) {
    T o = __shfl_down_sync(mask, v, d, LW);
    v = op(v, o);
  }
  return v;
}

// Inclusive scan over a logical warp of LW lanes (lane = index within the logical warp).
template <int LW, class T, class Op>
__device__ __forceinline__ T surge_warp_inclusive_scan(T v, Op op, unsigned mask, unsigned lane) {
#pragma unroll
  for (int d = 1; d < LW; d <<= 1) {
    T o = __shfl_up_sync(mask, v, d, LW);
    if (lane >= (unsigned)d) v = op(o, v);
  }
  return v;
}

// Exclusive scan over a logical warp; `total` receives the reduction of all lanes.
template <int LW, class T, class Op>
__device__ __forceinline__ T surge_warp_exclusive_scan(T v, Op op, T ident, unsigned mask,
                                                       unsigned lane, T &total) {
  T incl = surge_warp_inclusive_scan<LW>(v, op, mask, lane);
  total = __shfl_sync(mask, incl, LW - 1, LW);
  T excl = __shfl_up_sync(mask, incl, 1, LW);
  return lane == 0 ? ident : excl;
}

// Block-row reduction, raking: every lane stores its value, the row's first warp rakes the
// stored values sequentially and finishes with a shuffle reduction. Valid in lane 0.
template <int BX, int BY, class T, class Op>
__device__ __forceinline__ T surge_block_reduce_raking(T v, Op op, T ident, SURGE_SHARED(T) sm, unsigned lane,
                                                       int row) {
  sm[lane] = v;
  surge_row_sync<BX, BY>(row);
  T r = ident;
  if (lane < 32) {
#pragma unroll
    for (int k = lane; k < BX; k += 32) r = op(r, sm[k]);
    r = surge_warp_reduce<32>(r, op, 0xffffffffu);
  }
  surge_row_sync<BX, BY>(row);
  return r;
}

// Block-row reduction, warp reductions: shuffle-reduce each warp, then the warp totals.
template <int BX, int BY, class T, class Op>
__device__ __forceinline__ T surge_block_reduce_warps(T v, Op op, T ident, SURGE_SHARED(T) sm, unsigned lane,
                                                      int row) {
  v = surge_warp_reduce<32>(v, op, 0xffffffffu);
  if (lane % 32 == 0) sm[lane / 32] = v;
  surge_row_sync<BX, BY>(row);
  T r = ident;
  if (lane < 32) {
    r = lane < BX / 32 ? sm[lane] : ident;
    r = surge_warp_reduce<32>(r, op, 0xffffffffu);
  }
  surge_row_sync<BX, BY>(row);
  return r;
}

// Block-row exclusive scan, raking: the first warp scans contiguous runs of BX / 32 values.
template <int BX, int BY, class T, class Op>
__device__ __forceinline__ T surge_block_scan_raking(T v, Op op, T ident, SURGE_SHARED(T) sm, T &sm_total,
                                                     unsigned lane, int row, T &total) {
  sm[lane] = v;
  surge_row_sync<BX, BY>(row);
  if (lane < 32) {
    const int per = BX / 32;
    T s = ident;
#pragma unroll
    for (int k = 0; k < per; ++k) s = op(s, sm[lane * per + k]);
    T all;
    T run = surge_warp_exclusive_scan<32>(s, op, ident, 0xffffffffu, lane, all);
#pragma unroll
    for (int k = 0; k < per; ++k) {
      T t = sm[lane * per + k];
      sm[lane * per + k] = run;
      run = op(run, t);
    }
    if (lane == 0) sm_total = all;
  }
  surge_row_sync<BX, BY>(row);
  T r = sm[lane];
  total = sm_total;
  surge_row_sync<BX, BY>(row);
  return r;
}

// Block-row exclusive scan, warp scans: scan each warp, then combine the warp totals.
template <int BX, int BY, class T, class Op>
__device__ __forceinline__ T surge_block_scan_warps(T v, Op op, T ident, SURGE_SHARED(T) sm, unsigned lane,
                                                    int row, T &total) {
  const unsigned w = lane / 32, l = lane % 32;
  T incl = surge_warp_inclusive_scan<32>(v, op, 0xffffffffu, l);
  T excl = __shfl_up_sync(0xffffffffu, incl, 1, 32);
  if (l == 0) excl = ident;
  if (l == 31) sm[w] = incl;
  surge_row_sync<BX, BY>(row);
  T prefix = ident, all = ident;
#pragma unroll
  for (int k = 0; k < BX / 32; ++k) {
    if ((unsigned)k < w) prefix = op(prefix, sm[k]);
    all = op(all, sm[k]);
  }
  total = all;
  surge_row_sync<BX, BY>(row);
  return op(prefix, excl);
}

// ---- Run-time checks ------------------------------------------------------------------------
// A failing check records (node, code, a, b, c) in surge_err[0..4] (the first failure wins,
// through atomicCAS on word 0 = node << 8 | code) and the kernel carries on with a safe value
// (0 for a bad element, an empty row for a bad segment), so nothing reads out of bounds. After
// the phase the host reads the record and returns the node's error (the interpreter's message).
#define SURGE_GATHER 1ULL         // a = index, b = position, c = source length
#define SURGE_INDEX 2ULL          // a = index, c = sequence length
#define SURGE_OFFSET_RANGE 3ULL   // a = offset, b = its position, c = flat length
#define SURGE_OFFSET_ORDER 4ULL   // a = offsets[b], c = offsets[b + 1]
#define SURGE_OFFSETS_EMPTY 5ULL  //
#define SURGE_EMPTY_REDUCE 6ULL   //
#define SURGE_NOT_POSITIVE 7ULL   // a = value, b = 0 (tile size) or 1 (stride)
#define SURGE_STRIDE_ZERO 8ULL    //
#define SURGE_NEGATIVE_LEN 9ULL   // a = length
#define SURGE_EQUAL_LEN 10ULL     // a = input 0's length, b = input k, c = its length
#define SURGE_RAGGED 11ULL        // a = row 0's length, b = row k, c = its length
#define SURGE_PAIR_LEN 12ULL      // a = first length, b = 0 (input, keys) or 1 (source, indices), c = second
#define SURGE_SCATTER 13ULL       // a = index, b = position, c = destination length
#define SURGE_DIV_ZERO 14ULL      //
#define SURGE_DIV_OVERFLOW 15ULL  //

__device__ __noinline__ void surge_fail(u64 *err, u64 node, u64 code, i64 a, i64 b, i64 c) {
  if (atomicCAS(&err[0], 0ULL, (node << 8) | code) == 0ULL) {
    err[1] = (u64)a;
    err[2] = (u64)b;
    err[3] = (u64)c;
  }
}

// Element `ix` (at position `pos` of the index sequence) of a source of length `len`: `at(ix)`,
// or 0 after recording the error.
template <class T, class At>
__device__ __forceinline__ T surge_gather(i64 ix, u64 pos, u64 len, u64 node, u64 *err, At at) {
  if (ix < 0 || (u64)ix >= len) {
    surge_fail(err, node, SURGE_GATHER, ix, (i64)pos, (i64)len);
    return (T)0;
  }
  return at((u64)ix);
}

// Element `ix` of a sequence of length `len` (`at`), or 0 after recording the error.
template <class T, class At>
__device__ __forceinline__ T surge_index(i64 ix, u64 len, u64 node, u64 *err, At at) {
  if (ix < 0 || (u64)ix >= len) {
    surge_fail(err, node, SURGE_INDEX, ix, 0, (i64)len);
    return (T)0;
  }
  return at((u64)ix);
}

// Row `ix` of a nested sequence of `rows` rows; out of range: recorded, and `rows` (no row).
__device__ __forceinline__ u64 surge_row_index(i64 ix, u64 rows, u64 node, u64 *err) {
  if (ix < 0 || (u64)ix >= rows) {
    surge_fail(err, node, SURGE_INDEX, ix, 0, (i64)rows);
    return rows;
  }
  return (u64)ix;
}

// The row count of a nest with `noff` offsets (0 rows, recorded, when there are none).
__device__ __forceinline__ u64 surge_nest_rows(u64 noff, u64 node, u64 *err) {
  if (noff == 0) {
    surge_fail(err, node, SURGE_OFFSETS_EMPTY, 0, 0, 0);
    return 0;
  }
  return noff - 1;
}

// Whether row r = [lo, hi) lies within a flat sequence of length `len`; false is recorded.
__device__ __forceinline__ bool surge_segment_ok(i64 lo, i64 hi, u64 r, u64 len, u64 node,
                                                 u64 *err) {
  if (lo < 0 || (u64)lo > len) {
    surge_fail(err, node, SURGE_OFFSET_RANGE, lo, (i64)r, (i64)len);
    return false;
  }
  if (hi < 0 || (u64)hi > len) {
    surge_fail(err, node, SURGE_OFFSET_RANGE, hi, (i64)r + 1, (i64)len);
    return false;
  }
  if (lo > hi) {
    surge_fail(err, node, SURGE_OFFSET_ORDER, lo, (i64)r, hi);
    return false;
  }
  return true;
}

// A tile size (what = 0) or stride (what = 1) that must be positive; 1 after recording.
__device__ __forceinline__ u64 surge_positive(i64 k, i64 what, u64 node, u64 *err) {
  if (k <= 0) {
    surge_fail(err, node, SURGE_NOT_POSITIVE, k, what, 0);
    return 1;
  }
  return (u64)k;
}

// A range's stride, which must not be 0 (1 after recording).
template <class T> __device__ __forceinline__ T surge_stride(T s, u64 node, u64 *err) {
  if (s == (T)0) {
    surge_fail(err, node, SURGE_STRIDE_ZERO, 0, 0, 0);
    return (T)1;
  }
  return s;
}

// A length that must not be negative (0 after recording).
__device__ __forceinline__ u64 surge_len(i64 l, u64 node, u64 *err) {
  if (l < 0) {
    surge_fail(err, node, SURGE_NEGATIVE_LEN, l, 0, 0);
    return 0;
  }
  return (u64)l;
}

// The length of a map over inputs 0 and k: `l0`, or the shorter one after recording that they
// differ.
__device__ __forceinline__ u64 surge_equal_len(u64 l0, u64 lk, u64 k, u64 node, u64 *err) {
  if (l0 != lk) {
    surge_fail(err, node, SURGE_EQUAL_LEN, (i64)l0, (i64)k, (i64)lk);
    return surge_min(l0, lk);
  }
  return l0;
}

// The row length of a uniformly nested sequence of `rows` rows (`len(r)`: row r's length), the
// width of its transpose: 0 after recording the first row that differs from row 0.
template <class Len>
__device__ __forceinline__ u64 surge_transpose_width(u64 rows, u64 node, u64 *err, Len len) {
  if (rows == 0) return 0;
  const u64 w = len(0);
  for (u64 k = 1; k < rows; ++k) {
    const u64 l = len(k);
    if (l != w) {
      surge_fail(err, node, SURGE_RAGGED, (i64)w, (i64)k, (i64)l);
      return 0;
    }
  }
  return w;
}

// The length of a reduce_by_key's input and keys (which = 0) or a scatter's source and indices
// (which = 1): `a`, or the shorter one after recording that they differ.
__device__ __forceinline__ u64 surge_pair_len(u64 a, u64 b, u64 which, u64 node, u64 *err) {
  if (a != b) {
    surge_fail(err, node, SURGE_PAIR_LEN, (i64)a, (i64)which, (i64)b);
    return surge_min(a, b);
  }
  return a;
}

// The number of runs of equal consecutive keys among the first `len` (`key(j)`: key j).
// The number of runs of equal consecutive keys among `len`, counted by every thread of the
// block: a phase's element count, which every thread of a block computes at its kernel's top
// (never in divergent code). With one thread walking the keys (in the shape and the rows
// kernels), the H200's k-means recalculation at 10^6 points spent 0.24 s in upload and sizing
// against the relabeling's 0.05 s with the same points: the likely difference, not yet timed.
template <class Key> __device__ __forceinline__ u64 surge_run_count(u64 len, Key key) {
  __shared__ u64 surge_rc_part[1024];
  __shared__ u64 surge_rc_total;
  const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned nt = blockDim.x * blockDim.y;
  u64 mine = 0;
  for (u64 j = t; j < len; j += nt) mine += (j == 0 || key(j) != key(j - 1)) ? 1 : 0;
  surge_rc_part[t] = mine;
  __syncthreads();
  if (t == 0) {
    u64 runs = 0;
    for (unsigned k = 0; k < nt; ++k) runs += surge_rc_part[k];
    surge_rc_total = runs;
  }
  __syncthreads();
  const u64 runs = surge_rc_total;
  __syncthreads();
  return runs;
}

// A tuple of scalars that an earlier phase computed is stored packed: one u64 word per
// component (its bits), read back as the component's type.
__device__ __forceinline__ u64 surge_pack(f64 x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ u64 surge_pack(f32 x) { return (u64)__float_as_uint(x); }
__device__ __forceinline__ u64 surge_pack(i64 x) { return (u64)x; }
__device__ __forceinline__ u64 surge_pack(i32 x) { return (u64)(u32)x; }
__device__ __forceinline__ u64 surge_pack(u64 x) { return x; }
__device__ __forceinline__ u64 surge_pack(u32 x) { return (u64)x; }
__device__ __forceinline__ u64 surge_pack(bool x) { return x ? 1ULL : 0ULL; }
__device__ __forceinline__ f64 surge_unpack_f64(u64 w) { return __longlong_as_double((long long)w); }
__device__ __forceinline__ f32 surge_unpack_f32(u64 w) { return __uint_as_float((u32)w); }
__device__ __forceinline__ i64 surge_unpack_i64(u64 w) { return (i64)w; }
__device__ __forceinline__ i32 surge_unpack_i32(u64 w) { return (i32)(u32)w; }
__device__ __forceinline__ u64 surge_unpack_u64(u64 w) { return w; }
__device__ __forceinline__ u32 surge_unpack_u32(u64 w) { return (u32)w; }
__device__ __forceinline__ bool surge_unpack_bool(u64 w) { return w != 0; }

// The run of offsets `off` (`noff` entries, increasing) that holds position `j`: the last q
// with off[q] <= j (runs of length 0 are passed over).
template <typename P>
__device__ __forceinline__ u64 surge_run_of(P off, u64 noff, u64 j) {
  u64 lo = 0, hi = noff - 1;  // off[lo] <= j < off[hi]
  while (hi - lo > 1) {
    const u64 mid = lo + (hi - lo) / 2;
    if (off[mid] <= j) lo = mid; else hi = mid;
  }
  return lo;
}

// Integer division and remainder as the interpreter defines them: by zero, or the minimum of a
// signed type by -1, is an error (recorded; 0 is returned), never a trap or undefined behaviour.
template <typename T>
__device__ __forceinline__ bool surge_div_ok(T a, T b, u64 node, u64 *err) {
  if (b == (T)0) {
    surge_fail(err, node, SURGE_DIV_ZERO, 0, 0, 0);
    return false;
  }
  if ((T)(-1) < (T)0 && b == (T)(-1) && a == (T)(((u64)1) << (sizeof(T) * 8 - 1))) {
    surge_fail(err, node, SURGE_DIV_OVERFLOW, 0, 0, 0);
    return false;
  }
  return true;
}
template <typename T> __device__ __forceinline__ T surge_div(T a, T b, u64 node, u64 *err) {
  return surge_div_ok(a, b, node, err) ? (T)(a / b) : (T)0;
}
template <typename T> __device__ __forceinline__ T surge_rem(T a, T b, u64 node, u64 *err) {
  return surge_div_ok(a, b, node, err) ? (T)(a % b) : (T)0;
}

// A scatter read lazily (inside an element): its length, the destination's, after checking
// the source and index lengths and every index in position order (the first out of range is
// the error, as in the interpreter; `idx(p)`: index p).
template <typename Idx>
__device__ u64 surge_scatter_len(u64 dlen, u64 slen, u64 ilen, Idx idx, u64 node, u64 *err) {
  const u64 n = surge_pair_len(slen, ilen, 1, node, err);
  for (u64 p = 0; p < n; ++p) {
    const i64 ix = idx(p);
    if (ix < 0 || (u64)ix >= dlen) {
      surge_fail(err, node, SURGE_SCATTER, ix, (i64)p, (i64)dlen);
      break;
    }
  }
  return dlen;
}

// The last of the first `n` positions whose index is `d`, or `n` when none is.
template <typename Idx> __device__ u64 surge_last_writer(u64 d, u64 n, Idx idx) {
  for (u64 p = n; p-- > 0;) {
    if (idx(p) == (i64)d) return p;
  }
  return n;
}
