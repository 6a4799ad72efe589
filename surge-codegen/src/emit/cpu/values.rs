//! Materialized values: an owned Rust value for any IR type (scalars, tuples as Rust tuples,
//! sequences as `Vec`s), the expression that builds one from element code, and the element code
//! that reads one back. This is how the CPU emitter computes what cannot be produced element by
//! element where it is read: a `scan`, `reduce_by_key` or `scatter` inside a lambda, a reduction
//! whose accumulator is a tuple or a row (argmin, Listing 5.5's vector sums). The value lives in
//! a local of the element's code: a per-element workspace.

use super::code::{Code, Env, Gen, R, SeqCode, bind, rust_ty};
use crate::ir::{Lambda, NodeId, Type};
use std::rc::Rc;

/// The Rust type of an owned value of IR type `t`.
pub(super) fn rust_type(t: &Type) -> String {
    match t {
        Type::Scalar(e) => rust_ty(*e).to_string(),
        Type::Tuple(items) => format!(
            "({})",
            items
                .iter()
                .map(|t| format!("{}, ", rust_type(t)))
                .collect::<String>()
        ),
        Type::Seq(item) => format!("Vec<{}>", rust_type(item)),
    }
}

/// Element code reading the owned value at the place expression `place` (a local, or a path
/// into one such as `m3[k].1`).
pub(super) fn from_value<'a>(place: String, t: &Type) -> Code<'a> {
    match t {
        Type::Scalar(e) => Code::Scalar(place, *e),
        Type::Tuple(ts) => Code::Tuple(
            ts.iter()
                .enumerate()
                .map(|(j, t)| from_value(format!("{place}.{j}"), t))
                .collect(),
        ),
        Type::Seq(item) => {
            let item = (**item).clone();
            let slice = item.as_scalar().map(|_| place.clone());
            Code::Seq(Rc::new(SeqCode {
                slice,
                len: format!("{place}.len()"),
                checks: vec![],
                elem: Box::new(move |k| Ok(from_value(format!("{place}[{k}]"), &item))),
            }))
        }
    }
}

impl<'a> Gen<'a> {
    /// An expression that evaluates to the owned value of `code`, of IR type `t`.
    pub(super) fn to_value(&self, code: Code<'a>, t: &Type) -> R<String> {
        match (code, t) {
            (Code::Scalar(s, _), _) | (Code::Value(s, _), _) => Ok(s),
            (Code::Tuple(items), Type::Tuple(ts)) => {
                let parts = items
                    .into_iter()
                    .zip(ts)
                    .map(|(c, t)| Ok(format!("{}, ", self.to_value(c, t)?)))
                    .collect::<R<String>>()?;
                Ok(format!("({parts})"))
            }
            (Code::Seq(s), Type::Seq(item)) => {
                let checks = s.checks.join("\n");
                if let (Some(slice), Some(_)) = (&s.slice, item.as_scalar()) {
                    return Ok(format!("{{\n{checks}\n{slice}[..{}].to_vec()\n}}", s.len));
                }
                let (v, k, n) = (self.name("v"), self.name("k"), self.name("n"));
                let elem = self.to_value(s.at(&k)?, item)?;
                Ok(format!(
                    "{{\n{checks}\nlet {n}: usize = {};\nlet mut {v}: {} = Vec::with_capacity({n});\nfor {k} in 0..{n} {{\n{v}.push({elem});\n}}\n{v}\n}}",
                    s.len,
                    rust_type(t)
                ))
            }
            _ => panic!("internal: element code does not match its type {t:?}"),
        }
    }

    /// `value` (an expression of IR type `t`) computed once into a fresh local, and element code
    /// reading it. The local is declared by the code's checks (for a sequence) or by a block.
    /// [`materialized`](Self::materialized) for node `n`'s value: when `n` depends on no lambda
    /// parameter it is computed once per run (a `static` cell per site, `memo` in the runtime)
    /// instead of once per kernel call: a phase's functions (outer length, row lengths, each
    /// chunk of rows) each run the phase's prelude. Measured on the k-means recalculation
    /// (Listing 5.5's `reduce_by_key` of 10^5 rows of 32): see `apps/kmeans`'s module docs.
    pub(super) fn materialized_at(&self, n: NodeId, value: String, t: &Type) -> Code<'a> {
        match self.memoized(n, &value, &rust_type(t)) {
            Some(m) => self.materialized(m, t),
            None => self.materialized(value, t),
        }
    }

    /// `value` (a block of Rust type `ty` computing closed node `n`) computed once per run: a
    /// `memo` call on a new static cell of the phase. None where memoization is off or `n` reads
    /// a lambda parameter.
    pub(super) fn memoized(&self, n: NodeId, value: &str, ty: &str) -> Option<String> {
        let (slot, prefix) = {
            let m = self.memo.borrow();
            (m.run_slot, m.prefix.clone())
        };
        let slot = slot.filter(|_| self.closed(n) && !prefix.is_empty())?;
        let cell = format!(
            "{}MEMO_{}",
            prefix.to_uppercase(),
            self.name("m").to_uppercase()
        );
        self.memo.borrow_mut().statics.push(format!(
            "static {cell}: std::sync::Mutex<Option<(u64, {ty})>> = std::sync::Mutex::new(None);"
        ));
        Some(format!(
            "memo(&{cell}, unsafe {{ run_id(bufs, {slot}) }}, || -> {ty} {{ {value} }})"
        ))
    }

    pub(super) fn materialized(&self, value: String, t: &Type) -> Code<'a> {
        let m = self.name("m");
        let decl = format!("let {m}: {} = {value};", rust_type(t));
        match from_value(m.clone(), t) {
            Code::Seq(s) => {
                let mut checks = vec![decl];
                checks.extend(s.checks.iter().cloned());
                Code::Seq(Rc::new(SeqCode {
                    slice: s.slice.clone(),
                    len: s.len.clone(),
                    checks,
                    elem: Box::new(move |k| s.at(k)),
                }))
            }
            Code::Scalar(_, e) => Code::Scalar(format!("{{ {decl} {m} }}"), e),
            // Read whole (`to_value`), the block is printed once; a projection reads one field.
            Code::Tuple(_) | Code::Value(..) => Code::Value(format!("{{ {decl} {m} }}"), t.clone()),
        }
    }

    /// Statements binding `code` (of IR type `t`) to a local when it is cheap to copy (scalars
    /// and tuples without sequences), so that a lambda body naming its parameter twice does not
    /// compute it twice; sequences stay lazy.
    pub(super) fn bound(&self, code: Code<'a>, t: &Type) -> R<(Option<String>, Code<'a>)> {
        if has_seq(t) {
            return Ok((None, code));
        }
        let x = self.name("x");
        let stmt = format!("let {x}: {} = {};", rust_type(t), self.to_value(code, t)?);
        Ok((Some(stmt), from_value(x, t)))
    }

    /// Applies lambda `f` to element codes (any types), giving its body's code.
    pub(super) fn apply(&self, f: &Lambda, args: Vec<Code<'a>>, env: &Env<'a>) -> R<Code<'a>> {
        let env = bind(env, f.params.iter().copied().zip(args));
        self.eval(f.body, &env)
    }
}

/// Whether a value of type `t` holds a sequence anywhere.
pub(super) fn has_seq(t: &Type) -> bool {
    match t {
        Type::Scalar(_) => false,
        Type::Seq(_) => true,
        Type::Tuple(ts) => ts.iter().any(has_seq),
    }
}
