//! The emulator on hand-written kernels: CUDA's semantics where they are defined (barriers,
//! shared memory, shuffles over logical warps, atomics across blocks), and a fault naming the
//! kernel, block and thread where a GPU would be silently wrong.

use super::{Emulator, HostBuf};
use crate::CudaError;
use crate::runtime::{KArg, Runtime};
use surge_codegen::data::Buffer;

const KERNELS: &str = r#"
typedef unsigned long long u64;
// Per block: a shared-memory tree sum, then a warp butterfly; block totals added atomically.
extern "C" __global__ void block_sum(SURGE_PTR(const double) x, const u64 n, SURGE_PTR(double) out) {
  __shared__ double sm[64];
  const unsigned t = threadIdx.x;
  const u64 i = (u64)blockIdx.x * blockDim.x + t;
  sm[t] = i < n ? x[i] : 0.0;
  __syncthreads();
  if (t < 32) sm[t] += sm[t + 32];
  __syncthreads();
  if (t < 32) {
    double v = sm[t];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    if (t == 0) atomicAdd(&out[0], v);
  }
}
SURGE_EMU_ENTRY(block_sum)
// Inclusive scans over logical warps of 8 lanes.
extern "C" __global__ void segmented_scan(SURGE_PTR(u64) out) {
  const unsigned t = threadIdx.x, lane = t % 8;
  const unsigned mask = 0xffu << (t % 32 / 8 * 8);
  u64 v = t;
  for (int d = 1; d < 8; d <<= 1) {
    u64 o = __shfl_up_sync(mask, v, d, 8);
    if (lane >= (unsigned)d) v += o;
  }
  out[t] = v;
}
SURGE_EMU_ENTRY(segmented_scan)
extern "C" __global__ void read_past_end(SURGE_PTR(const double) x, SURGE_PTR(double) out) {
  out[threadIdx.x] = x[threadIdx.x + 1];
}
SURGE_EMU_ENTRY(read_past_end)
extern "C" __global__ void divergent_barrier(SURGE_PTR(u64) out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}
SURGE_EMU_ENTRY(divergent_barrier)
extern "C" __global__ void deadlock(SURGE_PTR(u64) out) {
  if (threadIdx.x == 0) __syncthreads(); else __syncwarp();
  out[threadIdx.x] = 1;
}
SURGE_EMU_ENTRY(deadlock)
extern "C" __global__ void shuffle_exited(SURGE_PTR(u64) out) {
  if (threadIdx.x == 5) return;
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, (u64)threadIdx.x, 1);
}
SURGE_EMU_ENTRY(shuffle_exited)
extern "C" __global__ void shuffle_outside_mask(SURGE_PTR(u64) out) {
  if (threadIdx.x < 16) out[threadIdx.x] = __shfl_sync(0x0000ffffu, (u64)threadIdx.x, 20);
}
SURGE_EMU_ENTRY(shuffle_outside_mask)
template <class T> __device__ T plus_at(T v, SURGE_SHARED(T) row, unsigned k) { return v + row[k]; }
extern "C" __global__ void shared_past_end(SURGE_PTR(double) out) {
  __shared__ double sm[2][32];
  sm[threadIdx.y][threadIdx.x] = 1.0;
  __syncthreads();
  out[threadIdx.x] = plus_at(0.0, sm[threadIdx.y], threadIdx.x + 1);
}
SURGE_EMU_ENTRY(shared_past_end)
// Each thread reads its right neighbour's slot, then (without a barrier) overwrites its own.
template <class T> __device__ T shift(T v, SURGE_SHARED(T) row, unsigned t, bool sync) {
  row[t] = v;
  __syncthreads();
  T right = row[(t + 1) % 64];
  if (sync) __syncthreads();
  row[t] = right + v;
  if (sync) __syncthreads();
  return row[t];
}
extern "C" __global__ void missing_barrier(SURGE_PTR(double) out) {
  __shared__ double sm[64];
  out[threadIdx.x] = shift(1.0, sm, threadIdx.x, false);
}
SURGE_EMU_ENTRY(missing_barrier)
extern "C" __global__ void with_barriers(SURGE_PTR(double) out) {
  __shared__ double sm[64];
  out[threadIdx.x] = shift(1.0, sm, threadIdx.x, true);
}
SURGE_EMU_ENTRY(with_barriers)
// Dynamic shared memory: each block reverses its slice of x through it.
extern "C" __global__ void reverse_blocks(SURGE_PTR(const double) x, SURGE_PTR(double) out) {
  SURGE_DYNAMIC_SHARED(double, buf);
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  buf[t] = x[base + t];
  __syncthreads();
  out[base + t] = buf[blockDim.x - 1 - t];
  __syncthreads();
  buf[t + 1] = 0.0;
}
SURGE_EMU_ENTRY(reverse_blocks)
extern "C" __global__ void partial_warp(SURGE_PTR(u64) out) {
  out[threadIdx.x] = __shfl_sync(0xffffffffu, (u64)threadIdx.x, 0);
}
SURGE_EMU_ENTRY(partial_warp)
"#;

/// Runs kernel `name` of KERNELS on `grid` blocks of `threads` threads.
fn launch(
    name: &str,
    grid: u32,
    threads: u32,
    args: &[KArg<'_, Emulator>],
) -> Result<(), CudaError> {
    let emu = Emulator::default();
    let m = emu.module(KERNELS).expect("the test kernels compile");
    let f = emu.function(&m, name).expect("the kernel has an entry");
    emu.launch(&f, name, grid, (threads, 1), args)
}

fn fault(name: &str, threads: u32) -> String {
    let out = HostBuf::zeros(surge_codegen::ir::Elem::U64, 64).unwrap();
    match launch(name, 1, threads, &[KArg::Buf(&out, "out")]) {
        Err(e @ CudaError::Fault { .. }) => e.to_string(),
        other => panic!("{name}: expected a fault, got {other:?}"),
    }
}

#[test]
fn barriers_shared_memory_shuffles_and_atomics_compute_a_sum() {
    let n = 1000;
    let x: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let xs = HostBuf::upload(&Buffer::F64(x.clone())).unwrap();
    let out = HostBuf::zeros(surge_codegen::ir::Elem::F64, 1).unwrap();
    let blocks = (n as u32).div_ceil(64);
    let args = [
        KArg::Buf(&xs, "x"),
        KArg::U64(n as u64),
        KArg::Buf(&out, "out"),
    ];
    launch("block_sum", blocks, 64, &args).unwrap();
    assert_eq!(out.download(1).unwrap(), Buffer::F64(vec![x.iter().sum()]));
}

#[test]
fn shuffles_over_logical_warps_stay_in_their_segment() {
    let out = HostBuf::zeros(surge_codegen::ir::Elem::U64, 64).unwrap();
    launch("segmented_scan", 1, 64, &[KArg::Buf(&out, "out")]).unwrap();
    let want: Vec<u64> = (0..64u64).map(|t| (t / 8 * 8..=t).sum()).collect();
    assert_eq!(out.download(64).unwrap(), Buffer::U64(want));
}

#[test]
fn an_out_of_bounds_read_names_the_buffer_block_and_thread() {
    let xs = HostBuf::upload(&Buffer::F64(vec![1.0; 8])).unwrap();
    let out = HostBuf::zeros(surge_codegen::ir::Elem::F64, 8).unwrap();
    let e = launch(
        "read_past_end",
        1,
        8,
        &[KArg::Buf(&xs, "x"), KArg::Buf(&out, "out")],
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "the CUDA emulator stopped kernel read_past_end: kernel read_past_end, block (0,0,0), \
         thread (7,0,0): reads or writes `x`[8]: out of bounds (8 elements)"
    );
}

#[test]
fn a_barrier_not_every_thread_reaches_is_a_fault() {
    let e = fault("divergent_barrier", 32);
    assert!(
        e.contains("a barrier not reached by every thread of the block"),
        "{e}"
    );
}

#[test]
fn a_deadlock_is_a_fault_not_a_hang() {
    let e = fault("deadlock", 32);
    assert!(e.contains("deadlock: 32 of 32 threads wait"), "{e}");
    assert!(e.contains("thread (0,0,0) at __syncthreads()"), "{e}");
    assert!(e.contains("thread (1,0,0) at __syncwarp"), "{e}");
}

#[test]
fn a_shuffle_naming_an_exited_lane_is_a_fault() {
    let e = fault("shuffle_exited", 32);
    assert!(e.contains("thread (5,0,0)"), "{e}");
    assert!(
        e.contains("exited while lane 0 waits at __shfl_down_sync"),
        "{e}"
    );
}

#[test]
fn a_shuffle_reading_outside_its_mask_is_a_fault() {
    let e = fault("shuffle_outside_mask", 32);
    assert!(
        e.contains("lane 0's __shfl_sync reads lane 20, which is not in the mask 0x0000ffff"),
        "{e}"
    );
}

#[test]
fn a_full_mask_in_a_partial_warp_is_a_fault() {
    let e = fault("partial_warp", 16);
    assert!(
        e.contains("names lane 16, which does not exist (a block of 16 threads)"),
        "{e}"
    );
}

#[test]
fn a_shared_row_read_past_its_end_is_a_fault() {
    let out = HostBuf::zeros(surge_codegen::ir::Elem::F64, 32).unwrap();
    let e = launch("shared_past_end", 1, 32, &[KArg::Buf(&out, "out")])
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with(
            "thread (31,0,0): reads or writes shared memory [32]: out of bounds (32 elements)"
        ),
        "{e}"
    );
}

#[test]
fn a_shared_write_after_another_threads_read_without_a_barrier_is_a_race() {
    let out = HostBuf::zeros(surge_codegen::ir::Elem::F64, 64).unwrap();
    let e = launch("missing_barrier", 1, 64, &[KArg::Buf(&out, "out")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("data race"), "{e}");
    assert!(e.contains("with no barrier between"), "{e}");
}

#[test]
fn shared_accesses_separated_by_barriers_are_not_races() {
    let out = HostBuf::zeros(surge_codegen::ir::Elem::F64, 64).unwrap();
    launch("with_barriers", 1, 64, &[KArg::Buf(&out, "out")]).unwrap();
    assert_eq!(out.download(64).unwrap(), Buffer::F64(vec![2.0; 64]));
}

#[test]
fn dynamic_shared_memory_is_per_block_and_bounded_by_the_launch() {
    let emu = Emulator::default();
    let m = emu.module(KERNELS).unwrap();
    let f = emu.function(&m, "reverse_blocks").unwrap();
    let xs = HostBuf::upload(&Buffer::F64((0..64).map(f64::from).collect())).unwrap();
    let out = HostBuf::zeros(surge_codegen::ir::Elem::F64, 64).unwrap();
    let args = [KArg::Buf(&xs, "x"), KArg::Buf(&out, "out")];
    // 32 doubles per block: thread 31's `buf[32]` is past the end.
    let e = emu
        .launch_shared(&f, "reverse_blocks", 2, (32, 1), 32 * 8, &args)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("thread (31,0,0): reads or writes `buf`[32]: out of bounds (32 elements)"),
        "{e}"
    );
    // One spare double: the blocks reverse their halves.
    emu.launch_shared(&f, "reverse_blocks", 2, (32, 1), 33 * 8, &args)
        .unwrap();
    let want: Vec<f64> = (0..64)
        .map(|i| f64::from(i / 32 * 32 + 31 - i % 32))
        .collect();
    assert_eq!(out.download(64).unwrap(), Buffer::F64(want));
}
