//! A `reduce` of rows whose combiner is element-wise (`|a, b| map(f, (a, b))`, either order)
//! inside an element expression (`map(|v| len(scan(min, reduce_prefix(g, split(x, 3), p))), y)`,
//! seed 23), read lazily as a flat sequence: its length is the prefix's (or the first row's),
//! checked against every row in order as the combiner map checks it (`keyed::elementwise`, the
//! interpreter's message), and its element `@I@` folds column `@I@` of the rows from the
//! prefix's element in row order. A walk over the rows per element: correct, not fast (a
//! reduction of rows at a phase's root or level has its own kernels). A `scan` of rows so
//! combined inside an element expression is read the same way, row `@R@` the fold of the rows
//! up to it ([`Tr::lazy_row_scan`]).

use super::cuda_type;
use super::elements::{Env, I, R, SeqV, Tr};
use super::rows::{RowForm, RowsV};
use crate::CodegenError;
use crate::ir::{Lambda, NodeId};

impl Tr<'_> {
    /// `reduce(op, input, prefix)` (node `n`) over rows, `op` element-wise, read lazily.
    pub(super) fn lazy_row_reduce(
        &self,
        n: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
        env: &Env,
    ) -> Result<SeqV, CodegenError> {
        let comb = super::keyed::elementwise(self, op, env, None)?;
        let rows = self.rows(input, env)?;
        let k = n.0;
        let (r, w) = (format!("surge_rr{k}"), format!("surge_rw{k}"));
        let row = rows.row(&r, None);
        let (init, from, empty) = match prefix {
            Some(p) => (self.seq(p, env)?, "0", String::new()),
            None => (
                rows.row("0", None),
                "1",
                format!(
                    "if ({} == 0) {{ surge_fail(surge_err, {k}, SURGE_EMPTY_REDUCE, 0, 0, 0); \
                     return 0; }} ",
                    rows.rows
                ),
            ),
        };
        let check = comb.check(&w, &row.len);
        let count = &rows.rows;
        let len = format!(
            "([&]() -> u64 {{ {empty}u64 {w} = {}; for (u64 {r} = {from}; {r} < {count}; ++{r}) \
             {{ {w} = {check}; }} return {w}; }}())",
            init.len
        );
        let t = cuda_type(init.elem);
        let at = format!(
            "([&]() -> {t} {{ {t} acc = {}; for (u64 {r} = {from}; {r} < {count}; ++{r}) \
             {{ const {t} x = {}; acc = {}; }} return acc; }}())",
            init.at(I),
            row.at(I),
            comb.combine
        );
        Ok(SeqV {
            len,
            at,
            elem: init.elem,
        })
    }
}

impl Tr<'_> {
    /// `scan(op, input, prefix)` (node `n`) over rows, `op` element-wise, read lazily (random
    /// seed 31's class: a scan of rows inside an element expression). Every row is as long as
    /// the prefix (or the first row), checked against each row the interpreter combines (all
    /// but the last with a prefix, all after the first without), in order, as the combiner map
    /// checks it; row `@R@`'s element `@I@` folds column `@I@` of the rows before `@R@` from the
    /// prefix's element (exclusive), or of rows `0..=@R@` from the first row's (inclusive). A
    /// row shorter than the width (its error recorded) reads as 0 past its end.
    pub(super) fn lazy_row_scan(
        &self,
        n: NodeId,
        (op, input, prefix): (&Lambda, NodeId, Option<NodeId>),
        env: &Env,
    ) -> Result<RowsV, CodegenError> {
        let comb = super::keyed::elementwise(self, op, env, None)?;
        let rows = self.rows(input, env)?;
        let k = n.0;
        let (r, w) = (format!("surge_sr{k}"), format!("surge_sw{k}"));
        let row = rows.row(&r, None);
        let count = &rows.rows;
        // The rows combined: `[from, to)`.
        let (init, from, to, end) = match prefix {
            Some(p) => (
                self.seq(p, env)?,
                "0",
                format!("{r} + 1 < {count}"),
                R.to_string(),
            ),
            None => (
                rows.row("0", None),
                "1",
                format!("{r} < {count}"),
                format!("{R} + 1"),
            ),
        };
        let check = comb.check(&w, &row.len);
        let len = format!(
            "([&]() -> u64 {{ u64 {w} = {}; for (u64 {r} = {from}; {to}; ++{r}) \
             {{ {w} = {check}; }} return {w}; }}())",
            init.len
        );
        let t = cuda_type(init.elem);
        let at = format!(
            "([&]() -> {t} {{ {t} acc = {}; for (u64 {r} = {from}; {r} < ({end}); ++{r}) \
             {{ const {t} x = ({I}) < ({}) ? ({}) : ({t})0; acc = {}; }} return acc; }}())",
            init.at(I),
            row.len,
            row.at(I),
            comb.combine
        );
        Ok(RowsV {
            rows: count.clone(),
            form: RowForm::Each(SeqV {
                len,
                at,
                elem: init.elem,
            }),
        })
    }
}
