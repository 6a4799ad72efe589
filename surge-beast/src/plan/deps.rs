//! Stage 5 of planning: dependencies over environment slots. Iterator `i` lives in slot `i`,
//! derived value `d` in slot `ni + d`; a derived value's iterators are those it uses directly
//! or through other derived values.

use std::collections::HashSet;

use super::dag::Parsed;
use crate::expr::Expr;

/// Slots and (transitive) iterators each entry depends on.
pub(super) struct Deps {
    /// Number of iterators (the first derived value's slot).
    pub ni: usize,
    /// Number of derived values.
    pub nd: usize,
    /// Slots each derived value reads.
    pub derived_slots: Vec<Vec<u32>>,
    /// Slots each iterator's domain reads (sorted, deduplicated).
    pub domain_slots: Vec<Vec<u32>>,
    /// Iterators each iterator's domain depends on.
    pub domain_iters: Vec<HashSet<usize>>,
    /// Slots each constraint reads.
    pub cons_slots: Vec<Vec<u32>>,
    /// Iterators each constraint depends on.
    pub cons_iters: Vec<HashSet<usize>>,
}

impl Deps {
    pub fn new(parsed: &Parsed, ni: usize, derived_topo: &[usize]) -> Deps {
        let nd = parsed.dexprs.len();
        let derived_slots: Vec<Vec<u32>> = parsed.dexprs.iter().map(Expr::slots).collect();
        // Iterators each derived value depends on (transitively), in topological order.
        let mut derived_iters: Vec<HashSet<usize>> = vec![HashSet::new(); nd];
        for &i in derived_topo {
            let mut s = HashSet::new();
            for &slot in &derived_slots[i] {
                let slot = slot as usize;
                if slot < ni {
                    s.insert(slot);
                } else {
                    s.extend(derived_iters[slot - ni].iter().copied());
                }
            }
            derived_iters[i] = s;
        }
        let iters_of = |slots: &[u32]| -> HashSet<usize> {
            let mut s = HashSet::new();
            for &slot in slots {
                let slot = slot as usize;
                if slot < ni {
                    s.insert(slot);
                } else {
                    s.extend(derived_iters[slot - ni].iter().copied());
                }
            }
            s
        };
        let domain_slots: Vec<Vec<u32>> = parsed
            .domains
            .iter()
            .map(|d| {
                let mut v: Vec<u32> = d.exprs().iter().flat_map(|e| e.slots()).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let domain_iters: Vec<HashSet<usize>> = domain_slots.iter().map(|s| iters_of(s)).collect();
        let cons_slots: Vec<Vec<u32>> = parsed.cexprs.iter().map(Expr::slots).collect();
        let cons_iters: Vec<HashSet<usize>> = cons_slots.iter().map(|s| iters_of(s)).collect();
        Deps {
            ni,
            nd,
            derived_slots,
            domain_slots,
            domain_iters,
            cons_slots,
            cons_iters,
        }
    }
}
