//! How to tune ([`TuneOptions`], with [`IncrementalStop`]) and what a tuning run reports while it
//! works ([`Progress`]).

use super::cover::{self, Cover};
use super::journal::JournalOptions;
use super::model::{ModelKind, SvmSearch};
use super::record::InputRecord;
use super::training::TrainingConfig;

/// How to tune.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneOptions {
    pub model: ModelKind,
    pub training: TrainingConfig,
    pub search: SvmSearch,
    /// Label only some inputs, chosen by active learning (None: exhaustive over every input).
    pub incremental: Option<IncrementalStop>,
    /// Variants within this fraction of an input's best time cover it in the class-pruning set
    /// cover (see [`cover`](super::cover)); 0 keeps every strict winner as a class.
    pub label_tolerance: f64,
    /// A variant becomes a class only if it newly covers at least this many training inputs
    /// (1: every input is covered within `label_tolerance`).
    pub min_class_inputs: usize,
    /// At most this many classes (0: no cap): the first the cover takes, which are near-best
    /// on the most training inputs. Bounds the SVM's query cost (its one-vs-one pairs).
    pub max_classes: usize,
    /// Append each training input's record to this journal as it is measured (exhaustive
    /// tuning only; see [`journal`](super::journal)). A [`Campaign`](super::campaign::Campaign)
    /// keeps one beside its store when this is `None`.
    pub journal: Option<JournalOptions>,
    /// A campaign's own journal: continue the unfinished campaign it records.
    pub resume: bool,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            model: ModelKind::default(),
            training: TrainingConfig::default(),
            search: SvmSearch::default(),
            incremental: None,
            label_tolerance: 0.03,
            min_class_inputs: 2,
            max_classes: 10,
            journal: None,
            resume: false,
        }
    }
}

impl TuneOptions {
    /// The classes and labels of `records` under these options.
    pub fn cover(&self, records: &[InputRecord]) -> Cover {
        cover::cover_capped(
            records,
            self.label_tolerance,
            self.min_class_inputs,
            self.max_classes,
        )
    }
}

/// What a tuning run reports while it works.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// One (input, variant) pair was timed.
    Measured { input: &'a str, variant: &'a str },
    /// Incremental tuning finished an iteration.
    Iteration {
        labelled: usize,
        cv_accuracy: Option<f64>,
    },
}

/// When incremental tuning stops (whichever comes first; the pool running out always stops it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IncrementalStop {
    /// Inputs added after the seed set.
    pub iterations: Option<usize>,
    /// Stop once the model's cross-validated accuracy on the labelled inputs reaches this.
    pub accuracy: Option<f64>,
}
