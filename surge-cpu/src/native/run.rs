//! Running: a variant's phases in order, each through the rayon skeletons (its elements by the
//! outer level, long inner sequences cooperatively, diagonal blocks through `diag`), every kernel
//! status mapped to a [`CpuError`].

use super::NativeKernels;
use super::abi::{Buf, DiagFn, ElemsFn, PhaseFns, buffer_ptr};
use super::diagonal::{self, DiagonalLayout};
use super::plan::{HostPlan, PhasePlan};
use super::skeleton::{LevelPlan, LoopSchedule, for_chunks, pool};
use super::workspace::{PhaseResult, Workspace, reuse};
use crate::CpuError;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cpu::{Inner, PhaseAbi, Shape, phase_slot};
use surge_codegen::ir::NodeId;

/// Raw pointers handed to worker threads; the skeleton guarantees disjoint writes.
#[derive(Clone, Copy)]
pub(super) struct Shared<T>(pub(super) T);
// SAFETY: used only for buffers that outlive the parallel region, with disjoint writes.
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

/// What every kernel call of one phase shares: the kernels (for their errors), the pool, the
/// phase's ABI and functions, the slot table and the phase's levels.
pub(super) struct PhaseCall<'a> {
    pub(super) kernels: &'a NativeKernels,
    pub(super) pool: &'a rayon::ThreadPool,
    pub(super) abi: &'a PhaseAbi,
    pub(super) f: PhaseFns,
    pub(super) bufs: Shared<*const Buf>,
    pub(super) plan: PhasePlan,
    /// The SELL-C-σ layout the phase runs over (`layout1 = sell_<C>_<σ>`), if any.
    pub(super) sell: Option<&'a super::sell::SellLayout>,
    /// The BCSR layout the phase runs over (`layout1 = bcsr_<r>_<c>`), if any.
    pub(super) bcsr: Option<&'a super::bcsr::BcsrLayout>,
    /// The validated rows the phase runs over in four partial sums (`layout1 = lanes`), if any.
    pub(super) lanes: Option<&'a super::lanes::LanesLayout>,
}

impl NativeKernels {
    /// Runs the phases of module `m` under `plan` on checked `buffers` with the literal table
    /// `lits` (the computation's integer literals, `ir::literal_values`), into `ws`.
    pub(super) fn run_phases(
        &self,
        m: usize,
        plan: &HostPlan,
        buffers: &[Buffer],
        lits: &[u64],
        key: Option<u64>,
        ws: &mut Workspace,
    ) -> Result<(), CpuError> {
        let inputs = buffers.len();
        let mut slots: Vec<Buf> = buffers.iter().map(Buf::of).collect();
        slots.resize(
            self.program.slots,
            Buf {
                ptr: std::ptr::NonNull::<u64>::dangling().as_ptr() as *const u8,
                len: 0,
            },
        );
        if lits.len() != self.program.literals {
            return Err(CpuError::Kernel(format!(
                "internal: {} literals for kernels compiled with {}",
                lits.len(),
                self.program.literals
            )));
        }
        slots[self.program.literal_slot] = Buf::of_slice(lits);
        // A fresh id per run: the kernels compute what depends only on the buffers once per
        // run, keyed by it (`memo` in the generated runtime).
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let run: u64 = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        slots[self.program.run_slot] = Buf {
            ptr: &run as *const u64 as *const u8,
            len: 1,
        };
        let pool = pool(plan.threads);
        // The tables of offsets slots of deep phases (their heap storage does not move).
        let mut tables: Vec<Vec<Buf>> = Vec::new();
        ws.begin(self.program.phases.len());
        for (pi, abi) in self.program.phases.iter().enumerate() {
            let fns = self.fns.phases[m][pi];
            let layout = match (&abi.diagonal, plan.diagonals, fns.diag) {
                (Some(pat), true, Some(_)) => {
                    let fill = abi.bcsr.is_some();
                    // A zero-filled band adds `±0` per stored zero: exact while `x` is finite.
                    ws.layout(pi, key, || diagonal::inspect(pat, buffers, fill))
                        .filter(|l| !l.filled || super::bcsr::all_finite(&buffers[pat.gathered]))
                }
                _ => None,
            };
            let sell = super::sell_run::layout_for(abi, plan, &fns, ws, pi, key, buffers);
            let bcsr = super::bcsr_run::layout_for(abi, plan, &fns, ws, pi, key, buffers);
            let lanes = super::lanes::layout_for(abi, plan, &fns, ws, pi, key, buffers);
            let call = PhaseCall {
                kernels: self,
                pool: &pool,
                abi,
                f: fns,
                bufs: Shared(slots.as_ptr()),
                plan: plan.phase(abi),
                sell: sell.as_deref(),
                bcsr: bcsr.as_deref(),
                lanes: lanes.as_deref(),
            };
            let r = call.run(ws.take_phase(pi), layout.as_deref())?;
            let s = phase_slot(inputs, pi);
            slots[s] = Buf::of(&r.0);
            // A nested phase's offsets; a deep phase's table of offsets slots, one per level.
            match r.1.as_slice() {
                [] => {}
                [off] if !matches!(abi.shape, Shape::Deep { .. }) => {
                    slots[s + 1] = Buf::of_slice(off)
                }
                levels => {
                    tables.push(levels.iter().map(|o| Buf::of_slice(o)).collect());
                    slots[s + 1] = Buf::of_slice(tables.last().expect("pushed"));
                }
            }
            ws.put_phase(pi, r);
        }
        let phases = &self.program.phases;
        match &self.program.result {
            Some(r) => ws.finish_parts(
                r.ty.clone(),
                phases[phases.len() - r.parts..]
                    .iter()
                    .map(|a| (a.whole, a.shape))
                    .collect(),
            ),
            None => {
                let abi = phases.last().expect("a phase");
                ws.finish(abi.whole, abi.shape, abi.packed.clone());
            }
        }
        Ok(())
    }

    /// The error of a failed kernel call, read on the thread that made it.
    fn error(&self) -> CpuError {
        let msg = self.fns.take_error.message();
        if let Some(rest) = msg.strip_prefix("SURGE|")
            && let Some((node, message)) = rest.split_once('|')
            && let Ok(node) = node.parse::<u64>()
            && (node as usize) < self.ir.nodes.len()
        {
            let node = NodeId(node);
            return CpuError::Runtime {
                op: self.ir.node(node).op.kind().name(),
                node,
                loc: self.ir.loc(node),
                message: message.to_string(),
            };
        }
        CpuError::Kernel(msg)
    }

    fn check(&self, status: i32) -> Result<(), CpuError> {
        if status == 0 {
            Ok(())
        } else {
            Err(self.error())
        }
    }
}

impl PhaseCall<'_> {
    /// A kernel call's status as a result.
    pub(super) fn check(&self, status: i32) -> Result<(), CpuError> {
        self.kernels.check(status)
    }

    /// Runs the phase, writing over `reuse` (the previous run's result) where sizes match.
    fn run(
        &self,
        reuse: Option<PhaseResult>,
        layout: Option<&DiagonalLayout>,
    ) -> Result<PhaseResult, CpuError> {
        let (old_data, old_offsets) = match reuse {
            Some((d, o)) => (Some(d), o),
            None => (None, Vec::new()),
        };
        let mut n = 0usize;
        // SAFETY: slots are valid for the duration of the call.
        self.check(unsafe { (self.f.outer)(self.bufs.0, &mut n) })?;
        match self.abi.shape {
            Shape::Flat => self.flat(n, old_data, layout),
            Shape::Nested if self.abi.inner == Some(Inner::Runs) && self.plan.coop => {
                self.runs(old_data)
            }
            Shape::Nested => self.nested(n, old_data, old_offsets.into_iter().next()),
            Shape::Deep { depth } => self.deep(n, depth, old_data, old_offsets),
        }
    }

    /// A flat phase: one value per element, through `elems` (or `diag` over a diagonal layout);
    /// long inner sequences reduced cooperatively.
    fn flat(
        &self,
        n: usize,
        old_data: Option<Buffer>,
        layout: Option<&DiagonalLayout>,
    ) -> Result<PhaseResult, CpuError> {
        let PhasePlan {
            outer,
            coop,
            threads,
            ..
        } = self.plan;
        let out = reuse(self.abi.elem, n * self.abi.width(), old_data);
        let optr = Shared(buffer_ptr(&out) as *mut u8);
        let elems = self.f.elems.expect("elems of a flat phase");
        if let (Some(l), Some(diag), false) = (layout, self.f.diag, coop)
            && l.rows == n
        {
            self.diagonal(l, diag, elems, optr, n)?;
            return Ok((out, Vec::new()));
        }
        // Over a BCSR layout; on an error, the rows below report it as the row layout does.
        if let (Some(l), false) = (self.bcsr, coop)
            && l.rows == n
            && self.run_bcsr(l, optr).is_ok()
        {
            return Ok((out, Vec::new()));
        }
        // Over the lanes layout; on an error, the rows below report it as the row layout does.
        if let (Some(l), false) = (self.lanes, coop)
            && l.rows == n
            && self.run_lanes(l, optr).is_ok()
        {
            return Ok((out, Vec::new()));
        }
        // Over a SELL layout; on an error, the rows below report it as the row layout does.
        if let (Some(l), false) = (self.sell, coop)
            && l.rows == n
            && self.run_sell(l, optr).is_ok()
        {
            return Ok((out, Vec::new()));
        }
        for_chunks::<CpuError>(self.pool, n, outer, threads, &|lo, hi| {
            let (b, o) = (self.bufs, optr);
            if !coop {
                // SAFETY: chunks are disjoint and within the output.
                return self.check(unsafe { elems(b.0, lo, hi, o.0) });
            }
            // Long inner sequences run cooperatively; runs of short ones in one call.
            let long = self.long_rows(lo, hi)?;
            let mut start = lo;
            for (i, m) in long {
                if start < i {
                    // SAFETY: a disjoint range of the output.
                    self.check(unsafe { elems(b.0, start, i, o.0) })?;
                }
                let r = self.cooperative_reduce(i, m)?;
                let fin = self.f.finish.expect("finish");
                // SAFETY: `r` holds one accumulator; `i` is in range.
                self.check(unsafe { fin(b.0, i, r.as_ptr() as *const u8, o.0) })?;
                start = i + 1;
            }
            if start < hi {
                // SAFETY: as above.
                self.check(unsafe { elems(b.0, start, hi, o.0) })?;
            }
            Ok(())
        })?;
        Ok((out, Vec::new()))
    }

    /// A nested phase: the rows' lengths through `lens`, their offsets, then the rows through
    /// `rows`; long rows written cooperatively.
    fn nested(
        &self,
        n: usize,
        old_data: Option<Buffer>,
        old_offsets: Option<Vec<u64>>,
    ) -> Result<PhaseResult, CpuError> {
        let PhasePlan {
            outer,
            coop,
            threads,
            ..
        } = self.plan;
        let mut lens = vec![0u64; n];
        let lptr = Shared(lens.as_mut_ptr());
        let lens_fn = self.f.lens.expect("lens of a nested phase");
        for_chunks::<CpuError>(self.pool, n, outer, threads, &|lo, hi| {
            let (b, l) = (self.bufs, lptr);
            // SAFETY: disjoint chunks of `lens`.
            self.check(unsafe { lens_fn(b.0, lo, hi, l.0) })
        })?;
        let mut offsets = old_offsets.unwrap_or_default();
        offsets.clear();
        let mut total = 0u64;
        offsets.push(0);
        for l in &lens {
            total += l;
            offsets.push(total);
        }
        let data = reuse(self.abi.elem, total as usize * self.abi.width(), old_data);
        let dptr = Shared(buffer_ptr(&data) as *mut u8);
        let optr = Shared(offsets.as_ptr());
        let rows = self.f.rows.expect("rows of a nested phase");
        let size = self.abi.elem.size_bytes() * self.abi.width();
        // Fewer rows than a chunk per thread: each row is much work (a row of a row-valued
        // `reduce_by_key` folds a whole run), so the rows are spread over the threads.
        let spread = if n < threads * 64 {
            outer.spread(n, threads)
        } else {
            outer
        };
        for_chunks::<CpuError>(self.pool, n, spread, threads, &|lo, hi| {
            let (b, d, o) = (self.bufs, dptr, optr);
            if !coop {
                // SAFETY: rows `lo..hi` are disjoint ranges of `data` by `offsets`.
                return self.check(unsafe { rows(b.0, lo, hi, d.0, o.0) });
            }
            let long = self.long_rows(lo, hi)?;
            let mut start = lo;
            for (i, m) in long {
                if start < i {
                    // SAFETY: rows `start..i` are disjoint ranges of `data`.
                    self.check(unsafe { rows(b.0, start, i, d.0, o.0) })?;
                }
                // SAFETY: offsets[i] is within `data`.
                let row = Shared(unsafe { d.0.add(offsets[i] as usize * size) });
                self.cooperative_row(i, m, row)?;
                start = i + 1;
            }
            if start < hi {
                // SAFETY: as above.
                self.check(unsafe { rows(b.0, start, hi, d.0, o.0) })?;
            }
            Ok(())
        })?;
        Ok((data, vec![offsets]))
    }

    /// A flat phase over a diagonal layout: runs of regular blocks through `diag`, the other rows
    /// through `elems`, the outer level's schedule applied to blocks.
    fn diagonal(
        &self,
        l: &DiagonalLayout,
        diag: DiagFn,
        elems: ElemsFn,
        out: Shared<*mut u8>,
        n: usize,
    ) -> Result<(), CpuError> {
        use diagonal::BLOCK;
        let mut dia = vec![Buf::of_slice(&l.offsets)];
        dia.extend(l.values.iter().map(Buf::of));
        let dia = Shared(dia.as_ptr());
        let threads = self.plan.threads;
        // A static schedule deals each worker one contiguous run of blocks: dealt one chunk at a
        // time in turn, each worker's prefetches (8 KiB ahead in the copy) fetched the other's
        // blocks, and the blocks a core kept in its L2 cache changed hands. crystm01 (27
        // diagonals, 76 blocks), 2 threads, static chunks of 64 rows, three alternating runs on
        // the Intel Xeon here (2026-11-29): 17.8-22.2 µs dealt in turn, 10.6-11.1 contiguous.
        let blocks = n.div_ceil(BLOCK);
        let by_block = match self.plan.outer {
            LevelPlan::Parallel { schedule, chunk } => {
                let least = match schedule {
                    LoopSchedule::Static => blocks.div_ceil(threads.max(1)),
                    _ => 1,
                };
                LevelPlan::Parallel {
                    schedule,
                    chunk: chunk.div_ceil(BLOCK).max(least),
                }
            }
            s => s,
        };
        let diagonal = |q: usize| l.diagonal.get(q).copied().unwrap_or(false);
        for_chunks::<CpuError>(self.pool, blocks, by_block, threads, &|blo, bhi| {
            let (b, d, o) = (self.bufs, dia, out);
            let mut q = blo;
            while q < bhi {
                let kind = diagonal(q);
                let mut e = q + 1;
                while e < bhi && diagonal(e) == kind {
                    e += 1;
                }
                // SAFETY: blocks `q..e` are a disjoint part of the output; diagonal blocks are
                // within the layout's copies.
                self.check(unsafe {
                    if kind {
                        diag(b.0, d.0, q, e, o.0)
                    } else {
                        elems(b.0, q * BLOCK, (e * BLOCK).min(n), o.0)
                    }
                })?;
                if kind {
                    // The irregular rows of these blocks, over the diag kernel's placeholders.
                    // Consecutive ones (a grid row's last and the next one's first) in one call.
                    let first = l.fixups.partition_point(|&r| r < q * BLOCK);
                    let last = l.fixups.partition_point(|&r| r < e * BLOCK);
                    let rows = &l.fixups[first..last];
                    let mut i = 0;
                    while i < rows.len() {
                        let mut j = i + 1;
                        while j < rows.len() && rows[j] == rows[j - 1] + 1 {
                            j += 1;
                        }
                        // SAFETY: rows `rows[i]..=rows[j - 1]` are inside blocks `q..e`.
                        self.check(unsafe { elems(b.0, rows[i], rows[j - 1] + 1, o.0) })?;
                        i = j;
                    }
                }
                q = e;
            }
            Ok(())
        })
    }
}
