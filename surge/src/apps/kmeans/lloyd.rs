//! Lloyd's algorithm with Surge: each iteration runs the relabeling program, sorts the labels on
//! the host (a counting sort, as the dissertation sorts them on the host), runs Listing 5.5's
//! recalculation, and keeps the old centroid of a cluster left empty. The points are copied
//! once: each iteration rebinds the programs' inputs (same structure, compiled once) and moves
//! the points' buffer from one program to the other. At the first update that copy is arranged
//! in label order (`layout.rs`), so later gathers read neighbouring rows.

use super::KMeansResult;
use super::data::{Points, check_k};
use super::layout::Layout;
use super::program::{self, CENTROIDS, COUNTS, ORDER, POINTS, SORTED_LABELS};
use crate::{Computation, Kernels, Output, Result, SurgeError, Target};
use surge_codegen::data::Buffer;
use surge_codegen::ir;
use surge_codegen::variant::Variant;
use surge_cuda::{DeviceKernels, Runtime};

/// Which variant runs each program (None: the default variant).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LloydVariants {
    pub relabel: Option<String>,
    pub recalculate: Option<String>,
}

/// One program compiled once, rebound to new inputs each iteration (also the distributed
/// Lloyd's, `mpi::kmeans_local`). On a CUDA target (a GPU or the emulator) the chosen variant of
/// every phase is NVRTC-compiled and loaded once; each run uploads the inputs, runs every phase
/// with its device-side checks and downloads the result.
pub(crate) struct Program {
    pub(crate) ir: ir::Computation,
    compiled: Compiled,
    pub(crate) variant: Variant,
}

enum Compiled {
    Cpu(std::sync::Arc<Kernels>),
    Gpu(
        DeviceKernels<surge_cuda::Device>,
        Vec<Variant>,
        Resident<surge_cuda::Device>,
    ),
    Emulated(
        DeviceKernels<surge_cuda::Emulator>,
        Vec<Variant>,
        Resident<surge_cuda::Emulator>,
    ),
}

/// The inputs a CUDA program's last run left on the device (with their lengths), which
/// [`Program::run_keeping`] reuses for the inputs its caller says did not change.
type Resident<R> = std::sync::Mutex<Vec<Option<(<R as Runtime>::Buf, u64)>>>;

/// The chosen variant of every phase (see [`crate::execute::cuda_chosen`]), compiled and loaded,
/// and the variant reported (the last phase's).
fn device_kernels<R: Runtime>(
    rt: &R,
    c: &Computation,
    id: Option<&str>,
) -> Result<(DeviceKernels<R>, Vec<Variant>, Variant)> {
    let chosen = crate::execute::cuda_chosen(rt, c, id)?;
    let lists: Vec<Vec<Variant>> = chosen.iter().map(|v| vec![v.clone()]).collect();
    let reported = chosen.last().cloned().expect("a program has a phase");
    Ok((DeviceKernels::build(rt, c.ir(), &lists)?, chosen, reported))
}

fn run_device<R: Runtime>(
    (k, chosen, resident): (&DeviceKernels<R>, &[Variant], &Resident<R>),
    ir: &ir::Computation,
    buffers: &[Buffer],
    keep: &[usize],
) -> Result<Output> {
    let refs: Vec<&Variant> = chosen.iter().collect();
    let t = std::time::Instant::now();
    let mut resident = resident.lock().unwrap_or_else(|e| e.into_inner());
    let mut kept = std::mem::take(&mut *resident);
    kept.iter_mut()
        .enumerate()
        .filter(|(i, _)| !keep.contains(i))
        .for_each(|(_, b)| *b = None);
    let p = k.prepare_reusing(ir, buffers, kept, &refs)?;
    let prepared = t.elapsed().as_secs_f64();
    p.run(&refs)?;
    let ran = t.elapsed().as_secs_f64();
    let out = p.output()?;
    *resident = p.into_inputs();
    if std::env::var_os("SURGE_TRACE").is_some() {
        let done = t.elapsed().as_secs_f64();
        eprintln!(
            "k-means on CUDA: {} nodes: upload and sizing {prepared:.4} s, run {:.4} s, download {:.4} s",
            ir.nodes.len(),
            ran - prepared,
            done - ran
        );
    }
    Ok(out)
}

impl Program {
    pub(crate) fn new(c: &Computation, target: &Target, id: Option<&str>) -> Result<Program> {
        let (compiled, variant) = match target {
            Target::Cpu(_) => {
                let kernels = Kernels::shared(c, target)?;
                let variant = match id {
                    Some(id) => kernels.variant(id)?.clone(),
                    None => kernels.default_variant().clone(),
                };
                (Compiled::Cpu(kernels), variant)
            }
            Target::Cuda(i) => {
                let (k, chosen, v) = device_kernels(&surge_cuda::Device::open(*i)?, c, id)?;
                (Compiled::Gpu(k, chosen, Default::default()), v)
            }
            Target::CudaEmulated(d) => {
                let rt = surge_cuda::Emulator::new(d.clone());
                let (k, chosen, v) = device_kernels(&rt, c, id)?;
                (Compiled::Emulated(k, chosen, Default::default()), v)
            }
        };
        Ok(Program {
            ir: c.ir().clone(),
            compiled,
            variant,
        })
    }

    /// Runs on `buffers` (in the program's input order, lengths as they are now) and gives the
    /// buffers back.
    pub(crate) fn run(&self, buffers: Vec<Buffer>) -> Result<(Output, Vec<Buffer>)> {
        self.run_keeping(buffers, &[])
    }

    /// [`Program::run`], where the inputs at `keep` hold what they held at this program's last
    /// run: on a CUDA target those stay on the device instead of being uploaded again (the
    /// points, each iteration).
    pub(crate) fn run_keeping(
        &self,
        buffers: Vec<Buffer>,
        keep: &[usize],
    ) -> Result<(Output, Vec<Buffer>)> {
        let mut ir = self.ir.clone();
        for (decl, b) in ir.inputs.iter_mut().zip(&buffers) {
            decl.len = b.len() as u64;
        }
        let c = Computation::from_ir(ir, buffers)?;
        let out = match &self.compiled {
            Compiled::Cpu(k) => k.run(&c, &self.variant)?,
            Compiled::Gpu(k, chosen, r) => run_device((k, chosen, r), c.ir(), c.buffers(), keep)?,
            Compiled::Emulated(k, chosen, r) => {
                run_device((k, chosen, r), c.ir(), c.buffers(), keep)?
            }
        };
        Ok((out, c.into_buffers()))
    }

    pub(crate) fn slot(&self, name: &str) -> usize {
        self.ir
            .inputs
            .iter()
            .position(|i| i.name == name)
            .unwrap_or_else(|| panic!("internal: the k-means program has no input `{name}`"))
    }
}

/// The points in label order (a stable counting sort), their labels, and each non-empty
/// cluster's label and size.
pub(crate) fn sort_by_label(labels: &[u32], k: usize) -> Sorted {
    sort_positions(labels, k, 0..labels.len() as u32)
}

/// Points in label order as [`sort_by_label`] gives them: positions, sorted labels, the clusters
/// present and their sizes.
pub(crate) type Sorted = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<f64>);

/// The counting sort of [`sort_by_label`], taking the positions in the order `walk` gives them
/// (so ties keep that order): `layout.rs` walks positions in the points' original order.
pub(crate) fn sort_positions(
    labels: &[u32],
    k: usize,
    walk: impl IntoIterator<Item = u32>,
) -> Sorted {
    let mut counts = vec![0usize; k];
    labels.iter().for_each(|&l| counts[l as usize] += 1);
    let mut next: Vec<usize> = counts
        .iter()
        .scan(0, |s, &c| {
            let at = *s;
            *s += c;
            Some(at)
        })
        .collect();
    let mut order = vec![0u32; labels.len()];
    for pos in walk {
        let l = labels[pos as usize] as usize;
        order[next[l]] = pos;
        next[l] += 1;
    }
    let mut sorted = Vec::with_capacity(labels.len());
    let (mut keys, mut sizes) = (Vec::new(), Vec::new());
    for (l, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        sorted.extend(std::iter::repeat_n(l as u32, c));
        keys.push(l as u32);
        sizes.push(c as f64);
    }
    (order, sorted, keys, sizes)
}

/// Listing 5.5 on `points` (the buffer is moved into the program and back), sorted by label
/// (`order` indexes `points`): per cluster that has points, its points' sum divided by
/// `counts(sizes)`. Returns the clusters present (`keys`), their sizes and one row of `d` per
/// key. One-process Lloyd divides by the sizes (means); a rank of distributed k-means by ones
/// (sums, for the allreduce).
pub(crate) fn recalculate_sorted(
    prog: &Program,
    (points, same_points): (&mut Buffer, bool),
    (order, sorted, keys, sizes): Sorted,
    d: usize,
    counts: impl FnOnce(&[f64]) -> Vec<f64>,
) -> Result<(Vec<u32>, Vec<f64>, Vec<f64>)> {
    let mut rb: Vec<Buffer> = prog
        .ir
        .inputs
        .iter()
        .map(|_| Buffer::F64(Vec::new()))
        .collect();
    rb[prog.slot(POINTS)] = std::mem::replace(points, Buffer::F64(Vec::new()));
    rb[prog.slot(ORDER)] = Buffer::U32(order);
    rb[prog.slot(SORTED_LABELS)] = Buffer::U32(sorted);
    rb[prog.slot(COUNTS)] = Buffer::F64(counts(&sizes));
    rb[prog.slot(program::ZERO)] = Buffer::F64(vec![0.0; d]);
    // The zero row never changes; the points do not when the caller says so.
    let keep = [prog.slot(program::ZERO), prog.slot(POINTS)];
    let (out, mut rb) = prog.run_keeping(rb, &keep[..1 + same_points as usize])?;
    *points = std::mem::replace(&mut rb[prog.slot(POINTS)], Buffer::F64(Vec::new()));
    let Output::Nested {
        data: Buffer::F64(rows),
        ..
    } = out
    else {
        return Err(SurgeError::Usage(format!(
            "internal: the recalculation returned {out:?}, not rows of d values"
        )));
    };
    Ok((keys, sizes, rows))
}

/// With `SURGE_TRACE` set, one stderr line per stage of an iteration.
fn trace(stage: &str, since: std::time::Instant) {
    if std::env::var_os("SURGE_TRACE").is_some() {
        eprintln!("k-means: {stage} {:.4} s", since.elapsed().as_secs_f64());
    }
}

pub(crate) fn labels_of(out: Output) -> Result<Vec<u32>> {
    match out {
        Output::Seq(Buffer::U32(v)) => Ok(v),
        other => Err(SurgeError::Usage(format!(
            "internal: the relabeling returned {other:?}, not labels"
        ))),
    }
}

/// Runs at most `iterations` Lloyd iterations from `init` (k centroids, row-major) on `target`,
/// stopping early when no label changes. The labels returned are those of the final centroids.
pub fn lloyd(
    points: &Points,
    init: &[f64],
    iterations: usize,
    target: &Target,
    variants: &LloydVariants,
) -> Result<KMeansResult> {
    let d = points.d;
    let k = init.len() / d;
    check_k(points, k)?;
    if init.len() != k * d {
        return Err(SurgeError::Usage(format!(
            "{} initial centroid values are not k points of dimension {d}",
            init.len()
        )));
    }
    let mut centroids = init.to_vec();
    // The program is built on no points (its structure is all that compiling needs; lengths
    // are run-time values), then run on one copy of them: the DSEL would copy them twice more.
    let t = std::time::Instant::now();
    let first = program::relabel(Vec::new(), centroids.clone(), d)?;
    let relabel = Program::new(&first, target, variants.relabel.as_deref())?;
    trace("relabeling program built and compiled (or found)", t);
    let (px, pc) = (relabel.slot(POINTS), relabel.slot(CENTROIDS));
    let mut bufs = first.into_buffers();
    let t = std::time::Instant::now();
    bufs[px] = Buffer::F64(points.data.clone());
    trace("points copied", t);
    let mut recalc: Option<Program> = None;
    // Labels by position in `bufs[px]`: the original order until the first update arranges the
    // points by label (`layout.rs`), positions after it.
    let mut layout: Option<Layout> = None;
    let mut previous: Option<Vec<u32>> = None;
    let (mut done, mut converged) = (0, false);
    // Whether the points changed since the relabeling's last run (their arrangement by label).
    let mut arranged = false;
    let labels = loop {
        let t = std::time::Instant::now();
        let keep = if arranged { &[][..] } else { &[px][..] };
        arranged = false;
        let (out, b) = relabel.run_keeping(bufs, keep)?;
        bufs = b;
        let labels = labels_of(out)?;
        trace("relabeling", t);
        if previous.as_ref() == Some(&labels) {
            converged = true;
            break labels;
        }
        if done == iterations {
            break labels;
        }
        let prog = match &recalc {
            Some(p) => p,
            None => {
                let c = program::recalculate(Vec::new(), vec![], vec![], vec![], d)?;
                recalc.insert(Program::new(&c, target, variants.recalculate.as_deref())?)
            }
        };
        let t = std::time::Instant::now();
        let (sorted, labels) = match &layout {
            Some(l) => (l.sort_by_label(&labels, k), labels),
            None => {
                let Buffer::F64(copy) = &mut bufs[px] else {
                    unreachable!("the points' buffer holds f64")
                };
                let (sorted, l, by_position) =
                    Layout::arrange_by_labels(&points.data, copy, &labels, k, d);
                arranged = true;
                layout = Some(l);
                (sorted, by_position)
            }
        };
        trace("counting sort", t);
        let (keys, _, means) =
            // The recalculation first runs after the arrangement: its points never change.
            recalculate_sorted(prog, (&mut bufs[px], true), sorted, d, |sizes| sizes.to_vec())?;
        trace("sort and recalculation", t);
        for (j, &key) in keys.iter().enumerate() {
            let key = key as usize;
            centroids[key * d..(key + 1) * d].copy_from_slice(&means[j * d..(j + 1) * d]);
        }
        bufs[pc] = Buffer::F64(centroids.clone());
        previous = Some(labels);
        done += 1;
    };
    let labels = match &layout {
        Some(l) => l.to_original(&labels),
        None => labels,
    };
    let mut r = KMeansResult::new(points, centroids, labels, done, converged);
    r.variants = std::iter::once(&relabel)
        .chain(recalc.as_ref())
        .map(|p| p.variant.id())
        .collect();
    Ok(r)
}
