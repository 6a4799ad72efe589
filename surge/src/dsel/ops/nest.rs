use super::super::handles::{IndexElement, Item, Nested, Seq};
use crate::{Result, SurgeError};
use surge_codegen::ir::{IrError, Op, SourceLoc};

/// `nest(s, offsets)`: a CSR-style nested sequence, row `i` being `s[offsets[i]..offsets[i+1]]`.
///
/// Offsets that are bound input data are checked here (non-empty, non-decreasing, within
/// `0..=len(s)`); computed offsets are checked when the computation runs.
///
/// ```
/// use surge::prelude::*;
/// let s = Seq::input("s", vec![1.0f64, 2.0, 3.0, 4.0])?;
/// let off = Seq::input("off", vec![0u32, 1, 1, 4])?;
/// assert_eq!(nest(&s, &off)?.interpret()?, vec![vec![1.0], vec![], vec![2.0, 3.0, 4.0]]);
/// let bad = Seq::input("bad", vec![0u32, 3, 2])?;
/// assert!(nest(&s, &bad).unwrap_err().to_string().contains("offsets are not monotone"));
/// # Ok::<(), surge::SurgeError>(())
/// ```
#[track_caller]
pub fn nest<T: Item, I: IndexElement>(s: &Seq<T>, offsets: &Seq<I>) -> Result<Nested<T>> {
    if let (Some(data), Some(len)) = (&offsets.node.input, s.node.info.len) {
        let off: Vec<i128> = (0..data.buffer.len())
            .map(|i| data.buffer.get_int(i).expect("integer buffer"))
            .collect();
        let here = SourceLoc::caller();
        surge_codegen::ir::check_offsets(&off, len as usize).map_err(|m| {
            let e = IrError::new("nest", format!("{m} (offsets `{}`)", data.name));
            SurgeError::Build(e.located(Some(here)))
        })?;
    }
    super::build(
        Op::Nest {
            input: s.id(),
            offsets: offsets.id(),
        },
        vec![s.node.clone(), offsets.node.clone()],
    )
}

impl<T: Item> Seq<T> {
    /// Method form of [`nest`].
    #[track_caller]
    pub fn nest<I: IndexElement>(&self, offsets: &Seq<I>) -> Result<Nested<T>> {
        nest(self, offsets)
    }
}
