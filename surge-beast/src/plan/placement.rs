//! Stage 8 of planning: where each derived value and constraint is evaluated — the shallowest
//! loop where all its inputs are bound — and which derived values anything needs.

use std::collections::HashMap;

use super::deps::Deps;

/// Where each entry is evaluated: a loop position, `-1` for before all loops.
pub(super) struct Placement {
    /// Number of iterators.
    ni: usize,
    /// Loop position of each iterator.
    loop_pos: Vec<usize>,
    /// Loop position of each derived value.
    pub derived_pos: Vec<i64>,
    /// Loop position of each constraint.
    pub cons_pos: Vec<i64>,
    /// Derived values that an active constraint or a domain needs (and that are not constant).
    pub needed: Vec<bool>,
    /// Derived value -> topological rank, for evaluation order within a loop.
    pub topo_rank: HashMap<usize, usize>,
}

impl Placement {
    /// Stage 8: place every derived value and constraint under the loop `order`.
    pub fn new(
        order: &[usize],
        deps: &Deps,
        derived_topo: &[usize],
        topo_rank: HashMap<usize, usize>,
        derived_const: &[bool],
        active: &[usize],
    ) -> Placement {
        let (ni, nd) = (deps.ni, deps.nd);
        let mut loop_pos = vec![0usize; ni];
        for (k, &i) in order.iter().enumerate() {
            loop_pos[i] = k;
        }
        let mut place = Placement {
            ni,
            loop_pos,
            derived_pos: vec![-1; nd],
            cons_pos: Vec::new(),
            needed: vec![false; nd],
            topo_rank,
        };
        for &i in derived_topo {
            place.derived_pos[i] = place.pos_of_slots(&deps.derived_slots[i]);
        }
        place.cons_pos = deps
            .cons_slots
            .iter()
            .map(|s| place.pos_of_slots(s))
            .collect();

        // Derived values that something needs.
        let mut stack: Vec<usize> = Vec::new();
        let mark = |slots: &[u32], stack: &mut Vec<usize>| {
            for &s in slots {
                if s as usize >= ni {
                    stack.push(s as usize - ni);
                }
            }
        };
        for &c in active {
            mark(&deps.cons_slots[c], &mut stack);
        }
        for s in &deps.domain_slots {
            mark(s, &mut stack);
        }
        while let Some(d) = stack.pop() {
            if !place.needed[d] && !derived_const[d] {
                place.needed[d] = true;
                mark(&deps.derived_slots[d], &mut stack);
            }
        }
        place
    }

    /// The loop position at which all of `slots` are bound (`-1`: before all loops).
    pub fn pos_of_slots(&self, slots: &[u32]) -> i64 {
        slots
            .iter()
            .map(|&s| {
                let s = s as usize;
                if s < self.ni {
                    self.loop_pos[s] as i64
                } else {
                    self.derived_pos[s - self.ni]
                }
            })
            .max()
            .unwrap_or(-1)
    }

    /// Slots of the needed derived values placed at `pos`, in topological order.
    pub(super) fn all_needed_at(&self, pos: i64) -> Vec<u32> {
        let nd = self.needed.len();
        let mut v: Vec<usize> = (0..nd)
            .filter(|&d| self.needed[d] && self.derived_pos[d] == pos)
            .collect();
        v.sort_by_key(|d| self.topo_rank.get(d).copied().unwrap_or(0));
        v.into_iter().map(|d| (self.ni + d) as u32).collect()
    }
}
