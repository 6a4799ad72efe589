//! Cost-aware k nearest neighbours ([`ModelKind::Neighbours`](super::ModelKind::Neighbours)):
//! the class with the least measured slowdown over the k training inputs nearest to a query.

use super::scratch::{STACK_CLASSES, zeroed_scratch};

/// Neighbours a query keeps on the stack.
pub(super) const MAX_NEIGHBOURS: usize = 32;

/// The class with the highest summed log-performance over the `k` training points nearest to
/// `x` (ties: the smaller class index); no allocation for up to [`STACK_CLASSES`] classes.
pub(super) fn neighbours_predict(
    k: usize,
    points: &[Vec<f64>],
    log_performance: &[Vec<f64>],
    classes: usize,
    x: &[f64],
) -> usize {
    let k = k.clamp(1, MAX_NEIGHBOURS).min(points.len());
    // The k nearest so far, sorted by distance (then index, so ties are deterministic).
    let mut near = [(f64::INFINITY, usize::MAX); MAX_NEIGHBOURS];
    for (i, p) in points.iter().enumerate() {
        let d: f64 = p.iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum();
        if d < near[k - 1].0 {
            let mut j = k - 1;
            while j > 0 && near[j - 1].0 > d {
                near[j] = near[j - 1];
                j -= 1;
            }
            near[j] = (d, i);
        }
    }
    let mut stack = [0.0f64; STACK_CLASSES];
    let mut heap = Vec::new();
    let sum = zeroed_scratch(&mut stack, &mut heap, classes);
    for &(_, i) in near[..k].iter().filter(|(_, i)| *i != usize::MAX) {
        for (s, l) in sum.iter_mut().zip(&log_performance[i]) {
            *s += l;
        }
    }
    (0..classes)
        .max_by(|&a, &b| sum[a].total_cmp(&sum[b]).then(b.cmp(&a)))
        .unwrap_or(0)
}

/// A failed (0) or absurdly slow choice counts as this slow in a geometric mean, so one failure
/// does not zero it.
pub(super) fn performance_floor(p: f64) -> f64 {
    if p.is_finite() {
        p.clamp(1e-3, 1.0)
    } else {
        1e-3
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Classifier, Model, ModelKind, SvmSearch};

    #[test]
    fn neighbours_choose_the_least_expected_slowdown_not_the_majority_label() {
        let n = 40;
        let x: Vec<Vec<f64>> = (0..n).map(|i| vec![i as f64 / n as f64]).collect();
        let fast_wins = |i: usize| i % 5 != 1 && i % 5 != 3;
        let labels: Vec<String> = (0..n)
            .map(|i| if fast_wins(i) { "fast" } else { "safe" }.to_string())
            .collect();
        let perf = |i: usize, v: &str| match (v, fast_wins(i)) {
            ("fast", true) | ("safe", false) => 1.0,
            ("fast", false) => 1.0 / 3.0,
            _ => 0.97,
        };
        let names = vec!["f".to_string()];
        let measured = Model::train_measured(
            ModelKind::Neighbours,
            &names,
            &[false],
            &x,
            &labels,
            &SvmSearch::default(),
            Some(&perf),
        )
        .unwrap();
        let by_label = Model::train(
            ModelKind::Neighbours,
            &names,
            &[false],
            &x,
            &labels,
            &SvmSearch::default(),
        )
        .unwrap();
        let Classifier::Neighbours { k, .. } = &measured.classifier else {
            panic!("{:?}", measured.classifier);
        };
        assert!(SvmSearch::default().neighbours.contains(k), "k = {k}");
        // Cross-validated: always `safe` loses at most 3% on every input.
        let cv = measured.cv_performance.unwrap();
        assert!(cv >= 0.97 - 1e-9, "{cv}");
        for q in 0..50 {
            let q = [q as f64 / 50.0];
            assert_eq!(measured.predict(&q), "safe", "{q:?}");
            // Without measurements the same neighbours vote by label.
            assert_eq!(by_label.predict(&q), "fast", "{q:?}");
            // The allocation-free query answers like the scored one.
            let (best, scores) = measured.scores(&q);
            assert_eq!(measured.classes[best], "safe");
            assert!((scores.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
        measured.validate().unwrap();
        let back: Model = serde_json::from_str(&serde_json::to_string(&measured).unwrap()).unwrap();
        assert_eq!(back, measured);
        // A damaged store is refused, not queried.
        let mut bad = measured.clone();
        if let Classifier::Neighbours {
            log_performance, ..
        } = &mut bad.classifier
        {
            log_performance[3].pop();
        }
        assert!(bad.validate().is_err());
    }
}
