//! Computation analysis: phases, expression sequences, fusion groups and input features.
//!
//! An *expression sequence* is the nesting chain of data-parallel operators (SpMV: `map.reduce`,
//! the outer `map` over rows, the `reduce` nested in its function). Operators that are *arguments*
//! of a level rather than nested in it (SpMV's `gather` and inner `map`) form that level's *fusion
//! group*: each of their elements is produced where the consumer reads it, with no temporary.
//! An argument that cannot be produced element by element (a `scan`, a `map` that itself nests a
//! `reduce`) and does not depend on the enclosing lambda's parameters is computed first, as its own
//! *phase* (the tiled reduction's partials, the scan benchmark's partial scans).

mod blocked;
mod contraction;
mod diagonal;
mod features;

pub use blocked::{BlockedPattern, blocked_pattern};
pub use contraction::{Contraction, contraction_pattern, tile_value};
pub use diagonal::{DiagonalPattern, DiagonalRow, diagonal_pattern};
pub use features::{Features, NestLevel, check_buffers, features};

use crate::CodegenError;
use crate::ir::{Computation, NodeId, Op, OpKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One nesting level of an expression sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    pub op: OpKind,
    pub node: NodeId,
    /// Producers fused into this level, in the order they were found (outermost argument first).
    pub fused: Vec<Fused>,
    /// Data-parallel operators computed sequentially inside each element of this level, their
    /// results kept in a per-element workspace when they are not element-wise: a second
    /// operator nested in the level's function, or an argument that depends on the enclosing
    /// lambda's parameters and cannot be fused (a `scan`, a `map` that nests a `reduce`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequential: Vec<Fused>,
}

/// A producer fused into its consumer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fused {
    pub op: OpKind,
    pub node: NodeId,
}

/// A part of the computation evaluated as one nested kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    pub root: NodeId,
    pub levels: Vec<Level>,
    /// Roots of the phases whose results this phase reads.
    pub depends_on: Vec<NodeId>,
    /// Set when the phase can also run over a diagonal layout of its rows (`layout1`).
    #[serde(default)]
    pub diagonal: Option<DiagonalPattern>,
    /// Set when the phase is a dense contraction `C = A·B` (the GEMM variant family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contraction: Option<Contraction>,
}

impl Phase {
    /// The expression sequence, e.g. `map.reduce`.
    pub fn expression_sequence(&self) -> String {
        self.levels
            .iter()
            .map(|l| l.op.name())
            .collect::<Vec<_>>()
            .join(".")
    }
    pub fn ops(&self) -> Vec<OpKind> {
        self.levels.iter().map(|l| l.op).collect()
    }
}

/// The phases of a computation in evaluation order; the last one produces the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Analysis {
    pub phases: Vec<Phase>,
}

impl Analysis {
    /// The phase producing the computation's result.
    pub fn final_phase(&self) -> &Phase {
        self.phases
            .last()
            .expect("an analysis has at least one phase")
    }
    /// All expression sequences in evaluation order, e.g. `map.reduce, map.reduce`.
    pub fn expression_sequence(&self) -> String {
        self.phases
            .iter()
            .map(Phase::expression_sequence)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Analyzes a computation (validating it first).
pub fn analyze(c: &Computation) -> Result<Analysis, CodegenError> {
    c.validate()?;
    let mut a = Analyzer {
        c,
        free: c.free_params(),
        phases: Vec::new(),
        done: BTreeSet::new(),
    };
    if is_data_parallel(c.node(c.root).op.kind()) {
        a.phase(c.root, c.root)?;
    } else {
        a.glue_root()?;
    }
    Ok(Analysis { phases: a.phases })
}

struct Analyzer<'a> {
    c: &'a Computation,
    free: Vec<BTreeSet<NodeId>>,
    phases: Vec<Phase>,
    done: BTreeSet<NodeId>,
}

fn is_data_parallel(k: OpKind) -> bool {
    k.is_data_parallel()
}

impl Analyzer<'_> {
    fn op(&self, n: NodeId) -> &Op {
        &self.c.node(n).op
    }

    fn analysis_error(&self, n: NodeId, message: String) -> CodegenError {
        CodegenError::Analysis {
            op: self.op(n).kind().name(),
            node: n,
            loc: self.c.loc(n),
            message,
        }
    }

    /// A root that is scalar code (or a tuple, an index, a length) over data-parallel
    /// operators, such as `reduce(add, map(x * x, x)).sqrt()`: every operator it reads but the
    /// last is its own phase, and the last one's phase ends by evaluating the root (on the CPU,
    /// in `finish`, like a map body's scalar code around its reduction).
    fn glue_root(&mut self) -> Result<(), CodegenError> {
        let root = self.c.root;
        let mut candidates = Vec::new();
        self.nested_candidates(root, &mut candidates, &mut BTreeSet::new());
        let Some(last) = candidates.iter().copied().max() else {
            return Err(self.analysis_error(
                root,
                "the computation has no data-parallel operator (map, reduce, scan, ...), so there \
                 is nothing to schedule; evaluate it with `interpret`"
                    .into(),
            ));
        };
        for cand in candidates.into_iter().filter(|c| *c != last) {
            self.phase(cand, cand)?;
        }
        self.phase(last, root)
    }

    /// Analyzes the phase whose levels start at `top` and whose result is `root` (the same node
    /// unless the root is scalar code around `top`), after the phases it depends on.
    fn phase(&mut self, top: NodeId, root: NodeId) -> Result<(), CodegenError> {
        if !self.done.insert(root) {
            return Ok(());
        }
        let mut levels = Vec::new();
        let mut depends_on: BTreeSet<NodeId> = self
            .phases
            .iter()
            .map(|p| p.root)
            .filter(|_| top != root)
            .collect();
        let mut scope: BTreeSet<NodeId> = BTreeSet::new();
        let mut current = Some(top);
        while let Some(node) = current.take() {
            let kind = self.op(node).kind();
            let mut level = Level {
                op: kind,
                node,
                fused: Vec::new(),
                sequential: Vec::new(),
            };
            let mut seen = BTreeSet::new();
            for o in self.op(node).operands() {
                self.argument(o, &scope, &mut level, &mut depends_on, &mut seen)?;
            }
            levels.push(level);
            if let Some(l) = self.op(node).lambdas().first().map(|l| (*l).clone()) {
                scope.extend(l.params.iter().copied());
                let mut candidates = Vec::new();
                self.nested_candidates(l.body, &mut candidates, &mut BTreeSet::new());
                let mut nested = Vec::new();
                for cand in candidates {
                    if self.free[cand.0 as usize].is_disjoint(&scope) {
                        self.phase(cand, cand)?;
                        depends_on.insert(cand);
                    } else {
                        nested.push(cand);
                    }
                }
                match nested.as_slice() {
                    [] => {}
                    [one] => current = Some(*one),
                    // Several nested operators: the level's function runs sequentially per element.
                    many => {
                        let level = levels.last_mut().expect("the level was just pushed");
                        for n in many {
                            level.sequential.push(Fused {
                                op: self.op(*n).kind(),
                                node: *n,
                            });
                        }
                    }
                }
            }
        }
        depends_on.remove(&root);
        self.phases.push(Phase {
            root,
            levels,
            depends_on: depends_on.into_iter().collect(),
            diagonal: diagonal_pattern(self.c, top),
            contraction: contraction_pattern(self.c, top),
        });
        Ok(())
    }

    /// The first data-parallel operators reachable from a lambda body through scalar glue.
    fn nested_candidates(&self, n: NodeId, out: &mut Vec<NodeId>, seen: &mut BTreeSet<NodeId>) {
        if !seen.insert(n) {
            return;
        }
        let op = self.op(n);
        if is_data_parallel(op.kind()) {
            out.push(n);
        } else {
            for o in op.operands() {
                self.nested_candidates(o, out, seen);
            }
        }
    }

    /// Whether a `map` can be fused: its function nests no data-parallel operator.
    fn is_elementwise_map(&self, n: NodeId) -> bool {
        match self.op(n) {
            Op::Map { f, .. } => {
                let mut c = Vec::new();
                self.nested_candidates(f.body, &mut c, &mut BTreeSet::new());
                c.is_empty()
            }
            _ => false,
        }
    }

    /// Classifies an argument of a level: fused, a separate phase, or unsupported.
    fn argument(
        &mut self,
        n: NodeId,
        scope: &BTreeSet<NodeId>,
        level: &mut Level,
        depends_on: &mut BTreeSet<NodeId>,
        seen: &mut BTreeSet<NodeId>,
    ) -> Result<(), CodegenError> {
        if !seen.insert(n) {
            return Ok(());
        }
        let kind = self.op(n).kind();
        let fusible =
            kind.is_elementwise_producer() && (kind != OpKind::Map || self.is_elementwise_map(n));
        if fusible {
            if is_data_parallel(kind) {
                level.fused.push(Fused { op: kind, node: n });
            }
            for o in self.op(n).operands() {
                self.argument(o, scope, level, depends_on, seen)?;
            }
            if let Some(l) = self.op(n).lambdas().first().map(|l| (*l).clone()) {
                let mut inner = scope.clone();
                inner.extend(l.params.iter().copied());
                self.argument(l.body, &inner, level, depends_on, seen)?;
            }
            Ok(())
        } else if self.free[n.0 as usize].is_disjoint(scope) {
            self.phase(n, n)?;
            depends_on.insert(n);
            Ok(())
        } else {
            // Depends on the level's element and is not element-wise: computed per element.
            level.sequential.push(Fused { op: kind, node: n });
            Ok(())
        }
    }
}

/// Fusion groups as a map from level (`"map@%3"`) to the fused operator names; for reports.
pub fn fusion_summary(p: &Phase) -> BTreeMap<String, Vec<String>> {
    p.levels
        .iter()
        .map(|l| {
            (
                format!("{}@{}", l.op, l.node),
                l.fused.iter().map(|f| f.op.name().to_string()).collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
