//! Fused level programs: the compiled programs of all the steps of one loop level (derived
//! values, hoisted invariants, constraints) run as one straight-line program, with a store
//! after each value and an early exit after each constraint that rejects.
//!
//! Running the steps' programs one by one (`IntProg::run` per step) costs a dispatch on the
//! step and a call per step; most steps are one or two operations. A fused program computes
//! exactly what the step programs compute, in the same order, reading slots from the
//! environment (a value stored by an earlier step is read back from its slot, as the step
//! programs do): so it stores the same values and rejects at the same constraint. When any
//! operation gives `None` (a slot that is not an int, an overflow, a division by zero) it
//! gives [`Fused::Fallback`], and the caller runs the steps one by one from the first, which
//! recomputes every value (steps are pure) and reaches the same value or the exact error.

use super::compile::{IntProg, Op, Src, eval_op, operand};
use crate::value::Value;

/// Registers of one fused run; levels whose steps need more are not fused.
const REGS: usize = 32;

/// What a step does with its program's value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ctl {
    /// Store it into `slot` (as a bool when `boolean`).
    Store { slot: u32, boolean: bool },
    /// Reject the point through constraint `ci` when it is non-zero.
    Reject(usize),
}

/// One step of a fused program: its operations are `ops[base..end]`, its registers start at
/// `base`.
#[derive(Clone, Copy, Debug)]
struct Part {
    base: u16,
    end: u16,
    out: Src,
    ctl: Ctl,
}

/// The steps of one level as one program.
#[derive(Clone, Debug)]
pub(crate) struct LevelProg {
    ops: Vec<Op>,
    parts: Vec<Part>,
}

/// The outcome of a fused run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fused {
    /// Every constraint passed; every value is stored.
    Pass,
    /// Constraint `ci` rejected the point (values before it are stored).
    Reject(usize),
    /// An operation gave `None`: run the steps one by one instead.
    Fallback,
}

impl LevelProg {
    /// Fuse `steps` (each a program and what to do with its value); None when there are no
    /// steps or they need more than the fused registers.
    pub(crate) fn new(steps: &[(&IntProg, Ctl)]) -> Option<LevelProg> {
        let n: usize = steps.iter().map(|(p, _)| p.ops.len()).sum();
        if steps.is_empty() || n > REGS {
            return None;
        }
        let (mut ops, mut parts) = (Vec::with_capacity(n), Vec::with_capacity(steps.len()));
        for (p, ctl) in steps {
            let base = ops.len() as u16;
            ops.extend_from_slice(&p.ops);
            parts.push(Part {
                base,
                end: ops.len() as u16,
                out: p.out,
                ctl: *ctl,
            });
        }
        Some(LevelProg { ops, parts })
    }

    /// Run the steps in `env`.
    #[inline]
    pub(crate) fn run(&self, env: &mut [Value]) -> Fused {
        let mut r = [0i64; REGS];
        let mut i = 0;
        for p in &self.parts {
            let base = p.base as usize;
            while i < p.end as usize {
                match eval_op(&self.ops[i], &r[base..], env) {
                    Some(x) => r[i] = x,
                    None => return Fused::Fallback,
                }
                i += 1;
            }
            let Some(x) = operand(p.out, &r[base..], env) else {
                return Fused::Fallback;
            };
            match p.ctl {
                Ctl::Store { slot, boolean } => store(&mut env[slot as usize], x, boolean),
                Ctl::Reject(ci) => {
                    if x != 0 {
                        return Fused::Reject(ci);
                    }
                }
            }
        }
        Fused::Pass
    }
}

/// Store a program's value as the step would: in place when the slot already holds a value
/// of the type (building a `Value` and moving it in costs more).
#[inline(always)]
pub(crate) fn store(v: &mut Value, x: i64, boolean: bool) {
    match (v, boolean) {
        (Value::Int(v), false) => *v = x,
        (Value::Bool(b), true) => *b = x != 0,
        (v, false) => *v = Value::Int(x),
        (v, true) => *v = Value::Bool(x != 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, Resolved};
    use crate::parse::parse_expr;

    fn prog(src: &str, truthy: bool) -> IntProg {
        let mut e: Expr = parse_expr(src).unwrap();
        e.resolve(&|n: &str| Some(Resolved::Slot(n.as_bytes()[0] as u32 - b'a' as u32)))
            .unwrap();
        if truthy {
            IntProg::truthy(&e).unwrap()
        } else {
            IntProg::value(&e).unwrap()
        }
    }

    /// The step programs run one by one, as `run_level_steps` runs them.
    fn one_by_one(steps: &[(&IntProg, Ctl)], env: &mut [Value]) -> Fused {
        for (p, ctl) in steps {
            let Some(x) = p.run(env) else {
                return Fused::Fallback;
            };
            match *ctl {
                Ctl::Store { slot, boolean } => store(&mut env[slot as usize], x, boolean),
                Ctl::Reject(ci) if x != 0 => return Fused::Reject(ci),
                Ctl::Reject(_) => {}
            }
        }
        Fused::Pass
    }

    #[test]
    fn fused_steps_do_what_the_steps_do() {
        // d = a * b; reject if d > 10; e = d // c; f = (e < 2); reject if e < 2
        let (p1, p2, p3, p4, p5) = (
            prog("a * b", false),
            prog("d > 10", true),
            prog("d // c", false),
            prog("e < 2", false),
            prog("e < 2", true),
        );
        let steps = [
            (
                &p1,
                Ctl::Store {
                    slot: 3,
                    boolean: false,
                },
            ),
            (&p2, Ctl::Reject(0)),
            (
                &p3,
                Ctl::Store {
                    slot: 4,
                    boolean: false,
                },
            ),
            (
                &p4,
                Ctl::Store {
                    slot: 5,
                    boolean: true,
                },
            ),
            (&p5, Ctl::Reject(1)),
        ];
        let fused = LevelProg::new(&steps).unwrap();
        let vals = [-3, 0, 1, 2, 5, 11, i64::MAX];
        let mut seen = std::collections::HashSet::new();
        for a in vals {
            for b in vals {
                for c in vals {
                    let env0 = vec![
                        Value::Int(a),
                        Value::Int(b),
                        Value::Int(c),
                        Value::None,
                        Value::Int(7),
                        Value::None,
                    ];
                    let (mut e1, mut e2) = (env0.clone(), env0.clone());
                    let (f, s) = (fused.run(&mut e1), one_by_one(&steps, &mut e2));
                    assert_eq!(f, s, "a={a} b={b} c={c}");
                    seen.insert(format!("{f:?}"));
                    if f != Fused::Fallback {
                        assert_eq!(format!("{e1:?}"), format!("{e2:?}"));
                    }
                }
            }
        }
        // Overflow and zero divisors fall back; both constraints reject somewhere.
        assert_eq!(seen.len(), 4, "{seen:?}");
    }

    #[test]
    fn too_many_operations_are_not_fused() {
        let p = prog("((a + b) * (a - b)) // (a * b + 1)", false);
        let steps: Vec<_> = (0..8)
            .map(|_| {
                (
                    &p,
                    Ctl::Store {
                        slot: 3,
                        boolean: false,
                    },
                )
            })
            .collect();
        assert!(LevelProg::new(&steps).is_none());
        assert!(LevelProg::new(&[]).is_none());
    }
}
