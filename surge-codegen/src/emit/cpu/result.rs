//! Phase results that are tuples holding sequences (`(seq<f64>, f64)`: a reduction whose
//! accumulator is a row and a score, a `zip` of rows with numbers). A phase stores numbers, or
//! tuples of scalars as words (`packed.rs`), so such a phase is split into *parts*, one per
//! leaf of its type: it is emitted once per part, with its root replaced by the part's
//! projection (`.j` of a tuple, `map(|t| t.j)` through a sequence). Each part computes the
//! phase again (a reduction once per field).
//!
//! - The final phase's parts cast booleans to `u32`; the host runs them in turn and returns
//!   [`Output::Composite`](crate::data::Output), which `Value::from_output` puts back together
//!   by the type.
//! - An earlier phase's parts keep their booleans (packed as words); a later phase reads the
//!   parts and puts their element code back together by the type ([`assemble`]): the tuple of
//!   the parts' codes, zipped element by element through sequences.

use super::code::{Code, SeqCode};
use crate::analysis::{Analysis, Phase};
use crate::ir::{Computation, Elem, Lambda, Node, NodeId, Op, ScalarExpr, Type};
use serde::Serialize;
use std::rc::Rc;

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

/// An earlier phase's result of type `ty` (root `root`) stored as the phases `phases`, one per
/// leaf in order.
#[derive(Debug, Clone)]
pub(super) struct Assembly {
    pub root: NodeId,
    pub ty: Type,
    pub phases: Vec<usize>,
}

/// Appends nodes computing the leaf at `path` of node `n` (booleans cast to `u32` when `cast`);
/// returns the leaf's node.
fn project(c: &mut Computation, n: NodeId, path: &[Step], cast: bool) -> NodeId {
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
            project(c, f, &path[1..], cast)
        }
        (Some(Step::Each), Type::Seq(item)) | (None, Type::Seq(item))
            if !path.is_empty() || (cast && item.has_bool()) =>
        {
            let rest = if path.is_empty() { path } else { &path[1..] };
            let p = push(c, Op::Param, (**item).clone());
            let body = project(c, p, rest, cast);
            let out = Type::seq(c.node(body).ty.clone());
            let f = Lambda {
                params: vec![p],
                body,
            };
            push(c, Op::Map { f, inputs: vec![n] }, out)
        }
        (None, Type::Scalar(Elem::Bool)) if cast => push(
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

/// The program once its phases of tuples holding sequences are split into parts.
pub(super) struct Split {
    pub c: Computation,
    pub a: Analysis,
    /// Set when the final phase is split.
    pub result: Option<ResultParts>,
    /// The earlier phases split, for the phases that read them.
    pub assemblies: Vec<Assembly>,
}

/// Whether a phase stores a result of type `t` as it is (numbers, or tuples of scalars and
/// booleans as words).
fn whole(t: &Type) -> bool {
    storable(t) || super::packed::packing(t).is_some()
}

/// The part phases of `phase` (its root's type split by leaf; booleans cast when `cast`), or
/// `None` when a part still cannot be stored (the emitter then refuses the phase by name).
fn parts(c2: &mut Computation, phase: &Phase, cast: bool) -> Option<Vec<Phase>> {
    let ty = c2.node(phase.root).ty.clone();
    let mut paths = Vec::new();
    leaves(&ty, &mut Vec::new(), &mut paths);
    let part = |c2: &mut Computation, path: &Vec<Step>| {
        let root = project(c2, phase.root, path, cast);
        let ok = whole(&c2.node(root).ty);
        ok.then(|| Phase {
            root,
            diagonal: None,
            contraction: None,
            ..phase.clone()
        })
    };
    paths.iter().map(|p| part(c2, p)).collect()
}

/// The computation and analysis with every phase whose result is a tuple holding sequences
/// split into one phase per leaf (`None` when there is none).
pub(super) fn split_phases(c: &Computation, a: &Analysis) -> Option<Split> {
    if a.phases.iter().all(|p| whole(&c.node(p.root).ty)) {
        return None;
    }
    let mut c2 = c.clone();
    let (mut phases, mut assemblies, mut result) = (Vec::new(), Vec::new(), None);
    let last = a.phases.len() - 1;
    for (k, phase) in a.phases.iter().enumerate() {
        let ty = c.node(phase.root).ty.clone();
        match (whole(&ty), parts(&mut c2, phase, k == last)) {
            (false, Some(ps)) => {
                let at = phases.len();
                if k == last {
                    result = Some(ResultParts {
                        ty: ty.clone(),
                        parts: ps.len(),
                    });
                }
                assemblies.push(Assembly {
                    root: phase.root,
                    ty,
                    phases: (at..at + ps.len()).collect(),
                });
                phases.extend(ps);
            }
            _ => phases.push(phase.clone()),
        }
    }
    Some(Split {
        c: c2,
        a: Analysis { phases },
        result,
        assemblies,
    })
}

/// The element code of a split phase's result of type `t`, from its parts' codes in leaf order.
pub(super) fn assemble<'a>(t: &Type, parts: &mut dyn Iterator<Item = Code<'a>>) -> Code<'a> {
    match t {
        Type::Tuple(items) => Code::Tuple(items.iter().map(|i| assemble(i, parts)).collect()),
        Type::Seq(item) if has_tuple(item) => {
            let cols: Vec<Rc<SeqCode<'a>>> = (0..leaf_count(item))
                .map(|_| match parts.next() {
                    Some(Code::Seq(s)) => s,
                    _ => panic!("internal: a part of a sequence is not a sequence"),
                })
                .collect();
            let item = (**item).clone();
            Code::Seq(Rc::new(SeqCode {
                slice: None,
                len: cols[0].len.clone(),
                checks: cols.iter().flat_map(|s| s.checks.clone()).collect(),
                elem: Box::new(move |k| {
                    let items = cols
                        .iter()
                        .map(|s| s.at(k))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(assemble(&item, &mut items.into_iter()))
                }),
            }))
        }
        _ => parts.next().expect("internal: fewer parts than leaves"),
    }
}

/// The number of leaves of `t`.
fn leaf_count(t: &Type) -> usize {
    let mut paths = Vec::new();
    leaves(t, &mut Vec::new(), &mut paths);
    paths.len()
}

/// The final phase split into one phase per leaf of the result type, by a backend's own rule
/// of what a phase stores (`None` when a part is not `keep`): the CUDA emitter stores every
/// result that holds a tuple this way (booleans cast to `u32`, as here).
pub fn split_parts(
    c: &Computation,
    a: &Analysis,
    keep: fn(&Type) -> bool,
) -> Option<(Computation, Analysis, ResultParts)> {
    let ty = c.node(c.root).ty.clone();
    let mut paths = Vec::new();
    leaves(&ty, &mut Vec::new(), &mut paths);
    let mut c2 = c.clone();
    let last = a.final_phase();
    let mut phases: Vec<Phase> = a.phases[..a.phases.len() - 1].to_vec();
    for path in &paths {
        let root = project(&mut c2, c.root, path, true);
        if !keep(&c2.node(root).ty) {
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
