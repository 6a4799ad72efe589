//! The type of a generated expression, read off its structure (the generator builds only
//! well-typed trees; the IR's inference checks them again when they are lowered).

use super::program::Expr;
use surge_codegen::data::Buffer;
use surge_codegen::ir::{Elem, Type};

pub fn type_of(e: &Expr, inputs: &[Buffer]) -> Type {
    let t = |e: &Expr| type_of(e, inputs);
    match e {
        Expr::Input(k) => Type::scalar_seq(inputs[*k].elem()),
        Expr::Var(v) => v.ty.clone(),
        Expr::Lit(l) => Type::Scalar(l.elem()),
        Expr::Un(_, a) | Expr::Fma(a, _, _) => t(a),
        Expr::Bin(op, a, _) => {
            if op.is_comparison() || op.is_logical() {
                Type::Scalar(Elem::Bool)
            } else {
                t(a)
            }
        }
        Expr::Select(_, a, _) => t(a),
        Expr::Cast(to, _) => Type::Scalar(*to),
        Expr::Tuple(items) => Type::Tuple(items.iter().map(t).collect()),
        Expr::Proj(a, i) => match t(a) {
            Type::Tuple(ts) => ts[*i].clone(),
            other => panic!("internal: projection of {other}"),
        },
        Expr::Index(s, _) => item(t(s)),
        Expr::Length(_) => Type::Scalar(Elem::U64),
        Expr::Map(f, _) => Type::seq(t(&f.body)),
        Expr::Reduce(_, s, _) => item(t(s)),
        Expr::Scan(_, s, _)
        | Expr::ReduceByKey(_, s, _, _)
        | Expr::Gather(s, _)
        | Expr::Scatter(s, _, _)
        | Expr::Striding(s, _)
        | Expr::Reverse(s)
        | Expr::Transpose(s) => t(s),
        Expr::Range(a, _, _) => Type::seq(t(a)),
        Expr::Replicate(v, _) => Type::seq(t(v)),
        Expr::Zip(items) | Expr::Join(items) => {
            Type::seq(Type::Tuple(items.iter().map(|s| item(t(s))).collect()))
        }
        Expr::Split(s, _) | Expr::Nest(s, _) => Type::seq(t(s)),
    }
}

fn item(t: Type) -> Type {
    match t {
        Type::Seq(i) => *i,
        other => panic!("internal: {other} is not a sequence"),
    }
}
