//! The reference result a variant's output is checked against (by `surge bench` and the
//! CUDA tuning backend): the interpreter's on small inputs, the CPU default variant's on large
//! ones, compared within the conformance suite's reassociation bound.

use crate::{Computation, Kernels, Output, Result, SurgeError, Target, Value};
use surge_codegen::data::Buffer;

/// Inputs with at most this many elements in all are checked against the interpreter; larger
/// ones against the CPU backend's default variant (itself checked against the interpreter by the
/// conformance suite), since the interpreter's boxed values do not scale to DRAM-sized inputs.
pub const INTERPRETER_LIMIT: usize = 1 << 22;

/// The reference result of a computation, flattened: values, |values| (for the tolerance) and
/// the row offsets of a nested result.
#[derive(Debug, Clone)]
pub struct Expected {
    pub values: Vec<f64>,
    pub abs: Vec<f64>,
    pub offsets: Option<Vec<u64>>,
    /// The longest input: bounds the number of terms any element sums.
    pub terms: usize,
    /// What produced it: `interpreter` or `cpu default variant`.
    pub source: &'static str,
}

fn flatten(v: &Value, out: &mut Vec<f64>, offsets: &mut Option<Vec<u64>>) -> Result<()> {
    match v {
        Value::Seq(items) if items.iter().any(|i| matches!(i, Value::Seq(_))) => {
            let off = offsets.get_or_insert_with(|| vec![0]);
            for i in items {
                let row = i.to_f64_vec().ok_or_else(|| {
                    SurgeError::Usage("bench: a result that is not numbers".into())
                })?;
                out.extend(row);
                off.push(out.len() as u64);
            }
            Ok(())
        }
        Value::Seq(_) => {
            out.extend(
                v.to_f64_vec().ok_or_else(|| {
                    SurgeError::Usage("bench: a result that is not numbers".into())
                })?,
            );
            Ok(())
        }
        Value::Scalar(s) => {
            out.push(s.as_f64().unwrap_or(f64::NAN));
            Ok(())
        }
        Value::Tuple(_) => Err(SurgeError::Usage("bench: a tuple result".into())),
    }
}

fn buffer_f64(b: &Buffer) -> Vec<f64> {
    match b {
        Buffer::F64(v) => v.clone(),
        other => (0..other.len())
            .map(|i| other.get(i).and_then(|s| s.as_f64()).unwrap_or(f64::NAN))
            .collect(),
    }
}

fn output_parts(o: &Output) -> (Vec<f64>, Option<Vec<u64>>) {
    match o {
        Output::Scalar(s) => (vec![s.as_f64().unwrap_or(f64::NAN)], None),
        Output::Seq(b) => (buffer_f64(b), None),
        Output::Nested { data, offsets } => (buffer_f64(data), Some(offsets.clone())),
    }
}

impl Expected {
    /// The reference result of `c` (see [`INTERPRETER_LIMIT`]).
    pub fn of(c: &Computation) -> Result<Expected> {
        let total: usize = c.buffers().iter().map(Buffer::len).sum();
        let terms = c.buffers().iter().map(Buffer::len).max().unwrap_or(0);
        let abs_c = Computation::from_ir(
            c.ir().clone(),
            c.buffers().iter().map(Buffer::abs).collect(),
        )?;
        if total <= INTERPRETER_LIMIT {
            let (mut values, mut offsets) = (Vec::new(), None);
            flatten(&c.interpret()?, &mut values, &mut offsets)?;
            let (mut abs, mut o2) = (Vec::new(), None);
            flatten(&abs_c.interpret()?, &mut abs, &mut o2)?;
            return Ok(Expected {
                values,
                abs,
                offsets,
                terms,
                source: "interpreter",
            });
        }
        let k = Kernels::build(c, &Target::cpu())?;
        let v = k.default_variant().clone();
        let (values, offsets) = output_parts(&k.run(c, &v)?);
        let (abs, _) = output_parts(&k.run(&abs_c, &v)?);
        Ok(Expected {
            values,
            abs,
            offsets,
            terms,
            source: "cpu default variant",
        })
    }

    /// Whether `got` matches within the reassociation bound of the conformance suite:
    /// `|got - want| ≤ 2·n·u·Σ|x|` per element (n = the longest input, u = 2⁻⁵³).
    pub fn check(&self, got: &Output) -> std::result::Result<(), String> {
        let (values, offsets) = output_parts(got);
        self.check_values(&values, offsets.as_deref())
    }

    fn check_values(
        &self,
        values: &[f64],
        offsets: Option<&[u64]>,
    ) -> std::result::Result<(), String> {
        if offsets != self.offsets.as_deref() {
            return Err("the rows of the result differ from the reference's".into());
        }
        if values.len() != self.values.len() {
            return Err(format!(
                "{} values where the reference has {}",
                values.len(),
                self.values.len()
            ));
        }
        let gamma = self.terms.max(1) as f64 * f64::EPSILON;
        for (i, ((g, w), a)) in values.iter().zip(&self.values).zip(&self.abs).enumerate() {
            let tol = gamma * a + f64::MIN_POSITIVE;
            if !((g - w).abs() <= tol || (g.is_nan() && w.is_nan())) {
                return Err(format!(
                    "element {i}: got {g:e}, {} gives {w:e} (bound {tol:e})",
                    self.source
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_results_check_values_rows_and_tolerance() {
        let s = crate::Seq::input("s", vec![1.0, -2.0, 0.5, 4.0, 3.0]).unwrap();
        let c = Computation::new(&crate::apps::scan_app(&s, 2).unwrap()).unwrap();
        let e = Expected::of(&c).unwrap();
        assert_eq!(e.source, "interpreter");
        let good = Output::Nested {
            data: Buffer::F64(e.values.clone()),
            offsets: e.offsets.clone().unwrap(),
        };
        e.check(&good).unwrap();
        let mut wrong = e.values.clone();
        wrong[3] += 1e-3;
        let bad = Output::Nested {
            data: Buffer::F64(wrong),
            offsets: e.offsets.clone().unwrap(),
        };
        let msg = e.check(&bad).unwrap_err();
        assert!(
            msg.contains("element 3") && msg.contains("interpreter"),
            "{msg}"
        );
        let flat = Output::Seq(Buffer::F64(e.values.clone()));
        assert!(e.check(&flat).unwrap_err().contains("rows"));
    }
}
