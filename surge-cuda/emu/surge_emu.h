// Surge's CUDA emulator: the CUDA built-ins the emitter uses, for the host C++ compiler.
//
// The emitted source that NVRTC compiles is compiled unchanged for the host with this header
// included first (`-include surge_emu.h`, which defines SURGE_EMULATED). One block runs on one
// host thread at a time; the host runs the blocks of a grid in parallel (rayon). Inside a
// block every CUDA thread is a fiber with its own stack, switched cooperatively:
//
// - `__syncthreads()` and named barriers (`bar.sync id, count`) park a fiber until the barrier's
//   count of threads has arrived;
// - warp collectives (`__shfl*_sync`, `__ballot_sync`, `__any/__all_sync`, `__syncwarp`) park
//   a lane until every lane of its mask has arrived at a collective of the same kind, mask and
//   width; the last lane to arrive computes every lane's result (the lanes of a mask are in lock
//   step at every collective, as on Volta and later);
// - `__shared__` variables are `static thread_local`: one copy per host thread, which runs one
//   block at a time, so the threads of a block share it;
// - global-memory parameters are checked pointers (`SURGE_PTR(T)`) that know their buffer's
//   length and name, and rows of shared memory passed to the primitives (`SURGE_SHARED(T)`)
//   know their array's length.
//
// What a GPU would do silently or wrongly is an error naming the kernel, block and thread: an
// out-of-bounds global access, a `__syncthreads()` that not every thread of the block reaches,
// a collective whose mask names an exited or absent lane, or lanes of one mask at different
// collectives, a shuffle that reads a lane outside its mask, a deadlock (every live thread
// waits), and on shared rows an out-of-bounds access or a data race (two threads, one writing,
// in one barrier generation): the block is abandoned and the launch fails, never hangs.
#pragma once
#define SURGE_EMULATED 1

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <math.h>
#include <sys/mman.h>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
};

namespace surge_emu {

// ---- The launch, as the host passes it (mirrored by surge-cuda/src/emu/launch.rs) ----------
struct Arg {
  void *ptr;              // a buffer's first element (null for a by-value argument)
  unsigned long long bytes;  // the buffer's size in bytes
  unsigned long long value;  // a by-value argument's bits (integers are sign- or zero-extended)
  const char *name;       // the kernel parameter's name, for messages
};
struct Launch {
  const char *kernel;
  unsigned grid[3];
  unsigned block[3];
  unsigned nargs;
  const Arg *args;
  unsigned long long shared_bytes;  // dynamic shared memory per block
};

// ---- Fibers -------------------------------------------------------------------------------
enum class St { Ready, Barrier, Warp, Done };
enum class Coll { Shfl, ShflUp, ShflDown, ShflXor, Ballot, Any, All, SyncWarp };

inline const char *coll_name(Coll c) {
  switch (c) {
    case Coll::Shfl: return "__shfl_sync";
    case Coll::ShflUp: return "__shfl_up_sync";
    case Coll::ShflDown: return "__shfl_down_sync";
    case Coll::ShflXor: return "__shfl_xor_sync";
    case Coll::Ballot: return "__ballot_sync";
    case Coll::Any: return "__any_sync";
    case Coll::All: return "__all_sync";
    case Coll::SyncWarp: return "__syncwarp";
  }
  return "?";
}

struct Fiber {
  void *sp = nullptr;
  St st = St::Ready;
  uint3 tid{};
  unsigned lin = 0;
  int bar = -1;      // the barrier waited at
  unsigned gen = 0;  // barriers passed: two accesses in one generation have no barrier between
  // the warp collective waited at
  Coll kind = Coll::SyncWarp;
  unsigned mask = 0;
  int arg = 0;
  int width = 32;
  unsigned long long val = 0, res = 0;
};

// The last accesses of one word of shared memory, for race detection: its last writer and the
// generation it wrote in, and its readers in the latest generation (one, or several).
struct Shadow {
  int writer = -1;
  unsigned wgen = 0;
  int reader = -1;
  unsigned rgen = 0;
  bool readers = false;
};
// A `__shared__` array the primitives are given rows of, with a shadow word per element.
struct Region {
  const void *base = nullptr;
  unsigned long long n = 0;
  std::vector<Shadow> shadow;
};

constexpr int BARRIERS = 16;
constexpr size_t STACK = 256 * 1024;
constexpr size_t GUARD = 4096;

struct Block {
  const Launch *L = nullptr;
  void (*body)(Block *) = nullptr;
  void *kernel = nullptr;
  uint3 bid{};
  dim3 bdim{}, gdim{};
  unsigned n = 0, done = 0;
  Fiber *f = nullptr;
  Fiber *cur = nullptr;
  void *sched_sp = nullptr;
  unsigned bar_count[BARRIERS] = {};
  unsigned bar_expected[BARRIERS] = {};
  // Per warp: the lanes that exist, have exited, and wait at a collective.
  std::vector<unsigned> exists, exited, waiting;
  // The shared rows handed to primitives in this block, for race detection.
  std::vector<Region> regions;
  bool failed = false;
  char *msg = nullptr;
  size_t cap = 0;
};

inline thread_local Block *tl_block = nullptr;

// The stacks of one host thread: STACK bytes each below a guard page, mapped once and reused.
struct Stacks {
  char *base = nullptr;
  size_t count = 0;
  ~Stacks() {
    if (base) munmap(base, count * (STACK + GUARD));
  }
  char *top(size_t i) { return base + i * (STACK + GUARD) + GUARD + STACK; }
  bool reserve(size_t n) {
    if (n <= count) return true;
    if (base) munmap(base, count * (STACK + GUARD));
    base = nullptr;
    count = 0;
    void *p = mmap(nullptr, n * (STACK + GUARD), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    base = (char *)p;
    count = n;
    for (size_t i = 0; i < n; ++i) mprotect(base + i * (STACK + GUARD), GUARD, PROT_NONE);
    return true;
  }
};
inline thread_local Stacks tl_stacks;

// The dynamic shared memory of the block a host thread runs (zeroed per block, 16-byte aligned).
inline thread_local std::vector<unsigned long long> tl_dynamic_shared;

}  // namespace surge_emu

// ---- Context switch: the callee-saved registers (fibers never change the floating-point
// environment, so MXCSR and the x87 control word are not switched) ------------------------------
#if defined(__x86_64__)
extern "C" void surge_emu_swap(void **save, void *to) __attribute__((visibility("hidden")));
asm(R"(
  .text
  .globl surge_emu_swap
  .hidden surge_emu_swap
  .type surge_emu_swap,@function
surge_emu_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size surge_emu_swap, .-surge_emu_swap
)");
#elif defined(__aarch64__)
extern "C" void surge_emu_swap(void **save, void *to) __attribute__((visibility("hidden")));
asm(R"(
  .text
  .globl surge_emu_swap
  .hidden surge_emu_swap
  .type surge_emu_swap,%function
surge_emu_swap:
  sub sp, sp, #176
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x9, sp
  str x9, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #176
  ret
  .size surge_emu_swap, .-surge_emu_swap
)");
#else
#error "the Surge CUDA emulator switches fibers on x86_64 and aarch64 only"
#endif

namespace surge_emu {

inline Block &blk() { return *tl_block; }
inline Fiber &me() { return *tl_block->cur; }

// Switches to the next ready fiber after this one (round robin), or back to the block's
// scheduler when none is ready; resumes when this fiber is switched to again.
inline void yield() {
  Block &b = blk();
  Fiber *self = b.cur;
  if (!b.failed) {
    for (unsigned k = 1; k <= b.n; ++k) {
      Fiber *o = &b.f[(self->lin + k) % b.n];
      if (o->st == St::Ready) {
        if (o == self) return;
        b.cur = o;
        surge_emu_swap(&self->sp, o->sp);
        return;
      }
    }
  }
  surge_emu_swap(&self->sp, b.sched_sp);
}

// Records the first error of the block (kernel, block, the thread `who`, message).
inline void vrecord(const Fiber &who, const char *fmt, va_list ap) {
  Block &b = blk();
  if (b.failed) return;
  b.failed = true;
  int k = snprintf(b.msg, b.cap, "kernel %s, block (%u,%u,%u), thread (%u,%u,%u): ", b.L->kernel,
                   b.bid.x, b.bid.y, b.bid.z, who.tid.x, who.tid.y, who.tid.z);
  if (k >= 0 && (size_t)k < b.cap) vsnprintf(b.msg + k, b.cap - k, fmt, ap);
}

// Records an error of the calling thread and abandons its fiber: control never comes back.
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vrecord(me(), fmt, ap);
  va_end(ap);
  for (;;) yield();
}

// Records an error of thread `who` (a lane whose collective the calling lane completes), then
// abandons the calling fiber.
[[noreturn]] __attribute__((format(printf, 2, 3))) inline void fail_at(const Fiber &who,
                                                                       const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vrecord(who, fmt, ap);
  va_end(ap);
  for (;;) yield();
}

// ---- Barriers ---------------------------------------------------------------------------
inline void release_barrier(int id) {
  Block &b = blk();
  for (unsigned t = 0; t < b.n; ++t)
    if (b.f[t].st == St::Barrier && b.f[t].bar == id) {
      b.f[t].st = St::Ready;
      b.f[t].bar = -1;
      b.f[t].gen++;
    }
  b.bar_count[id] = 0;
}

// Barrier `id` of `count` threads (barrier 0 with every thread of the block: __syncthreads).
inline void bar_sync(int id, unsigned count) {
  Block &b = blk();
  Fiber &f = me();
  if (id < 0 || id >= BARRIERS) fail("barrier %d does not exist (0..%d)", id, BARRIERS - 1);
  if (count == 0 || count > b.n)
    fail("barrier %d waits for %u threads in a block of %u", id, count, b.n);
  if (id == 0 && b.done > 0)
    fail("reached __syncthreads() after %u thread(s) of the block exited: a barrier not reached "
         "by every thread of the block",
         b.done);
  if (b.bar_count[id] == 0) {
    b.bar_expected[id] = count;
  } else if (b.bar_expected[id] != count) {
    fail("barrier %d used with thread counts %u and %u at once", id, b.bar_expected[id], count);
  }
  f.st = St::Barrier;
  f.bar = id;
  if (++b.bar_count[id] == count) {
    release_barrier(id);
    return;
  }
  yield();
}

// ---- Warp collectives -------------------------------------------------------------------
inline unsigned long long collective_result(Fiber &f, unsigned base) {
  Block &b = blk();
  const unsigned lane = f.lin - base;
  const unsigned w = (unsigned)f.width;
  const unsigned seg = lane & ~(w - 1);
  unsigned src = lane;
  switch (f.kind) {
    case Coll::Shfl: src = seg + ((unsigned)f.arg & (w - 1)); break;
    case Coll::ShflUp: src = (lane - seg) >= (unsigned)f.arg ? lane - f.arg : lane; break;
    case Coll::ShflDown: src = (lane - seg) + (unsigned)f.arg < w ? lane + f.arg : lane; break;
    case Coll::ShflXor: {
      unsigned s = lane ^ (unsigned)f.arg;
      src = s < seg + w && s < 32 ? s : lane;
      break;
    }
    case Coll::Ballot:
    case Coll::Any:
    case Coll::All: {
      unsigned bits = 0;
      for (unsigned j = 0; j < 32; ++j)
        if ((f.mask >> j & 1) && b.f[base + j].val) bits |= 1u << j;
      if (f.kind == Coll::Ballot) return bits;
      if (f.kind == Coll::Any) return bits != 0;
      return bits == f.mask;
    }
    case Coll::SyncWarp: return 0;
  }
  if (!(f.mask >> src & 1)) {
    fail_at(f, "lane %u's %s reads lane %u, which is not in the mask 0x%08x", lane, coll_name(f.kind),
         src, f.mask);
  }
  return b.f[base + src].val;
}

// Arrives at a warp collective; returns this lane's result once every lane of `mask` arrived.
inline unsigned long long collective(Coll kind, unsigned mask, unsigned long long val, int arg,
                                     int width) {
  Block &b = blk();
  Fiber &f = me();
  const unsigned lane = f.lin % 32, base = f.lin - lane, w = f.lin / 32;
  if (width <= 0 || width > 32 || (width & (width - 1)))
    fail("%s with width %d (a power of two up to 32)", coll_name(kind), width);
  if (!(mask >> lane & 1))
    fail("lane %u calls %s with mask 0x%08x, which does not include it", lane, coll_name(kind),
         mask);
  if (unsigned absent = mask & ~b.exists[w])
    fail("%s's mask 0x%08x names lane %d, which does not exist (a block of %u threads)",
         coll_name(kind), mask, __builtin_ctz(absent), b.n);
  if (unsigned gone = mask & b.exited[w])
    fail("%s's mask 0x%08x names lane %d, which has exited", coll_name(kind), mask,
         __builtin_ctz(gone));
  f.st = St::Warp;
  f.kind = kind;
  f.mask = mask;
  f.val = val;
  f.arg = arg;
  f.width = width;
  b.waiting[w] |= 1u << lane;
  if ((b.waiting[w] & mask) != mask) {
    yield();
    return f.res;
  }
  for (unsigned m = mask; m; m &= m - 1) {
    const Fiber &o = b.f[base + __builtin_ctz(m)];
    if (o.mask != mask || o.kind != kind || o.width != width)
      fail("lane %u is at %s (mask 0x%08x, width %d) while lane %d is at %s (mask 0x%08x, width "
           "%d): lanes of one mask at different collectives",
           lane, coll_name(kind), mask, width, __builtin_ctz(m), coll_name(o.kind), o.mask,
           o.width);
  }
  for (unsigned m = mask; m; m &= m - 1) {
    Fiber &o = b.f[base + __builtin_ctz(m)];
    o.res = collective_result(o, base);
  }
  for (unsigned m = mask; m; m &= m - 1) b.f[base + __builtin_ctz(m)].st = St::Ready;
  b.waiting[w] &= ~mask;
  return f.res;
}

template <class T> inline unsigned long long bits(T v) {
  static_assert(sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
  unsigned long long u = 0;
  std::memcpy(&u, &v, sizeof(T));
  return u;
}
template <class T> inline T from_bits(unsigned long long u) {
  T v;
  std::memcpy(&v, &u, sizeof(T));
  return v;
}

// ---- Checked global pointers ------------------------------------------------------------
template <class T> struct gptr {
  T *p;
  unsigned long long n;  // elements
  const char *name;
  template <class I> T &operator[](I i) const {
    static_assert(std::is_integral_v<I>, "a global pointer is indexed by an integer");
    if constexpr (std::is_signed_v<I>) {
      if (i < 0) fail("reads or writes `%s`[%lld]: out of bounds (%llu elements)", name,
                      (long long)i, n);
    }
    if ((unsigned long long)i >= n)
      fail("reads or writes `%s`[%llu]: out of bounds (%llu elements)", name,
           (unsigned long long)i, n);
    return p[i];
  }
  T &operator*() const { return (*this)[0]; }
  template <class I> gptr operator+(I k) const {
    if constexpr (std::is_signed_v<I>) {
      if (k < 0) fail("offsets `%s` by %lld: before its first element", name, (long long)k);
    }
    if ((unsigned long long)k > n)
      fail("offsets `%s` by %llu: past its end (%llu elements)", name, (unsigned long long)k, n);
    return gptr{p + k, n - (unsigned long long)k, name};
  }
};

// The region of shared row `base` of `n` elements (registered on first use in the block).
inline unsigned region_of(const void *base, unsigned long long n) {
  Block &b = blk();
  for (unsigned r = 0; r < b.regions.size(); ++r)
    if (b.regions[r].base == base) return r;
  b.regions.push_back(Region{base, n, std::vector<Shadow>(n)});
  return (unsigned)b.regions.size() - 1;
}

inline const Fiber &fiber_at(int lin) { return blk().f[lin]; }

// A read of shared word `i` of region `r`: a race when another thread wrote it since the last
// barrier both passed.
inline void on_read(unsigned r, unsigned long long i) {
  Fiber &f = me();
  Shadow &s = blk().regions[r].shadow[i];
  if (s.writer >= 0 && s.writer != (int)f.lin && s.wgen == f.gen) {
    const uint3 w = fiber_at(s.writer).tid;
    fail("data race: reads shared memory [%llu], which thread (%u,%u,%u) wrote with no barrier "
         "between (a missing __syncthreads()?)",
         i, w.x, w.y, w.z);
  }
  if (s.reader < 0 || s.rgen != f.gen) {
    s.reader = (int)f.lin;
    s.rgen = f.gen;
    s.readers = false;
  } else if (s.reader != (int)f.lin) {
    s.readers = true;
  }
}

// A write of shared word `i` of region `r`: a race when another thread read or wrote it since
// the last barrier both passed.
inline void on_write(unsigned r, unsigned long long i) {
  Fiber &f = me();
  Shadow &s = blk().regions[r].shadow[i];
  if (s.writer >= 0 && s.writer != (int)f.lin && s.wgen == f.gen) {
    const uint3 w = fiber_at(s.writer).tid;
    fail("data race: writes shared memory [%llu], which thread (%u,%u,%u) also wrote with no "
         "barrier between",
         i, w.x, w.y, w.z);
  }
  if (s.reader >= 0 && s.rgen == f.gen && s.reader != (int)f.lin) {
    const uint3 w = fiber_at(s.reader).tid;
    fail("data race: writes shared memory [%llu], which thread (%u,%u,%u)%s read with no barrier "
         "between (a missing __syncthreads()?)",
         i, w.x, w.y, w.z, s.readers ? " and others" : "");
  }
  if (s.reader >= 0 && s.rgen == f.gen && s.readers)
    fail("data race: writes shared memory [%llu], which other threads read with no barrier "
         "between (a missing __syncthreads()?)",
         i);
  s.writer = (int)f.lin;
  s.wgen = f.gen;
}

// One element of a shared row: reads and writes are checked for races.
template <class T> struct sref {
  T *p;
  unsigned region;
  unsigned long long i;
  operator T() const {
    on_read(region, i);
    return *p;
  }
  const sref &operator=(T v) const {
    on_write(region, i);
    *p = v;
    return *this;
  }
  const sref &operator=(const sref &o) const { return *this = (T)o; }
};

// A row of `__shared__` memory passed to a primitive: its length is the array's, and its
// accesses are checked for bounds and races.
template <class T> struct sptr {
  T *p;
  unsigned long long n;
  unsigned region;
  template <size_t N> sptr(T (&a)[N]) : p(a), n(N), region(region_of(a, N)) {}
  template <class I> sref<T> operator[](I i) const {
    static_assert(std::is_integral_v<I>, "shared memory is indexed by an integer");
    if constexpr (std::is_signed_v<I>) {
      if (i < 0) fail("reads or writes shared memory [%lld]: out of bounds (%llu elements)",
                      (long long)i, n);
    }
    if ((unsigned long long)i >= n)
      fail("reads or writes shared memory [%llu]: out of bounds (%llu elements)",
           (unsigned long long)i, n);
    return sref<T>{p + i, region, (unsigned long long)i};
  }
};
template <class T> struct nondeduced {
  using type = T;
};

// ---- Running one block --------------------------------------------------------------------
inline void fiber_main() {
  Block &b = blk();
  b.body(&b);
  Fiber &f = me();
  f.st = St::Done;
  b.done++;
  b.exited[f.lin / 32] |= 1u << (f.lin % 32);
  if (b.bar_count[0] > 0)
    fail("exited while %u thread(s) wait at __syncthreads(): a barrier not reached by every "
         "thread of the block",
         b.bar_count[0]);
  const unsigned lane = f.lin % 32, base = f.lin - lane;
  for (unsigned m = b.waiting[f.lin / 32]; m; m &= m - 1) {
    const Fiber &o = b.f[base + __builtin_ctz(m)];
    if (o.mask >> lane & 1)
      fail("exited while lane %d waits at %s with mask 0x%08x, which names it",
           __builtin_ctz(m), coll_name(o.kind), o.mask);
  }
  for (;;) yield();
}

// Lays out a new fiber's stack so that the first switch to it enters fiber_main.
inline void *new_stack(char *top) {
  uintptr_t t = (uintptr_t)top & ~(uintptr_t)15;
#if defined(__x86_64__)
  void **s = (void **)t;
  *--s = nullptr;                   // fiber_main's return address (it never returns)
  *--s = (void *)&fiber_main;       // popped by `ret`
  for (int i = 0; i < 6; ++i) *--s = nullptr;  // rbp rbx r12 r13 r14 r15
  return s;
#else
  void **s = (void **)(t - 176);
  std::memset(s, 0, 176);
  s[11] = (void *)&fiber_main;  // x30
  return s;
#endif
}

inline const char *state_name(const Fiber &f) {
  switch (f.st) {
    case St::Barrier: return f.bar == 0 ? "__syncthreads()" : "a named barrier";
    case St::Warp: return coll_name(f.kind);
    default: return "?";
  }
}

// Every live thread waits: names where (the first few threads).
inline void deadlock(Block &b) {
  char where[512];
  size_t k = 0;
  unsigned listed = 0;
  for (unsigned t = 0; t < b.n && listed < 4; ++t) {
    const Fiber &f = b.f[t];
    if (f.st == St::Done) continue;
    int w = snprintf(where + k, sizeof where - k, "%sthread (%u,%u,%u) at %s", listed ? "; " : "",
                     f.tid.x, f.tid.y, f.tid.z, state_name(f));
    if (w > 0 && k + w < sizeof where) k += w;
    if (f.st == St::Barrier && f.bar > 0 && k < sizeof where) {
      w = snprintf(where + k, sizeof where - k, " %d (%u of %u arrived)", f.bar,
                   b.bar_count[f.bar], b.bar_expected[f.bar]);
      if (w > 0 && k + w < sizeof where) k += w;
    }
    if (f.st == St::Warp && k < sizeof where) {
      w = snprintf(where + k, sizeof where - k, " (mask 0x%08x)", f.mask);
      if (w > 0 && k + w < sizeof where) k += w;
    }
    ++listed;
  }
  b.failed = true;
  snprintf(b.msg, b.cap, "kernel %s, block (%u,%u,%u): deadlock: %u of %u threads wait and none "
           "can go on: %s",
           b.L->kernel, b.bid.x, b.bid.y, b.bid.z, b.n - b.done, b.n, where);
}

// Runs block `linear` of the launch: 0, or 1 with the message in `msg`.
inline int run(Block &b, unsigned long long linear, char *msg, size_t cap) {
  const Launch *L = b.L;
  b.msg = msg;
  b.cap = cap;
  b.gdim = {L->grid[0], L->grid[1], L->grid[2]};
  b.bdim = {L->block[0], L->block[1], L->block[2]};
  b.bid = {(unsigned)(linear % L->grid[0]), (unsigned)(linear / L->grid[0] % L->grid[1]),
           (unsigned)(linear / L->grid[0] / L->grid[1])};
  b.n = L->block[0] * L->block[1] * L->block[2];
  if (b.n == 0 || b.n > 1024) {
    snprintf(msg, cap, "kernel %s: a block of %u threads (1..1024)", L->kernel, b.n);
    return 1;
  }
  if (!tl_stacks.reserve(b.n)) {
    snprintf(msg, cap, "kernel %s: cannot map stacks for %u threads", L->kernel, b.n);
    return 1;
  }
  tl_dynamic_shared.assign((L->shared_bytes + 15) / 16 * 2, 0);
  std::vector<Fiber> fibers(b.n);
  b.f = fibers.data();
  const unsigned warps = (b.n + 31) / 32;
  b.exists.assign(warps, 0xffffffffu);
  if (b.n % 32) b.exists[warps - 1] = (1u << (b.n % 32)) - 1;
  b.exited.assign(warps, 0);
  b.waiting.assign(warps, 0);
  for (unsigned t = 0; t < b.n; ++t) {
    fibers[t].lin = t;
    fibers[t].tid = {t % b.bdim.x, t / b.bdim.x % b.bdim.y, t / b.bdim.x / b.bdim.y};
    fibers[t].sp = new_stack(tl_stacks.top(t));
  }
  Block *outer = tl_block;
  tl_block = &b;
  // Fibers switch to each other; control comes back here when none is ready.
  while (!b.failed && b.done < b.n) {
    Fiber *next = nullptr;
    for (unsigned t = 0; t < b.n && !next; ++t)
      if (fibers[t].st == St::Ready) next = &fibers[t];
    if (!next) {
      deadlock(b);
      break;
    }
    b.cur = next;
    surge_emu_swap(&b.sched_sp, next->sp);
  }
  tl_block = outer;
  return b.failed ? 1 : 0;
}

}  // namespace surge_emu

// ---- Kernel parameters from the launch's arguments ----------------------------------------
namespace surge_emu {

// The block's dynamic shared memory as `T`s (bounds: the launch's bytes).
template <class T> inline gptr<T> dynamic_shared(const char *name) {
  return gptr<T>{(T *)tl_dynamic_shared.data(), blk().L->shared_bytes / sizeof(T), name};
}

template <class P> struct ArgOf;
template <class T> struct ArgOf<gptr<T>> {
  static gptr<T> get(const Arg &a) {
    return gptr<T>{(T *)a.ptr, a.bytes / sizeof(T), a.name};
  }
};
template <class T> struct ArgOf<T *> {
  static T *get(const Arg &a) { return (T *)a.ptr; }
};
template <class P> struct ArgOf {
  static_assert(std::is_integral_v<P>, "a by-value kernel parameter is an integer");
  static P get(const Arg &a) { return (P)a.value; }
};

template <class... P, size_t... I>
inline void call(void (*k)(P...), const Launch *L, std::index_sequence<I...>) {
  k(ArgOf<std::remove_cv_t<P>>::get(L->args[I])...);
}

template <class... P> inline void body(Block *b) {
  call((void (*)(P...))b->kernel, b->L, std::index_sequence_for<P...>{});
}

// The entry the host calls for one block of a launch of kernel `k`.
template <class... P>
inline int run_block(void (*k)(P...), const Launch *L, unsigned long long block, char *msg,
                     unsigned long long cap) {
  if (L->nargs != sizeof...(P)) {
    snprintf(msg, cap, "kernel %s takes %zu arguments, the launch gives %u", L->kernel,
             sizeof...(P), L->nargs);
    return 1;
  }
  Block b;
  b.L = L;
  b.kernel = (void *)k;
  b.body = &body<P...>;
  return run(b, block, msg, cap);
}

}  // namespace surge_emu

#define SURGE_PTR(...) surge_emu::gptr<__VA_ARGS__>
// `extern __shared__ T name[]`: the launch's dynamic shared memory, as a checked pointer.
#define SURGE_DYNAMIC_SHARED(T, name) const surge_emu::gptr<T> name = surge_emu::dynamic_shared<T>(#name)
// Not deduced: the primitives deduce T from their values; the array converts to the row.
#define SURGE_SHARED(...) typename surge_emu::nondeduced<surge_emu::sptr<__VA_ARGS__>>::type
#define SURGE_EMU_ENTRY(name)                                                                  \
  extern "C" __attribute__((visibility("default"))) int name##__surge_emu(                     \
      const surge_emu::Launch *L, unsigned long long block, char *msg, unsigned long long cap) { \
    return surge_emu::run_block(name, L, block, msg, cap);                                     \
  }

// ---- CUDA built-ins -----------------------------------------------------------------------
#define threadIdx (surge_emu::tl_block->cur->tid)
#define blockIdx (surge_emu::tl_block->bid)
#define blockDim (surge_emu::tl_block->bdim)
#define gridDim (surge_emu::tl_block->gdim)
#define warpSize 32
#define __shared__ static thread_local

inline void __syncthreads() { surge_emu::bar_sync(0, surge_emu::blk().n); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  surge_emu::collective(surge_emu::Coll::SyncWarp, mask, 0, 0, 32);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned __activemask() {
  surge_emu::Block &b = surge_emu::blk();
  const unsigned base = b.cur->lin / 32 * 32;
  unsigned m = 0;
  for (unsigned j = 0; j < 32 && base + j < b.n; ++j)
    if (b.f[base + j].st != surge_emu::St::Done) m |= 1u << j;
  return m;
}

template <class T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return surge_emu::from_bits<T>(
      surge_emu::collective(surge_emu::Coll::Shfl, mask, surge_emu::bits(v), src, width));
}
template <class T> inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
  return surge_emu::from_bits<T>(
      surge_emu::collective(surge_emu::Coll::ShflUp, mask, surge_emu::bits(v), (int)d, width));
}
template <class T> inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  return surge_emu::from_bits<T>(
      surge_emu::collective(surge_emu::Coll::ShflDown, mask, surge_emu::bits(v), (int)d, width));
}
template <class T> inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
  return surge_emu::from_bits<T>(
      surge_emu::collective(surge_emu::Coll::ShflXor, mask, surge_emu::bits(v), m, width));
}
inline unsigned __ballot_sync(unsigned mask, int p) {
  return (unsigned)surge_emu::collective(surge_emu::Coll::Ballot, mask, p != 0, 0, 32);
}
inline int __any_sync(unsigned mask, int p) {
  return (int)surge_emu::collective(surge_emu::Coll::Any, mask, p != 0, 0, 32);
}
inline int __all_sync(unsigned mask, int p) {
  return (int)surge_emu::collective(surge_emu::Coll::All, mask, p != 0, 0, 32);
}

template <class T> inline T __ldg(const T *p) { return *p; }
template <class To, class From> inline To surge_emu_bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}
inline double __longlong_as_double(long long v) { return surge_emu_bit_cast<double>(v); }
inline long long __double_as_longlong(double v) { return surge_emu_bit_cast<long long>(v); }
inline float __int_as_float(int v) { return surge_emu_bit_cast<float>(v); }
inline int __float_as_int(float v) { return surge_emu_bit_cast<int>(v); }
inline float __uint_as_float(unsigned v) { return surge_emu_bit_cast<float>(v); }
inline unsigned __float_as_uint(float v) { return surge_emu_bit_cast<unsigned>(v); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }

// Atomics: real host atomics (the blocks of a grid run on several host threads).
template <class T> inline T atomicAdd(T *p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> inline T atomicSub(T *p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).fetch_sub(v); }
template <class T> inline T atomicExch(T *p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).exchange(v); }
template <class T> inline T atomicAnd(T *p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).fetch_and(v); }
template <class T> inline T atomicOr(T *p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> inline T atomicXor(T *p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).fetch_xor(v); }
template <class T>
inline T atomicCAS(T *p, std::type_identity_t<T> cmp, std::type_identity_t<T> v) {
  std::atomic_ref<T>(*p).compare_exchange_strong(cmp, v);
  return cmp;
}
template <class T> inline T atomicMin(T *p, std::type_identity_t<T> v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (v < old && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <class T> inline T atomicMax(T *p, std::type_identity_t<T> v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
