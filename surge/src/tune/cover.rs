//! Class pruning by near-tie set cover: the classes the model learns.
//!
//! On real hardware many variants tie within timing noise, and labelling each training input
//! with its strict winner gives the classifier dozens of noisy classes (and a one-vs-one SVM a
//! query cost quadratic in them). Instead a small set of variants is chosen such that every
//! training input has a chosen variant within `tolerance` of its measured best: greedy set
//! cover (the variant that is near-best on the most still-uncovered inputs first; ties broken
//! by fewer failures, then the higher geometric-mean performance over all inputs, then the id).
//! Each input is then labelled with the fastest chosen variant there. The classes are few and
//! each stands for a region where it is robustly near-best; the price, at most `tolerance` per
//! training input, is reported as the cover's own bound on `tuned_vs_exhaustive`.
//!
//! A variant that would newly cover fewer than `min_inputs` inputs is not made a class: a class
//! near-best on one training input alone is, on noisy hardware, mostly noise, and no classifier
//! learns a region from one example. The inputs so left over are covered at a relaxed
//! tolerance (doubled, up to [`RELAX_LIMIT`]; first by the classes already chosen, then by new
//! ones of `min_inputs`); an input still not within [`RELAX_LIMIT`] of its best gets its own
//! winner as a class after all. The bound and the worst input report what the relaxation costs.

use super::record::InputRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The chosen classes and what they cost on the training inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cover {
    /// A variant within this fraction of an input's best time covers that input.
    pub tolerance: f64,
    /// A class must newly cover at least this many inputs (the first class is always taken, and
    /// so is the winner of an input no class covers within [`RELAX_LIMIT`]).
    #[serde(default = "one")]
    pub min_inputs: usize,
    /// At most this many classes (0: no cap; see [`cover_capped`]).
    #[serde(default)]
    pub max_classes: usize,
    /// Labelled inputs no chosen variant is within `tolerance` of (covered at a relaxed
    /// tolerance; 0 when `min_inputs` is 1).
    #[serde(default)]
    pub uncovered: usize,
    /// The chosen variants, in the order the greedy cover took them.
    pub variants: Vec<String>,
    /// Per training input: the fastest chosen variant there (None where every variant failed).
    pub labels: Vec<Option<String>>,
    /// Geometric mean over labelled inputs of best time / label time: the best
    /// `tuned_vs_exhaustive` a model restricted to these classes can reach on the training set.
    pub bound: f64,
    /// The worst input's best time / label time (at least 1 / (1 + tolerance)).
    pub worst: f64,
}

/// How far the tolerance is relaxed for inputs that no class of `min_inputs` covers: an input
/// that would lose more than this (a third of its speed) gets a class of its own.
pub const RELAX_LIMIT: f64 = 0.5;

fn one() -> usize {
    1
}

/// The near-tie set cover of `records` (see the module documentation).
pub fn cover(records: &[InputRecord], tolerance: f64, min_inputs: usize) -> Cover {
    cover_capped(records, tolerance, min_inputs, 0)
}

/// The time table a cover is computed on: every variant that succeeded somewhere, in id order
/// (deterministic whatever the order of measurements), each input's time of each, and each
/// input's best time.
struct Table<'a> {
    ids: Vec<&'a str>,
    times: Vec<Vec<Option<f64>>>,
    best: Vec<Option<f64>>,
}

impl<'a> Table<'a> {
    fn new(records: &'a [InputRecord]) -> Table<'a> {
        let ids: Vec<&str> = {
            let mut v: Vec<&str> = records
                .iter()
                .flat_map(|r| {
                    r.measurements
                        .iter()
                        .filter(|m| m.seconds().is_some())
                        .map(|m| m.variant.as_str())
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let col: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(j, v)| (*v, j)).collect();
        let times: Vec<Vec<Option<f64>>> = records
            .iter()
            .map(|r| {
                let mut row = vec![None; ids.len()];
                for m in &r.measurements {
                    if let (Some(t), Some(&j)) = (m.seconds(), col.get(m.variant.as_str()))
                        && t.is_finite()
                        && t > 0.0
                    {
                        // A duplicated measurement keeps the faster time.
                        row[j] = Some(row[j].map_or(t, |o: f64| o.min(t)));
                    }
                }
                row
            })
            .collect();
        let best: Vec<Option<f64>> = times
            .iter()
            .map(|row| row.iter().flatten().copied().reduce(f64::min))
            .collect();
        Table { ids, times, best }
    }

    /// Training inputs.
    fn inputs(&self) -> usize {
        self.times.len()
    }

    /// Whether variant `j` is within `tolerance` of input `i`'s best time (with a relative
    /// slack, so a variant exactly at the tolerance is not lost to rounding).
    fn near(&self, i: usize, j: usize, tolerance: f64) -> bool {
        match (self.times[i][j], self.best[i]) {
            (Some(t), Some(b)) => t <= b * (1.0 + tolerance) * (1.0 + 1e-12),
            _ => false,
        }
    }

    /// Tie-break key per variant: failures on the `labelled` inputs (fewer first), then mean
    /// log performance over the inputs it ran on (higher first).
    fn quality(&self, labelled: &[usize]) -> Vec<(usize, f64)> {
        (0..self.ids.len())
            .map(|j| {
                let (mut fails, mut sum, mut n) = (0usize, 0.0, 0usize);
                for &i in labelled {
                    match (self.times[i][j], self.best[i]) {
                        (Some(t), Some(b)) => {
                            sum += (b / t).ln();
                            n += 1;
                        }
                        _ => fails += 1,
                    }
                }
                (
                    fails,
                    if n > 0 {
                        sum / n as f64
                    } else {
                        f64::NEG_INFINITY
                    },
                )
            })
            .collect()
    }
}

/// The greedy cover's state: the tie-break keys, the inputs not yet covered, the classes taken.
struct Greedy<'t, 'a> {
    table: &'t Table<'a>,
    quality: Vec<(usize, f64)>,
    uncovered: Vec<bool>,
    chosen: Vec<usize>,
}

impl Greedy<'_, '_> {
    /// One greedy pass at tolerance `tol`, taking classes that newly cover at least `min_gain`
    /// inputs; inputs a chosen class already covers at `tol` are covered for free.
    fn pass(&mut self, tol: f64, min_gain: usize) {
        let t = self.table;
        for (i, u) in self.uncovered.iter_mut().enumerate() {
            if *u && self.chosen.iter().any(|&j| t.near(i, j, tol)) {
                *u = false;
            }
        }
        while self.uncovered.iter().any(|u| *u) {
            let gain = |j: usize| {
                (0..t.inputs())
                    .filter(|&i| self.uncovered[i] && t.near(i, j, tol))
                    .count()
            };
            let quality = &self.quality;
            let pick = (0..t.ids.len())
                .filter(|j| !self.chosen.contains(j))
                .map(|j| (j, gain(j)))
                .filter(|&(_, g)| g > 0)
                .max_by(|&(a, ga), &(b, gb)| {
                    ga.cmp(&gb)
                        .then(quality[b].0.cmp(&quality[a].0))
                        .then(quality[a].1.total_cmp(&quality[b].1))
                        .then(b.cmp(&a))
                });
            // Every labelled input is near-best for its own best variant, so a pick exists.
            let Some((j, g)) = pick else { break };
            if g < min_gain && !self.chosen.is_empty() {
                break;
            }
            self.chosen.push(j);
            for (i, u) in self.uncovered.iter_mut().enumerate() {
                if *u && t.near(i, j, tol) {
                    *u = false;
                }
            }
        }
    }
}

/// The classes (columns of `table`) the cover takes, in order.
fn choose(
    table: &Table<'_>,
    labelled: &[usize],
    tolerance: f64,
    min_inputs: usize,
    max_classes: usize,
) -> Vec<usize> {
    let mut greedy = Greedy {
        table,
        quality: table.quality(labelled),
        uncovered: table.best.iter().map(Option::is_some).collect(),
        chosen: Vec::new(),
    };
    // The tolerance is relaxed (doubled up to RELAX_LIMIT) for the inputs no class of
    // `min_inputs` covers; last, an input still not within RELAX_LIMIT gets a class of its own.
    let mut tol = tolerance;
    loop {
        greedy.pass(tol, min_inputs.max(1));
        if tol >= RELAX_LIMIT {
            break;
        }
        tol = (tol * 2.0).clamp(0.01, RELAX_LIMIT);
    }
    greedy.pass(tolerance, 1);
    let mut chosen = greedy.chosen;
    if max_classes > 0 {
        chosen.truncate(max_classes);
    }
    chosen
}

/// [`cover`] keeping at most `max_classes` classes (0: no cap), the first the greedy cover
/// took: those near-best on the most inputs. Inputs covered only by a dropped class are
/// labelled with the fastest kept one (the bound reports the cost). The cap bounds the
/// one-vs-one SVM's query cost, which grows with the square of the classes.
pub fn cover_capped(
    records: &[InputRecord],
    tolerance: f64,
    min_inputs: usize,
    max_classes: usize,
) -> Cover {
    let tolerance = tolerance.max(0.0);
    let table = Table::new(records);
    let (times, best) = (&table.times, &table.best);
    let labelled: Vec<usize> = (0..records.len()).filter(|&i| best[i].is_some()).collect();
    let chosen = choose(&table, &labelled, tolerance, min_inputs, max_classes);
    let left = (0..records.len())
        .filter(|&i| best[i].is_some() && !chosen.iter().any(|&j| table.near(i, j, tolerance)))
        .count();
    let labels: Vec<Option<usize>> = (0..records.len())
        .map(|i| {
            chosen
                .iter()
                .filter_map(|&j| times[i][j].map(|t| (j, t)))
                // The first chosen wins exact ties.
                .reduce(|a, b| if b.1 < a.1 { b } else { a })
                .map(|(j, _)| j)
        })
        .collect();
    let ratios: Vec<f64> = labelled
        .iter()
        .filter_map(|&i| Some(best[i]? / times[i][labels[i]?]?))
        .collect();
    let bound = if ratios.is_empty() {
        1.0
    } else {
        (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()
    };
    Cover {
        tolerance,
        min_inputs,
        max_classes,
        uncovered: left,
        variants: chosen.iter().map(|&j| table.ids[j].to_string()).collect(),
        labels: labels
            .iter()
            .map(|l| l.map(|j| table.ids[j].to_string()))
            .collect(),
        bound,
        worst: ratios.iter().copied().fold(1.0, f64::min),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::training::Measurement;

    fn rec(times: &[(&str, Option<f64>)]) -> InputRecord {
        InputRecord {
            name: "x".into(),
            features: vec![],
            feature_seconds: 0.0,
            measurements: times
                .iter()
                .map(|(v, t)| match t {
                    Some(t) => Measurement::ok(*v, *t),
                    None => Measurement::failed(*v, "no"),
                })
                .collect(),
            best: None,
            disturbance: Default::default(),
        }
    }

    fn table(rows: &[&[f64]]) -> Vec<InputRecord> {
        const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
        rows.iter()
            .map(|r| {
                let row: Vec<(&str, Option<f64>)> = r
                    .iter()
                    .enumerate()
                    .map(|(j, t)| (NAMES[j], (t.is_finite()).then_some(*t)))
                    .collect();
                rec(&row)
            })
            .collect()
    }

    const X: f64 = f64::INFINITY; // failed

    #[test]
    fn a_class_cap_keeps_the_widest_classes_and_relabels() {
        // `a` is near-best on three inputs, `b` on two, `c` on one: capped at two classes,
        // `c`'s input gets the faster of `a` and `b` there.
        let r = table(&[
            &[1.00, 2.0, 3.0],
            &[1.00, 2.0, 3.0],
            &[1.00, 2.0, 3.0],
            &[2.00, 1.0, 3.0],
            &[2.00, 1.0, 3.0],
            &[1.50, 1.2, 1.0],
        ]);
        assert_eq!(cover(&r, 0.03, 1).variants, ["a", "b", "c"]);
        let c = cover_capped(&r, 0.03, 1, 2);
        assert_eq!(
            (c.variants.clone(), c.max_classes),
            (vec!["a".to_string(), "b".into()], 2)
        );
        assert_eq!(c.labels[5].as_deref(), Some("b"));
        assert!((c.worst - 1.0 / 1.2).abs() < 1e-12, "{}", c.worst);
        assert_eq!(c.uncovered, 1);
    }

    #[test]
    fn finds_the_planted_minimal_cover() {
        // Six inputs, five variants; `c` is near-best on 0..3, `e` on 3..6: {c, e} covers all,
        // though every input has a different strict winner.
        let r = table(&[
            &[1.00, 1.30, 1.02, 3.0, 2.0],
            &[1.50, 1.00, 1.01, 3.0, 2.0],
            &[1.20, 1.30, 1.00, 3.0, 2.0],
            &[2.00, 2.00, 1.03, 1.00, 1.01],
            &[3.00, 3.00, 3.00, 1.02, 1.00],
            &[3.00, 3.00, 3.00, 1.00, 1.02],
        ]);
        let c = cover(&r, 0.03, 1);
        assert_eq!(c.variants, vec!["c", "e"]);
        // Each input gets the faster of the two (input 3: `e`, though `c` covered it first).
        assert_eq!(
            c.labels,
            ["c", "c", "c", "e", "e", "e"]
                .iter()
                .map(|s| Some(s.to_string()))
                .collect::<Vec<_>>()
        );
        assert!(c.worst >= 1.0 / 1.03 - 1e-12, "{}", c.worst);
        let expect = ((1.0f64 / 1.02).ln()
            + (1.0f64 / 1.01).ln()
            + 0.0
            + (1.0f64 / 1.01).ln()
            + 0.0
            + (1.0f64 / 1.02).ln())
            / 6.0;
        assert!((c.bound - expect.exp()).abs() < 1e-12, "{}", c.bound);
        // No tolerance: every strict winner is a class (`d` wins twice, so it comes first; the
        // others by geometric-mean performance).
        let c0 = cover(&r, 0.0, 1);
        assert_eq!(c0.variants, vec!["d", "e", "c", "b", "a"]);
        assert_eq!(c0.bound, 1.0);
    }

    #[test]
    fn tolerance_edges_are_inclusive() {
        // `b` is exactly 5 % slower on input 0 and the best on input 1.
        let r = table(&[&[1.00, 1.05], &[2.00, 1.00]]);
        assert_eq!(cover(&r, 0.05, 1).variants, vec!["b"]);
        assert_eq!(cover(&r, 0.0499, 1).variants.len(), 2);
        // A large tolerance collapses to one class: ties on coverage go to the better geomean.
        let r = table(&[&[1.0, 1.05, 1.2], &[1.2, 1.05, 1.0]]);
        let c = cover(&r, 0.25, 1);
        assert_eq!(c.variants, vec!["b"]);
        assert_eq!(c.labels, vec![Some("b".into()), Some("b".into())]);
        // Equal coverage and geomean: the smaller id.
        let r = table(&[&[1.0, 1.0]]);
        assert_eq!(cover(&r, 0.0, 1).variants, vec!["a"]);
    }

    #[test]
    fn a_variant_that_fails_somewhere_loses_ties_and_never_labels_its_failures() {
        // `a` and `b` cover the same inputs and are equally fast there, but `a` fails on
        // input 2: `b` wins the tie, and `c` covers input 2.
        let r = table(&[&[1.0, 1.0, 2.0], &[1.0, 1.0, 2.0], &[X, 2.0, 1.0]]);
        let c = cover(&r, 0.03, 1);
        assert_eq!(c.variants, vec!["b", "c"]);
        assert_eq!(
            c.labels,
            vec![Some("b".into()), Some("b".into()), Some("c".into())]
        );
        // `a` covers more inputs than anything else, but fails on the last one: the cover adds
        // a second class there and never labels an input with a variant that failed on it.
        let r = table(&[
            &[1.0, 1.5, 2.0],
            &[1.0, 1.5, 2.0],
            &[1.0, 1.5, 2.0],
            &[X, 1.0, 1.0],
        ]);
        let c = cover(&r, 0.03, 1);
        assert_eq!(c.variants, vec!["a", "b"]);
        assert_eq!(c.labels[3].as_deref(), Some("b"));
        // Inputs where everything failed are not labelled and do not count in the bound.
        let r = table(&[&[X, X], &[1.0, 2.0]]);
        let c = cover(&r, 0.03, 1);
        assert_eq!(c.labels, vec![None, Some("a".into())]);
        assert_eq!(c.bound, 1.0);
        // Nothing at all.
        let c = cover(&[], 0.03, 1);
        assert!(c.variants.is_empty() && c.labels.is_empty());
    }

    #[test]
    fn classes_must_cover_enough_inputs() {
        // `a` is near-best on four inputs, `b` and `c` on one each.
        let r = table(&[
            &[1.0, 2.0, 2.0],
            &[1.0, 2.0, 2.0],
            &[1.0, 2.0, 2.0],
            &[1.0, 2.0, 2.0],
            &[1.2, 1.0, 3.0],
            &[1.5, 3.0, 1.0],
        ]);
        let c = cover(&r, 0.03, 1);
        assert_eq!(c.variants, vec!["a", "b", "c"]);
        assert_eq!(c.uncovered, 0);
        // At two inputs per class only `a` qualifies; the two leftovers are labelled `a` and
        // cost 1/1.2 and 1/1.5.
        let c = cover(&r, 0.03, 2);
        assert_eq!(c.variants, vec!["a"]);
        assert_eq!(c.uncovered, 2);
        assert!(c.labels.iter().all(|l| l.as_deref() == Some("a")));
        let want = ((1.0f64 / 1.2).ln() + (1.0f64 / 1.5).ln()) / 6.0;
        assert!((c.bound - want.exp()).abs() < 1e-12);
        assert!((c.worst - 1.0 / 1.5).abs() < 1e-12);
        // Relaxation: `b` is within 5 % on two leftovers with different winners, so it becomes
        // a class at 6 %; `e` wins its input by 3x, beyond RELAX_LIMIT, so it is a class of its
        // own.
        let r = table(&[
            &[1.0, 2.0, 2.0, 2.0, 2.0],
            &[1.0, 2.0, 2.0, 2.0, 2.0],
            &[1.0, 2.0, 2.0, 2.0, 2.0],
            &[2.0, 1.05, 1.0, 3.0, 3.0],
            &[2.0, 1.05, 3.0, 1.0, 3.0],
            &[3.0, 3.0, 3.0, 3.0, 1.0],
        ]);
        let c = cover(&r, 0.03, 2);
        assert_eq!(c.variants, vec!["a", "b", "e"]);
        assert_eq!(c.uncovered, 2);
        assert!((c.worst - 1.0 / 1.05).abs() < 1e-12);
        // The first class is taken whatever it covers.
        let c = cover(&table(&[&[1.0, 2.0]]), 0.03, 5);
        assert_eq!(c.variants, vec!["a"]);
    }

    #[test]
    fn labels_are_the_fastest_chosen_variant_and_within_tolerance() {
        // A pseudo-random table: whatever the cover, each label is a chosen variant, the
        // fastest chosen one on its input, and within tolerance of the input's best.
        let mut s = 12345u64;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as f64 / (1u64 << 31) as f64
        };
        let rows: Vec<Vec<f64>> = (0..40)
            .map(|_| (0..6).map(|_| 1.0 + rnd()).collect())
            .collect();
        let refs: Vec<&[f64]> = rows.iter().map(|r| r.as_slice()).collect();
        let r = table(&refs);
        for tol in [0.0, 0.03, 0.1, 0.5] {
            let c = cover(&r, tol, 1);
            for (i, l) in c.labels.iter().enumerate() {
                let l = l.as_deref().unwrap();
                assert!(c.variants.iter().any(|v| v == l));
                let t = |v: &str| r[i].measurements.iter().find(|m| m.variant == v).unwrap();
                let tl = t(l).seconds().unwrap();
                let best = rows[i].iter().copied().fold(f64::INFINITY, f64::min);
                assert!(tl <= best * (1.0 + tol) * (1.0 + 1e-12));
                for v in &c.variants {
                    assert!(tl <= t(v).seconds().unwrap());
                }
            }
            assert!(c.bound >= 1.0 / (1.0 + tol) - 1e-12 && c.bound <= 1.0);
        }
    }
}
