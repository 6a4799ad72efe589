//! The three input features Surge infers from the first input sequence of a computation
//! (dissertation Section 5.2.4): its length, the aspect ratio of a uniformly nested input, and the
//! average row length of an irregularly nested one; per nesting level, for an input nested
//! more than once (a `nest` of a `nest`: rows of rows).

use super::Analysis;
use crate::CodegenError;
use crate::data::Buffer;
use crate::ir::{Computation, NodeId, Op, ValueInfo};
use serde::{Deserialize, Serialize};

/// Inferred input features. `length` counts the outer elements (rows of a nested sequence);
/// `elements` counts the scalars underneath (nonzeros of a CSR matrix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// The operator and node of the input sequence the features describe.
    pub source: String,
    pub length: u64,
    pub elements: u64,
    /// Rows / row length of a uniformly nested input (`split`).
    pub aspect_ratio: Option<f64>,
    /// Mean row length of an irregularly nested input (`nest`).
    pub avg_row_length: Option<f64>,
    /// The same features of each deeper nesting level, outermost first (empty unless the
    /// input is nested more than once): that level's rows, their elements, its aspect ratio
    /// or average row length.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<NestLevel>,
}

/// The features of one nesting level below the first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestLevel {
    pub rows: u64,
    pub elements: u64,
    pub aspect_ratio: Option<f64>,
    pub avg_row_length: Option<f64>,
}

impl NestLevel {
    fn of(rows: u64, elements: u64, uniform: bool) -> NestLevel {
        let avg = if rows == 0 {
            0.0
        } else {
            elements as f64 / rows as f64
        };
        NestLevel {
            rows,
            elements,
            aspect_ratio: uniform.then(|| if avg == 0.0 { 0.0 } else { rows as f64 / avg }),
            avg_row_length: (!uniform).then_some(avg),
        }
    }
}

/// Computes the features of the first input sequence read by the first phase.
pub fn features(
    c: &Computation,
    a: &Analysis,
    buffers: &[Buffer],
) -> Result<Features, CodegenError> {
    let infos = c.infer_all()?;
    check_buffers(c, buffers)?;
    let first = a
        .phases
        .first()
        .expect("an analysis has at least one phase");
    let level = &first.levels[0];
    let source = c
        .node(level.node)
        .op
        .operands()
        .into_iter()
        .find(|n| infos[n.0 as usize].ty.is_seq())
        .unwrap_or(level.node);
    let shape = Shape::of(c, &infos, buffers, source);
    let node = c.node(source);
    let name = format!("{}@{}", node.op.kind(), source);
    Ok(match shape {
        Shape::Nested {
            rows,
            elements,
            uniform,
            inner,
        } => {
            let outer = NestLevel::of(rows, elements, uniform);
            let mut levels = Vec::new();
            let mut next = inner;
            while let Some(shape) = next {
                match *shape {
                    Shape::Nested {
                        rows,
                        elements,
                        uniform,
                        inner,
                    } => {
                        levels.push(NestLevel::of(rows, elements, uniform));
                        next = inner;
                    }
                    _ => next = None,
                }
            }
            Features {
                source: name,
                length: rows,
                // The scalars underneath: the innermost level's elements.
                elements: levels.last().map_or(elements, |l| l.elements),
                aspect_ratio: outer.aspect_ratio,
                avg_row_length: outer.avg_row_length,
                levels,
            }
        }
        Shape::Flat(len) => Features {
            source: name,
            length: len,
            elements: len,
            aspect_ratio: None,
            avg_row_length: None,
            levels: Vec::new(),
        },
        Shape::Unknown => {
            return Err(CodegenError::Analysis {
                op: node.op.kind().name(),
                node: source,
                loc: c.loc(source),
                message: "the length of the first input sequence cannot be known before running"
                    .into(),
            });
        }
    })
}

pub use crate::ir::check_buffers;

enum Shape {
    Flat(u64),
    Nested {
        rows: u64,
        elements: u64,
        uniform: bool,
        /// The shape of the rows' rows, when the rows are nested themselves.
        inner: Option<Box<Shape>>,
    },
    Unknown,
}

impl Shape {
    fn of(c: &Computation, infos: &[ValueInfo], buffers: &[Buffer], n: NodeId) -> Shape {
        let info = &infos[n.0 as usize];
        let flat_len = |m: NodeId| infos[m.0 as usize].len;
        match &c.node(n).op {
            Op::Nest { input, offsets } => {
                let Op::Input { buffer } = c.node(*offsets).op else {
                    return Shape::Unknown;
                };
                let off = &buffers[buffer];
                let rows = off.len().saturating_sub(1) as u64;
                let (first, last) = match (off.get_int(0), off.get_int(off.len().wrapping_sub(1))) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return Shape::Unknown,
                };
                let elements = (last - first).max(0) as u64;
                let uniform = rows > 0
                    && (1..off.len()).all(|i| {
                        off.get_int(i).zip(off.get_int(i - 1)).map(|(b, a)| b - a)
                            == Some(elements as i128 / rows as i128)
                    })
                    && elements.is_multiple_of(rows);
                let inner = match Shape::of(c, infos, buffers, *input) {
                    s @ Shape::Nested { .. } => Some(Box::new(s)),
                    _ => None,
                };
                Shape::Nested {
                    rows,
                    elements,
                    uniform,
                    inner,
                }
            }
            Op::Split { input, tile } => match (
                flat_len(*input),
                infos[tile.0 as usize].konst.and_then(|k| k.as_integer()),
            ) {
                (Some(n), Some(t)) if t > 0 => {
                    let rows = n.div_ceil(t as u64);
                    Shape::Nested {
                        rows,
                        elements: n,
                        uniform: n.is_multiple_of(t as u64),
                        inner: None,
                    }
                }
                _ => Shape::Unknown,
            },
            Op::Zip { inputs } | Op::Map { inputs, .. } => match inputs.first() {
                Some(i) => Shape::of(c, infos, buffers, *i),
                None => Shape::Unknown,
            },
            _ => match info.len {
                Some(l) if info.ty.depth() == 1 => Shape::Flat(l),
                _ => Shape::Unknown,
            },
        }
    }
}
