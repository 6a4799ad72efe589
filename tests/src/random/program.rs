//! The representation of a random program: a typed expression tree over DSEL operators, with
//! its input buffers. [`build`](super::build) lowers it to IR the way the DSEL would; the
//! printer ([`dsel`](super::dsel)) writes it as `surge::prelude` source.

use surge_codegen::data::Buffer;
use surge_codegen::ir::{BinaryOp, Elem, Literal, Type, UnaryOp};

/// A lambda-bound variable: its id (unique in a program) and its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub id: u32,
    pub ty: Type,
}

/// A traced closure: its parameters and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Lam {
    pub params: Vec<Var>,
    pub body: Box<Expr>,
}

/// One expression. Scalar operations mirror the DSEL's methods and operators one to one (each
/// becomes one `scalar` node, as a DSEL method call does).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Input buffer `k` of the program (`Seq::input`).
    Input(usize),
    Var(Var),
    /// A literal (`lit(..)`).
    Lit(Literal),
    Un(UnaryOp, Box<Expr>),
    Bin(BinaryOp, Box<Expr>, Box<Expr>),
    Fma(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `cond.select(a, b)`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(Elem, Box<Expr>),
    Tuple(Vec<Expr>),
    Proj(Box<Expr>, usize),
    /// `at(&seq, index)`.
    Index(Box<Expr>, Box<Expr>),
    /// `len(&seq)`.
    Length(Box<Expr>),
    Map(Lam, Vec<Expr>),
    /// `reduce` / `reduce_prefix`.
    Reduce(Lam, Box<Expr>, Option<Box<Expr>>),
    /// `scan` / `scan_prefix`.
    Scan(Lam, Box<Expr>, Option<Box<Expr>>),
    /// `reduce_by_key(op, &input, &keys, prefix)`.
    ReduceByKey(Lam, Box<Expr>, Box<Expr>, Box<Expr>),
    Gather(Box<Expr>, Box<Expr>),
    /// `scatter(&source, &indices, &dest)`.
    Scatter(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `range` / `range_step`.
    Range(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
    /// `replicate(value, len)`.
    Replicate(Box<Expr>, Box<Expr>),
    Zip(Vec<Expr>),
    Join(Vec<Expr>),
    Split(Box<Expr>, Box<Expr>),
    Striding(Box<Expr>, Box<Expr>),
    Reverse(Box<Expr>),
    Nest(Box<Expr>, Box<Expr>),
    Transpose(Box<Expr>),
}

/// A whole program: its inputs (named `in0`, `in1`, ..) and the expression whose value is the
/// result.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub inputs: Vec<Buffer>,
    pub root: Expr,
}

impl Expr {
    pub fn boxed(self) -> Box<Expr> {
        Box::new(self)
    }

    /// The operators this expression uses, by IR name (`map`, `reduce`, ..), with repeats.
    pub fn operators(&self, out: &mut Vec<&'static str>) {
        let name = match self {
            Expr::Input(_) | Expr::Var(_) | Expr::Lit(_) => None,
            Expr::Un(..) | Expr::Bin(..) | Expr::Fma(..) | Expr::Select(..) | Expr::Cast(..) => {
                Some("scalar")
            }
            Expr::Tuple(_) => Some("tuple"),
            Expr::Proj(..) => Some("project"),
            Expr::Index(..) => Some("index"),
            Expr::Length(_) => Some("length"),
            Expr::Map(..) => Some("map"),
            Expr::Reduce(..) => Some("reduce"),
            Expr::Scan(..) => Some("scan"),
            Expr::ReduceByKey(..) => Some("reduce_by_key"),
            Expr::Gather(..) => Some("gather"),
            Expr::Scatter(..) => Some("scatter"),
            Expr::Range(..) => Some("range"),
            Expr::Replicate(..) => Some("replicate"),
            Expr::Zip(_) => Some("zip"),
            Expr::Join(_) => Some("join"),
            Expr::Split(..) => Some("split"),
            Expr::Striding(..) => Some("striding"),
            Expr::Reverse(_) => Some("reverse"),
            Expr::Nest(..) => Some("nest"),
            Expr::Transpose(_) => Some("transpose"),
        };
        out.extend(name);
        self.for_each_child(&mut |e| e.operators(out));
    }

    /// Visits the direct sub-expressions (lambda bodies included).
    pub fn for_each_child(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Expr::Input(_) | Expr::Var(_) | Expr::Lit(_) => {}
            Expr::Un(_, a)
            | Expr::Cast(_, a)
            | Expr::Proj(a, _)
            | Expr::Length(a)
            | Expr::Reverse(a)
            | Expr::Transpose(a) => f(a),
            Expr::Bin(_, a, b)
            | Expr::Index(a, b)
            | Expr::Gather(a, b)
            | Expr::Replicate(a, b)
            | Expr::Split(a, b)
            | Expr::Striding(a, b)
            | Expr::Nest(a, b) => {
                f(a);
                f(b)
            }
            Expr::Fma(a, b, c) | Expr::Select(a, b, c) | Expr::Scatter(a, b, c) => {
                f(a);
                f(b);
                f(c)
            }
            Expr::Tuple(v) | Expr::Zip(v) | Expr::Join(v) => v.iter().for_each(f),
            Expr::Map(l, v) => {
                f(&l.body);
                v.iter().for_each(f)
            }
            Expr::Reduce(l, a, p) | Expr::Scan(l, a, p) => {
                f(&l.body);
                f(a);
                if let Some(p) = p {
                    f(p)
                }
            }
            Expr::ReduceByKey(l, a, k, p) => {
                f(&l.body);
                f(a);
                f(k);
                f(p)
            }
            Expr::Range(a, b, s) => {
                f(a);
                f(b);
                if let Some(s) = s {
                    f(s)
                }
            }
        }
    }
}
