//! The compiled loop nest that the enumerator interprets: one [`Level`] per iterator with its
//! domain ([`DomainPlan`], materialised as a [`Dom`]), its evaluation [`Step`]s and its bound
//! tightening ([`Solve`], [`Clip`], [`Pair`]); and the steps' compiled programs
//! ([`StepProg`], [`compile_steps`]).

use std::sync::Arc;

use crate::expr::{Builtin, Ctl, Expr, ExprKind, IntProg, LevelProg};
use crate::space::GeneratorFn;
use crate::value::{PyRange, Value};

/// A materialised iterator domain.
#[derive(Clone, Debug)]
pub(crate) enum Dom {
    Range(PyRange),
    Values(Arc<[Value]>),
    Single(Value),
}

impl Dom {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Dom::Range(r) => r.len(),
            Dom::Values(v) => v.len() as u64,
            Dom::Single(_) => 1,
        }
    }

    pub(crate) fn from_value(v: Value) -> Dom {
        match v {
            Value::Range(r) => Dom::Range(r),
            Value::List(l) => Dom::Values(l),
            other => Dom::Single(other),
        }
    }

    pub(crate) fn to_values(&self) -> Vec<Value> {
        match self {
            Dom::Range(r) => r.iter().map(Value::Int).collect(),
            Dom::Values(v) => v.to_vec(),
            Dom::Single(v) => vec![v.clone()],
        }
    }
}

/// How an iterator's domain is obtained at run time.
#[derive(Clone)]
pub(crate) enum DomainPlan {
    Const(Dom),
    Expr(Expr),
    Gen {
        f: GeneratorFn,
        args: Vec<Expr>,
    },
    Set(Builtin, Box<DomainPlan>, Box<DomainPlan>),
    /// A loop-invariant domain expression hoisted to an outer level (`Step::Domain` stores
    /// its value in `slot`; `None` there means "evaluate `expr` here", e.g. after an error).
    Cached {
        slot: u32,
        expr: Expr,
    },
}

impl DomainPlan {
    pub(crate) fn exprs(&self) -> Vec<&Expr> {
        match self {
            DomainPlan::Const(_) => vec![],
            DomainPlan::Expr(e) | DomainPlan::Cached { expr: e, .. } => vec![e],
            DomainPlan::Gen { args, .. } => args.iter().collect(),
            DomainPlan::Set(_, a, b) => {
                let mut v = a.exprs();
                v.extend(b.exprs());
                v
            }
        }
    }

    pub(crate) fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            DomainPlan::Const(_) => vec![],
            DomainPlan::Expr(e) | DomainPlan::Cached { expr: e, .. } => vec![e],
            DomainPlan::Gen { args, .. } => args.iter_mut().collect(),
            DomainPlan::Set(_, a, b) => {
                let mut v = a.exprs_mut();
                v.extend(b.exprs_mut());
                v
            }
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            DomainPlan::Const(d) => match d {
                Dom::Range(r) => format!("range({}, {}, {})", r.start, r.stop, r.step),
                Dom::Values(v) => Value::List(v.clone()).to_string(),
                Dom::Single(v) => v.to_string(),
            },
            DomainPlan::Expr(e) => e.to_string(),
            DomainPlan::Cached { slot, expr } => format!("{expr}   (hoisted into ${slot})"),
            DomainPlan::Gen { args, .. } => {
                format!(
                    "<generator>({})",
                    args.iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            DomainPlan::Set(op, a, b) => {
                format!("{}({}, {})", op.name(), a.describe(), b.describe())
            }
        }
    }
}

/// One evaluation step at a loop level.
#[derive(Clone)]
pub(crate) enum Step {
    /// Compute a derived value into its slot.
    Derive {
        slot: u32,
        entry: Arc<str>,
        expr: Expr,
    },
    /// Evaluate constraint `ci`; reject the point if true.
    Check { ci: usize, expr: Expr },
    /// Evaluate a hoisted domain expression into its slot (`None` on error).
    Domain { slot: u32, expr: Expr },
    /// Evaluate a hoisted loop-invariant sub-expression into its slot (`None` on error).
    Cache { slot: u32, expr: Expr },
}

/// The solved form of a tightened equality: `it == (rhs op coef)`.
#[derive(Clone)]
pub(crate) enum SolveForm {
    /// `it != rhs`
    Plain,
    /// `it * coef != rhs`
    Mul(Expr),
    /// `it + coef != rhs`
    Add(Expr),
    /// `it - coef != rhs`
    Sub(Expr),
}

/// Bound tightening of one level: the level's first check is constraint `ci`, and every point
/// it does not reject satisfies the solved equation.
#[derive(Clone)]
pub(crate) struct Solve {
    pub ci: usize,
    pub form: SolveForm,
    pub rhs: Expr,
}

/// Range clipping of one level: the level's first check is constraint `ci`, and `pred` (one
/// of its disjuncts, with the level's derived values inlined) is non-decreasing in the
/// iterator whenever every `conds` expression is `>= 0` (or `> 0` when flagged strict), so
/// once it holds it holds for the rest of an increasing range.
///
/// `then` is a second clip: the level's next check, whose `pred` (with the same meaning) is
/// non-decreasing too, and which only derived values separate from this one, whose predicate
/// is the whole constraint. Once it rejects a value, every later value is rejected by this
/// clip (from its first true `pred`, found by search) or else by `then`.
#[derive(Clone)]
pub(crate) struct Clip {
    pub ci: usize,
    pub pred: Expr,
    pub conds: Vec<(Expr, bool)>,
    /// `pred` compiled (None: evaluate the tree).
    pub prog: Option<IntProg>,
    /// Monotone only over a range starting above 0 (a division by a function of the iterator).
    pub pos_start: bool,
    pub then: Option<Box<Clip>>,
}

/// Divisor enumeration of the outer iterator `o` of a solved product `o * it != rhs` one
/// level deeper: only divisors of `rhs` can leave a candidate for `it`, so the other values of
/// `o` are counted (each rejects the whole inner domain through constraint `ci`) and skipped.
#[derive(Clone)]
pub(crate) struct Pair {
    pub ci: usize,
    pub rhs: Expr,
}

/// One loop of the nest.
#[derive(Clone)]
pub(crate) struct Level {
    pub pair: Option<Pair>,
    pub name: String,
    pub slot: u32,
    pub domain: DomainPlan,
    pub solve: Option<Solve>,
    pub clip: Option<Clip>,
    pub steps: Vec<Step>,
    /// Per step, its compiled integer program (`compile_steps`; empty until the plan is
    /// complete, and then the steps run on the tree evaluators only).
    pub progs: Vec<Option<StepProg>>,
    /// All the steps as one program (`expr/fuse.rs`; None when a step has no value program
    /// or there are too many operations).
    pub fused: Option<LevelProg>,
    /// Position of this iterator in the Section X level sets.
    pub level_set: usize,
}

/// A step's compiled form (`expr/compile.rs`): the program of its value, or of a hoisted
/// domain.
#[derive(Clone, Debug)]
pub(crate) enum StepProg {
    Value(IntProg),
    Domain(DomProg),
}

/// A compiled hoisted domain: what `Step::Domain` stores (a range, a list, or `None` for a
/// single value), as `eval_dom_expr` computes it.
#[derive(Clone, Debug)]
pub(crate) enum DomProg {
    /// `range(start, stop[, step])` over ints with a non-zero step.
    Range(IntProg, IntProg, Option<IntProg>),
    /// `a if c else b`, the condition a truth program.
    IfElse(IntProg, Box<DomProg>, Box<DomProg>),
    /// A constant: the value stored.
    Const(Value),
}

fn dom_prog(e: &Expr) -> Option<DomProg> {
    Some(match &e.kind {
        ExprKind::Call(Builtin::Range, args) if (2..=3).contains(&args.len()) => DomProg::Range(
            IntProg::int(&args[0])?,
            IntProg::int(&args[1])?,
            match args.get(2) {
                Some(e) => Some(IntProg::int(e)?),
                None => None,
            },
        ),
        ExprKind::IfElse(b) => DomProg::IfElse(
            IntProg::truthy(&b[1])?,
            Box::new(dom_prog(&b[0])?),
            Box::new(dom_prog(&b[2])?),
        ),
        ExprKind::Const(v) => DomProg::Const(match v {
            Value::Range(_) | Value::List(_) => v.clone(),
            _ => Value::None,
        }),
        _ => return None,
    })
}

/// The compiled programs of `steps` (None for a step the tree evaluators run alone: other
/// domains, and expressions outside the `i64` fast paths).
pub(crate) fn compile_steps(steps: &[Step]) -> Vec<Option<StepProg>> {
    steps
        .iter()
        .map(|s| match s {
            Step::Derive { expr, .. } | Step::Cache { expr, .. } => {
                IntProg::value(expr).map(StepProg::Value)
            }
            Step::Check { expr, .. } => IntProg::truthy(expr).map(StepProg::Value),
            Step::Domain { expr, .. } => dom_prog(expr).map(StepProg::Domain),
        })
        .collect()
}

/// The fused program of a level's steps (`expr/fuse.rs`): only when every step is a derived
/// value, a hoisted invariant or a constraint with a value program.
pub(crate) fn fuse(steps: &[Step], progs: &[Option<StepProg>]) -> Option<LevelProg> {
    if progs.len() != steps.len() {
        return None;
    }
    let parts = steps
        .iter()
        .zip(progs)
        .map(|(s, p)| match (s, p) {
            (Step::Derive { slot, .. } | Step::Cache { slot, .. }, Some(StepProg::Value(p))) => {
                Some((
                    p,
                    Ctl::Store {
                        slot: *slot,
                        boolean: p.boolean,
                    },
                ))
            }
            (Step::Check { ci, .. }, Some(StepProg::Value(p))) => Some((p, Ctl::Reject(*ci))),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    LevelProg::new(&parts)
}
