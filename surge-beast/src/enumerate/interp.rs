//! The loop nest interpreter: domains, evaluation steps, bound tightening at run time (solved
//! candidates, clipped ranges, divisor pairs), and the sequential expansion of the outer loops
//! into work items. A level's steps run their compiled programs (`expr/compile.rs`, built by
//! `plan::nest::compile_steps`) first and the tree evaluators when a program gives `None`.

use crate::error::BeastError;
use crate::expr::{Builtin, EvalError, Expr, ExprKind, Fused, make_range, store};
use crate::plan::{
    Clip, Dom, DomProg, DomainPlan, Level, Pair, Plan, Solve, SolveForm, Step, StepProg,
};
use crate::stats::Counters;
use crate::value::{PyRange, Value};

/// Where survivors go.
pub(super) trait Visitor {
    /// When true, survivors are only counted and trailing free loops are multiplied out.
    const COUNT_ONLY: bool;
    /// Receive a survivor (iterator slots); return false to stop.
    fn emit(&mut self, point: &[Value]) -> bool;
}

pub(super) struct CountVis;
impl Visitor for CountVis {
    const COUNT_ONLY: bool = true;
    fn emit(&mut self, _: &[Value]) -> bool {
        true
    }
}

pub(super) struct FnVis<F> {
    pub f: F,
}
impl<F: FnMut(&[Value]) -> bool> Visitor for FnVis<F> {
    const COUNT_ONLY: bool = false;
    fn emit(&mut self, point: &[Value]) -> bool {
        (self.f)(point)
    }
}

enum Cands {
    Zero,
    One(i64),
    Many(Vec<i64>),
}

/// Store an int, in place when the slot already holds one (moving a whole `Value` in costs
/// more, and loop variables and derived values are stored once per point).
#[inline(always)]
fn set_int(slot: &mut Value, x: i64) {
    match slot {
        Value::Int(v) => *v = x,
        v => *v = Value::Int(x),
    }
}

fn eval_err(entry: &str, e: EvalError) -> BeastError {
    BeastError::Eval {
        entry: entry.to_string(),
        column: e.pos as usize + 1,
        message: e.message,
    }
}

/// Whether a clip's predicate holds in `env` (None: it does not evaluate to a truth value).
#[inline]
fn holds(cl: &Clip, env: &[Value]) -> Option<bool> {
    match cl.prog.as_ref().and_then(|p| p.run(env)) {
        Some(x) => Some(x != 0),
        None => cl.pred.truthy_any(env).ok(),
    }
}

/// The index of the first value of `r` after index `i` where the clip's predicate holds (`len`
/// if none), given that it does not hold at `i` and is non-decreasing along `r`: galloping,
/// then bisection. None when an evaluation fails. Leaves the iterator's slot changed.
fn first_holding(cl: &Clip, r: &PyRange, i: u64, slot: usize, env: &mut [Value]) -> Option<u64> {
    let len = r.len();
    let at = |j: u64, env: &mut [Value]| {
        set_int(
            &mut env[slot],
            r.start.wrapping_add((j as i64).wrapping_mul(r.step)),
        );
        holds(cl, env)
    };
    let (mut lo, mut hi, mut step) = (i, len, 1u64);
    while lo + step < len {
        if at(lo + step, env)? {
            hi = lo + step;
            break;
        }
        lo += step;
        step *= 2;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(mid, env)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// `range(a, b[, c])` over ints with a non-zero step, without building values.
#[inline]
fn fast_range(args: &[Expr], env: &[Value]) -> Option<PyRange> {
    let start = args[0].int_fast(env)?;
    let stop = args[1].int_fast(env)?;
    let step = if args.len() == 3 {
        args[2].int_fast(env)?
    } else {
        1
    };
    (step != 0).then_some(PyRange { start, stop, step })
}

/// What `Step::Domain` stores for a compiled domain (None: run the tree, as for an error).
#[inline]
fn run_dom(p: &DomProg, env: &[Value]) -> Option<Value> {
    match p {
        // `fast_range`: int bounds, a non-zero step.
        DomProg::Range(a, b, st) => {
            let (start, stop) = (a.run(env)?, b.run(env)?);
            let step = st.as_ref().map_or(Some(1), |p| p.run(env))?;
            (step != 0).then_some(Value::Range(PyRange { start, stop, step }))
        }
        DomProg::IfElse(c, a, b) => run_dom(if c.run(env)? != 0 { a } else { b }, env),
        DomProg::Const(v) => Some(v.clone()),
    }
}

/// Evaluate a domain expression, avoiding materialisation for `range(...)`.
fn eval_dom_expr(e: &Expr, env: &[Value]) -> Result<Dom, EvalError> {
    if let ExprKind::Call(Builtin::Range, args) = &e.kind
        && (2..=3).contains(&args.len())
        && let Some(r) = fast_range(args, env)
    {
        return Ok(Dom::Range(r));
    }
    match &e.kind {
        ExprKind::Call(Builtin::Range, args) if args.len() <= 3 => {
            let mut buf = [Value::None, Value::None, Value::None];
            for (i, a) in args.iter().enumerate() {
                buf[i] = a.eval_fast(env)?;
            }
            make_range(&buf[..args.len()])
                .map(Dom::Range)
                .map_err(|m| EvalError {
                    pos: e.pos,
                    message: m,
                })
        }
        ExprKind::IfElse(b) => {
            if b[1].truthy_any(env)? {
                eval_dom_expr(&b[0], env)
            } else {
                eval_dom_expr(&b[2], env)
            }
        }
        _ => Ok(Dom::from_value(e.eval(env)?)),
    }
}

impl Plan {
    pub(super) fn eval_domain(
        &self,
        d: &DomainPlan,
        env: &[Value],
        entry: &str,
    ) -> Result<Dom, BeastError> {
        match d {
            DomainPlan::Const(c) => Ok(c.clone()),
            DomainPlan::Expr(e) => eval_dom_expr(e, env).map_err(|e| eval_err(entry, e)),
            DomainPlan::Cached { slot, expr } => match &env[*slot as usize] {
                Value::None => eval_dom_expr(expr, env).map_err(|e| eval_err(entry, e)),
                v => Ok(Dom::from_value(v.clone())),
            },
            DomainPlan::Gen { f, args } => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(env))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| eval_err(entry, e))?;
                let out = f(&vals).map_err(|m| BeastError::Eval {
                    entry: entry.to_string(),
                    column: 1,
                    message: m,
                })?;
                Ok(Dom::Values(out.into()))
            }
            DomainPlan::Set(op, a, b) => {
                let a = self.eval_domain(a, env, entry)?;
                let b = self.eval_domain(b, env, entry)?;
                let r = crate::expr::call_builtin(
                    *op,
                    &[Value::list(a.to_values()), Value::list(b.to_values())],
                )
                .map_err(|m| BeastError::Eval {
                    entry: entry.to_string(),
                    column: 1,
                    message: m,
                })?;
                Ok(Dom::from_value(r))
            }
        }
    }

    /// Run a level's steps: each compiled program first, the tree evaluators when it gives
    /// None (see `expr/compile.rs`) or there is none.
    #[inline]
    pub(super) fn run_level_steps(
        &self,
        lvl: &Level,
        env: &mut [Value],
        c: &mut Counters,
    ) -> Result<bool, BeastError> {
        if let Some(f) = &lvl.fused {
            match f.run(env) {
                Fused::Pass => return Ok(true),
                Fused::Reject(ci) => {
                    c.rejected[ci] += 1;
                    return Ok(false);
                }
                // The steps one by one, from the first (they are pure).
                Fused::Fallback => {}
            }
        }
        if lvl.progs.len() != lvl.steps.len() {
            return self.run_steps(&lvl.steps, env, c);
        }
        for (s, p) in lvl.steps.iter().zip(&lvl.progs) {
            match (s, p) {
                (
                    Step::Derive { slot, .. } | Step::Cache { slot, .. },
                    Some(StepProg::Value(p)),
                ) => {
                    if let Some(x) = p.run(env) {
                        // In place when the slot already holds a value of the type (it does
                        // after the first pass): building a `Value` and moving it costs more.
                        store(&mut env[*slot as usize], x, p.boolean);
                        continue;
                    }
                }
                (Step::Check { ci, .. }, Some(StepProg::Value(p))) => {
                    if let Some(x) = p.run(env) {
                        if x != 0 {
                            c.rejected[*ci] += 1;
                            return Ok(false);
                        }
                        continue;
                    }
                }
                (Step::Domain { slot, .. }, Some(StepProg::Domain(p))) => {
                    if let Some(v) = run_dom(p, env) {
                        env[*slot as usize] = v;
                        continue;
                    }
                }
                _ => {}
            }
            if !self.run_steps(std::slice::from_ref(s), env, c)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    #[inline]
    fn run_steps(
        &self,
        steps: &[Step],
        env: &mut [Value],
        c: &mut Counters,
    ) -> Result<bool, BeastError> {
        for s in steps {
            match s {
                Step::Derive { slot, entry, expr } => {
                    // Ints first without building a `Result<Value, _>` (most steps are ints).
                    env[*slot as usize] = match expr.int_fast(env) {
                        Some(i) => Value::Int(i),
                        None => expr.eval_fast(env).map_err(|e| eval_err(entry, e))?,
                    };
                }
                Step::Domain { slot, expr } => {
                    env[*slot as usize] = match eval_dom_expr(expr, env) {
                        Ok(Dom::Range(r)) => Value::Range(r),
                        Ok(Dom::Values(v)) => Value::List(v),
                        // Single values and errors are re-evaluated at the loop itself.
                        Ok(Dom::Single(_)) | Err(_) => Value::None,
                    };
                }
                Step::Cache { slot, expr } => {
                    env[*slot as usize] = expr.eval_fast(env).unwrap_or(Value::None);
                }
                Step::Check { ci, expr } => {
                    let reject = match expr.truthy_fast(env) {
                        Some(b) => b,
                        None => expr
                            .truthy(env)
                            .map_err(|e| eval_err(&self.constraints[*ci].name, e))?,
                    };
                    if reject {
                        c.rejected[*ci] += 1;
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Candidates of a tightened level, or None to fall back to a full scan.
    fn solve(&self, sv: &Solve, dom: &Dom, env: &[Value]) -> Option<Cands> {
        if dom.len() == 0 {
            return None;
        }
        let int = |e: &Expr| match e.int_fast(env) {
            Some(x) => Some(x),
            None => match e.eval(env) {
                Ok(Value::Int(x)) => Some(x),
                _ => None,
            },
        };
        let rhs = int(&sv.rhs)?;
        let v = match &sv.form {
            SolveForm::Plain => rhs,
            SolveForm::Mul(c) => {
                let x = int(c)?;
                if x == 0 {
                    return None;
                }
                if rhs.checked_rem(x)? != 0 {
                    return Some(Cands::Zero);
                }
                rhs.checked_div(x)?
            }
            SolveForm::Add(c) => rhs.checked_sub(int(c)?)?,
            SolveForm::Sub(c) => rhs.checked_add(int(c)?)?,
        };
        match dom {
            Dom::Range(r) => Some(if r.contains(v) {
                Cands::One(v)
            } else {
                Cands::Zero
            }),
            Dom::Single(Value::Int(x)) => Some(if *x == v { Cands::One(v) } else { Cands::Zero }),
            Dom::Single(_) => None,
            Dom::Values(vs) => {
                if !vs.iter().all(|x| matches!(x, Value::Int(_))) {
                    return None;
                }
                Some(Cands::Many(
                    vs.iter()
                        .filter(|x| matches!(x, Value::Int(i) if *i == v))
                        .map(|_| v)
                        .collect(),
                ))
            }
        }
    }

    /// Whether the clip's preconditions hold here: an increasing range and co-operands of the
    /// right sign, so the predicate is non-decreasing along the range.
    fn clip_applies(&self, cl: &Clip, r: &PyRange, env: &[Value]) -> bool {
        r.step > 0
            && (!cl.pos_start || r.start > 0)
            && cl.conds.iter().all(|(e, strict)| match e.eval_fast(env) {
                Ok(Value::Int(x)) => x > 0 || (x == 0 && !strict),
                _ => false,
            })
    }

    /// The elements of `r` dividing the pair's right-hand side, in iteration order, or None
    /// when the shortcut does not apply (zero in range, non-int or zero rhs, too many divisors).
    fn divisors(&self, pair: &Pair, r: &PyRange, env: &[Value]) -> Option<(i64, Vec<i64>)> {
        if r.contains(0) || r.is_empty() {
            return None;
        }
        let rhs = match pair.rhs.int_fast(env) {
            Some(x) => x,
            None => match pair.rhs.eval(env) {
                Ok(Value::Int(x)) => x,
                _ => return None,
            },
        };
        if rhs == 0 || rhs == i64::MIN {
            return None;
        }
        let m = rhs.unsigned_abs();
        let len = r.len();
        let mut out: Vec<i64> = Vec::new();
        if len.saturating_mul(len) <= m.saturating_mul(4) {
            // Short range: test its elements directly (already in iteration order).
            let mut v = r.start;
            for _ in 0..len {
                if v != 0 && rhs % v == 0 {
                    out.push(v);
                }
                v = v.wrapping_add(r.step);
            }
            return Some((rhs, out));
        }
        let mut dv: u64 = 1;
        while dv.saturating_mul(dv) <= m {
            if m % dv == 0 {
                for q in [dv, m / dv] {
                    for v in [q as i64, -(q as i64)] {
                        if r.contains(v) && !out.contains(&v) {
                            out.push(v);
                        }
                    }
                }
            }
            dv += 1;
        }
        out.sort_by_key(|&v| match v.checked_sub(r.start) {
            Some(x) if r.step != -1 => x / r.step,
            _ => ((v as i128 - r.start as i128) / r.step as i128) as i64,
        });
        Some((rhs, out))
    }

    /// Iterate level `d` in environment `env`, calling `k` for every value that passes the
    /// level's steps. Returns false if `k` asked to stop.
    pub(super) fn for_level<F>(
        &self,
        d: usize,
        env: &mut [Value],
        c: &mut Counters,
        k: F,
    ) -> Result<bool, BeastError>
    where
        F: FnMut(&mut [Value], &mut Counters) -> Result<bool, BeastError>,
    {
        self.for_level_in(&self.levels, d, env, c, k)
    }

    /// [`Plan::for_level`] over `levels` (the plan's, or the counting variant of them).
    pub(super) fn for_level_in<F>(
        &self,
        levels: &[Level],
        d: usize,
        env: &mut [Value],
        c: &mut Counters,
        mut k: F,
    ) -> Result<bool, BeastError>
    where
        F: FnMut(&mut [Value], &mut Counters) -> Result<bool, BeastError>,
    {
        let lvl = &levels[d];
        let slot = lvl.slot as usize;
        // Constant and hoisted ranges without going through `Result<Dom, BeastError>` (a
        // large value to move, once per pass through the loop).
        let dom = match &lvl.domain {
            DomainPlan::Const(Dom::Range(r)) => Dom::Range(*r),
            DomainPlan::Cached { slot, .. } if let Value::Range(r) = &env[*slot as usize] => {
                Dom::Range(*r)
            }
            d => self.eval_domain(d, env, &lvl.name)?,
        };
        if let (Some(pair), Dom::Range(r), true) = (&lvl.pair, &dom, self.tighten)
            && let Some((rhs, mut divs)) = self.divisors(pair, r, env)
        {
            let len = r.len();
            // Values whose cofactor is not in the inner domain leave no candidate either.
            let inner = &levels[d + 1];
            let inner_dom = self.eval_domain(&inner.domain, env, &inner.name)?;
            if let Dom::Range(ir) = &inner_dom {
                divs.retain(|&v| ir.contains(rhs / v));
            }
            let n_non = len - divs.len() as u64;
            let len1 = inner_dom.len();
            c.visited[d + 1] += n_non * len1;
            c.rejected[pair.ci] += n_non * len1;
            c.visited[d] += len;
            for v in divs {
                set_int(&mut env[slot], v);
                if self.run_level_steps(lvl, env, c)? && !k(env, c)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        if self.tighten
            && let Some(sv) = &lvl.solve
            && let Some(cands) = self.solve(sv, &dom, env)
        {
            let n = dom.len();
            let vals: &[i64] = match &cands {
                Cands::Zero => &[],
                Cands::One(v) => std::slice::from_ref(v),
                Cands::Many(v) => v,
            };
            c.visited[d] += n;
            c.rejected[sv.ci] += n - vals.len() as u64;
            for &v in vals {
                set_int(&mut env[slot], v);
                if self.run_level_steps(lvl, env, c)? && !k(env, c)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        match dom {
            Dom::Range(r) => {
                let len = r.len();
                // Clipping: once the monotone predicate rejects, the rest of the range does too.
                let clip = match (&lvl.clip, self.tighten) {
                    (Some(cl), true) if self.clip_applies(cl, &r, env) => Some(cl),
                    _ => None,
                };
                // The second clip's preconditions, checked when it first matters.
                let mut then_ok: Option<bool> = None;
                let mut v = r.start;
                for i in 0..len {
                    c.visited[d] += 1;
                    set_int(&mut env[slot], v);
                    if self.run_level_steps(lvl, env, c)? {
                        if !k(env, c)? {
                            return Ok(false);
                        }
                    } else if let Some(cl) = clip {
                        if holds(cl, env) == Some(true) {
                            let rest = len - i - 1;
                            c.visited[d] += rest;
                            c.rejected[cl.ci] += rest;
                            break;
                        }
                        // The second clip rejected `v`: every later value is rejected by it,
                        // or by the first clip from the first value where that one holds.
                        if let Some(t) = &cl.then
                            && then_ok != Some(false)
                            && *then_ok.get_or_insert_with(|| self.clip_applies(t, &r, env))
                            && holds(t, env) == Some(true)
                        {
                            match first_holding(cl, &r, i, slot, env) {
                                Some(k1) => {
                                    let rest = len - i - 1;
                                    c.visited[d] += rest;
                                    c.rejected[t.ci] += k1 - i - 1;
                                    c.rejected[cl.ci] += len - k1;
                                    break;
                                }
                                // A value the search could not evaluate: scan on, without it.
                                None => {
                                    then_ok = Some(false);
                                    set_int(&mut env[slot], v);
                                }
                            }
                        }
                    }
                    v = v.wrapping_add(r.step);
                }
            }
            Dom::Values(vs) => {
                for v in vs.iter() {
                    c.visited[d] += 1;
                    env[slot] = v.clone();
                    if self.run_level_steps(lvl, env, c)? && !k(env, c)? {
                        return Ok(false);
                    }
                }
            }
            Dom::Single(v) => {
                c.visited[d] += 1;
                env[slot] = v;
                if self.run_level_steps(lvl, env, c)? && !k(env, c)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Run the nest from level `d` down.
    pub(super) fn run_from<V: Visitor>(
        &self,
        d: usize,
        env: &mut [Value],
        c: &mut Counters,
        vis: &mut V,
    ) -> Result<bool, BeastError> {
        let n = self.levels.len();
        if d == n {
            c.survivors += 1;
            return Ok(vis.emit(&env[..self.iter_names.len()]));
        }
        if V::COUNT_ONLY && d >= self.shortcut {
            self.product(d, n, env, c)?;
            return Ok(true);
        }
        self.for_level(d, env, c, |env, c| self.run_from(d + 1, env, c, vis))
    }

    pub(super) fn new_counters(&self) -> Counters {
        Counters::new(self.levels.len(), self.constraints.len())
    }

    /// The environment after the steps that precede all loops (None if they reject everything).
    pub(super) fn start(&self, c: &mut Counters) -> Result<Option<Vec<Value>>, BeastError> {
        let mut env = self.init_env.clone();
        Ok(if self.run_steps(&self.pre_steps, &mut env, c)? {
            Some(env)
        } else {
            None
        })
    }

    /// Expand the outer loops into work items: environments bound down to the returned depth.
    pub(super) fn split(
        &self,
        env: Vec<Value>,
        c: &mut Counters,
        threads: usize,
        max_depth: usize,
    ) -> Result<(Vec<Vec<Value>>, usize), BeastError> {
        let target = 64 * threads;
        let mut items = vec![env];
        let mut depth = 0;
        while depth < max_depth && !items.is_empty() && items.len() < target {
            if let DomainPlan::Const(d) = &self.levels[depth].domain
                && (items.len() as u64).saturating_mul(d.len()) > 1 << 22
            {
                break;
            }
            let mut next = Vec::new();
            for mut e in items {
                self.for_level(depth, &mut e, c, |env, _| {
                    next.push(env.to_vec());
                    Ok(true)
                })?;
            }
            items = next;
            depth += 1;
        }
        Ok((items, depth))
    }

    pub(super) fn pool(threads: usize) -> Result<rayon::ThreadPool, BeastError> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| BeastError::invalid("threads", e.to_string()))
    }
}
