//! Results that are not numbers in at most two levels of sequences: tuples (argmin's
//! `(f64, u32)`, a `zip` of two results), booleans, sequences of tuples. A phase stores numbers
//! only, so such a result is split into *parts*, one per leaf of its type: the final phase is
//! emitted once per part, with its root replaced by the part's projection (`.j` of a tuple,
//! `map(|t| t.j)` through a sequence, booleans cast to `u32`). The host runs the part phases in
//! turn and returns [`Output::Composite`](crate::data::Output), which `Value::from_output` puts
//! back together by the type. Each part computes the final phase again (an argmin once per
//! field). Tuples of scalars and booleans are stored in one pass instead (`packed.rs`); this
//! split remains for tuples that hold sequences.

use crate::analysis::{Analysis, Phase};
use crate::ir::{Computation, Elem, Lambda, Node, NodeId, Op, ScalarExpr, Type};
use serde::Serialize;

/// A step from a value to one leaf of its type.
#[derive(Debug, Clone, Copy)]
enum Step {
    Field(usize),
    Each,
}

/// How the program's result is put together from its last `parts` phases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultParts {
    /// The computation's result type.
    pub ty: Type,
    pub parts: usize,
}

/// Whether phases can store a value of type `t` as it is: numbers inside any number of levels
/// of sequences (three or more: `deep.rs`).
pub fn storable(t: &Type) -> bool {
    match t {
        Type::Scalar(e) => *e != Elem::Bool,
        Type::Seq(i) => storable(i),
        Type::Tuple(_) => false,
    }
}

/// The paths to the leaves of `t` (tuples split, sequences walked through), with each leaf's
/// type as the path reaches it (sequences around it included).
fn leaves(t: &Type, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match t {
        Type::Tuple(items) => {
            for (j, i) in items.iter().enumerate() {
                path.push(Step::Field(j));
                leaves(i, path, out);
                path.pop();
            }
        }
        Type::Seq(i) if has_tuple(i) => {
            path.push(Step::Each);
            leaves(i, path, out);
            path.pop();
        }
        _ => out.push(path.clone()),
    }
}

fn has_tuple(t: &Type) -> bool {
    match t {
        Type::Tuple(_) => true,
        Type::Seq(i) => has_tuple(i),
        Type::Scalar(_) => false,
    }
}

/// Appends nodes computing the leaf at `path` of node `n`; returns the leaf's node.
fn project(c: &mut Computation, n: NodeId, path: &[Step]) -> NodeId {
    let ty = c.node(n).ty.clone();
    let push = |c: &mut Computation, op: Op, ty: Type| {
        c.nodes.push(Node::new(op, ty));
        NodeId(c.nodes.len() as u64 - 1)
    };
    match (path.first(), &ty) {
        (Some(Step::Field(j)), Type::Tuple(items)) => {
            let f = push(
                c,
                Op::Project {
                    tuple: n,
                    index: *j,
                },
                items[*j].clone(),
            );
            project(c, f, &path[1..])
        }
        (Some(Step::Each), Type::Seq(item)) | (None, Type::Seq(item))
            if !path.is_empty() || item.has_bool() =>
        {
            let rest = if path.is_empty() { path } else { &path[1..] };
            let p = push(c, Op::Param, (**item).clone());
            let body = project(c, p, rest);
            let out = Type::seq(c.node(body).ty.clone());
            let f = Lambda {
                params: vec![p],
                body,
            };
            push(c, Op::Map { f, inputs: vec![n] }, out)
        }
        (None, Type::Scalar(Elem::Bool)) => push(
            c,
            Op::Scalar {
                expr: ScalarExpr::Cast(Elem::U32, Box::new(ScalarExpr::Value(n))),
            },
            Type::Scalar(Elem::U32),
        ),
        (None, _) => n,
        (Some(_), _) => panic!("internal: leaf path does not match the type {ty:?}"),
    }
}

/// The computation and analysis with the final phase split into one phase per leaf of the
/// result type, when the result is not storable as it is (`None` when it is, or when a leaf
/// still is not: three levels of sequences, which the emitter then refuses by name).
pub fn split_result(c: &Computation, a: &Analysis) -> Option<(Computation, Analysis, ResultParts)> {
    let ty = c.node(c.root).ty.clone();
    if storable(&ty) || super::packed::packing(&ty).is_some() {
        return None;
    }
    let mut paths = Vec::new();
    leaves(&ty, &mut Vec::new(), &mut paths);
    let mut c2 = c.clone();
    let last = a.final_phase();
    let mut phases: Vec<Phase> = a.phases[..a.phases.len() - 1].to_vec();
    for path in &paths {
        let root = project(&mut c2, c.root, path);
        if !storable(&c2.node(root).ty) {
            return None;
        }
        phases.push(Phase {
            root,
            diagonal: None,
            contraction: None,
            ..last.clone()
        });
    }
    let parts = paths.len();
    Some((c2, Analysis { phases }, ResultParts { ty, parts }))
}
