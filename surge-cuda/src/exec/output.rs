//! A phase program's result read back from the device: the last phase's value, the parts of a
//! result stored in parts, a value three levels deep from its two phases.

use super::Prepared;
use crate::CudaError;
use crate::runtime::Runtime;
use surge_codegen::data::Output;
use surge_codegen::emit::cuda::DeepPart;
use surge_codegen::ir::Type;

impl<R: Runtime> Prepared<'_, R> {
    /// Downloads the last phase's result: a scalar for a scalar result (a reduction at the
    /// root). A result with boolean elements (stored as `u32` 0/1) is an [`Output::Composite`]
    /// of its type, as the CPU backend returns it.
    pub fn output(&self) -> Result<Output, CudaError> {
        if self.phases.is_empty() {
            return Err(CudaError::Input("a computation without phases".into()));
        }
        // The phases that hold a value (a deep value's outer level is read with its rows).
        let values: Vec<usize> = (0..self.phases.len())
            .filter(|&p| self.k.plans[p].deep != Some(DeepPart::Outer))
            .collect();
        if let Some(r) = &self.k.result {
            let first = values.len().saturating_sub(r.parts);
            let parts = values[first..]
                .iter()
                .map(|&p| self.phase_output(p))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Output::Composite {
                ty: r.ty.clone(),
                parts,
            });
        }
        let out = self.phase_output(self.phases.len() - 1)?;
        let ty = &self.k.ir.node(self.k.ir.root).ty;
        Ok(if ty.has_bool() {
            Output::Composite {
                ty: ty.clone(),
                parts: vec![out],
            }
        } else {
            out
        })
    }

    /// A value three levels deep: the outer level's offsets from phase `outer` (rows of as many
    /// zeros as each element has rows), the rows from phase `p`.
    fn deep_output(&self, p: usize, outer: usize) -> Result<Output, CudaError> {
        let (Some((_, outer)), Some((_, rows))) =
            (&self.phases[outer].offsets, &self.phases[p].offsets)
        else {
            return Err(CudaError::Input(
                "internal: a deep value's phases stored no offsets".into(),
            ));
        };
        let r = &self.phases[p];
        Ok(Output::Deep {
            data: self.k.rt.download(&r.data, r.len as usize)?,
            offsets: vec![outer.clone(), rows.clone()],
        })
    }

    /// Phase `p`'s result as its type reads: a scalar is the phase's one element; a flat
    /// sequence stored as rows (a scan at the root: one row) is its data.
    fn phase_output(&self, p: usize) -> Result<Output, CudaError> {
        if let Some(DeepPart::Rows { outer }) = self.k.plans[p].deep {
            return self.deep_output(p, outer);
        }
        let r = &self.phases[p];
        let data = self.k.rt.download(&r.data, r.len as usize)?;
        let out = match &r.offsets {
            Some((_, off)) => Output::Nested {
                data,
                offsets: off.clone(),
            },
            None => Output::Seq(data),
        };
        Ok(match (&self.k.plans[p].ty, out) {
            (Type::Scalar(_), Output::Seq(b)) => Output::Scalar(b.get(0).ok_or_else(|| {
                CudaError::Input("internal: a scalar result phase wrote no element".into())
            })?),
            (t, Output::Nested { data, .. }) if t.depth() == 1 => Output::Seq(data),
            (_, out) => out,
        })
    }
}
