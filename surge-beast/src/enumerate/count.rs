//! The counting interpreter: the loop nest of `interp`, with three shortcuts that only apply
//! when no point is delivered (`Plan::count`). Each gives exactly the counters of a scan.
//!
//! - *Cuts* (`plan/factor.rs`): when levels `m..` read nothing the block `d..m` defines, the
//!   sub-nest from `m` is counted once per pass through `d` and multiplied by the block's
//!   survivors.
//! - *Remembering*: the counters of a sub-nest (or of a cut block) are a function of the slots
//!   it reads from outside; they are kept per worker under those values (`memo`).
//! - *Closed form* (`plan/closed.rs`, `closed`): an innermost level whose constraints are
//!   bounds on its iterator is counted by interval arithmetic.
//!
//! Errors are those of a scan. A remembered entry comes from a run without error, so the same
//! inputs give no error. A cut's sub-nest would run at the block's first survivor: when the
//! block fails after a survivor, the sub-nest runs first and its error, if any, wins.

use super::closed::count_range;
use super::memo::{Kind, Memo, add_delta, delta_of};
use crate::error::BeastError;
use crate::plan::{Cut, Dom, Plan};
use crate::stats::Counters;
use crate::value::Value;

impl Plan {
    /// Count the sub-nest `d..end` (reaching `end` is one survivor) into `c`.
    pub(super) fn count_from(
        &self,
        d: usize,
        end: usize,
        env: &mut [Value],
        c: &mut Counters,
        memo: &mut Memo,
    ) -> Result<(), BeastError> {
        if d == end {
            c.survivors += 1;
            return Ok(());
        }
        if d >= self.shortcut {
            return self.product(d, end, env, c);
        }
        if let Some(cut) = &self.factoring.cut[d]
            && cut.end < end
        {
            return self.count_cut(d, cut, end, env, c, memo);
        }
        if end == self.levels.len()
            && let Some(n) = self.count_closed(d, env, c)?
        {
            if n > 0 {
                let mut inner = Counters::new(c.visited.len(), c.rejected.len());
                self.product(d + 1, end, env, &mut inner)?;
                let cols = self.factoring.columns.of(d + 1, end);
                add_delta(c, d + 1, &delta_of(&inner, d + 1, end, cols), cols, n, true);
            }
            return Ok(());
        }
        self.for_level_in(&self.count_levels, d, env, c, |env, c| {
            self.count_rest(d + 1, end, env, c, memo)?;
            Ok(true)
        })
        .map(|_| ())
    }

    /// Levels `d..end` are multiplied out (no steps, domains bound outside them).
    pub(super) fn product(
        &self,
        d: usize,
        end: usize,
        env: &[Value],
        c: &mut Counters,
    ) -> Result<(), BeastError> {
        let mut prod: u64 = 1;
        for j in d..end {
            let lvl = &self.levels[j];
            prod = prod.saturating_mul(self.eval_domain(&lvl.domain, env, &lvl.name)?.len());
            c.visited[j] += prod;
            if prod == 0 {
                break;
            }
        }
        c.survivors += prod;
        Ok(())
    }

    /// Level `d` in closed form: the number of its values that pass, or None to scan it.
    fn count_closed(
        &self,
        d: usize,
        env: &[Value],
        c: &mut Counters,
    ) -> Result<Option<u64>, BeastError> {
        let Some(cf) = &self.closed[d] else {
            return Ok(None);
        };
        let lvl = &self.levels[d];
        match self.eval_domain(&lvl.domain, env, &lvl.name)? {
            Dom::Range(r) => Ok(count_range(cf, &r, env, d, c)),
            _ => Ok(None),
        }
    }

    /// The sub-nest `d..end`, remembered when it runs to the end of the nest.
    fn count_rest(
        &self,
        d: usize,
        end: usize,
        env: &mut [Value],
        c: &mut Counters,
        memo: &mut Memo,
    ) -> Result<(), BeastError> {
        self.add_rest(d, end, 1, env, c, memo)
    }

    /// Add `k` times the counters of the sub-nest `d..end` to `c`.
    fn add_rest(
        &self,
        d: usize,
        end: usize,
        k: u64,
        env: &mut [Value],
        c: &mut Counters,
        memo: &mut Memo,
    ) -> Result<(), BeastError> {
        let n = self.levels.len();
        let cols = self.factoring.columns.of(d, end);
        if let Some(Some(key)) = self.factoring.rest_key.get(d)
            && end == n
            && d < self.shortcut
            && memo.prepare(Kind::Rest, d, key, env)
        {
            if let Some(v) = memo.get(Kind::Rest, d) {
                add_delta(c, d, v, cols, k, true);
                return Ok(());
            }
            let delta = self.fresh(d, end, env, memo).map_err(|(e, _)| e)?;
            add_delta(c, d, &delta, cols, k, true);
            if memo.prepare(Kind::Rest, d, key, env) {
                memo.put(Kind::Rest, d, &delta);
            }
            return Ok(());
        }
        if k == 1 {
            return self.count_from(d, end, env, c, memo);
        }
        let delta = self.fresh(d, end, env, memo).map_err(|(e, _)| e)?;
        add_delta(c, d, &delta, cols, k, true);
        Ok(())
    }

    /// The delta of the sub-nest `d..end` in fresh counters; on error, with the survivors
    /// reached before it.
    fn fresh(
        &self,
        d: usize,
        end: usize,
        env: &mut [Value],
        memo: &mut Memo,
    ) -> Result<Box<[u64]>, (BeastError, u64)> {
        let mut sub = self.new_counters();
        match self.count_from(d, end, env, &mut sub, memo) {
            Ok(()) => Ok(delta_of(&sub, d, end, self.factoring.columns.of(d, end))),
            Err(e) => Err((e, sub.survivors)),
        }
    }

    /// The sub-nest `d..end` through the cut `d..cut.end`: block counters, then the rest once,
    /// times the block's survivors.
    fn count_cut(
        &self,
        d: usize,
        cut: &Cut,
        end: usize,
        env: &mut [Value],
        c: &mut Counters,
        memo: &mut Memo,
    ) -> Result<(), BeastError> {
        let m = cut.end;
        let cols = self.factoring.columns.of(d, m);
        let survivors = match &cut.key {
            Some(key) if memo.prepare(Kind::Block, d, key, env) => match memo.get(Kind::Block, d) {
                Some(v) => {
                    add_delta(c, d, v, cols, 1, false);
                    v[0]
                }
                None => match self.fresh(d, m, env, memo) {
                    Ok(delta) => {
                        add_delta(c, d, &delta, cols, 1, false);
                        let s = delta[0];
                        if memo.prepare(Kind::Block, d, key, env) {
                            memo.put(Kind::Block, d, &delta);
                        }
                        s
                    }
                    Err((e, s)) => return self.block_error(e, s, m, end, env, memo),
                },
            },
            _ => {
                // Counted in place: the block's survivors are what it adds to `c.survivors`.
                let before = c.survivors;
                if let Err(e) = self.count_from(d, m, env, c, memo) {
                    let s = c.survivors - before;
                    return self.block_error(e, s, m, end, env, memo);
                }
                std::mem::replace(&mut c.survivors, before) - before
            }
        };
        if survivors > 0 {
            self.add_rest(m, end, survivors, env, c, memo)?;
        }
        Ok(())
    }

    /// A block failed after `survivors` survivors: a scan would have run the rest at the
    /// first one, so the rest's error comes first.
    fn block_error(
        &self,
        e: BeastError,
        survivors: u64,
        m: usize,
        end: usize,
        env: &mut [Value],
        memo: &mut Memo,
    ) -> Result<(), BeastError> {
        if survivors > 0 {
            let mut rest = self.new_counters();
            self.count_rest(m, end, env, &mut rest, memo)?;
        }
        Err(e)
    }
}
