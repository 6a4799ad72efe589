//! [`Plan::describe`]: the plan as indented pseudo-code (loops, hoisted steps, tightening).

use std::fmt::Write as _;

use super::Plan;
use super::nest::Step;

impl Plan {
    /// A human-readable account of the plan: loops, hoisted steps, tightening.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "space {}: {} loops", self.space_name, self.levels.len());
        let cname = |ci: usize| self.constraints[ci].name.as_str();
        for st in &self.pre_steps {
            match st {
                Step::Derive { entry, .. } => {
                    let _ = writeln!(s, "  before loops: {entry} =");
                }
                Step::Check { ci, .. } => {
                    let _ = writeln!(s, "  before loops: reject if {}", cname(*ci));
                }
                Step::Domain { .. } | Step::Cache { .. } => {}
            }
        }
        for (k, l) in self.levels.iter().enumerate() {
            let _ = writeln!(
                s,
                "{}for {} in {}:   # level set {}{}",
                "  ".repeat(k + 1),
                l.name,
                l.domain.describe(),
                l.level_set,
                if k >= self.shortcut {
                    ", counted by product"
                } else {
                    ""
                }
            );
            let pad = "  ".repeat(k + 1);
            if let Some(Some(key)) = self.factoring.rest_key.get(k) {
                let _ = writeln!(s, "{pad}  # counting remembers this sub-nest by {key:?}");
            }
            if let Some(Some(cut)) = self.factoring.cut.get(k) {
                let _ = writeln!(
                    s,
                    "{pad}  # counting: loops {}.. do not depend on this block (remembered by {:?})",
                    self.levels[cut.end].name,
                    cut.key.as_deref().unwrap_or(&[])
                );
            }
            if let Some(Some(_)) = self.closed.get(k) {
                let _ = writeln!(s, "{pad}  # counted in closed form (bounds on {})", l.name);
            }
            if let (Some(sv), true) = (&l.solve, self.tighten) {
                let _ = writeln!(
                    s,
                    "{}  # solved for {} from {}",
                    "  ".repeat(k + 1),
                    l.name,
                    cname(sv.ci)
                );
            }
            if let (Some(p), true) = (&l.pair, self.tighten) {
                let _ = writeln!(
                    s,
                    "{}  # only divisors of {} (for {})",
                    "  ".repeat(k + 1),
                    p.rhs,
                    cname(p.ci)
                );
            }
            if let (Some(cl), true) = (&l.clip, self.tighten) {
                let _ = writeln!(
                    s,
                    "{}  # range clipped by {}: {}",
                    "  ".repeat(k + 1),
                    cname(cl.ci),
                    cl.pred
                );
                if let Some(t) = &cl.then {
                    let _ = writeln!(
                        s,
                        "{}  # then by {}: {}",
                        "  ".repeat(k + 1),
                        cname(t.ci),
                        t.pred
                    );
                }
            }
            for st in &l.steps {
                match st {
                    Step::Derive { entry, expr, .. } => {
                        let _ = writeln!(s, "{}  {entry} = {expr}", "  ".repeat(k + 1));
                    }
                    Step::Check { ci, expr } => {
                        let _ = writeln!(
                            s,
                            "{}  reject if {}: {expr}",
                            "  ".repeat(k + 1),
                            cname(*ci)
                        );
                    }
                    Step::Domain { slot, expr } => {
                        let _ = writeln!(
                            s,
                            "{}  ${slot} = {expr}   (hoisted domain)",
                            "  ".repeat(k + 1)
                        );
                    }
                    Step::Cache { slot, expr } => {
                        let _ = writeln!(
                            s,
                            "{}  ${slot} = {expr}   (hoisted invariant)",
                            "  ".repeat(k + 1)
                        );
                    }
                }
            }
        }
        s
    }
}
