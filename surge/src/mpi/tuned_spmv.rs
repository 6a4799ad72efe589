//! The variant a rank's SpMV runs (`mpirun surge run spmv [--variant ID | --tuned]`): the
//! default among those with the rank's thread count, a named one, or the one the model that
//! `surge tune spmv` stored on this machine picks from the features of the rank's own rows.
//!
//! Each rank picks for itself: the ranks' blocks differ (a rank of a power-law graph's hub rows
//! is not its neighbour's), so they may run different variants. The features are those of the
//! rank's larger block (the one its variants are enumerated on, as one process enumerates and
//! selects on the whole matrix). The model was trained with whole-node thread counts; a pick at
//! another count runs at the rank's (`threads=` replaced) where the space has that variant.

use crate::Result;
use crate::mtx::CsrMatrix;
use crate::tune::{TuneInput, Tuned};

/// How a rank's SpMV variant is chosen.
#[derive(Clone, Copy)]
pub enum Choice<'a> {
    /// The default variant among those running the rank's thread count.
    Default,
    /// This variant id.
    Variant(&'a str),
    /// The stored model's pick for the rank's rows.
    Tuned(&'a Tuned<'a>),
}

impl std::fmt::Debug for Choice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Choice::Default => f.write_str("Default"),
            Choice::Variant(id) => write!(f, "Variant({id})"),
            Choice::Tuned(t) => write!(f, "Tuned({})", t.workload().name()),
        }
    }
}

impl<'a> From<Option<&'a str>> for Choice<'a> {
    fn from(id: Option<&'a str>) -> Self {
        id.map_or(Choice::Default, Choice::Variant)
    }
}

/// The model's selection for one rank: the variant it runs, the model's own pick and what the
/// selection said and cost.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankPick {
    pub rank: usize,
    /// The variant the rank runs: the model's pick at the rank's thread count.
    pub variant: String,
    pub model_pick: String,
    pub warnings: Vec<String>,
    pub feature_seconds: f64,
}

/// The model's pick for `block` (a rank's larger block), its warnings and feature time; an
/// error where the model cannot be used for it (another structure, no usable store).
pub(super) fn model_pick(tuned: &Tuned<'_>, rank: usize, block: &CsrMatrix) -> Result<RankPick> {
    let input = TuneInput::spmv(format!("rank {rank}'s rows"), block.clone())?;
    if let Some(why) = tuned.mismatch(&input) {
        return Err(crate::SurgeError::Usage(why));
    }
    let sel = tuned.select(&input)?;
    if !sel.from_model {
        return Err(crate::SurgeError::Usage(sel.warnings.join("; ")));
    }
    Ok(RankPick {
        rank,
        variant: sel.variant.clone(),
        model_pick: sel.variant,
        warnings: sel.warnings,
        feature_seconds: sel.feature_seconds,
    })
}

/// `id` with its `threads=` parameter set to `threads` (unchanged where it has none).
pub(super) fn with_threads(id: &str, threads: usize) -> String {
    let Some(at) = id.find("threads=") else {
        return id.to_string();
    };
    let start = at + "threads=".len();
    let end = id[start..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(id.len(), |k| start + k);
    format!("{}{threads}{}", &id[..start], &id[end..])
}

#[cfg(test)]
mod tests {
    use super::with_threads;

    #[test]
    fn threads_are_replaced_in_place() {
        let id = "cpu:host/independent.sequential/threads=2,nesting=0,sched1=static";
        assert_eq!(
            with_threads(id, 1),
            "cpu:host/independent.sequential/threads=1,nesting=0,sched1=static"
        );
        assert_eq!(
            with_threads("cpu:host/x/threads=12", 3),
            "cpu:host/x/threads=3"
        );
        assert_eq!(
            with_threads("cpu:host/x/nesting=0", 3),
            "cpu:host/x/nesting=0"
        );
    }
}
