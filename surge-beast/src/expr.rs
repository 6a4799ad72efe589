//! Expression AST, name resolution, constant folding and the evaluator.
//!
//! The parser produces [`Expr`] trees with [`ExprKind::Name`] leaves; planning replaces every
//! name by a constant (settings and derived values that only depend on settings) or by a slot
//! index into the enumeration environment ([`ExprKind::Slot`]), then folds constants. The
//! evaluator walks the resolved tree with an `i64` fast path for arithmetic and comparisons.

use std::fmt;
use std::sync::Arc;

use super::value::{self, BinOp, CmpOp, PyRange, UnOp, Value};

/// A native (Rust closure) function used by builder-made derived values and constraints.
pub type NativeFn = Arc<dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync>;

/// Built-in functions available in expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Min,
    Max,
    Abs,
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

    /// Fold constant sub-expressions. A sub-expression whose evaluation fails is left alone so
    /// the error surfaces only if that branch is actually evaluated during enumeration.
    pub fn fold(&mut self) {
        for c in self.children_mut() {
            c.fold();
        }
        let pos = self.pos;
        let is_and = matches!(self.kind, ExprKind::And(_));
        let replacement: Option<Expr> = match &mut self.kind {
            ExprKind::Const(_)
            | ExprKind::Name(_)
            | ExprKind::Slot(_)
            | ExprKind::Native(..)
            | ExprKind::Cached(..) => None,
            ExprKind::IfElse(b) => match b[1].as_const().map(Value::truthy) {
                Some(t) => {
                    let none = || Expr::constant(Value::None);
                    let [a, _, z] = std::mem::replace(b.as_mut(), [none(), none(), none()]);
                    Some(if t { a } else { z })
                }
                None => None,
            },
            ExprKind::And(xs) | ExprKind::Or(xs) => {
                // Leading constants decide the result or drop out.
                let mut decided = None;
                while xs.len() > 1 {
                    let Some(c) = xs[0].as_const() else { break };
                    if c.truthy() != is_and {
                        decided = Some(c.clone());
                        break;
                    }
                    xs.remove(0);
                }
                if let Some(v) = decided {
                    Some(Expr::new(ExprKind::Const(v), pos))
                } else if xs.len() == 1 {
                    xs.pop()
                } else {
                    None
                }
            }
            _ => {
                if self.children().iter().all(|c| c.as_const().is_some()) {
                    self.eval(&[])
                        .ok()
                        .map(|v| Expr::new(ExprKind::Const(v), pos))
                } else {
                    None
                }
            }
        };
        if let Some(e) = replacement {
            *self = e;
        }
        self.simplify();
    }

    /// Exact algebraic simplifications of products with constants:
    /// `x * 1 -> x` when `x` is an arithmetic result (never a bool, so the type is unchanged),
    /// and `(x * c1) * c2 -> x * (c1 * c2)` for powers of two (exact for ints, floats, strings
    /// and lists, and overflowing exactly when the original does).
    fn simplify(&mut self) {
        let is_arith = |e: &Expr| {
            matches!(
                e.kind,
                ExprKind::Binary(
                    BinOp::Add
                        | BinOp::Sub
                        | BinOp::Mul
                        | BinOp::Div
                        | BinOp::FloorDiv
                        | BinOp::Mod
                        | BinOp::Pow,
                    _,
                    _
                )
            )
        };
        let one = |e: &Expr| matches!(e.kind, ExprKind::Const(Value::Int(1)));
        let pow2 = |e: &Expr| match e.kind {
            ExprKind::Const(Value::Int(c)) if c > 0 && (c & (c - 1)) == 0 => Some(c),
            _ => None,
        };
        loop {
            let ExprKind::Binary(BinOp::Mul, a, b) = &mut self.kind else {
                return;
            };
            if one(b) && is_arith(a) {
                let a = std::mem::replace(a.as_mut(), Expr::constant(Value::None));
                *self = a;
                continue;
            }
            if one(a) && is_arith(b) {
                let b = std::mem::replace(b.as_mut(), Expr::constant(Value::None));
                *self = b;
                continue;
            }
            let Some(c2) = pow2(b) else { return };
            let ExprKind::Binary(BinOp::Mul, _, inner_c) = &a.kind else {
                return;
            };
            let Some(c1) = pow2(inner_c) else { return };
            let Some(c) = c1.checked_mul(c2) else { return };
            let ExprKind::Binary(_, x, _) =
                std::mem::replace(&mut a.kind, ExprKind::Const(Value::None))
            else {
                return;
            };
            **a = *x;
            **b = Expr::new(ExprKind::Const(Value::Int(c)), b.pos);
        }
    }

    #[inline]
    fn err(&self, message: String) -> EvalError {
        EvalError {
            pos: self.pos,
            message,
        }
    }

    /// Evaluate in environment `env` (indexed by slot).
    pub fn eval(&self, env: &[Value]) -> Result<Value, EvalError> {
        match &self.kind {
            ExprKind::Const(v) => Ok(v.clone()),
            ExprKind::Slot(s) => Ok(env[*s as usize].clone()),
            ExprKind::Binary(op, a, b) => {
                let x = a.eval(env)?;
                let y = b.eval(env)?;
                if let (Value::Int(i), Value::Int(j)) = (&x, &y) {
                    let (i, j) = (*i, *j);
                    let fast = match op {
                        BinOp::Add => i.checked_add(j),
                        BinOp::Sub => i.checked_sub(j),
                        BinOp::Mul => i.checked_mul(j),
                        BinOp::FloorDiv if j > 0 && i >= 0 => Some(i / j),
                        BinOp::Mod if j > 0 && i >= 0 => Some(i % j),
                        _ => None,
                    };
                    if let Some(r) = fast {
                        return Ok(Value::Int(r));
                    }
                }
                value::binop(*op, &x, &y).map_err(|m| self.err(m))
            }
            ExprKind::Compare(..) | ExprKind::Unary(UnOp::Not, _) => {
                Ok(Value::Bool(self.truthy(env)?))
            }
            ExprKind::Unary(op, a) => {
                let x = a.eval(env)?;
                value::unop(*op, &x).map_err(|m| self.err(m))
            }
            ExprKind::And(xs) => {
                let mut last = Value::Bool(true);
                for x in xs {
                    last = x.eval(env)?;
                    if !last.truthy() {
                        return Ok(last);
                    }
                }
                Ok(last)
            }
            ExprKind::Or(xs) => {
                let mut last = Value::Bool(false);
                for x in xs {
                    last = x.eval(env)?;
                    if last.truthy() {
                        return Ok(last);
                    }
                }
                Ok(last)
            }
            ExprKind::IfElse(b) => {
                if b[1].truthy(env)? {
                    b[0].eval(env)
                } else {
                    b[2].eval(env)
                }
            }
            ExprKind::Call(bi, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(env))
                    .collect::<Result<Vec<_>, _>>()?;
                call_builtin(*bi, &vals).map_err(|m| self.err(m))
            }
            ExprKind::List(xs) => Ok(Value::list(
                xs.iter()
                    .map(|x| x.eval(env))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            ExprKind::Index(a, i) => {
                let c = a.eval(env)?;
                let i = i.eval(env)?;
                index(&c, &i).map_err(|m| self.err(m))
            }
            ExprKind::Native(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(env))
                    .collect::<Result<Vec<_>, _>>()?;
                f(&vals).map_err(|m| self.err(m))
            }
            ExprKind::Cached(slot, e) => match &env[*slot as usize] {
                Value::None => e.eval(env),
                v => Ok(v.clone()),
            },
            ExprKind::Name(n) => Err(self.err(format!("NameError: name '{n}' is not resolved"))),
        }
    }

    /// Integer fast path: the value of an expression made of ints and int operations, or
    /// None when anything else is involved or an error would occur (the caller then runs the
    /// general evaluator, which produces the same value or the exact error).
    #[inline]
    pub fn int_fast(&self, env: &[Value]) -> Option<i64> {
        match &self.kind {
            ExprKind::Slot(s) => match &env[*s as usize] {
                Value::Int(i) => Some(*i),
                _ => None,
            },
            ExprKind::Const(Value::Int(i)) => Some(*i),
            ExprKind::Cached(slot, e) => match &env[*slot as usize] {
                Value::Int(i) => Some(*i),
                Value::None => e.int_fast(env),
                _ => None,
            },
            ExprKind::Binary(op, a, b) => {
                let x = a.int_leaf(env)?;
                let y = b.int_leaf(env)?;
                match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::FloorDiv => value::int_floordiv(x, y).ok(),
                    BinOp::Mod => value::int_mod(x, y).ok(),
                    BinOp::BitAnd => Some(x & y),
                    BinOp::BitOr => Some(x | y),
                    BinOp::BitXor => Some(x ^ y),
                    _ => None,
                }
            }
            ExprKind::Unary(UnOp::Neg, a) => a.int_fast(env)?.checked_neg(),
            ExprKind::Unary(UnOp::Invert, a) => Some(!a.int_fast(env)?),
            ExprKind::Call(Builtin::Min, args) if args.len() >= 2 => {
                let mut m = args[0].int_fast(env)?;
                for a in &args[1..] {
                    m = m.min(a.int_fast(env)?);
                }
                Some(m)
            }
            ExprKind::Call(Builtin::Max, args) if args.len() >= 2 => {
                let mut m = args[0].int_fast(env)?;
                for a in &args[1..] {
                    m = m.max(a.int_fast(env)?);
                }
                Some(m)
            }
            ExprKind::Call(Builtin::Abs, args) if args.len() == 1 => {
                args[0].int_fast(env)?.checked_abs()
            }
            ExprKind::IfElse(b) => {
                if b[1].truthy_fast(env)? {
                    b[0].int_fast(env)
                } else {
                    b[2].int_fast(env)
                }
            }
            _ => None,
        }
    }

    /// [`Expr::int_fast`] with slots and constants handled without a call.
    #[inline(always)]
    fn int_leaf(&self, env: &[Value]) -> Option<i64> {
        match &self.kind {
            ExprKind::Slot(s) => match &env[*s as usize] {
                Value::Int(i) => Some(*i),
                _ => None,
            },
            ExprKind::Const(Value::Int(i)) => Some(*i),
            _ => self.int_fast(env),
        }
    }

    /// Truthiness fast path over ints (None: use [`Expr::truthy`]).
    #[inline]
    pub fn truthy_fast(&self, env: &[Value]) -> Option<bool> {
        match &self.kind {
            ExprKind::Compare(first, rest) => {
                let mut left = first.int_leaf(env)?;
                for (op, e) in rest {
                    let right = e.int_leaf(env)?;
                    let ok = match op {
                        CmpOp::Lt => left < right,
                        CmpOp::Le => left <= right,
                        CmpOp::Gt => left > right,
                        CmpOp::Ge => left >= right,
                        CmpOp::Eq => left == right,
                        CmpOp::Ne => left != right,
                        _ => return None,
                    };
                    if !ok {
                        return Some(false);
                    }
                    left = right;
                }
                Some(true)
            }
            ExprKind::Unary(UnOp::Not, a) => Some(!a.truthy_fast(env)?),
            ExprKind::Cached(slot, e) => match &env[*slot as usize] {
                Value::Bool(b) => Some(*b),
                Value::Int(i) => Some(*i != 0),
                Value::None => e.truthy_fast(env),
                _ => None,
            },
            ExprKind::And(xs) => {
                for x in xs {
                    if !x.truthy_fast(env)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            ExprKind::Or(xs) => {
                for x in xs {
                    if x.truthy_fast(env)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
            ExprKind::Const(v) => Some(v.truthy()),
            ExprKind::IfElse(b) => {
                if b[1].truthy_fast(env)? {
                    b[0].truthy_fast(env)
                } else {
                    b[2].truthy_fast(env)
                }
            }
            _ => self.int_fast(env).map(|i| i != 0),
        }
    }

    /// Evaluate (int fast path first).
    #[inline]
    pub fn eval_fast(&self, env: &[Value]) -> Result<Value, EvalError> {
        if let ExprKind::Compare(..) | ExprKind::Unary(UnOp::Not, _) = self.kind {
            if let Some(b) = self.truthy_fast(env) {
                return Ok(Value::Bool(b));
            }
        } else if let Some(i) = self.int_fast(env) {
            return Ok(Value::Int(i));
        }
        self.eval(env)
    }

    /// Truthiness (int fast path first).
    #[inline]
    pub fn truthy_any(&self, env: &[Value]) -> Result<bool, EvalError> {
        match self.truthy_fast(env) {
            Some(b) => Ok(b),
            None => self.truthy(env),
        }
    }

    /// Evaluate and take Python truthiness, without materialising booleans.
    pub fn truthy(&self, env: &[Value]) -> Result<bool, EvalError> {
        match &self.kind {
            ExprKind::Compare(first, rest) => {
                let mut left = first.eval(env)?;
                for (op, e) in rest {
                    let right = e.eval(env)?;
                    let ok = value::compare(*op, &left, &right).map_err(|m| EvalError {
                        pos: e.pos,
                        message: m,
                    })?;
                    if !ok {
                        return Ok(false);
                    }
                    left = right;
                }
                Ok(true)
            }
            ExprKind::Unary(UnOp::Not, a) => Ok(!a.truthy(env)?),
            ExprKind::And(xs) => {
                for x in xs {
                    if !x.truthy(env)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            ExprKind::Or(xs) => {
                for x in xs {
                    if x.truthy(env)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            ExprKind::IfElse(b) => {
                if b[1].truthy(env)? {
                    b[0].truthy(env)
                } else {
                    b[2].truthy(env)
                }
            }
            _ => Ok(self.eval(env)?.truthy()),
        }
    }
}

fn index(c: &Value, i: &Value) -> Result<Value, String> {
    let Some(k) = i.as_i64() else {
        return Err(format!(
            "TypeError: indices must be integers, not {}",
            i.type_name()
        ));
    };
    let len = match c {
        Value::List(l) => l.len() as i64,
        Value::Range(r) => r.len() as i64,
        Value::Str(s) => s.chars().count() as i64,
        other => {
            return Err(format!(
                "TypeError: '{}' object is not subscriptable",
                other.type_name()
            ));
        }
    };
    let j = if k < 0 { k + len } else { k };
    if j < 0 || j >= len {
        return Err(format!("IndexError: {} index out of range", c.type_name()));
    }
    Ok(match c {
        Value::List(l) => l[j as usize].clone(),
        Value::Range(r) => Value::Int(r.get(j as u64)),
        Value::Str(s) => Value::str(
            &s.chars()
                .nth(j as usize)
                .map(|ch| ch.to_string())
                .unwrap_or_default(),
        ),
        _ => unreachable!(),
    })
}

fn arity(name: &str, args: &[Value], lo: usize, hi: usize) -> Result<(), String> {
    if args.len() < lo || args.len() > hi {
        Err(format!(
            "TypeError: {name}() takes {lo} to {hi} arguments ({} given)",
            args.len()
        ))
    } else {
        Ok(())
    }
}

/// Build a Python `range` from evaluated arguments.
pub fn make_range(args: &[Value]) -> Result<PyRange, String> {
    arity("range", args, 1, 3)?;
    let mut ints = [0i64; 3];
    for (i, a) in args.iter().enumerate() {
        ints[i] = a.as_i64().ok_or_else(|| {
            format!(
                "TypeError: '{}' object cannot be interpreted as an integer",
                a.type_name()
            )
        })?;
    }
    let (start, stop, step) = match args.len() {
        1 => (0, ints[0], 1),
        2 => (ints[0], ints[1], 1),
        _ => (ints[0], ints[1], ints[2]),
    };
    if step == 0 {
        return Err("ValueError: range() arg 3 must not be zero".into());
    }
    Ok(PyRange { start, stop, step })
}

fn extremum(name: &str, args: &[Value], want_max: bool) -> Result<Value, String> {
    let items: Vec<Value> = if args.len() == 1 {
        args[0].iter_values()?
    } else {
        args.to_vec()
    };
    let mut it = items.into_iter();
    let Some(mut best) = it.next() else {
        return Err(format!("ValueError: {name}() arg is an empty sequence"));
    };
    for v in it {
        let better = if want_max {
            value::less_than(&best, &v)?
        } else {
            value::less_than(&v, &best)?
        };
        if better {
            best = v;
        }
    }
    Ok(best)
}

/// Python set algebra on iterables, keeping first-occurrence order of the left operand.
fn set_op(bi: Builtin, args: &[Value]) -> Result<Value, String> {
    if args.is_empty() {
        return Err(format!(
            "TypeError: {}() needs at least one argument",
            bi.name()
        ));
    }
    let mut acc: Vec<Value> = Vec::new();
    for v in args[0].iter_values()? {
        if !acc.iter().any(|a| value::py_eq(a, &v)) {
            acc.push(v);
        }
    }
    for other in &args[1..] {
        let other = other.iter_values()?;
        match bi {
            Builtin::Union => {
                for v in other {
                    if !acc.iter().any(|a| value::py_eq(a, &v)) {
                        acc.push(v);
                    }
                }
            }
            Builtin::Intersection => acc.retain(|a| other.iter().any(|o| value::py_eq(a, o))),
            _ => acc.retain(|a| !other.iter().any(|o| value::py_eq(a, o))),
        }
    }
    Ok(Value::list(acc))
}

/// Apply a builtin function to evaluated arguments.
pub fn call_builtin(bi: Builtin, args: &[Value]) -> Result<Value, String> {
    match bi {
        Builtin::Range => make_range(args).map(Value::Range),
        Builtin::Min => extremum("min", args, false),
        Builtin::Max => extremum("max", args, true),
        Builtin::Abs => {
            arity("abs", args, 1, 1)?;
            match &args[0] {
                Value::Float(f) => Ok(Value::Float(f.abs())),
                v => match v.as_i64() {
                    Some(i) => i.checked_abs().map(Value::Int).ok_or_else(|| {
                        "OverflowError: integer result does not fit in 64 bits".into()
                    }),
                    None => Err(format!(
                        "TypeError: bad operand type for abs(): '{}'",
                        v.type_name()
                    )),
                },
            }
        }
        Builtin::Len => {
            arity("len", args, 1, 1)?;
            match &args[0] {
                Value::List(l) => Ok(Value::Int(l.len() as i64)),
                Value::Range(r) => Ok(Value::Int(r.len() as i64)),
                Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
                v => Err(format!(
                    "TypeError: object of type '{}' has no len()",
                    v.type_name()
                )),
            }
        }
        Builtin::Int => {
            arity("int", args, 1, 1)?;
            match &args[0] {
                Value::Float(f) => {
                    if !f.is_finite() || f.abs() >= 9.2e18 {
                        Err("OverflowError: cannot convert float to integer".into())
                    } else {
                        Ok(Value::Int(f.trunc() as i64))
                    }
                }
                Value::Str(s) => s
                    .trim()
                    .replace('_', "")
                    .parse::<i64>()
                    .map(Value::Int)
                    .map_err(|_| {
                        format!("ValueError: invalid literal for int() with base 10: '{s}'")
                    }),
                v => v.as_i64().map(Value::Int).ok_or_else(|| {
                    format!(
                        "TypeError: int() argument must be a number, not '{}'",
                        v.type_name()
                    )
                }),
            }
        }
        Builtin::Float => {
            arity("float", args, 1, 1)?;
            match &args[0] {
                Value::Str(s) => {
                    s.trim().parse::<f64>().map(Value::Float).map_err(|_| {
                        format!("ValueError: could not convert string to float: '{s}'")
                    })
                }
                v => v.as_f64().map(Value::Float).ok_or_else(|| {
                    format!(
                        "TypeError: float() argument must be a number, not '{}'",
                        v.type_name()
                    )
                }),
            }
        }
        Builtin::Bool => {
            arity("bool", args, 1, 1)?;
            Ok(Value::Bool(args[0].truthy()))
        }
        Builtin::Str => {
            arity("str", args, 1, 1)?;
            Ok(match &args[0] {
                Value::Str(s) => Value::Str(s.clone()),
                v => Value::str(&v.to_string()),
            })
        }
        Builtin::Sum => {
            arity("sum", args, 1, 2)?;
            let mut acc = args.get(1).cloned().unwrap_or(Value::Int(0));
            for v in args[0].iter_values()? {
                acc = value::binop(BinOp::Add, &acc, &v)?;
            }
            Ok(acc)
        }
        Builtin::Any => {
            arity("any", args, 1, 1)?;
            Ok(Value::Bool(
                args[0].iter_values()?.iter().any(Value::truthy),
            ))
        }
        Builtin::All => {
            arity("all", args, 1, 1)?;
            Ok(Value::Bool(
                args[0].iter_values()?.iter().all(Value::truthy),
            ))
        }
        Builtin::Union | Builtin::Intersection | Builtin::Difference => set_op(bi, args),
    }
}
