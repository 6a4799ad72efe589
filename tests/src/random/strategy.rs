//! The proptest strategy: a choice sequence decoded into a [`Program`]. Proptest shrinks the
//! sequence (dropping choices, lowering them toward 0), which shrinks the program, and a
//! failing case prints as DSEL source.

use super::dsel;
use super::generate::decode;
use super::program::Program;
use proptest::collection::vec;
use proptest::prelude::*;
use std::fmt;

/// One generated case: its choices and the program they decode to. `Debug` prints the program
/// as DSEL source, so proptest's "minimal failing input" can be pasted into a test.
#[derive(Clone)]
pub struct Case {
    pub choices: Vec<u32>,
    pub program: Program,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "choices {:?}", self.choices)?;
        f.write_str(&dsel::print(&self.program))
    }
}

/// Random programs over every operator (see [`super::generate`]). Choices are below 64 (the
/// generator's widest decision), so shrinking one takes a few steps.
pub fn programs() -> impl Strategy<Value = Case> {
    vec(0u32..64, 0..300).prop_map(|choices| Case {
        program: decode(&choices),
        choices,
    })
}
