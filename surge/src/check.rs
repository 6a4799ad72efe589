//! The reference result a variant's output is checked against (by `surge bench` and the
//! CUDA tuning backend): the interpreter's on small inputs, the CPU default variant's on large
//! ones, compared under the one tolerance rule of [`surge_codegen::oracle`].

use crate::{Computation, Kernels, Output, Result, Target};
use surge_codegen::data::Buffer;
use surge_codegen::oracle::{self, Flat};

/// Inputs with at most this many elements in all are checked against the interpreter; larger
/// ones against the CPU backend's default variant (itself checked against the interpreter by the
/// conformance suite), since the interpreter's boxed values do not scale to DRAM-sized inputs.
pub const INTERPRETER_LIMIT: usize = 1 << 22;

/// The reference result of a computation (see [`INTERPRETER_LIMIT`]), checked under the one
/// tolerance rule of [`surge_codegen::oracle`].
#[derive(Debug, Clone)]
pub struct Expected {
    pub oracle: oracle::Expected,
}

impl Expected {
    /// The reference result of `c` (see [`INTERPRETER_LIMIT`]).
    pub fn of(c: &Computation) -> Result<Expected> {
        let total: usize = c.buffers().iter().map(Buffer::len).sum();
        if total <= INTERPRETER_LIMIT {
            let oracle = oracle::Expected::interpret(c.ir(), c.buffers())?;
            return Ok(Expected { oracle });
        }
        let abs_c = Computation::from_ir(
            c.ir().clone(),
            c.buffers().iter().map(Buffer::abs).collect(),
        )?;
        let k = Kernels::build(c, &Target::cpu())?;
        let v = k.default_variant().clone();
        let want = Flat::of_output(&k.run(c, &v)?);
        let abs = Flat::of_output(&k.run(&abs_c, &v)?);
        let terms = oracle::terms(c.buffers());
        Ok(Expected {
            oracle: oracle::Expected::new(want, &abs, terms, "cpu default variant"),
        })
    }

    /// What produced the reference: `interpreter` or `cpu default variant`.
    pub fn source(&self) -> &'static str {
        self.oracle.source
    }

    /// Whether `got` matches under the oracle's rule; the message names the first difference.
    pub fn check(&self, got: &Output) -> std::result::Result<(), String> {
        self.oracle
            .check(&Flat::of_output(got))
            .map_err(|m| m.to_string())
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
        assert_eq!(e.source(), "interpreter");
        let values: Vec<f64> = e
            .oracle
            .want
            .items
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let mut offsets = vec![0u64];
        for len in &e.oracle.want.shape[1..] {
            offsets.push(offsets.last().unwrap() + *len as u64);
        }
        let good = Output::Nested {
            data: Buffer::F64(values.clone()),
            offsets: offsets.clone(),
        };
        e.check(&good).unwrap();
        let mut wrong = values.clone();
        wrong[3] += 1e-3;
        let bad = Output::Nested {
            data: Buffer::F64(wrong),
            offsets,
        };
        let msg = e.check(&bad).unwrap_err();
        assert!(
            msg.contains("element 3") && msg.contains("interpreter"),
            "{msg}"
        );
        let flat = Output::Seq(Buffer::F64(values));
        assert!(e.check(&flat).unwrap_err().contains("rows"));
    }
}
