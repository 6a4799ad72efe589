//! CoMD's table interpolation ([`Table::eval`]) as DSEL scalar code: the table is a captured
//! sequence, read at a computed index (`at`), so a lookup is data-dependent gathering inside a
//! lambda. The arithmetic is [`Table::eval`]'s, operation for operation; `⌊s⌋` is
//! `s as u64 as f64` (s ≥ 0 once x is clamped at the grid's origin).

use super::table::Table;
use crate::prelude::*;

/// A padded table bound as a program input, with its size and spacing as constants.
#[derive(Debug, Clone)]
pub struct TableSeq {
    pub values: Seq<f64>,
    n: f64,
    x0: f64,
    inv_dx: f64,
}

impl TableSeq {
    /// Binds `table`'s padded values as the input `name`.
    pub fn input(name: &str, table: &Table) -> Result<TableSeq> {
        Ok(TableSeq {
            values: Seq::input(name, table.padded().to_vec())?,
            n: table.len() as f64,
            x0: table.x0(),
            inv_dx: table.inv_dx(),
        })
    }

    /// `(f(x), f′(x))`, as [`Table::eval`] computes them.
    pub fn eval(&self, x: &Scalar<f64>) -> Result<(Scalar<f64>, Scalar<f64>)> {
        let x = x.lt(self.x0).select(self.x0, x);
        let s0 = (&x - self.x0) * self.inv_dx;
        let floor0 = s0.cast::<u64>().cast::<f64>();
        let beyond = floor0.gt(self.n);
        let i = beyond.select(self.n, &floor0).cast::<u64>();
        let s = beyond.select(self.n / self.inv_dx, &s0);
        let p = &s - s.cast::<u64>().cast::<f64>();
        let tm = at(&self.values, i.clone())?;
        let t0 = at(&self.values, &i + 1u64)?;
        let t1 = at(&self.values, &i + 2u64)?;
        let t2 = at(&self.values, &i + 3u64)?;
        let g1 = &t1 - &tm;
        let g2 = &t2 - &t0;
        let f = &t0 + &p * 0.5 * (&g1 + &p * (&t1 + &tm - &t0 * 2.0));
        let df = (&g1 + &p * (&g2 - &g1)) * 0.5 * self.inv_dx;
        Ok((f, df))
    }
}
