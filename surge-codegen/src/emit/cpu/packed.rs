//! Phase results of tuples and booleans, stored in one pass as *words*. A phase stores numbers;
//! a result whose element is a tuple of scalars (argmin's `(f64, u32)`, CoMD's per-atom
//! `(e, fx, fy, fz)`) or a boolean, in at most two levels of sequences, is stored as `width`
//! `u64` words per element: its leaves in order, each as its bits (`f64::to_bits`, integers
//! widened, booleans 0/1). The element is computed once (a tuple whose items share values is
//! built once, `shared.rs`) and all its leaves are written from that one value; a later phase reads the words back into element code, and the host splits a
//! packed final result into [`Output::Composite`](crate::data::Output) parts, one per leaf.
//!
//! Why: before, a tuple result was split into one phase per leaf, each computing the whole
//! element again (`result.rs`, still used for tuples that hold sequences), and an intermediate
//! phase of tuples or booleans was refused. CoMD's force (a 4-tuple per atom) paid 4×.

use super::code::{Code, Gen, R, SeqCode};
use super::values::rust_type;
use crate::data::{Buffer, Output};
use crate::ir::{Elem, Type};
use serde::Serialize;
use std::rc::Rc;

/// How a packed phase result is laid out: `depth` levels of sequences around an element whose
/// leaves (in order) are `leaves`, stored as `leaves.len()` words per element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Packing {
    /// The phase root's type.
    pub ty: Type,
    /// The element type inside the sequences.
    pub item: Type,
    pub depth: usize,
    pub leaves: Vec<Elem>,
}

impl Packing {
    /// Words per element.
    pub fn width(&self) -> usize {
        self.leaves.len()
    }
}

/// The packing of a phase result of type `t`: `Some` when its element (inside any number of
/// levels of sequences; three or more are `deep.rs`'s) is a tuple of scalars (tuples nested in
/// it included) or a boolean.
/// Numbers are stored as they are, so they are `None`; so are tuples holding sequences.
pub fn packing(t: &Type) -> Option<Packing> {
    let (mut item, mut depth) = (t, 0);
    while let Type::Seq(i) = item {
        item = i;
        depth += 1;
    }
    let needs = matches!(item, Type::Tuple(_) | Type::Scalar(Elem::Bool));
    let mut leaves = Vec::new();
    (needs && scalar_leaves(item, &mut leaves)).then(|| Packing {
        ty: t.clone(),
        item: item.clone(),
        depth,
        leaves,
    })
}

/// Appends the scalar leaves of `t`; false when it holds a sequence.
fn scalar_leaves(t: &Type, out: &mut Vec<Elem>) -> bool {
    match t {
        Type::Scalar(e) => {
            out.push(*e);
            true
        }
        Type::Tuple(items) => items.iter().all(|i| scalar_leaves(i, out)),
        Type::Seq(_) => false,
    }
}

/// The `u64` word of scalar expression `v` of type `e`.
fn word(v: &str, e: Elem) -> String {
    match e {
        Elem::F64 => format!("({v}).to_bits()"),
        Elem::F32 => format!("(({v}).to_bits() as u64)"),
        Elem::Bool => format!("(({v}) as u64)"),
        Elem::I32 => format!("(({v}) as u32 as u64)"),
        Elem::I64 | Elem::U32 | Elem::U64 => format!("(({v}) as u64)"),
    }
}

/// The scalar of type `e` in word expression `w`.
fn from_word(w: &str, e: Elem) -> String {
    match e {
        Elem::F64 => format!("f64::from_bits({w})"),
        Elem::F32 => format!("f32::from_bits(({w}) as u32)"),
        Elem::Bool => format!("(({w}) != 0)"),
        Elem::I32 => format!("(({w}) as u32 as i32)"),
        Elem::I64 => format!("(({w}) as i64)"),
        Elem::U32 => format!("(({w}) as u32)"),
        Elem::U64 => format!("({w})"),
    }
}

/// The place expressions of `t`'s leaves inside a value named `place`, in order.
fn leaf_places(place: &str, t: &Type, out: &mut Vec<(String, Elem)>) {
    match t {
        Type::Scalar(e) => out.push((place.to_string(), *e)),
        Type::Tuple(items) => {
            for (j, i) in items.iter().enumerate() {
                leaf_places(&format!("{place}.{j}"), i, out);
            }
        }
        Type::Seq(_) => panic!("internal: a packed element holds no sequence"),
    }
}

impl<'a> Gen<'a> {
    /// An expression of type `[u64; width]`: the words of element `code` (of type `p.item`),
    /// computed once.
    pub(super) fn pack(&self, code: Code<'a>, p: &Packing) -> R<String> {
        let value = self.to_value(code, &p.item)?;
        Ok(self.words(value, p))
    }

    /// The words of `value`, an expression of type `p.item`.
    fn words(&self, value: String, p: &Packing) -> String {
        let t = self.name("t");
        let mut places = Vec::new();
        leaf_places(&t, &p.item, &mut places);
        let words: Vec<String> = places.iter().map(|(pl, e)| word(pl, *e)).collect();
        format!(
            "{{ let {t}: {} = {value}; [{}] }}",
            rust_type(&p.item),
            words.join(", ")
        )
    }
}

/// Element code of the element whose words start at index expression `base` of slice `data`.
fn unpack<'a>(data: &str, base: &str, t: &Type, next: &mut usize) -> Code<'a> {
    match t {
        Type::Scalar(e) => {
            let w = format!("{data}[{base} + {}]", *next);
            *next += 1;
            Code::Scalar(from_word(&w, *e), *e)
        }
        Type::Tuple(items) => {
            Code::Tuple(items.iter().map(|i| unpack(data, base, i, next)).collect())
        }
        Type::Seq(_) => panic!("internal: a packed element holds no sequence"),
    }
}

/// Element code of the element at position expression `pos` of words `data` laid out by `p`.
pub(super) fn unpack_at<'a>(data: &str, pos: &str, p: &Packing) -> Code<'a> {
    unpack(data, &format!("({pos}) * {}", p.width()), &p.item, &mut 0)
}

/// Element code reading a packed phase result from its words `data` (and, two levels deep, its
/// row offsets `offsets`, counted in elements).
pub(super) fn reader<'a>(data: String, offsets: String, p: &Packing) -> Code<'a> {
    let (item, w) = (p.item.clone(), p.width());
    let at = move |data: &str, base: String| unpack(data, &base, &item, &mut 0);
    match p.depth {
        0 => at(&data, "0".into()),
        1 => Code::Seq(Rc::new(SeqCode {
            slice: None,
            len: format!("({data}.len() / {w})"),
            checks: vec![],
            elem: Box::new(move |i| Ok(at(&data, format!("({i}) * {w}")))),
        })),
        _ => Code::Seq(Rc::new(SeqCode {
            slice: None,
            len: format!("({offsets}.len() - 1)"),
            checks: vec![],
            elem: Box::new(move |i| {
                let (d, o, i) = (data.clone(), offsets.clone(), i.to_string());
                let at = at.clone();
                Ok(Code::Seq(Rc::new(SeqCode {
                    slice: None,
                    len: format!("(({o}[({i}) + 1] - {o}[{i}]) as usize)"),
                    checks: vec![],
                    elem: Box::new(move |k| {
                        Ok(at(&d, format!("({o}[{i}] as usize + ({k})) * {w}")))
                    }),
                })))
            }),
        })),
    }
}

/// The buffer of leaf `j` of packed words `words` (booleans as `u32`, as `Output::Composite`'s
/// parts hold them).
fn leaf_buffer(words: &[u64], w: usize, j: usize, e: Elem) -> Buffer {
    let col = words.iter().skip(j).step_by(w).copied();
    match e {
        Elem::F64 => Buffer::F64(col.map(f64::from_bits).collect()),
        Elem::F32 => Buffer::F32(col.map(|x| f32::from_bits(x as u32)).collect()),
        Elem::I32 => Buffer::I32(col.map(|x| x as u32 as i32).collect()),
        Elem::I64 => Buffer::I64(col.map(|x| x as i64).collect()),
        Elem::U32 | Elem::Bool => Buffer::U32(col.map(|x| x as u32).collect()),
        Elem::U64 => Buffer::U64(col.collect()),
    }
}

impl Packing {
    /// The result a packed phase's words make: one part per leaf, each shaped by `part` (which
    /// turns a leaf's buffer into the phase's output shape), put together by the type.
    pub fn output(&self, words: &Buffer, part: impl Fn(Buffer) -> Output) -> Output {
        let Buffer::U64(words) = words else {
            panic!("internal: a packed phase result is not words");
        };
        let w = self.width();
        Output::Composite {
            ty: self.ty.clone(),
            parts: (self.leaves.iter().enumerate())
                .map(|(j, e)| part(leaf_buffer(words, w, j, *e)))
                .collect(),
        }
    }
}
