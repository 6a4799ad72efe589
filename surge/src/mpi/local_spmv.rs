//! A rank's two SpMVs as Surge variants: its interior rows over `x_own`, its boundary rows over
//! `[x_own, x_ghost]`. Both are `apps::spmv_app` (Listing 5.1) built with `Kernels` on the CPU
//! target, the program `surge run spmv` runs; one compiled library serves both and the whole
//! matrix (sizes are kernel arguments).

use super::rank_part::RankPart;
use super::tuned_spmv::{Choice, RankPick, model_pick, with_threads};
use crate::codegen::params::CpuParams;
use crate::codegen::variant::Variant;
use crate::codegen::variant_set::cpu_default;
use crate::mtx::CsrMatrix;
use crate::{Buffer, Computation, Kernels, Result, SurgeError, Target, Workspace};
use std::sync::Arc;

/// One of the two SpMVs, its buffers bound once; only `x` changes between runs.
#[derive(Debug)]
struct Block {
    computation: Option<Computation>,
    buffers: Vec<Buffer>,
    /// Which buffer is `x`.
    x_at: usize,
    /// The local row each result row goes to.
    rows: Vec<u32>,
    /// The runs' workspace: the layouts the variant builds from this block's matrix are kept
    /// (only `x` changes between runs), its result buffer reused.
    ws: Workspace,
}

impl Block {
    fn new(m: &CsrMatrix, rows: &[u32]) -> Result<Block> {
        if m.nnz() == 0 {
            // Every row is empty: its sum is the prefix, +0.0, as in the one-rank product.
            return Ok(Block {
                computation: None,
                buffers: Vec::new(),
                x_at: 0,
                rows: rows.to_vec(),
                ws: Workspace::default(),
            });
        }
        let c = Computation::new(&crate::apps::spmv_app(m, &vec![0.0; m.cols])?)?;
        let x_at = c
            .ir()
            .inputs
            .iter()
            .position(|d| d.name == "x")
            .expect("internal: spmv_app declares an input x");
        Ok(Block {
            buffers: c.buffers().to_vec(),
            computation: Some(c),
            x_at,
            rows: rows.to_vec(),
            ws: Workspace::default(),
        })
    }

    /// `y[rows[i]] = (A x)[i]`, with `x` the concatenation of `parts`.
    fn run(&mut self, k: &Kernels, v: &Variant, parts: &[&[f64]], y: &mut [f64]) -> Result<()> {
        if self.computation.is_none() {
            for &r in &self.rows {
                y[r as usize] = 0.0;
            }
            return Ok(());
        }
        let Some(c) = &self.computation else {
            unreachable!("internal: checked above")
        };
        let Buffer::F64(x) = &mut self.buffers[self.x_at] else {
            unreachable!("internal: x is an f64 buffer")
        };
        x.clear();
        for p in parts {
            x.extend_from_slice(p);
        }
        k.run_buffers_in(c, v, &self.buffers, &mut self.ws)?;
        match self.ws.output_f64() {
            Some(out) if out.len() == self.rows.len() => {
                for (&r, v) in self.rows.iter().zip(out) {
                    y[r as usize] = *v;
                }
                Ok(())
            }
            _ => Err(SurgeError::Usage(format!(
                "internal: the SpMV of {} rows returned {:?}",
                self.rows.len(),
                self.ws.output()
            ))),
        }
    }
}

/// A rank's compiled SpMV: the kernels, the variant both blocks run, and the two blocks.
#[derive(Debug)]
pub struct LocalSpmv {
    kernels: Arc<Kernels>,
    variant: Variant,
    /// The model's selection, with `Choice::Tuned`.
    pick: Option<RankPick>,
    interior: Block,
    boundary: Block,
    rows: usize,
    own: usize,
}

impl LocalSpmv {
    /// Builds the kernels (cached on disk and per process) and picks the variant
    /// (`tuned_spmv.rs`): a given id, the stored model's pick for this rank's rows, or the
    /// default variant among those with `threads` threads (the default of all of them when
    /// none has that many).
    pub fn new<'c>(
        part: &RankPart,
        threads: usize,
        choice: impl Into<Choice<'c>>,
    ) -> Result<LocalSpmv> {
        let interior = Block::new(&part.interior, &part.interior_rows)?;
        let boundary = Block::new(&part.boundary, &part.boundary_rows)?;
        // The variants are enumerated on the larger block (their space depends on the sizes,
        // e.g. chunk sizes beyond the row count are pruned), as one process enumerates them on
        // the whole matrix; a rank with no entry at all takes a small stand-in.
        let larger = [&interior, &boundary]
            .into_iter()
            .filter_map(|b| b.computation.as_ref().map(|c| (b.rows.len(), c)))
            .max_by_key(|(rows, _)| *rows);
        let kernels = match larger {
            Some((_, c)) => Kernels::shared(c, &Target::cpu())?,
            None => spmv_kernels()?,
        };
        let (variant, pick) = match choice.into() {
            Choice::Variant(id) => (kernels.variant(id)?.clone(), None),
            Choice::Default => (variant_with_threads(&kernels, threads), None),
            Choice::Tuned(tuned) => {
                let block = if part.boundary_rows.len() > part.interior_rows.len() {
                    &part.boundary
                } else {
                    &part.interior
                };
                let mut pick = model_pick(tuned, part.rank, block)?;
                let at_threads = with_threads(&pick.model_pick, threads);
                let v = kernels
                    .variant(&at_threads)
                    .or_else(|_| kernels.variant(&pick.model_pick))?
                    .clone();
                pick.variant = v.id();
                (v, Some(pick))
            }
        };
        Ok(LocalSpmv {
            interior,
            boundary,
            kernels,
            variant,
            pick,
            rows: part.rows.len(),
            own: part.cols.len(),
        })
    }

    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// The model's selection, where the variant is the model's pick.
    pub fn pick(&self) -> Option<&RankPick> {
        self.pick.as_ref()
    }

    fn check(&self, x_own: &[f64], y_own: &[f64]) -> Result<()> {
        if x_own.len() != self.own || y_own.len() != self.rows {
            return Err(SurgeError::Input {
                input: "x".into(),
                message: format!(
                    "this rank owns {} entries of x and {} rows of y; given {} and {}",
                    self.own,
                    self.rows,
                    x_own.len(),
                    y_own.len()
                ),
            });
        }
        Ok(())
    }

    /// The interior rows of `y_own` (needs no ghost).
    pub fn interior(&mut self, x_own: &[f64], y_own: &mut [f64]) -> Result<()> {
        self.check(x_own, y_own)?;
        self.interior
            .run(&self.kernels, &self.variant, &[x_own], y_own)
    }

    /// The boundary rows of `y_own`, once the ghost entries arrived.
    pub fn boundary(&mut self, x_own: &[f64], ghosts: &[f64], y_own: &mut [f64]) -> Result<()> {
        self.check(x_own, y_own)?;
        self.boundary
            .run(&self.kernels, &self.variant, &[x_own, ghosts], y_own)
    }
}

/// The SpMV kernels of this process, enumerated on a small stand-in matrix (built once per
/// process: `Kernels::shared` keys them by the program's structure, not its sizes).
pub fn spmv_kernels() -> Result<Arc<Kernels>> {
    let m = crate::apps::matgen::laplacian_2d(2);
    let c = Computation::new(&crate::apps::spmv_app(&m, &vec![0.0; m.cols])?)?;
    Kernels::shared(&c, &Target::cpu())
}

/// The default variant among those running `threads` threads; the overall default if none does.
pub fn variant_with_threads(k: &Kernels, threads: usize) -> Variant {
    let with: Vec<Variant> = k
        .variants()
        .iter()
        .filter(|v| CpuParams::of(v).is_ok_and(|p| p.threads == threads))
        .cloned()
        .collect();
    cpu_default(&with)
        .unwrap_or_else(|| k.default_variant())
        .clone()
}
