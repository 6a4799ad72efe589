//! The blocked GEMM loops (BLIS's five loops around the micro-kernel; the inner two are the
//! generated macro-kernel): NC columns of B at a time, KC of the shared dimension, B's KC×NC
//! panel packed by all threads, then the MC blocks of A (threads over the MC loop, each packing
//! its own block: `Parallel::Ic`) or the NR panels of one packed A block (threads over the jr
//! loop: `Parallel::Jr`).

use super::{KernelFns, MatRef};
use crate::CpuError;
use crate::native::skeleton::pool;
use rayon::prelude::*;
use std::cell::RefCell;
use surge_codegen::gemm::{GemmVariant, Parallel};

/// A pointer that may cross threads: each thread writes disjoint parts of what it points to.
#[derive(Clone, Copy)]
struct Shared(*mut f64);
// SAFETY: every use writes disjoint row blocks or panel ranges (see `run`).
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

thread_local! {
    /// Each thread's packed-A block, grown as needed and kept between calls.
    static PACK_A: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
    /// The caller's packed-B panel.
    static PACK_B: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// The B operand: a row-major k×n matrix, or its columns stored as the rows of an n×k one
/// (`C = A·Btᵀ`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BOperand<'a> {
    stored: MatRef<'a>,
    by_columns: bool,
}

impl<'a> BOperand<'a> {
    pub(crate) fn rows(b: MatRef<'a>) -> BOperand<'a> {
        BOperand {
            stored: b,
            by_columns: false,
        }
    }

    pub(crate) fn columns(bt: MatRef<'a>) -> BOperand<'a> {
        BOperand {
            stored: bt,
            by_columns: true,
        }
    }

    /// B's rows (the shared dimension k) and columns (n).
    fn shape(&self) -> (usize, usize) {
        match self.by_columns {
            false => (self.stored.rows, self.stored.cols),
            true => (self.stored.cols, self.stored.rows),
        }
    }
}

/// Checks that A (m×k), B (k×n) and C (m×n, leading dimension ldc) conform and fit their
/// buffers.
pub(crate) fn check_shapes(
    a: MatRef<'_>,
    b: BOperand<'_>,
    c_len: usize,
    ldc: usize,
) -> Result<(), CpuError> {
    let bad = |m: String| Err(CpuError::Gemm(m));
    let (b_rows, b_cols) = b.shape();
    if a.cols != b_rows {
        let stored = if b.by_columns {
            " (stored by columns)"
        } else {
            ""
        };
        return bad(format!(
            "A is {}x{} and B is {b_rows}x{b_cols}{stored}: A's columns must equal B's rows",
            a.rows, a.cols
        ));
    }
    for (name, x) in [("A", a), ("B", b.stored)] {
        if x.ld < x.cols {
            return bad(format!(
                "{name}'s leading dimension {} is below its {} columns",
                x.ld, x.cols
            ));
        }
        if x.rows > 0 && x.cols > 0 && x.data.len() < (x.rows - 1) * x.ld + x.cols {
            return bad(format!(
                "{name} is {}x{} (leading dimension {}) but its buffer holds {} values",
                x.rows,
                x.cols,
                x.ld,
                x.data.len()
            ));
        }
    }
    if ldc < b_cols {
        return bad(format!(
            "C's leading dimension {ldc} is below its {b_cols} columns"
        ));
    }
    if a.rows > 0 && b_cols > 0 && c_len < (a.rows - 1) * ldc + b_cols {
        return bad(format!(
            "C is {}x{b_cols} (leading dimension {ldc}) but its buffer holds {c_len} values",
            a.rows
        ));
    }
    Ok(())
}

/// `C = A·B` (shapes checked by [`check_shapes`]).
pub(crate) fn run(
    f: KernelFns,
    v: &GemmVariant,
    threads: usize,
    a: MatRef<'_>,
    b: BOperand<'_>,
    c: &mut [f64],
    ldc: usize,
) {
    let (m, n, k) = (a.rows, b.shape().1, a.cols);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m {
            c[i * ldc..i * ldc + n].fill(0.0);
        }
        return;
    }
    let cp = Shared(c.as_mut_ptr());
    let pool = pool(threads);
    // The packed buffers are taken out of their thread-locals for the call, not borrowed across
    // it: a thread waiting inside `install` or a parallel loop runs other jobs of its pool, and
    // one of them may be another GEMM on this thread (a borrow held across the wait made that
    // GEMM panic with "already borrowed": a flaky test when two ran at once).
    let mut pb = PACK_B.with_borrow_mut(std::mem::take);
    {
        let pb = &mut pb;
        pool.install(|| {
            for jc in (0..n).step_by(v.nc) {
                let ncb = v.nc.min(n - jc);
                for pc in (0..k).step_by(v.kc) {
                    let kcb = v.kc.min(k - pc);
                    let panel = Block {
                        jc,
                        ncb,
                        pc,
                        kcb,
                        accumulate: (pc > 0) as u32,
                    };
                    pack_b(f, v, threads, b, &panel, pb);
                    let pbp = Shared(pb.as_mut_ptr());
                    match v.parallel {
                        Parallel::Ic => over_ic(f, v, threads, a, &panel, pbp, cp, ldc),
                        Parallel::Jr => over_jr(f, v, threads, a, &panel, pbp, cp, ldc),
                    }
                }
            }
        });
    }
    PACK_B.with_borrow_mut(|slot| *slot = pb);
}

/// One KC×NC panel of B: columns [jc, jc + ncb), rows [pc, pc + kcb).
struct Block {
    jc: usize,
    ncb: usize,
    pc: usize,
    kcb: usize,
    accumulate: u32,
}

fn panels(cols: usize, nr: usize) -> usize {
    cols.div_ceil(nr)
}

/// Packs the panel of B, its NR panels dealt to `threads` tasks.
fn pack_b(
    f: KernelFns,
    v: &GemmVariant,
    threads: usize,
    b: BOperand<'_>,
    p: &Block,
    pb: &mut Vec<f64>,
) {
    let (b, by_columns) = (b.stored, b.by_columns);
    let np = panels(p.ncb, v.nr);
    let need = np * v.nr * p.kcb;
    if pb.len() < need {
        pb.resize(need, 0.0);
    }
    let per = np.div_ceil(threads);
    let dst = Shared(pb.as_mut_ptr());
    let src = b.data.as_ptr() as usize;
    (0..np.div_ceil(per)).into_par_iter().for_each(|t| {
        let (j0, j1) = (t * per, ((t + 1) * per).min(np));
        let cols = (p.ncb - j0 * v.nr).min((j1 - j0) * v.nr);
        let d = dst;
        // SAFETY: rows [pc, pc + kcb) and columns [jc + j0·NR, + cols) lie in B (checked
        // shapes; stored by columns, they are columns and rows of `b`); each task writes its
        // own panels [j0, j1) of the packed buffer.
        unsafe {
            let out = d.0.add(j0 * v.nr * p.kcb);
            if by_columns {
                let s = (src as *const f64).add((p.jc + j0 * v.nr) * b.ld + p.pc);
                pack_columns(s, b.ld, p.kcb, cols, v.nr, out);
            } else {
                let s = (src as *const f64).add(p.pc * b.ld + p.jc + j0 * v.nr);
                (f.pack_b)(s, b.ld, p.kcb, cols, out);
            }
        }
    });
}

/// The row step of the MC loop over `m` rows on `threads` threads: at most MC, a multiple of MR,
/// and as even as that allows over a number of blocks that is a multiple of the threads. Blocks
/// of exactly MC left a short last block: at 1024 rows, MC = 336 made blocks of 336, 336, 336
/// and 16, so one thread did 672 rows and the other 352.
pub(crate) fn ic_step(m: usize, mc: usize, mr: usize, threads: usize) -> usize {
    let blocks = m.div_ceil(mc).next_multiple_of(threads.max(1));
    m.div_ceil(blocks)
        .next_multiple_of(mr)
        .clamp(mr, mc.max(mr))
}

/// Threads over the MC blocks of A: each packs its block and runs the macro-kernel on its rows.
#[allow(clippy::too_many_arguments)]
fn over_ic(
    f: KernelFns,
    v: &GemmVariant,
    threads: usize,
    a: MatRef<'_>,
    p: &Block,
    pb: Shared,
    c: Shared,
    ldc: usize,
) {
    let m = a.rows;
    let src = a.data.as_ptr() as usize;
    let step = ic_step(m, v.mc, v.mr, threads);
    (0..m.div_ceil(step)).into_par_iter().for_each(|ib| {
        let ic = ib * step;
        let mcb = step.min(m - ic);
        PACK_A.with_borrow_mut(|pa| {
            let need = mcb.div_ceil(v.mr) * v.mr * p.kcb;
            if pa.len() < need {
                pa.resize(need, 0.0);
            }
            let (pb, c) = (pb, c);
            // SAFETY: the block's rows of A and C lie in their buffers (checked shapes); this
            // task alone writes C's rows [ic, ic + mcb) and its own packed-A buffer.
            unsafe {
                let s = (src as *const f64).add(ic * a.ld + p.pc);
                (f.pack_a)(s, a.ld, mcb, p.kcb, pa.as_mut_ptr());
                let cb = c.0.add(ic * ldc + p.jc);
                (f.macro_kernel)(mcb, p.ncb, p.kcb, pa.as_ptr(), pb.0, cb, ldc, p.accumulate);
            }
        });
    });
}

/// Threads over the NR panels: one packed A block at a time, its panels of C dealt to tasks.
#[allow(clippy::too_many_arguments)]
fn over_jr(
    f: KernelFns,
    v: &GemmVariant,
    threads: usize,
    a: MatRef<'_>,
    p: &Block,
    pb: Shared,
    c: Shared,
    ldc: usize,
) {
    let m = a.rows;
    let np = panels(p.ncb, v.nr);
    let per = np.div_ceil(threads);
    // Taken out for the call (see `run`): the parallel loop below may run another GEMM's task
    // on this thread.
    let mut pa = PACK_A.with_borrow_mut(std::mem::take);
    {
        let pa = &mut pa;
        for ic in (0..m).step_by(v.mc) {
            let mcb = v.mc.min(m - ic);
            let need = mcb.div_ceil(v.mr) * v.mr * p.kcb;
            if pa.len() < need {
                pa.resize(need, 0.0);
            }
            // The block's MR panels are packed by all threads, each its own range of panels.
            let mp = mcb.div_ceil(v.mr);
            let per_a = mp.div_ceil(threads);
            let (dst, src) = (Shared(pa.as_mut_ptr()), a.data.as_ptr() as usize);
            (0..mp.div_ceil(per_a)).into_par_iter().for_each(|t| {
                let (i0, i1) = (t * per_a, ((t + 1) * per_a).min(mp));
                let rows = (mcb - i0 * v.mr).min((i1 - i0) * v.mr);
                let d = dst;
                // SAFETY: rows [ic + i0·MR, + rows) of the block lie in A (checked shapes); each
                // task writes its own panels [i0, i1) of the packed block.
                unsafe {
                    (f.pack_a)(
                        (src as *const f64).add((ic + i0 * v.mr) * a.ld + p.pc),
                        a.ld,
                        rows,
                        p.kcb,
                        d.0.add(i0 * v.mr * p.kcb),
                    )
                };
            });
            let pap = pa.as_ptr() as usize;
            (0..np.div_ceil(per)).into_par_iter().for_each(|t| {
                let (j0, j1) = (t * per, ((t + 1) * per).min(np));
                let cols = (p.ncb - j0 * v.nr).min((j1 - j0) * v.nr);
                let (pb, c) = (pb, c);
                // SAFETY: each task writes C's columns [jc + j0·NR, + cols) of rows
                // [ic, ic + mcb), disjoint from every other task's.
                unsafe {
                    let cb = c.0.add(ic * ldc + p.jc + j0 * v.nr);
                    let pbj = pb.0.add(j0 * v.nr * p.kcb);
                    (f.macro_kernel)(
                        mcb,
                        cols,
                        p.kcb,
                        pap as *const f64,
                        pbj,
                        cb,
                        ldc,
                        p.accumulate,
                    );
                }
            });
        }
    }
    PACK_A.with_borrow_mut(|slot| *slot = pa);
}

/// Packs B's rows [0, kc) and columns [0, nc) from `bt`, B stored by columns (column j is row j
/// of `bt`, leading dimension `ldbt`), into the emitted `pack_b`'s layout: panels of `nr`
/// columns, pb[(panel · kc + p) · nr + j]; columns past nc are zero.
///
/// # Safety
/// Rows [0, nc) and columns [0, kc) of `bt` must lie in its buffer and `pb` must hold the
/// panels' `nc.div_ceil(nr) · nr · kc` values.
unsafe fn pack_columns(bt: *const f64, ldbt: usize, kc: usize, nc: usize, nr: usize, pb: *mut f64) {
    // SAFETY: the caller's contract: every read lies in `bt`'s rows [0, nc) and columns [0, kc),
    // every write in `pb`'s panels.
    unsafe {
        for jr in 0..nc.div_ceil(nr) {
            let dst = pb.add(jr * nr * kc);
            for j in 0..nr {
                let col = jr * nr + j;
                if col < nc {
                    let src = bt.add(col * ldbt);
                    for p in 0..kc {
                        *dst.add(p * nr + j) = *src.add(p);
                    }
                } else {
                    for p in 0..kc {
                        *dst.add(p * nr + j) = 0.0;
                    }
                }
            }
        }
    }
}
