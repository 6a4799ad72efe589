//! Sequential element code for the operators that are not element-wise: a `reduce` of any
//! element type, and the materialized `scan`, `reduce_by_key` and `scatter` (their results are
//! built in a per-element local, see `values.rs`), plus the lazy `transpose`. Each follows the
//! interpreter's semantics (`ir/ops/fold.rs`, `indexing.rs`, `reshape.rs`) step for step, checks
//! included.

use super::code::{Code, Env, Gen, R, SeqCode, quote, with_checks};
use super::jam::{LANES, LaneSteps};
use super::values::{from_value, rust_type};
use crate::ir::{Lambda, NodeId, Type};
use std::rc::Rc;

/// The item type of sequence node `n`'s type.
fn item_type(g: &Gen<'_>, n: NodeId) -> Type {
    g.c.node(n)
        .ty
        .item()
        .unwrap_or_else(|| panic!("internal: validated node {n} is not a sequence"))
        .clone()
}

impl<'a> Gen<'a> {
    /// `acc = op(acc, x)` as a statement, for accumulators of any type.
    fn step(&self, op: &Lambda, acc: &str, x: Code<'a>, t: &Type, env: &Env<'a>) -> R<String> {
        if let Some(s) = self.step_in_place(op, acc, &x, t, env)? {
            return Ok(s);
        }
        let (stmt, x) = self.bound(x, t)?;
        let next = self.apply(op, vec![from_value(acc.to_string(), t), x], env)?;
        let next = self.to_value(next, t)?;
        Ok(format!(
            "{{ {} {acc} = {next}; }}",
            stmt.unwrap_or_default()
        ))
    }

    /// `acc = op(acc, x)` for an element-wise combiner of two rows of scalars, `op(a, b) =
    /// map(f, (a, b))` (Listing 5.5's vector sum), as a loop `acc[j] = f(acc[j], x[j])` that
    /// allocates nothing; None for any other combiner. Measured on the k-means recalculation
    /// (10^5 points of 32 values): 66 ms with a new row per element, see the k-means README.
    pub(super) fn step_in_place(
        &self,
        op: &Lambda,
        acc: &str,
        x: &Code<'a>,
        t: &Type,
        env: &Env<'a>,
    ) -> R<Option<String>> {
        let (Type::Seq(item), Code::Seq(xs)) = (t, x) else {
            return Ok(None);
        };
        let Type::Scalar(elem) = **item else {
            return Ok(None);
        };
        let map = op.body;
        let crate::ir::Op::Map { f, inputs } = &self.c.node(map).op else {
            return Ok(None);
        };
        if op.params.len() != 2 || inputs.len() != 2 || f.params.len() != 2 {
            return Ok(None);
        }
        // Which map input is the accumulator; the other must be the element.
        let acc_first = match (inputs[0], inputs[1]) {
            (a, b) if a == op.params[0] && b == op.params[1] => true,
            (a, b) if a == op.params[1] && b == op.params[0] => false,
            _ => return Ok(None),
        };
        // `f` may use its own parameters and outer ones, not the combiner's rows.
        let free = &self.c.free_params()[f.body.0 as usize];
        if op.params.iter().any(|p| free.contains(p)) {
            return Ok(None);
        }
        let [j, a, b, len] = ["j", "a", "b", "n"].map(|n| self.name(n));
        let xj = match xs.at(&j)? {
            Code::Scalar(s, _) => s,
            _ => return Ok(None),
        };
        let (first, second) = if acc_first {
            (format!("{acc}.len()"), len.clone())
        } else {
            (len.clone(), format!("{acc}.len()"))
        };
        let (pa, pb) = if acc_first {
            (f.params[0], f.params[1])
        } else {
            (f.params[1], f.params[0])
        };
        let env = super::code::bind(
            env,
            [
                (pa, Code::Scalar(a.clone(), elem)),
                (pb, Code::Scalar(b.clone(), elem)),
            ],
        );
        let (body, _) = self.scalar(f.body, &env)?;
        let ty = super::values::rust_type(&Type::Scalar(elem));
        Ok(Some(format!(
            "{{\n{}\nlet {len}: usize = {};\nchk_equal_len({first}, {second}, 1, {}, {});\nfor {j} in 0..{len} {{\nlet {a}: {ty} = {acc}[{j}];\nlet {b}: {ty} = {xj};\n{acc}[{j}] = {body};\n}}\n}}",
            xs.checks.join("\n"),
            xs.len,
            quote(self.op_name(map)),
            map.0
        )))
    }

    /// A sequential `reduce` whose element is a tuple or a sequence.
    pub(super) fn reduce_value(
        &self,
        n: NodeId,
        op: &Lambda,
        input: NodeId,
        prefix: Option<NodeId>,
        env: &Env<'a>,
    ) -> R<Code<'a>> {
        let s = self.seq(input, env)?;
        let t = item_type(self, input);
        let (len, k, acc) = (self.name("n"), self.name("k"), self.name("acc"));
        let mut out = format!(
            "{{\n{}\nlet {len}: usize = {};\n",
            s.checks.join("\n"),
            s.len
        );
        let (init, start) = match prefix {
            Some(p) => (self.to_value(self.eval(p, env)?, &t)?, "0"),
            None => {
                out.push_str(&format!(
                    "if {len} == 0 {{ {}; }}\n",
                    self.fail(n, "\"reduction of an empty sequence without a prefix\"")
                ));
                (self.to_value(s.at("0")?, &t)?, "1")
            }
        };
        let one = self.step(op, &acc, s.at(&k)?, &t, env)?;
        // Four elements jammed, then two, then one (`jam.rs`); each jam's names bound before.
        let jam = |w| self.jammed_steps(input, &k, w, &|x| self.step(op, &acc, x, &t, env), env);
        let ty = rust_type(&t);
        // Before them, eight elements at a time from a transposed copy where the rows allow it
        // (`jam/lanes.rs`).
        let lanes = |four: &str| -> R<String> {
            let step = |x| self.step(op, &acc, x, &t, env);
            Ok(
                match self.lane_steps(input, (&k, start, &len), &step, env)? {
                    Some(LaneSteps {
                        once,
                        group,
                        cond,
                        tail,
                    }) => format!(
                        "{once}\nwhile {k} + {LANES} <= {len} && {cond} {{\n{group}\n{k} += {LANES};\n}}\n{tail}\nwhile {k} + 3 < {len} {{\n{four}\n{k} += 4;\n}}"
                    ),
                    None => format!("while {k} + 3 < {len} {{\n{four}\n{k} += 4;\n}}"),
                },
            )
        };
        out.push_str(&match (jam(4)?, jam(2)?) {
            (Some((once4, four)), Some((once2, two))) => format!(
                "let mut {acc}: {ty} = {init};\n{once4}\n{once2}\nlet mut {k} = {start};\n{}\nwhile {k} + 1 < {len} {{\n{two}\n{k} += 2;\n}}\nwhile {k} < {len} {{\n{one}\n{k} += 1;\n}}\n{acc}\n}}",
                lanes(&four)?
            ),
            _ => format!(
                "let mut {acc}: {ty} = {init};\nfor {k} in {start}..{len} {{\n{one}\n}}\n{acc}\n}}"
            ),
        });
        Ok(self.materialized_at(n, out, &t))
    }

    /// A `scan` inside element code: the whole result row built in a local.
    pub(super) fn scan_value(
        &self,
        op: &Lambda,
        input: NodeId,
        prefix: Option<NodeId>,
        env: &Env<'a>,
    ) -> R<Code<'a>> {
        let s = self.seq(input, env)?;
        let t = item_type(self, input);
        let ty = rust_type(&t);
        let (len, k, acc, out) = (
            self.name("n"),
            self.name("k"),
            self.name("acc"),
            self.name("out"),
        );
        let step = self.step(op, &acc, s.at(&k)?, &t, env)?;
        let body = match prefix {
            Some(p) => format!(
                "let mut {acc}: {ty} = {};\nfor {k} in 0..{len} {{\n{out}.push({acc}.clone());\nif {k} + 1 < {len} {step}\n}}",
                self.to_value(self.eval(p, env)?, &t)?
            ),
            None => format!(
                "if {len} > 0 {{\nlet mut {acc}: {ty} = {};\n{out}.push({acc}.clone());\nfor {k} in 1..{len} {{\n{step}\n{out}.push({acc}.clone());\n}}\n}}",
                self.to_value(s.at("0")?, &t)?
            ),
        };
        let value = format!(
            "{{\n{}\nlet {len}: usize = {};\nlet mut {out}: Vec<{ty}> = Vec::with_capacity({len});\n{body}\n{out}\n}}",
            s.checks.join("\n"),
            s.len
        );
        Ok(self.materialized(value, &Type::seq(t)))
    }

    /// `reduce_by_key`: one `p ⊕ s[i] ⊕ ..` per run of equal consecutive keys.
    pub(super) fn reduce_by_key_value(
        &self,
        n: NodeId,
        op: &Lambda,
        (input, keys, prefix): (NodeId, NodeId, NodeId),
        env: &Env<'a>,
    ) -> R<Code<'a>> {
        let s = self.seq(input, env)?;
        let ks = self.seq(keys, env)?;
        let t = item_type(self, input);
        let ty = rust_type(&t);
        let names = ["n", "k", "acc", "out", "key", "p"].map(|b| self.name(b));
        let [len, k, acc, out, key, p] = &names;
        let key_at = |i: &str| -> R<String> {
            let (x, _) = self.scalar_of_code(n, ks.at(i)?)?;
            Ok(format!("(({x}) as i128)"))
        };
        let prefetch = self.prefetch_gathered(input, k, env)?.unwrap_or_default();
        let value = format!(
            "{{\n{}\n{}\nlet {len}: usize = {};\n{}\nlet {p}: {ty} = {};\nlet mut {out}: Vec<{ty}> = Vec::new();\nlet mut {k} = 0usize;\nwhile {k} < {len} {{\nlet {key} = {};\nlet mut {acc}: {ty} = {p}.clone();\nwhile {k} < {len} && {} == {key} {{\n{prefetch}\n{}\n{k} += 1;\n}}\n{out}.push({acc});\n}}\n{out}\n}}",
            s.checks.join("\n"),
            ks.checks.join("\n"),
            s.len,
            self.pair_len_check(n, (len, "input"), (&ks.len, "keys")),
            self.to_value(self.eval(prefix, env)?, &t)?,
            key_at(k)?,
            key_at(k)?,
            self.step(op, acc, s.at(k)?, &t, env)?,
        );
        Ok(self.materialized_at(n, value, &Type::seq(t)))
    }

    /// `scatter`: a copy of `dest` with `d[idx[i]] = s[i]` in order of `i`.
    pub(super) fn scatter_value(
        &self,
        n: NodeId,
        (source, indices, dest): (NodeId, NodeId, NodeId),
        env: &Env<'a>,
    ) -> R<Code<'a>> {
        let s = self.seq(source, env)?;
        let idx = self.seq(indices, env)?;
        let t = item_type(self, source);
        let [len, k, d, j] = ["n", "k", "d", "j"].map(|b| self.name(b));
        let (i, _) = self.scalar_of_code(n, idx.at(&k)?)?;
        let value = format!(
            "{{\n{}\n{}\nlet {len}: usize = {};\n{}\nlet mut {d}: Vec<{}> = {};\nfor {k} in 0..{len} {{\nlet {j} = chk_scatter(({i}) as i128, {k}, {d}.len(), {}, {});\n{d}[{j}] = {};\n}}\n{d}\n}}",
            s.checks.join("\n"),
            idx.checks.join("\n"),
            s.len,
            self.pair_len_check(n, (&len, "source"), (&idx.len, "indices")),
            rust_type(&t),
            self.to_value(self.eval(dest, env)?, &Type::seq(t.clone()))?,
            quote(self.op_name(n)),
            n.0,
            self.to_value(s.at(&k)?, &t)?,
        );
        Ok(self.materialized_at(n, value, &Type::seq(t)))
    }

    /// `transpose`: row `i` is element `i` of every input row, lazily; the rows are checked to
    /// have one length first.
    pub(super) fn transpose(&self, n: NodeId, input: NodeId, env: &Env<'a>) -> R<Code<'a>> {
        let s = self.seq(input, env)?;
        let [len, w, j] = ["n", "w", "j"].map(|b| self.name(b));
        let row_len = |i: &str| -> R<String> {
            let Code::Seq(r) = s.at(i)? else {
                panic!("internal: transpose input {input} has no rows")
            };
            Ok(format!("{{ {} {} }}", r.checks.join(" "), r.len))
        };
        let mut checks = s.checks.clone();
        checks.push(format!(
            "let {len}: usize = {}; let {w}: usize = if {len} == 0 {{ 0 }} else {{ {} }}; for {j} in 1..{len} {{ chk_uniform_row({w}, {}, {j}, {}, {}); }}",
            s.len,
            row_len("0")?,
            row_len(&j)?,
            quote(self.op_name(n)),
            n.0
        ));
        let rows = s.clone();
        Ok(Code::Seq(Rc::new(SeqCode {
            slice: None,
            len: w,
            checks,
            elem: Box::new(move |i| {
                let (rows, i, n) = (rows.clone(), i.to_string(), len.clone());
                Ok(Code::Seq(Rc::new(SeqCode {
                    slice: None,
                    len: n,
                    checks: vec![],
                    elem: Box::new(move |k| {
                        let Code::Seq(r) = rows.at(k)? else {
                            panic!("internal: transpose row is not a sequence")
                        };
                        Ok(with_checks(r.at(&i)?, &r.checks))
                    }),
                })))
            }),
        })))
    }

    /// `chk_pair_len(..)`: two operands that must have one length (the interpreter's message).
    pub(super) fn pair_len_check(&self, n: NodeId, a: (&str, &str), b: (&str, &str)) -> String {
        format!(
            "chk_pair_len({}, {}, {}, {}, {}, {});",
            a.0,
            b.0,
            quote(a.1),
            quote(b.1),
            quote(self.op_name(n)),
            n.0
        )
    }

    /// A scalar element's expression (an internal error for tuples: typing rules them out).
    pub(super) fn scalar_of_code(&self, n: NodeId, c: Code<'a>) -> R<(String, crate::ir::Elem)> {
        match c {
            Code::Scalar(s, e) => Ok((s, e)),
            _ => Err(self.unsupported(n, "a tuple where a scalar index or key is expected")),
        }
    }
}
