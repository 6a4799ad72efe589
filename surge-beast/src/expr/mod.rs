//! Expression AST, name resolution, constant folding and the evaluator.
//!
//! The parser produces [`Expr`] trees with [`ExprKind::Name`] leaves; planning replaces every
//! name by a constant (settings and derived values that only depend on settings) or by a slot
//! index into the enumeration environment ([`ExprKind::Slot`]), then folds constants. The
//! evaluator walks the resolved tree with an `i64` fast path for arithmetic and comparisons.
//!
//! Here: the tree, its rendering and walks, resolution; `fold` (constant folding and exact
//! simplification), `eval` (the evaluators), `builtins` (the built-in functions).

use std::fmt;
use std::sync::Arc;

use crate::value::{BinOp, CmpOp, UnOp, Value};

mod builtins;
mod compile;
mod eval;
mod fold;
mod fuse;

pub use self::builtins::{call_builtin, make_range};
pub(crate) use self::compile::IntProg;
pub(crate) use self::fuse::{Ctl, Fused, LevelProg, store};

/// A native (Rust closure) function used by builder-made derived values and constraints.
pub type NativeFn = Arc<dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync>;

/// Built-in functions available in expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Min,
    Max,
    Abs,
    Gcd,
    Range,
    Len,
    Int,
    Float,
    Bool,
    Str,
    Sum,
    Any,
    All,
    Union,
    Intersection,
    Difference,
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "min" => Builtin::Min,
            "max" => Builtin::Max,
            "abs" => Builtin::Abs,
            "gcd" => Builtin::Gcd,
            "range" => Builtin::Range,
            "len" => Builtin::Len,
            "int" => Builtin::Int,
            "float" => Builtin::Float,
            "bool" => Builtin::Bool,
            "str" => Builtin::Str,
            "sum" => Builtin::Sum,
            "any" => Builtin::Any,
            "all" => Builtin::All,
            "union" => Builtin::Union,
            "intersection" => Builtin::Intersection,
            "difference" => Builtin::Difference,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Abs => "abs",
            Builtin::Gcd => "gcd",
            Builtin::Range => "range",
            Builtin::Len => "len",
            Builtin::Int => "int",
            Builtin::Float => "float",
            Builtin::Bool => "bool",
            Builtin::Str => "str",
            Builtin::Sum => "sum",
            Builtin::Any => "any",
            Builtin::All => "all",
            Builtin::Union => "union",
            Builtin::Intersection => "intersection",
            Builtin::Difference => "difference",
        }
    }
}

/// An expression node with the 0-based character offset of its operator / start.
#[derive(Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub pos: u32,
}

/// Expression node kinds.
#[derive(Clone)]
pub enum ExprKind {
    Const(Value),
    /// An unresolved name (as parsed).
    Name(String),
    /// A resolved environment slot.
    Slot(u32),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a op1 b op2 c ...` with Python chaining.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `a and b and ...` (returns an operand, short-circuits).
    And(Vec<Expr>),
    /// `a or b or ...` (returns an operand, short-circuits).
    Or(Vec<Expr>),
    /// `then if cond else otherwise`.
    IfElse(Box<[Expr; 3]>),
    Call(Builtin, Vec<Expr>),
    List(Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// A Rust closure applied to argument expressions (builder API only).
    Native(NativeFn, Vec<Expr>),
    /// A loop-invariant sub-expression computed at an outer loop into a slot; `None` in the
    /// slot (e.g. after an error there) means "evaluate the expression here".
    Cached(u32, Box<Expr>),
}

/// An evaluation failure at character offset `pos` of the expression.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub pos: u32,
    pub message: String,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.pos + 1, self.message)
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Debug for ExprKind {
    /// The variant and its operands; a native closure shows as `<native>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExprKind::Const(v) => f.debug_tuple("Const").field(v).finish(),
            ExprKind::Name(n) => f.debug_tuple("Name").field(n).finish(),
            ExprKind::Slot(s) => f.debug_tuple("Slot").field(s).finish(),
            ExprKind::Unary(op, a) => f.debug_tuple("Unary").field(op).field(a).finish(),
            ExprKind::Binary(op, a, b) => {
                f.debug_tuple("Binary").field(op).field(a).field(b).finish()
            }
            ExprKind::Compare(a, rest) => f.debug_tuple("Compare").field(a).field(rest).finish(),
            ExprKind::And(xs) => f.debug_tuple("And").field(xs).finish(),
            ExprKind::Or(xs) => f.debug_tuple("Or").field(xs).finish(),
            ExprKind::IfElse(xs) => f.debug_tuple("IfElse").field(xs).finish(),
            ExprKind::Call(b, args) => f.debug_tuple("Call").field(b).field(args).finish(),
            ExprKind::List(xs) => f.debug_tuple("List").field(xs).finish(),
            ExprKind::Index(a, i) => f.debug_tuple("Index").field(a).field(i).finish(),
            ExprKind::Native(_, args) => f
                .debug_tuple("Native")
                .field(&format_args!("<native>"))
                .field(args)
                .finish(),
            ExprKind::Cached(s, e) => f.debug_tuple("Cached").field(s).field(e).finish(),
        }
    }
}

impl fmt::Display for Expr {
    /// Fully parenthesised rendering (for plans and debugging).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, xs: &[Expr], sep: &str) -> fmt::Result {
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    write!(f, "{sep}")?;
                }
                write!(f, "{x}")?;
            }
            Ok(())
        }
        match &self.kind {
            ExprKind::Const(v) => write!(f, "{v}"),
            ExprKind::Name(n) => write!(f, "{n}"),
            ExprKind::Slot(s) => write!(f, "${s}"),
            ExprKind::Unary(UnOp::Not, a) => write!(f, "(not {a})"),
            ExprKind::Unary(op, a) => {
                let s = match op {
                    UnOp::Neg => "-",
                    UnOp::Pos => "+",
                    _ => "~",
                };
                write!(f, "({s}{a})")
            }
            ExprKind::Binary(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            ExprKind::Compare(a, rest) => {
                write!(f, "({a}")?;
                for (op, b) in rest {
                    write!(f, " {} {b}", op.symbol())?;
                }
                write!(f, ")")
            }
            ExprKind::And(xs) => {
                write!(f, "(")?;
                list(f, xs, " and ")?;
                write!(f, ")")
            }
            ExprKind::Or(xs) => {
                write!(f, "(")?;
                list(f, xs, " or ")?;
                write!(f, ")")
            }
            ExprKind::IfElse(b) => write!(f, "({} if {} else {})", b[0], b[1], b[2]),
            ExprKind::Call(bi, args) => {
                write!(f, "{}(", bi.name())?;
                list(f, args, ", ")?;
                write!(f, ")")
            }
            ExprKind::List(xs) => {
                write!(f, "[")?;
                list(f, xs, ", ")?;
                write!(f, "]")
            }
            ExprKind::Index(a, i) => write!(f, "{a}[{i}]"),
            ExprKind::Cached(slot, e) => write!(f, "${slot}{{{e}}}"),
            ExprKind::Native(_, args) => {
                write!(f, "<native>(")?;
                list(f, args, ", ")?;
                write!(f, ")")
            }
        }
    }
}

/// What a name resolves to during planning.
#[derive(Clone, Debug)]
pub enum Resolved {
    Const(Value),
    Slot(u32),
}

impl Expr {
    pub fn new(kind: ExprKind, pos: u32) -> Expr {
        Expr { kind, pos }
    }

    pub fn constant(v: Value) -> Expr {
        Expr::new(ExprKind::Const(v), 0)
    }

    /// Direct sub-expressions.
    pub fn child_refs(&self) -> Vec<&Expr> {
        self.children()
    }

    fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Const(_) | ExprKind::Name(_) | ExprKind::Slot(_) => vec![],
            ExprKind::Unary(_, a) => vec![a],
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => vec![a, b],
            ExprKind::Compare(a, rest) => {
                let mut v = vec![a.as_ref()];
                v.extend(rest.iter().map(|(_, e)| e));
                v
            }
            ExprKind::And(xs) | ExprKind::Or(xs) | ExprKind::Call(_, xs) | ExprKind::List(xs) => {
                xs.iter().collect()
            }
            ExprKind::Native(_, xs) => xs.iter().collect(),
            ExprKind::IfElse(b) => b.iter().collect(),
            ExprKind::Cached(_, e) => vec![e],
        }
    }

    /// Direct sub-expressions, mutably.
    pub fn children_mut_pub(&mut self) -> Vec<&mut Expr> {
        self.children_mut()
    }

    fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Const(_) | ExprKind::Name(_) | ExprKind::Slot(_) => vec![],
            ExprKind::Unary(_, a) => vec![a],
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => vec![a, b],
            ExprKind::Compare(a, rest) => {
                let mut v = vec![a.as_mut()];
                v.extend(rest.iter_mut().map(|(_, e)| e));
                v
            }
            ExprKind::And(xs) | ExprKind::Or(xs) | ExprKind::Call(_, xs) | ExprKind::List(xs) => {
                xs.iter_mut().collect()
            }
            ExprKind::Native(_, xs) => xs.iter_mut().collect(),
            ExprKind::IfElse(b) => b.iter_mut().collect(),
            ExprKind::Cached(_, e) => vec![e],
        }
    }

    /// Every name referenced, with its position, in source order.
    pub fn names(&self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        fn go(e: &Expr, out: &mut Vec<(String, u32)>) {
            if let ExprKind::Name(n) = &e.kind {
                out.push((n.clone(), e.pos));
            }
            for c in e.children() {
                go(c, out);
            }
        }
        go(self, &mut out);
        out
    }

    /// Every slot referenced (sorted, deduplicated).
    pub fn slots(&self) -> Vec<u32> {
        let mut out = Vec::new();
        fn go(e: &Expr, out: &mut Vec<u32>) {
            if let ExprKind::Slot(s) = &e.kind {
                out.push(*s);
            }
            for c in e.children() {
                go(c, out);
            }
        }
        go(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Replace names by constants or slots; an unresolvable name is returned with its position.
    pub fn resolve(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<Resolved>,
    ) -> Result<(), (String, u32)> {
        if let ExprKind::Name(n) = &self.kind {
            match lookup(n) {
                Some(Resolved::Const(v)) => self.kind = ExprKind::Const(v),
                Some(Resolved::Slot(s)) => self.kind = ExprKind::Slot(s),
                None => return Err((n.clone(), self.pos)),
            }
            return Ok(());
        }
        for c in self.children_mut() {
            c.resolve(lookup)?;
        }
        Ok(())
    }

    pub fn as_const(&self) -> Option<&Value> {
        match &self.kind {
            ExprKind::Const(v) => Some(v),
            _ => None,
        }
    }
}
