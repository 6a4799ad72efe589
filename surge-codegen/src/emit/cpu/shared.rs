//! Values used more than once in one scalar expression or tuple are computed once: the nodes
//! [`crate::emit::sharing::shared_values`] picks are bound by `let`, innermost first, in a block
//! around the expression, and every use prints the name.
//!
//! Values shared by the items of a tuple are not bound across the items: element code has no
//! statement context for a tuple, and building the tuple once in a block whose fields each read
//! it (`({ ..; m }).0`, `.1`, …) printed the block once per field where consumers read fields
//! separately: CoMD's direct program grew from 606 KB to 1.1 MB of (unformatted) source.

use super::code::{Code, Env, Gen, R, bind, rust_ty};
use crate::emit::sharing;
use crate::ir::{NodeId, ScalarExpr};

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
}
