use super::super::handles::{Seq, Sym, Traced};
use super::super::lambda::{MapInputs, trace_map};
use crate::Result;
use surge_codegen::ir::Op;

/// `map(f, s1, .., sn)`: the sequence `(f(s1[0], .., sn[0]), f(s1[1], .., sn[1]), ..)`.
///
/// `inputs` is one `&Seq` or a tuple of up to four; `f` receives one symbolic element per input
/// (a [`Scalar`](crate::Scalar) for a flat sequence, a row `Seq` for a nested one) and runs once,
/// when the computation is built. Inputs of different lengths are an error.
///
/// ```
/// use surge::prelude::*;
/// let a = Seq::input("a", vec![1.0f64, 2.0, 3.0])?;
/// let b = Seq::input("b", vec![10.0f64, 20.0, 30.0])?;
/// let y = map(|(x, y)| x * 2.0 + y, (&a, &b))?;
/// assert_eq!(y.interpret()?, vec![12.0, 24.0, 36.0]);
/// let short = Seq::input("c", vec![1.0f64])?;
/// let err = map(|(x, y)| x + y, (&a, &short)).unwrap_err().to_string();
/// // "`map` at src/main.rs:9:11: input lengths differ: ...": the operator, then your line.
/// assert!(err.starts_with("`map` at "), "{err}");
/// assert!(err.ends_with(": input lengths differ: input 0 has length 3, input 1 has length 1"));
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn map<I: MapInputs, R: Traced>(
    f: impl FnOnce(I::Args) -> R,
    inputs: I,
) -> Result<Seq<<R::Sym as Sym>::Item>> {
    let (lambda, _) = trace_map::<I, R>(f)?;
    let ins = inputs.nodes();
    let op = Op::Map {
        f: lambda.ir(),
        inputs: ins.iter().map(|n| n.id).collect(),
    };
    super::build(op, ins.into_iter().chain(lambda.deps()).collect())
}
