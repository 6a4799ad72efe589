//! Where a node came from: the `file:line:column` of the DSEL call that built it, and the one
//! way errors name a node ([`site`]): "`gather` at src/main.rs:12:5 (node %7)".
//!
//! A location is provenance, not structure: [`Node`](super::Node)'s equality and hashing ignore
//! it, and so do [`Computation::stable_hash`](super::Computation::stable_hash) and the emitted
//! source, so editing an unrelated line of a program never invalidates a kernel cache.

use super::{Computation, NodeId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A place in the user's source: what `std::panic::Location` gives a `#[track_caller]` function.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl SourceLoc {
    /// The location of the caller of a `#[track_caller]` function.
    #[track_caller]
    pub fn caller() -> Self {
        SourceLoc::from(std::panic::Location::caller())
    }
}

impl From<&std::panic::Location<'_>> for SourceLoc {
    fn from(l: &std::panic::Location<'_>) -> Self {
        SourceLoc {
            file: l.file().to_string(),
            line: l.line(),
            column: l.column(),
        }
    }
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// How every error names a node: the operator, then the user's line, then the node id (for
/// developers reading `surge analyze` or an IR dump). Unknown parts are left out:
/// "`gather` at src/main.rs:12:5 (node %7)", "`gather` (node %7)", "`map` at src/main.rs:3:9".
pub fn site(op: &str, loc: Option<&SourceLoc>, node: Option<NodeId>) -> String {
    let mut s = format!("`{op}`");
    if let Some(l) = loc {
        s.push_str(&format!(" at {l}"));
    }
    if let Some(n) = node {
        s.push_str(&format!(" (node {n})"));
    }
    s
}

impl Computation {
    /// Where node `n` was built, when the computation was traced from user code.
    pub fn loc(&self, n: NodeId) -> Option<SourceLoc> {
        self.nodes
            .get(n.0 as usize)
            .and_then(|node| node.loc.clone())
    }

    /// Node `n` as errors name it: "`gather` at src/main.rs:12:5 (node %7)".
    pub fn site(&self, n: NodeId) -> String {
        let op = self
            .nodes
            .get(n.0 as usize)
            .map_or("node", |node| node.op.kind().name());
        site(op, self.loc(n).as_ref(), Some(n))
    }

    /// A copy without source locations: what the hashes and structural comparisons see.
    pub fn without_locs(&self) -> Computation {
        let mut c = self.clone();
        c.nodes.iter_mut().for_each(|n| n.loc = None);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_lead_with_the_operator_then_the_line_then_the_node() {
        let l = SourceLoc {
            file: "src/main.rs".into(),
            line: 12,
            column: 5,
        };
        assert_eq!(
            site("gather", Some(&l), Some(NodeId(7))),
            "`gather` at src/main.rs:12:5 (node %7)"
        );
        assert_eq!(site("gather", None, Some(NodeId(7))), "`gather` (node %7)");
        assert_eq!(site("map", Some(&l), None), "`map` at src/main.rs:12:5");
    }

    #[test]
    fn caller_is_the_calling_line() {
        let l = SourceLoc::caller();
        assert_eq!((l.file.as_str(), l.line), (file!(), line!() - 1));
    }
}
