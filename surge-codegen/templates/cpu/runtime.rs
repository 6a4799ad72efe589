// ---- runtime helpers (templates/cpu/runtime.rs) ----
#![allow(unused, clippy::all)]
#![allow(unused_braces, unused_parens, unused_variables, unused_mut, non_snake_case)]

use std::cell::RefCell;

/// One bound buffer: a typed pointer and an element count.
#[repr(C)]
pub struct Buf {
    pub ptr: *const u8,
    pub len: usize,
}

/// The ABI version the host checks before calling anything else.
#[no_mangle]
pub extern "C" fn surge_abi_version() -> u32 {
    3
}

thread_local! {
    static LAST_ERROR: RefCell<String> = RefCell::new(String::new());
}

/// Silences the default panic hook: kernel errors are returned to the host, not printed.
#[no_mangle]
pub extern "C" fn surge_init() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// Copies the calling thread's last error message into `buf`; returns its full length.
#[no_mangle]
pub unsafe extern "C" fn surge_take_error(buf: *mut u8, cap: usize) -> usize {
    LAST_ERROR.with(|e| {
        let e = e.borrow();
        let n = e.len().min(cap);
        unsafe { std::ptr::copy_nonoverlapping(e.as_ptr(), buf, n) };
        e.len()
    })
}

#[inline(always)]
unsafe fn slot<T>(bufs: *const Buf, i: usize) -> &'static [T] {
    let b = unsafe { &*bufs.add(i) };
    unsafe { std::slice::from_raw_parts(b.ptr as *const T, b.len) }
}

/// The host's id of the current run, in slot `i` (0 when none is passed: nothing is memoized).
#[inline(always)]
unsafe fn run_id(bufs: *const Buf, i: usize) -> u64 {
    unsafe { slot::<u64>(bufs, i) }.first().copied().unwrap_or(0)
}

/// A value that depends only on the run's buffers and literals (no lambda parameter), computed
/// once per run however many kernel calls of the phase need it (the outer length, the row
/// lengths, each chunk of rows): the first call computes it under the lock, the others wait and
/// take a copy. A run with another id (another computation, or a concurrent run) recomputes.
fn memo<T: Clone>(cell: &std::sync::Mutex<Option<(u64, T)>>, run: u64, f: impl FnOnce() -> T) -> T {
    if run == 0 {
        return f();
    }
    let mut g = cell.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((r, v)) = g.as_ref() {
        if *r == run {
            return v.clone();
        }
    }
    let v = f();
    *g = Some((run, v.clone()));
    v
}

/// The transposed copies the lanes form of an unroll-and-jam reads (surge-codegen
/// emit/cpu/jam/lanes.rs), per site: built on first use in a tile-width expansion of `elems`,
/// once per call (memoized for the run where memoization is on).
#[derive(Default)]
struct LaneCells {
    f64s: [std::cell::OnceCell<std::sync::Arc<Vec<f64>>>; 4],
    f32s: [std::cell::OnceCell<std::sync::Arc<Vec<f32>>>; 4],
}

/// Rows `off..` of `buf` (rows of `w` values, `w > 0`), in groups of `L` consecutive rows, each
/// group transposed: `ct[(g * w + j) * L + l]` is element `j` of row `off + g * L + l`. Only
/// whole groups of full rows; where rows are left over and at least `L` rows follow `off`, one
/// more group of the last `L` full rows (the tail group of surge-codegen emit/cpu/jam/lanes.rs).
fn lane_groups<T: Copy, const L: usize>(buf: &[T], w: usize, off: usize) -> Vec<T> {
    let rows = buf.len() / w;
    let after = rows.saturating_sub(off);
    let groups = after / L;
    let tail = (after % L != 0 && after >= L).then_some(rows - L);
    let firsts = (0..groups).map(|g| off + g * L).chain(tail);
    let mut ct = Vec::with_capacity((groups + 1) * w * L);
    for first in firsts {
        let group = &buf[first * w..(first + L) * w];
        for j in 0..w {
            for l in 0..L {
                ct.push(group[l * w + j]);
            }
        }
    }
    ct
}

/// The literal table in slot `i`: the computation's `N` integer literals as `u64` bits. Checked
/// once per kernel call; after that `lits[k]` is a load at a constant offset.
#[inline(always)]
unsafe fn literal_table<const N: usize>(bufs: *const Buf, i: usize) -> &'static [u64; N] {
    let s: &'static [u64] = unsafe { slot(bufs, i) };
    match s.try_into() {
        Ok(a) => a,
        Err(_) => fail_literal_table(s.len(), N),
    }
}

#[cold]
#[inline(never)]
fn fail_literal_table(got: usize, want: usize) -> ! {
    panic!("the host passed {got} literals to kernels compiled for {want}")
}

fn guard(f: impl FnOnce()) -> i32 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(()) => 0,
        Err(e) => {
            let msg = if let Some(s) = e.downcast_ref::<String>() {
                s.clone()
            } else if let Some(s) = e.downcast_ref::<&str>() {
                s.to_string()
            } else {
                "kernel panicked".to_string()
            };
            LAST_ERROR.with(|x| *x.borrow_mut() = msg);
            1
        }
    }
}

/// A run-time error of node `node` (operator `op`): `SURGE|node|message`, parsed by the host.
#[cold]
#[inline(never)]
fn fail(op: &str, node: u64, msg: impl std::fmt::Display) -> ! {
    let _ = op;
    panic!("SURGE|{node}|{msg}")
}

// The checks below are on the hot path, so each one is a compare and a branch to a cold,
// never-inlined function that does the formatting. Formatting inline would make the compiler
// spill the message's arguments to the stack on every iteration, before the branch.

#[cold]
#[inline(never)]
fn fail_index(i: i128, len: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("index {i} is out of range for a sequence of length {len}"))
}

#[inline(always)]
fn chk_index(i: i128, len: usize, op: &str, node: u64) -> usize {
    if i < 0 || i >= len as i128 {
        fail_index(i, len, op, node);
    }
    i as usize
}

#[cold]
#[inline(never)]
fn fail_gather(i: i128, pos: usize, len: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("index {i} at position {pos} is out of range for a source of length {len}"))
}

#[inline(always)]
fn chk_gather(i: i128, pos: usize, len: usize, op: &str, node: u64) -> usize {
    if i < 0 || i >= len as i128 {
        fail_gather(i, pos, len, op, node);
    }
    i as usize
}

/// The host's contract for `partial`/`chunk`: a range of at least `min` positions inside the
/// row (rows are read unchecked, so a host bug must not become an out-of-bounds read).
#[inline(always)]
fn chk_host_range(lo: usize, hi: usize, len: usize, min: usize, what: &str) {
    if lo.saturating_add(min) > hi || hi > len {
        fail_host_range(lo, hi, len, what);
    }
}

#[cold]
#[inline(never)]
fn fail_host_range(lo: usize, hi: usize, len: usize, what: &str) -> ! {
    panic!("internal: {what} called for positions {lo}..{hi} of a row of length {len}")
}

#[cold]
#[inline(never)]
fn fail_equal_len(a: usize, b: usize, k: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("input lengths differ: input 0 has length {a}, input {k} has length {b}"))
}

#[inline(always)]
fn chk_equal_len(a: usize, b: usize, k: usize, op: &str, node: u64) {
    if a != b {
        fail_equal_len(a, b, k, op, node);
    }
}

#[cold]
#[inline(never)]
fn fail_pair_len(a: usize, b: usize, what_a: &str, what_b: &str, op: &str, node: u64) -> ! {
    fail(op, node, format!("the {what_a} has length {a} but the {what_b} have length {b}"))
}

#[inline(always)]
fn chk_pair_len(a: usize, b: usize, what_a: &str, what_b: &str, op: &str, node: u64) {
    if a != b {
        fail_pair_len(a, b, what_a, what_b, op, node);
    }
}

#[cold]
#[inline(never)]
fn fail_scatter(i: i128, pos: usize, len: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("index {i} at position {pos} is out of range for a destination of length {len}"))
}

#[inline(always)]
fn chk_scatter(i: i128, pos: usize, len: usize, op: &str, node: u64) -> usize {
    if i < 0 || i >= len as i128 {
        fail_scatter(i, pos, len, op, node);
    }
    i as usize
}

#[cold]
#[inline(never)]
fn fail_uniform_row(width: usize, len: usize, k: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("rows differ in length (row 0 has {width}, row {k} has {len}); only uniform nesting transposes"))
}

#[inline(always)]
fn chk_uniform_row(width: usize, len: usize, k: usize, op: &str, node: u64) {
    if width != len {
        fail_uniform_row(width, len, k, op, node);
    }
}

#[cold]
#[inline(never)]
fn fail_positive(k: i128, what: &str, op: &str, node: u64) -> ! {
    fail(op, node, format!("{what} must be positive, got {k}"))
}

/// The tile width whose expansion a specialized `elems` loop runs (surge-codegen's
/// emit/cpu/spec.rs): `w` where every (tile literal, input length) pair has the tile `w` and a
/// length it divides (every tile full), else 0 (the generic expansion).
#[inline(always)]
fn spec_width(tiles: &[(u64, usize)]) -> usize {
    let w = tiles[0].0;
    if w == 0 || w > 64 {
        return 0;
    }
    let w = w as usize;
    if tiles.iter().all(|&(t, len)| t as usize == w && len % w == 0) {
        w
    } else {
        0
    }
}

#[inline(always)]
fn chk_positive(k: i128, what: &str, op: &str, node: u64) -> usize {
    if k <= 0 {
        fail_positive(k, what, op, node);
    }
    k as usize
}

#[cold]
#[inline(never)]
fn fail_len(l: i128, op: &str, node: u64) -> ! {
    fail(op, node, format!("length {l} is negative"))
}

#[inline(always)]
fn chk_len(l: i128, op: &str, node: u64) -> usize {
    if l < 0 {
        fail_len(l, op, node);
    }
    l as usize
}

fn range_len(a: i128, b: i128, s: i128, op: &str, node: u64) -> usize {
    if s == 0 {
        fail(op, node, "stride is 0");
    }
    let n = if s > 0 {
        if b > a { (b - a + s - 1) / s } else { 0 }
    } else if a > b {
        (a - b + (-s) - 1) / (-s)
    } else {
        0
    };
    n as usize
}

#[inline(always)]
fn chk_nonempty_offsets(n: usize, op: &str, node: u64) {
    if n == 0 {
        fail(op, node, "offsets are empty; a nested sequence of n rows needs n + 1 offsets");
    }
}

#[cold]
#[inline(never)]
fn fail_segment(a: i128, b: i128, i: usize, len: usize, op: &str, node: u64) -> ! {
    if a < 0 || a > len as i128 {
        fail(op, node, format!("offsets[{i}] = {a} is out of range for a sequence of length {len}"));
    }
    if b < 0 || b > len as i128 {
        fail(op, node, format!("offsets[{}] = {b} is out of range for a sequence of length {len}", i + 1));
    }
    fail(op, node, format!("offsets are not monotone: offsets[{i}] = {a} > offsets[{}] = {b}", i + 1))
}

#[inline(always)]
fn chk_segment(a: i128, b: i128, i: usize, len: usize, op: &str, node: u64) -> (usize, usize) {
    if a < 0 || b < 0 || a > b || b > len as i128 {
        fail_segment(a, b, i, len, op, node);
    }
    (a as usize, b as usize)
}

#[inline(always)]
fn int_div<T>(r: Option<T>, by_zero: bool, op: &str, node: u64) -> T {
    match r {
        Some(v) => v,
        None if by_zero => fail(op, node, "integer division by zero"),
        None => fail(op, node, "integer division overflow (MIN / -1)"),
    }
}

/// Rows per block of the diagonal layout (`diag` functions).
const DIAG_BLOCK: usize = 64;

/// Writes one block of results. `f64` blocks use streaming stores: a `diag` kernel never reads its
/// output, and skipping the read-for-ownership of each output line saves a sixth to an eighth of
/// a banded SpMV's memory traffic.
#[inline(always)]
unsafe fn store_block<T: Copy + 'static>(dst: *mut T, src: &[T; DIAG_BLOCK]) {
    #[cfg(target_arch = "x86_64")]
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>() && dst as usize % 16 == 0 {
        use std::arch::x86_64::{_mm_loadu_pd, _mm_stream_pd};
        let (d, s) = (dst as *mut f64, src.as_ptr() as *const f64);
        let mut j = 0;
        while j < DIAG_BLOCK {
            // SAFETY: `dst` holds DIAG_BLOCK elements and is 16-byte aligned.
            unsafe { _mm_stream_pd(d.add(j), _mm_loadu_pd(s.add(j))) };
            j += 2;
        }
        return;
    }
    // SAFETY: `dst` holds DIAG_BLOCK elements.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, DIAG_BLOCK) };
}

/// Orders streaming stores before the kernel returns to the host.
#[inline(always)]
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a fence has no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// `s[start..start + DIAG_BLOCK]` as an array, checked once for a whole diagonal of a block.
#[inline(always)]
fn diag_window<'a, T>(s: &'a [T], start: i64, op: &str, node: u64) -> &'a [T; DIAG_BLOCK] {
    if start < 0 || start as u128 + DIAG_BLOCK as u128 > s.len() as u128 {
        fail_diag_window(start, s.len(), op, node);
    }
    let w = &s[start as usize..start as usize + DIAG_BLOCK];
    w.try_into().expect("a window of DIAG_BLOCK elements")
}

/// The gathered input's window `s[start..start + DIAG_BLOCK]` of a diagonal block: that part of
/// `s` where it lies inside, else `pad` holding the part inside and zeros past the ends of `s`.
/// Why zeros are safe: the host stores a block diagonally only when each of its rows either has
/// every stored slot's column inside `s` (a zero stored where a filled band's row lacks an
/// element, times a zero here, adds `+0.0`, which leaves a sum that started at `+0.0` unchanged)
/// or is recomputed through `elems` after the block (`surge-cpu`'s `native/diagonal.rs`). Before,
/// blocks at the ends ran as rows: 8 of crystm01's 76 blocks.
#[inline(always)]
fn diag_x_window<'a, T: Copy + Default>(s: &'a [T], start: i64, pad: &'a mut [T; DIAG_BLOCK]) -> &'a [T; DIAG_BLOCK] {
    if start >= 0 && start as u128 + DIAG_BLOCK as u128 <= s.len() as u128 {
        let w = &s[start as usize..start as usize + DIAG_BLOCK];
        return w.try_into().expect("a window of DIAG_BLOCK elements");
    }
    for (r, p) in pad.iter_mut().enumerate() {
        let j = start + r as i64;
        *p = if j >= 0 && (j as u128) < s.len() as u128 { s[j as usize] } else { T::default() };
    }
    pad
}

#[cold]
#[inline(never)]
fn fail_diag_window(start: i64, len: usize, op: &str, node: u64) -> ! {
    fail(
        op,
        node,
        format!("diagonal block window {start}..{start}+{DIAG_BLOCK} outside 0..{len}"),
    )
}

/// Elements ahead of the current window that `prefetch_ahead` asks for (8 KiB of `f64`).
const PREFETCH_AHEAD: usize = 1024;

/// Prefetches the `DIAG_BLOCK` elements of `s` starting `PREFETCH_AHEAD` after `at`: the hardware
/// prefetchers stop at 4 KiB pages, and a `diag` kernel's copy is one long stream. Measured with
/// `spmv_probe banded` (three alternating runs, 2 threads, against MKL in the same run): ratio
/// 0.88–1.01 without prefetching, 1.01–1.07 prefetching the copy and the gathered input.
#[inline(always)]
fn prefetch_ahead<T>(s: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = s.as_ptr().wrapping_add(at + PREFETCH_AHEAD) as *const i8;
        let bytes = DIAG_BLOCK * std::mem::size_of::<T>();
        let mut b = 0;
        while b < bytes {
            // SAFETY: a prefetch never faults, whatever the address.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(b),
                )
            };
            b += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, at);
}

/// Prefetches the first `bytes` (at most 512) of the row at `p`: a gathered row read a few
/// positions later (`emit/cpu/prefetch.rs`).
#[inline(always)]
fn prefetch_row(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut b = 0;
        while b < bytes.min(512) {
            // SAFETY: a prefetch never faults, whatever the address.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(b) as *const i8,
                )
            };
            b += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

// ---- SELL-C-σ (`sell<C>` kernels; see `emit/cpu/README.md`) ----

/// `s[start..start + C]` as an array, checked.
#[inline(always)]
fn sell_window<'a, T, const C: usize>(s: &'a [T], start: usize, op: &str, node: u64) -> &'a [T; C] {
    let span = sell_span(s, start, start.saturating_add(C), op, node);
    // SAFETY: `span` holds exactly C elements.
    unsafe { &*(span.as_ptr() as *const [T; C]) }
}

/// `s[a..e]`, checked once per chunk so that its columns are read without checks.
#[inline(always)]
fn sell_span<'a, T>(s: &'a [T], a: usize, e: usize, op: &str, node: u64) -> &'a [T] {
    if a > e || e > s.len() {
        fail_sell_span(a, e, s.len(), op, node);
    }
    // SAFETY: `a <= e <= s.len()`, checked above.
    unsafe { s.get_unchecked(a..e) }
}

#[cold]
#[inline(never)]
fn fail_sell_span(a: usize, e: usize, len: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("SELL chunk span {a}..{e} outside 0..{len}"))
}

/// Column `k` of a chunk's span (`C` elements from `k * C`); the kernel's loops keep `k` below
/// the chunk's width, `span.len() / C`.
#[inline(always)]
fn sell_column<T, const C: usize>(span: &[T], k: usize) -> &[T; C] {
    debug_assert!((k + 1) * C <= span.len());
    // SAFETY: `(k + 1) * C <= span.len()`: `k` is below the chunk's width.
    unsafe { &*(span.as_ptr().add(k * C) as *const [T; C]) }
}

/// The element range `starts[q]..starts[q + 1]` of chunk `q`: whole columns of `c`, at least one
/// (every row of the layout has an element).
#[inline(always)]
fn sell_chunk(starts: &[u64], q: usize, c: usize, op: &str, node: u64) -> (usize, usize) {
    match (starts.get(q), starts.get(q + 1)) {
        (Some(&a), Some(&e)) if a < e && (e - a) % c as u64 == 0 => (a as usize, e as usize),
        _ => fail_sell_chunk(q, starts.len(), op, node),
    }
}

#[cold]
#[inline(never)]
fn fail_sell_chunk(q: usize, len: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("SELL chunk {q} has no valid extent among {len} chunk starts"))
}

/// The last valid position of the gathered input (`len - 1`); an empty one is an error.
#[inline(always)]
fn sell_last(len: usize, op: &str, node: u64) -> usize {
    match len.checked_sub(1) {
        Some(m) => m,
        None => fail(op, node, "SELL layout gathers from an empty input"),
    }
}

/// `s[j]` (`j <= max < s.len()`), unchecked: the host runs a `sell<C>` kernel only over a layout
/// whose every stored index its inspector validated against a gathered input of at most
/// `s.len()` elements (`SellLayout::gather_len`, checked before each run). A clamp here (one
/// compare and move per element) cost 15-30% of the kernel on matrices of 4-40 nonzeros a row.
#[inline(always)]
fn sell_gather<T: Copy>(s: &[T], j: usize, max: usize) -> T {
    debug_assert!(j <= max && max < s.len());
    // SAFETY: `j < s.len()`, the host's invariant above.
    unsafe { *s.get_unchecked(j) }
}

// ---- BCSR r×c (`bcsr<r>x<c>` kernels; see `emit/cpu/README.md`) ----

/// The blocks `starts[q]..starts[q + 1]` of block row `q`, checked against the `blocks` the
/// layout holds.
#[inline(always)]
fn bcsr_range(starts: &[u64], q: usize, blocks: usize, op: &str, node: u64) -> (usize, usize) {
    match (starts.get(q), starts.get(q + 1)) {
        (Some(&a), Some(&e)) if a <= e && e <= blocks as u64 => (a as usize, e as usize),
        _ => fail_bcsr(q, starts.len(), op, node),
    }
}

/// The first row of block row `q`.
#[inline(always)]
fn bcsr_first(first: &[u32], q: usize, op: &str, node: u64) -> usize {
    match first.get(q) {
        Some(&i) => i as usize,
        None => fail_bcsr(q, first.len(), op, node),
    }
}

#[cold]
#[inline(never)]
fn fail_bcsr(q: usize, len: usize, op: &str, node: u64) -> ! {
    fail(op, node, format!("BCSR block row {q} has no valid extent among {len}"))
}

/// `s[j..j + C]`, unchecked: the host runs a `bcsr<r>x<c>` kernel only over a layout whose every
/// block column its inspector validated (`j + C <= gather_len`) against a gathered input of at
/// most `s.len()` elements (`BcsrLayout::gather_len`, checked before each run).
#[inline(always)]
fn bcsr_x<T, const C: usize>(s: &[T], j: usize) -> &[T; C] {
    debug_assert!(j + C <= s.len());
    // SAFETY: `j + C <= s.len()`, the host's invariant above.
    unsafe { &*(s.as_ptr().add(j) as *const [T; C]) }
}

/// Block `b` of a block row's values (`N` values from `b * N`); the kernel keeps `b` below the
/// block row's blocks, `vq.len() / N`.
#[inline(always)]
fn bcsr_block<T, const N: usize>(vq: &[T], b: usize) -> &[T; N] {
    debug_assert!((b + 1) * N <= vq.len());
    // SAFETY: `(b + 1) * N <= vq.len()`: `b` is below the block row's blocks.
    unsafe { &*(vq.as_ptr().add(b * N) as *const [T; N]) }
}
