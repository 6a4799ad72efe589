//! The oracle comparison: whether a backend's result is the reference interpreter's, under one
//! tolerance rule used by `surge run --all`, `surge bench`, the tuners and the conformance tests.
//!
//! # The rule
//!
//! - The **shape** must match exactly: the same nesting, the same length of every sequence.
//! - **Integers and booleans** must match exactly (integer arithmetic wraps the same way in the
//!   interpreter and in every backend).
//! - A **floating-point** element `g` with reference `w` must satisfy
//!   `|g - w| ≤ n·ε·Σ|x| + f64::MIN_POSITIVE` (ε = 2⁻⁵² for `f64` and 2⁻²³ for `f32` results:
//!   twice the unit roundoff u of the element's type). Where either
//!   is not finite they must be the same IEEE value: both NaN (any payload), or the same infinity
//!   (inputs may hold NaN and infinities, which pass through every backend as they do through
//!   the interpreter).
//!   Why: variants reassociate sums (tree reductions, split accumulators, two-pass scans). Any
//!   association order of an `n`-term sum lies within `(n - 1)·u·Σ|xᵢ|` of the exact sum, so two
//!   orders differ by at most `2(n - 1)·u·Σ|xᵢ| < n·ε·Σ|xᵢ|`. `Σ|xᵢ|` per output element is the
//!   interpreter's result on the inputs' absolute values; `n` is bounded by the longest input.
//!   The `MIN_POSITIVE` term admits results that are exactly zero on one side and subnormal
//!   noise on the other. Where `|w|` exceeds `Σ|x|` it replaces it (`n·ε·|w|`): a product of
//!   `n` factors in any order lies within `(n - 1)·u·|w|` of the exact product, and the
//!   interpreter on absolute values says nothing about products (a random program's cooperative
//!   `reduce(mul, ..)` of six equal values of 3.3·10¹⁵ differed from the sequential product by
//!   one ulp where `Σ|x|` gave a bound of 1.6·10⁻⁸).

use crate::CodegenError;
use crate::data::{Buffer, Output, ScalarValue};
use crate::ir::{Computation, Value, interpret};
use std::fmt;

/// A result flattened for comparison: every scalar in order, and the length of every sequence
/// in pre-order (the shape).
#[derive(Debug, Clone, PartialEq)]
pub struct Flat {
    pub items: Vec<ScalarValue>,
    pub shape: Vec<usize>,
}

impl Flat {
    pub fn of_value(v: &Value) -> Flat {
        let mut f = Flat {
            items: Vec::new(),
            shape: Vec::new(),
        };
        f.push_value(v);
        f
    }

    fn push_value(&mut self, v: &Value) {
        match v {
            Value::Scalar(s) => self.items.push(*s),
            Value::Seq(items) => {
                self.shape.push(items.len());
                items.iter().for_each(|i| self.push_value(i));
            }
            Value::Tuple(items) => items.iter().for_each(|i| self.push_value(i)),
        }
    }

    /// A backend's output, without boxing each element (outputs may be DRAM-sized).
    pub fn of_output(o: &Output) -> Flat {
        let all = |b: &Buffer| {
            (0..b.len())
                .map(|i| b.get(i).expect("index in range"))
                .collect()
        };
        match o {
            Output::Scalar(s) => Flat {
                items: vec![*s],
                shape: vec![],
            },
            Output::Seq(b) => Flat {
                items: all(b),
                shape: vec![b.len()],
            },
            Output::Composite { .. } | Output::Deep { .. } => {
                Flat::of_value(&Value::from_output(o))
            }
            Output::Nested { data, offsets } => {
                let mut shape = vec![offsets.len().saturating_sub(1)];
                shape.extend(offsets.windows(2).map(|w| (w[1] - w[0]) as usize));
                Flat {
                    items: all(data),
                    shape,
                }
            }
        }
    }
}

/// The reference result of a computation on its inputs, ready to check results against.
#[derive(Debug, Clone)]
pub struct Expected {
    pub want: Flat,
    /// Per element, the result on the inputs' absolute values (`Σ|x|`; 0 for integers).
    pub abs: Vec<f64>,
    /// The longest input: bounds the number of terms any element sums.
    pub terms: usize,
    /// What produced the reference, named in mismatch messages (`interpreter`, ...).
    pub source: &'static str,
}

/// Why a result is not the reference's.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    Shape {
        got: usize,
        want: usize,
        rows: bool,
    },
    Element {
        index: usize,
        got: String,
        want: String,
        bound: Option<f64>,
        source: &'static str,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Shape { rows: true, .. } => {
                f.write_str("the rows of the result differ from the reference's")
            }
            Mismatch::Shape { got, want, .. } => {
                write!(f, "{got} values where the reference has {want}")
            }
            Mismatch::Element {
                index,
                got,
                want,
                bound: Some(b),
                source,
            } => {
                write!(
                    f,
                    "element {index}: got {got}, {source} gives {want} (bound {b:e})"
                )
            }
            Mismatch::Element {
                index,
                got,
                want,
                bound: None,
                source,
            } => write!(
                f,
                "element {index}: got {got}, {source} gives {want} (integers match exactly)"
            ),
        }
    }
}

/// The longest of the input buffers (at least 1): the `n` of the tolerance rule.
pub fn terms(buffers: &[Buffer]) -> usize {
    buffers.iter().map(Buffer::len).max().unwrap_or(0).max(1)
}

impl Expected {
    /// The interpreter's result of `c` on `buffers` (and on their absolute values).
    pub fn interpret(c: &Computation, buffers: &[Buffer]) -> Result<Expected, CodegenError> {
        let want = interpret(c, buffers)?;
        let abs_inputs: Vec<Buffer> = buffers.iter().map(Buffer::abs).collect();
        let abs = interpret(c, &abs_inputs)?;
        Ok(Expected::new(
            Flat::of_value(&want),
            &Flat::of_value(&abs),
            terms(buffers),
            "interpreter",
        ))
    }

    /// A reference from another source (a trusted backend's results on the inputs and on their
    /// absolute values).
    pub fn new(want: Flat, abs: &Flat, terms: usize, source: &'static str) -> Expected {
        let abs = abs
            .items
            .iter()
            .map(|s| s.as_f64().map_or(0.0, f64::abs))
            .collect();
        Expected {
            want,
            abs,
            terms: terms.max(1),
            source,
        }
    }

    /// The bound on `|got - want|` for float element `i` (with the machine epsilon of its
    /// type: an `f32` sum is rounded to `f32` at every step).
    pub fn bound(&self, i: usize) -> f64 {
        let eps = match self.want.items.get(i) {
            Some(ScalarValue::F32(_)) => f32::EPSILON as f64,
            _ => f64::EPSILON,
        };
        let want = match self.want.items.get(i) {
            Some(ScalarValue::F32(v)) => v.abs() as f64,
            Some(ScalarValue::F64(v)) => v.abs(),
            _ => 0.0,
        };
        let scale = self.abs.get(i).copied().unwrap_or(0.0).max(want);
        self.terms as f64 * eps * scale + f64::MIN_POSITIVE
    }

    /// Checks `got` against the reference under the rule above; the first difference is named.
    pub fn check(&self, got: &Flat) -> Result<(), Mismatch> {
        if got.shape != self.want.shape || got.items.len() != self.want.items.len() {
            let rows = got.shape.len() != self.want.shape.len()
                || got.items.len() == self.want.items.len();
            return Err(Mismatch::Shape {
                got: got.items.len(),
                want: self.want.items.len(),
                rows,
            });
        }
        for (i, (g, w)) in got.items.iter().zip(&self.want.items).enumerate() {
            self.check_element(i, *g, *w)?;
        }
        Ok(())
    }

    fn check_element(&self, i: usize, g: ScalarValue, w: ScalarValue) -> Result<(), Mismatch> {
        let element = |got: String, want: String, bound| Mismatch::Element {
            index: i,
            got,
            want,
            bound,
            source: self.source,
        };
        if !w.elem().is_float() {
            return match g == w {
                true => Ok(()),
                false => Err(element(format!("{g}"), format!("{w}"), None)),
            };
        }
        let (gf, wf) = (
            g.as_f64().unwrap_or(f64::NAN),
            w.as_f64().unwrap_or(f64::NAN),
        );
        let bound = self.bound(i);
        let same = if gf.is_finite() && wf.is_finite() {
            (gf - wf).abs() <= bound
        } else {
            gf == wf || (gf.is_nan() && wf.is_nan())
        };
        if same {
            return Ok(());
        }
        Err(element(format!("{gf:e}"), format!("{wf:e}"), Some(bound)))
    }

    /// For reports: the largest `|got - want|` relative to the reference's largest magnitude
    /// (infinite when the shapes differ). Not a pass/fail rule: [`check`](Self::check) is.
    pub fn max_rel_diff(&self, got: &Flat) -> f64 {
        if got.shape != self.want.shape || got.items.len() != self.want.items.len() {
            return f64::INFINITY;
        }
        let f = |s: &ScalarValue| s.as_f64().unwrap_or(f64::NAN);
        let scale = self
            .want
            .items
            .iter()
            .fold(1e-300f64, |m, v| m.max(f(v).abs()));
        got.items
            .iter()
            .zip(&self.want.items)
            .map(|(g, w)| (f(g) - f(w)).abs() / scale)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(v: &[f64], shape: Vec<usize>) -> Flat {
        Flat {
            items: v.iter().map(|x| ScalarValue::F64(*x)).collect(),
            shape,
        }
    }

    #[test]
    fn floats_within_the_reassociation_bound_match_and_others_are_named() {
        let want = flat(&[1.0, 2.0], vec![2]);
        let e = Expected::new(want.clone(), &flat(&[1.0, 1e6], vec![2]), 4, "interpreter");
        e.check(&want).unwrap();
        let inside = flat(&[1.0, 2.0 + 4.0 * f64::EPSILON * 1e6 * 0.9], vec![2]);
        e.check(&inside).unwrap();
        let outside = flat(&[1.0 + 1e-12, 2.0], vec![2]);
        let m = e.check(&outside).unwrap_err().to_string();
        assert!(
            m.starts_with("element 0: got 1.000000000001e0, interpreter gives 1e0 (bound "),
            "{m}"
        );
        e.check(&flat(&[f64::NAN, 2.0], vec![2])).unwrap_err();
    }

    /// A product reassociated moves by a relative bound, whatever the absolute values' result.
    #[test]
    fn a_reassociated_product_is_bounded_relative_to_itself() {
        let w = 3.322561091720659e15;
        let want = flat(&[w], vec![]);
        let e = Expected::new(want, &flat(&[1e-8], vec![]), 7, "interpreter");
        e.check(&flat(&[3.3225610917206595e15], vec![])).unwrap();
        e.check(&flat(&[w * (1.0 + 1e-13)], vec![])).unwrap_err();
    }

    /// An `f32` result is bounded with `f32`'s epsilon: reassociating an `f32` product or sum
    /// rounds at `f32` precision (a random program's `reduce(mul, ..)` over 19 `f32` values
    /// differed from the interpreter by 4e-6 in 49, far beyond `f64`'s bound).
    #[test]
    fn f32_results_are_bounded_with_the_f32_epsilon() {
        let w = |v: f32| Flat {
            items: vec![ScalarValue::F32(v)],
            shape: vec![],
        };
        let e = Expected::new(w(48.752907), &w(48.752907), 19, "interpreter");
        e.check(&w(48.752903)).unwrap();
        let m = e.check(&w(48.76)).unwrap_err().to_string();
        assert!(m.starts_with("element 0: got 4.87599"), "{m}");
    }

    #[test]
    fn non_finite_values_match_only_themselves() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let want = flat(&[inf, -inf, nan, 1.0], vec![4]);
        // An infinite Σ|x| makes the bound infinite: a finite result must still not pass for ∞.
        let e = Expected::new(
            want.clone(),
            &flat(&[inf, inf, nan, inf], vec![4]),
            4,
            "interpreter",
        );
        e.check(&want).unwrap();
        e.check(&flat(&[inf, -inf, -nan, 1.0], vec![4])).unwrap();
        for bad in [
            [1e308, -inf, nan, 1.0],
            [inf, inf, nan, 1.0],
            [inf, -inf, 0.0, 1.0],
            [inf, -inf, nan, nan],
        ] {
            let m = e.check(&flat(&bad, vec![4])).unwrap_err().to_string();
            assert!(m.contains("interpreter gives"), "{m}");
        }
        assert_eq!(
            e.check(&flat(&[1e308, -inf, nan, 1.0], vec![4]))
                .unwrap_err()
                .to_string(),
            "element 0: got 1e308, interpreter gives inf (bound inf)"
        );
    }

    #[test]
    fn integers_match_exactly_and_shapes_exactly() {
        let w = Flat {
            items: vec![ScalarValue::I64(3), ScalarValue::I64(4)],
            shape: vec![2, 1, 1],
        };
        let e = Expected::new(w.clone(), &w, 10, "interpreter");
        e.check(&w).unwrap();
        let g = Flat {
            items: vec![ScalarValue::I64(3), ScalarValue::I64(5)],
            shape: vec![2, 1, 1],
        };
        assert_eq!(
            e.check(&g).unwrap_err().to_string(),
            "element 1: got 5, interpreter gives 4 (integers match exactly)"
        );
        let rows = Flat {
            items: w.items.clone(),
            shape: vec![2, 2, 0],
        };
        assert!(e.check(&rows).unwrap_err().to_string().contains("rows"));
        let flat_seq = Flat {
            items: w.items.clone(),
            shape: vec![2],
        };
        assert!(e.check(&flat_seq).unwrap_err().to_string().contains("rows"));
    }

    #[test]
    fn outputs_and_values_flatten_alike() {
        let v = Value::Seq(vec![
            Value::Seq(vec![Value::Scalar(ScalarValue::F64(1.0))]),
            Value::Seq(vec![]),
        ]);
        let o = Output::Nested {
            data: Buffer::F64(vec![1.0]),
            offsets: vec![0, 1, 1],
        };
        assert_eq!(Flat::of_value(&v), Flat::of_output(&o));
    }
}
