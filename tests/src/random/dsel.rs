//! Prints a [`Program`] as `surge::prelude` source a developer can paste into a test: one
//! `Seq::input` per buffer, then the expression with every closure parameter typed.
//!
//! Every scalar is printed as an owned `Scalar` (variables `.clone()`d, literals `lit(..)`), so
//! each operator and method the DSEL overloads applies to `Scalar op Scalar`; every closure
//! returns `surge::Result<_>` so `?` works inside it.

use super::program::{Expr, Lam, Program, Var};
use super::types::type_of;
use surge_codegen::data::Buffer;
use surge_codegen::ir::{BinaryOp as B, Elem, Literal, Type, UnaryOp as U};

/// The program as a Rust function `program() -> surge::Result<Computation>`.
pub fn print(p: &Program) -> String {
    let mut out =
        String::from("use surge::prelude::*;\n\nfn program() -> surge::Result<Computation> {\n");
    for (k, b) in p.inputs.iter().enumerate() {
        out.push_str(&format!(
            "    let in{k} = Seq::input(\"in{k}\", {})?;\n",
            buffer(b)
        ));
    }
    let pr = Printer { inputs: &p.inputs };
    out.push_str(&format!("    let y = {};\n", pr.expr(&p.root)));
    out.push_str("    Computation::new(&y)\n}\n");
    out
}

fn buffer(b: &Buffer) -> String {
    fn list<T: std::fmt::Debug>(v: &[T], suffix: &str) -> String {
        let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        if items.is_empty() {
            format!("Vec::<{suffix}>::new()")
        } else {
            format!("vec![{}{suffix}]", items.join(", "))
        }
    }
    match b {
        Buffer::F32(v) => list(v, "f32"),
        Buffer::F64(v) => list(v, "f64"),
        Buffer::I32(v) => list(v, "i32"),
        Buffer::I64(v) => list(v, "i64"),
        Buffer::U32(v) => list(v, "u32"),
        Buffer::U64(v) => list(v, "u64"),
    }
}

/// The Rust type of a sequence element (`f64`, `Seq<f64>`, `(f64, u32)`).
fn item_ty(t: &Type) -> String {
    match t {
        Type::Scalar(e) => e.name().to_string(),
        Type::Seq(i) => format!("Seq<{}>", item_ty(i)),
        Type::Tuple(ts) => format!(
            "({})",
            ts.iter().map(item_ty).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The Rust type of a symbolic value (`Scalar<f64>`, `Seq<f64>`, `(Scalar<f64>, Scalar<u32>)`).
fn sym_ty(t: &Type) -> String {
    match t {
        Type::Scalar(e) => format!("Scalar<{e}>"),
        Type::Seq(i) => format!("Seq<{}>", item_ty(i)),
        Type::Tuple(ts) => format!("({})", ts.iter().map(sym_ty).collect::<Vec<_>>().join(", ")),
    }
}

fn literal(l: &Literal) -> String {
    match *l {
        Literal::F32(b) => format!("lit({:?}f32)", f32::from_bits(b)),
        Literal::F64(b) => format!("lit({:?}f64)", f64::from_bits(b)),
        Literal::I32(v) => format!("lit({v}i32)"),
        Literal::I64(v) => format!("lit({v}i64)"),
        Literal::U32(v) => format!("lit({v}u32)"),
        Literal::U64(v) => format!("lit({v}u64)"),
        Literal::Bool(v) => format!("{v}"),
    }
}

fn var(v: &Var) -> String {
    format!("v{}", v.id)
}

/// The index of the parenthesis closing the one at `open`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A closure body returning `surge::Result`: `map(..)` for `Ok(map(..)?)`, `Ok(a + b)` for
/// `Ok((a + b))` (what clippy asks of pasted code).
fn ok(body: &str) -> String {
    if let Some(call) = body.strip_suffix('?')
        && let Some(open) = call.find('(')
        && call[..open]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && closing(call, open) == Some(call.len() - 1)
    {
        return call.to_string();
    }
    if body.starts_with('(') && !body.ends_with(",)") && closing(body, 0) == Some(body.len() - 1) {
        return format!("Ok({})", &body[1..body.len() - 1]);
    }
    format!("Ok({body})")
}

struct Printer<'a> {
    inputs: &'a [Buffer],
}

impl Printer<'_> {
    /// A reference to a sequence: `&in0`, `&v3`, `&map(..)?`.
    fn r(&self, e: &Expr) -> String {
        match e {
            Expr::Input(k) => format!("&in{k}"),
            Expr::Var(v) => format!("&{}", var(v)),
            e => format!("&{}", self.expr(e)),
        }
    }

    /// A closure: `|v1: Scalar<f64>| -> surge::Result<_> { Ok(..) }`, the parameters of a
    /// multi-input `map` as one tuple.
    fn closure(&self, l: &Lam, tupled: bool) -> String {
        let names: Vec<String> = l.params.iter().map(var).collect();
        let tys: Vec<String> = l.params.iter().map(|p| sym_ty(&p.ty)).collect();
        let params = if tupled && l.params.len() > 1 {
            format!("({}): ({})", names.join(", "), tys.join(", "))
        } else {
            names
                .iter()
                .zip(&tys)
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "|{params}| -> surge::Result<_> {{ {} }}",
            ok(&self.expr(&l.body))
        )
    }

    /// A combiner: a built-in (`add`, `mul`, `min`, `max`) when it is one, else a closure.
    fn combiner(&self, l: &Lam) -> String {
        if let Expr::Bin(op, a, b) = &*l.body
            && let (Expr::Var(a), Expr::Var(b)) = (&**a, &**b)
            && l.params.len() == 2
            && *a == l.params[0]
            && *b == l.params[1]
            && matches!(a.ty, Type::Scalar(e) if e != Elem::Bool)
        {
            let name = match op {
                B::Add => Some("add"),
                B::Mul => Some("mul"),
                B::Min => Some("min"),
                B::Max => Some("max"),
                _ => None,
            };
            if let Some(n) = name {
                return n.to_string();
            }
        }
        self.closure(l, false)
    }

    fn expr(&self, e: &Expr) -> String {
        let x = |e: &Expr| self.expr(e);
        match e {
            Expr::Input(k) => format!("in{k}.clone()"),
            Expr::Var(v) => format!("{}.clone()", var(v)),
            Expr::Lit(l) => literal(l),
            Expr::Un(op, a) => match op {
                U::Neg => format!("(-{})", x(a)),
                U::Not => format!("(!{})", x(a)),
                U::Abs => format!("{}.abs()", x(a)),
                U::Sqrt => format!("{}.sqrt()", x(a)),
                U::Exp => format!("{}.exp()", x(a)),
                U::Log => format!("{}.ln()", x(a)),
            },
            Expr::Bin(op, a, b) => {
                let (a, b) = (x(a), x(b));
                match op {
                    B::Add | B::Sub | B::Mul | B::Div | B::Rem => {
                        format!("({a} {} {b})", op.symbol())
                    }
                    B::Min => format!("{a}.min({b})"),
                    B::Max => format!("{a}.max({b})"),
                    B::Lt => format!("{a}.lt({b})"),
                    B::Le => format!("{a}.le({b})"),
                    B::Gt => format!("{a}.gt({b})"),
                    B::Ge => format!("{a}.ge({b})"),
                    B::Eq => format!("{a}.equal({b})"),
                    B::Ne => format!("{a}.not_equal({b})"),
                    B::And => format!("{a}.and(&{b})"),
                    B::Or => format!("{a}.or(&{b})"),
                }
            }
            Expr::Fma(a, b, c) => format!("{}.fma({}, {})", x(a), x(b), x(c)),
            Expr::Select(c, a, b) => format!("{}.select({}, {})", x(c), x(a), x(b)),
            Expr::Cast(to, a) => format!("{}.cast::<{to}>()", x(a)),
            Expr::Tuple(items) => {
                let items: Vec<String> = items.iter().map(x).collect();
                format!("({},)", items.join(", "))
            }
            Expr::Proj(t, i) => match &**t {
                Expr::Var(v) => format!("{}.{i}.clone()", var(v)),
                t => format!("{}.{i}", x(t)),
            },
            Expr::Index(s, i) => format!("at({}, {})?", self.r(s), x(i)),
            Expr::Length(s) => format!("len({})", self.r(s)),
            Expr::Map(f, inputs) => {
                let ins = if inputs.len() == 1 {
                    self.r(&inputs[0])
                } else {
                    let rs: Vec<String> = inputs.iter().map(|i| self.r(i)).collect();
                    format!("({})", rs.join(", "))
                };
                format!("map({}, {ins})?", self.closure(f, true))
            }
            Expr::Reduce(op, s, p) | Expr::Scan(op, s, p) => {
                let name = if matches!(e, Expr::Reduce(..)) {
                    "reduce"
                } else {
                    "scan"
                };
                match p {
                    None => format!("{name}({}, {})?", self.combiner(op), self.r(s)),
                    Some(p) => format!(
                        "{name}_prefix({}, {}, {})?",
                        self.combiner(op),
                        self.r(s),
                        x(p)
                    ),
                }
            }
            Expr::ReduceByKey(op, s, k, p) => format!(
                "reduce_by_key({}, {}, {}, {})?",
                self.combiner(op),
                self.r(s),
                self.r(k),
                x(p)
            ),
            Expr::Gather(s, i) => format!("gather({}, {})?", self.r(s), self.r(i)),
            Expr::Scatter(s, i, d) => {
                format!("scatter({}, {}, {})?", self.r(s), self.r(i), self.r(d))
            }
            Expr::Range(a, b, None) => format!("range({}, {})?", x(a), x(b)),
            Expr::Range(a, b, Some(s)) => {
                format!("range_step({}, {}, {})?", x(a), x(b), x(s))
            }
            Expr::Replicate(v, n) => {
                let t = type_of(v, self.inputs);
                format!("replicate::<{}>({}, {})?", item_ty(&t), x(v), x(n))
            }
            Expr::Zip(items) | Expr::Join(items) => {
                let name = match (e, items.len()) {
                    (Expr::Zip(_), 3) => "zip3",
                    (Expr::Zip(_), _) => "zip",
                    (_, 3) => "join3",
                    _ => "join",
                };
                let rs: Vec<String> = items.iter().map(|i| self.r(i)).collect();
                format!("{name}({})?", rs.join(", "))
            }
            Expr::Split(s, t) => format!("split({}, {})?", self.r(s), x(t)),
            Expr::Striding(s, t) => format!("striding({}, {})?", self.r(s), x(t)),
            Expr::Reverse(s) => format!("reverse({})?", self.r(s)),
            Expr::Nest(s, o) => format!("nest({}, {})?", self.r(s), self.r(o)),
            Expr::Transpose(s) => format!("transpose({})?", self.r(s)),
        }
    }
}
