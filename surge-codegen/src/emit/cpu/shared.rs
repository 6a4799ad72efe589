//! Values used more than once in one scalar expression or tuple are computed once: the nodes
//! [`crate::emit::sharing::shared_values`] picks are bound by `let`, innermost first, in a block
//! around the expression, and every use prints the name.
//!
//! A tuple whose items share values (CoMD's force term: three force components and an energy
//! from one separation and one table lookup) is built once in a block that binds them, as a
//! [`Code::Value`]: a consumer that reads it whole (a reduction's step over tuples, a packed
//! phase result) prints the block once. A consumer that projects fields prints the block once
//! per field; that is why this was reverted once, when a tuple result was split into one phase
//! per field (CoMD's direct program grew from 606 KB to 1.1 MB); results are now stored whole
//! (`packed.rs`). Measured on CoMD's redistributed force (32,000 atoms): 0.089 Mforces/s before
//! packed results, 0.196 with them, 0.208 with this (rayon 0.205 in the same run, load ~5);
//! the direct force 0.027 → 0.063 → 0.172, its source 726 KB → 123 KB.

use super::code::{Code, Env, Gen, R, bind, rust_ty};
use super::values::has_seq;
use super::values::{from_value, rust_type};
use crate::emit::sharing;
use crate::ir::{NodeId, ScalarExpr, Type};

impl<'a> Gen<'a> {
    /// `Op::Scalar` node `n` (expression `e`) with the values [`sharing::shared_values`] picks
    /// bound once by `let`, innermost first.
    pub(super) fn shared_scalar(&self, n: NodeId, e: &ScalarExpr, env: &Env<'a>) -> R<Code<'a>> {
        let shared = sharing::shared_values(self.c, e, &|m| env.contains_key(&m));
        if shared.is_empty() {
            let (s, t) = self.scalar_expr(n, e, env)?;
            return Ok(Code::Scalar(s, t));
        }
        let mut env = env.clone();
        let mut lets = String::new();
        for m in shared {
            let Code::Scalar(s, t) = self.eval(m, &env)? else {
                continue;
            };
            lets.push_str(&format!("let v{}: {} = {s}; ", m.0, rust_ty(t)));
            env = bind(&env, [(m, Code::Scalar(format!("v{}", m.0), t))]);
        }
        let (s, t) = self.scalar_expr(n, e, &env)?;
        Ok(Code::Scalar(format!("{{ {lets}{s} }}"), t))
    }

    /// `Op::Tuple` node `n`: its items' code, built once in a block binding the values they
    /// share (scalars, and tuples without sequences) when there are any.
    pub(super) fn shared_tuple(&self, n: NodeId, items: &[NodeId], env: &Env<'a>) -> R<Code<'a>> {
        let t = self.c.node(n).ty.clone();
        let shared = if has_seq(&t) {
            Vec::new()
        } else {
            sharing::shared_values_of(
                self.c,
                &ScalarExpr::Value(n),
                &|m| env.contains_key(&m),
                &|t: &Type| !has_seq(t),
            )
        };
        if shared.is_empty() {
            let items = items.iter().map(|i| self.eval(*i, env));
            return Ok(Code::Tuple(items.collect::<R<_>>()?));
        }
        let (lets, env) = self.bind_shared(&shared, env)?;
        let items = items.iter().map(|i| self.eval(*i, &env));
        let value = self.to_value(Code::Tuple(items.collect::<R<_>>()?), &t)?;
        Ok(Code::Value(format!("{{ {lets}{value} }}"), t))
    }

    /// `let` statements binding the values `shared` (dependencies first) to locals, and the
    /// environment in which they are read by name.
    pub(super) fn bind_shared(&self, shared: &[NodeId], env: &Env<'a>) -> R<(String, Env<'a>)> {
        let mut env = env.clone();
        let mut lets = String::new();
        for &m in shared {
            let t = self.c.node(m).ty.clone();
            let v = self.to_value(self.eval(m, &env)?, &t)?;
            let name = format!("v{}", m.0);
            lets.push_str(&format!("let {name}: {} = {v}; ", rust_type(&t)));
            env = bind(&env, [(m, from_value(name, &t))]);
        }
        Ok((lets, env))
    }
}
