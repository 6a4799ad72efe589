//! The one-vs-one SVMs flattened for fast queries ([`CompiledSvm`]) and the lazily built cache
//! a classifier keeps them in ([`SvmCache`]).

use super::scratch::{STACK_CLASSES, zeroed_scratch};
use super::svm::{SvmPair, pick_vote, tally};

/// The one-vs-one SVMs flattened for queries, as libsvm evaluates them: every distinct support
/// vector once, so a query computes one kernel value per distinct training point however many
/// pairs share it, then each pair's decision value is a short weighted sum of those values.
/// linfa's kernel and weights, summed in another order (the answers differ from linfa's only
/// where a decision value is within rounding of zero).
///
/// The layout is for the query's latency, which `surge tune` reports against a 5 µs budget: the
/// support vectors are stored feature-major, so the squared distances to all of them are
/// accumulated one feature at a time, independent lanes a compiler vectorizes, instead of one
/// serial 9-term sum per support vector; and each pair's weighted sum runs in four independent
/// partial sums, not one chain of dependent additions.
#[derive(Debug, Clone)]
pub struct CompiledSvm {
    dim: usize,
    /// Distinct support vectors.
    count: usize,
    /// linfa's Gaussian kernel width: k(x, y) = exp(-|x - y|² / eps).
    eps: f64,
    /// Distinct support vectors, feature-major: feature `j` of support vector `i` at
    /// `j * count + i`.
    columns: Vec<f64>,
    pairs: Vec<CompiledPair>,
    /// Every pair's terms, one pair after another, in linfa's order: the support vector (an
    /// index into the distinct ones) and its coefficient.
    term_points: Vec<u32>,
    term_weights: Vec<f64>,
}

#[derive(Debug, Clone)]
struct CompiledPair {
    a: usize,
    b: usize,
    rho: f64,
    /// This pair's range of [`CompiledSvm::term_points`] and [`CompiledSvm::term_weights`].
    terms: std::ops::Range<usize>,
}

/// Kernel values a query keeps on the stack (more distinct support vectors: one allocation).
const STACK_POINTS: usize = 256;
/// Decision values a query keeps on the stack (up to 16 classes' one-vs-one pairs).
const STACK_PAIRS: usize = 120;

impl CompiledSvm {
    /// Flattens fitted pairs; None when they are not all Gaussian-kernel SVMs of one width
    /// (then queries use linfa's own evaluation). linfa keeps the support vectors private;
    /// their serialized form is public, and this runs once per model.
    pub fn compile(pairs: &[SvmPair]) -> Option<CompiledSvm> {
        use std::collections::HashMap;
        let mut dim = None::<usize>;
        let mut eps = None::<f64>;
        let mut points: Vec<f64> = Vec::new();
        let mut index: HashMap<Vec<u64>, u32> = HashMap::new();
        let mut out = Vec::with_capacity(pairs.len());
        let mut all_terms: Vec<(u32, f64)> = Vec::new();
        for p in pairs {
            let v = serde_json::to_value(&p.svm).ok()?;
            let e = v.get("kernel_method")?.get("Gaussian")?.as_f64()?;
            if eps.is_some_and(|x| x != e) || e.is_nan() || e <= 0.0 {
                return None;
            }
            eps = Some(e);
            let w = v.get("sep_hyperplane")?.get("WeightedCombination")?;
            let shape = w.get("dim")?;
            let (n, d) = (
                shape.get(0)?.as_u64()? as usize,
                shape.get(1)?.as_u64()? as usize,
            );
            if dim.is_some_and(|x| x != d) {
                return None;
            }
            dim = Some(d);
            let data: Vec<f64> = w
                .get("data")?
                .as_array()?
                .iter()
                .map(|x| x.as_f64())
                .collect::<Option<_>>()?;
            // linfa's own filter: the support vectors are the rows with a non-zero weight.
            let alphas: Vec<f64> = p
                .svm
                .alpha
                .iter()
                .copied()
                .filter(|a| a.abs() > 100.0 * f64::EPSILON)
                .collect();
            if data.len() != n * d || alphas.len() != n {
                return None;
            }
            let start = all_terms.len();
            let terms = data.chunks(d.max(1)).take(n).zip(alphas).map(|(row, a)| {
                let key: Vec<u64> = row.iter().map(|x| x.to_bits()).collect();
                let next = index.len() as u32;
                let i = *index.entry(key).or_insert_with(|| {
                    points.extend_from_slice(row);
                    next
                });
                (i, a)
            });
            all_terms.extend(terms);
            out.push(CompiledPair {
                a: p.a,
                b: p.b,
                rho: p.svm.rho,
                terms: start..start + n,
            });
        }
        let dim = dim.unwrap_or(0);
        let count = points.len() / dim.max(1);
        let mut columns = vec![0.0; dim * count];
        for (i, row) in points.chunks(dim.max(1)).take(count).enumerate() {
            for (j, v) in row.iter().enumerate() {
                columns[j * count + i] = *v;
            }
        }
        Some(CompiledSvm {
            dim,
            count,
            eps: eps.unwrap_or(1.0),
            columns,
            pairs: out,
            term_points: all_terms.iter().map(|t| t.0).collect(),
            term_weights: all_terms.iter().map(|t| t.1).collect(),
        })
    }

    /// Distinct support vectors (one kernel evaluation each per query).
    pub fn support_vectors(&self) -> usize {
        self.count
    }

    /// The voted class; None on a feature-count mismatch or more classes than the stack holds.
    pub(super) fn predict(&self, x: &[f64], classes: usize) -> Option<usize> {
        if x.len() != self.dim || classes > STACK_CLASSES {
            return None;
        }
        let n = self.count;
        let mut stack = [0.0f64; STACK_POINTS];
        let mut heap = Vec::new();
        let k = zeroed_scratch(&mut stack, &mut heap, n);
        for (column, xj) in self.columns.chunks_exact(n.max(1)).zip(x) {
            for (d2, p) in k.iter_mut().zip(column) {
                let t = p - xj;
                *d2 += t * t;
            }
        }
        for ki in k.iter_mut() {
            *ki = (-*ki / self.eps).exp();
        }
        // Votes first; the logistic confidences (one `exp` per pair) only break a tie in
        // votes, so they are computed only then. The same answer as `tally` + `pick_vote`.
        let mut dstack = [0.0f64; STACK_PAIRS];
        let mut dheap = Vec::new();
        let dv = zeroed_scratch(&mut dstack, &mut dheap, self.pairs.len());
        let mut votes = [0u32; STACK_CLASSES];
        for (p, d) in self.pairs.iter().zip(dv.iter_mut()) {
            *d = weighted_sum(
                k,
                &self.term_points[p.terms.clone()],
                &self.term_weights[p.terms.clone()],
            ) - p.rho;
            if *d >= 0.0 {
                votes[p.a] += 1;
            } else {
                votes[p.b] += 1;
            }
        }
        let top = votes[..classes].iter().copied().max().unwrap_or(0);
        let mut leaders = votes[..classes]
            .iter()
            .enumerate()
            .filter(|(_, v)| **v == top);
        if let (Some((c, _)), None) = (leaders.next(), leaders.next()) {
            return Some(c);
        }
        let mut votes = [0u32; STACK_CLASSES];
        let mut conf = [0.0f64; STACK_CLASSES];
        let mut seen = [0u32; STACK_CLASSES];
        let decisions = self
            .pairs
            .iter()
            .zip(dv.iter())
            .map(|(p, d)| (p.a, p.b, *d));
        tally(decisions, &mut votes, &mut conf, &mut seen);
        Some(pick_vote(
            &votes[..classes],
            &mut conf[..classes],
            &seen[..classes],
        ))
    }
}

/// `sum(k[points[t]] * weights[t])` in four interleaved partial sums.
fn weighted_sum(k: &[f64], points: &[u32], weights: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (p4, w4) = (points.chunks_exact(4), weights.chunks_exact(4));
    let (pr, wr) = (p4.remainder(), w4.remainder());
    for (p, w) in p4.zip(w4) {
        for l in 0..4 {
            acc[l] += k[p[l] as usize] * w[l];
        }
    }
    for (p, w) in pr.iter().zip(wr) {
        acc[0] += k[*p as usize] * w;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// The lazily built [`CompiledSvm`] of a classifier: derived data, so it is neither stored
/// nor compared.
#[derive(Clone, Default)]
pub struct SvmCache(std::sync::OnceLock<Option<CompiledSvm>>);

impl SvmCache {
    pub fn get(&self, pairs: &[SvmPair]) -> Option<&CompiledSvm> {
        self.0.get_or_init(|| CompiledSvm::compile(pairs)).as_ref()
    }
}

impl PartialEq for SvmCache {
    fn eq(&self, _: &SvmCache) -> bool {
        true
    }
}

impl std::fmt::Debug for SvmCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SvmCache")
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Classifier, Model, ModelKind, SvmSearch};

    #[test]
    fn the_flattened_svm_answers_like_linfa_and_shares_support_vectors() {
        // Four classes in the quadrants of a noisy plane, plus a useless third feature.
        let mut s = 7u64;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..80 {
            let (a, b, c) = (rnd() * 2.0 - 1.0, rnd() * 2.0 - 1.0, rnd());
            let q = usize::from(a + 0.1 * (rnd() - 0.5) > 0.0)
                + 2 * usize::from(b + 0.1 * (rnd() - 0.5) > 0.0);
            x.push(vec![a, b, c]);
            y.push(format!("v{q}"));
        }
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let m = Model::train(
            ModelKind::Svm,
            &names,
            &[false; 3],
            &x,
            &y,
            &SvmSearch::default(),
        )
        .unwrap();
        let (pairs, svs) = m.svm_cost().expect("a Gaussian SVM flattens");
        assert_eq!(pairs, 6);
        // Every pair's support vectors are training points, counted once however many pairs
        // use them.
        let per_pair: usize = match &m.classifier {
            Classifier::Svm { pairs, .. } => pairs.iter().map(|p| p.svm.nsupport()).sum(),
            _ => unreachable!(),
        };
        assert!(svs <= x.len() && svs <= per_pair, "{svs} {per_pair}");
        for i in 0..2000 {
            let p = [rnd() * 2.4 - 1.2, rnd() * 2.4 - 1.2, rnd()];
            let fast = m.predict(&p);
            let slow = &m.classes[m.predict_unflattened(&p)];
            assert_eq!(fast, slow, "query {i}: {p:?}");
        }
        // A store round trip drops the flattened form and rebuilds it.
        let back: Model = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.svm_cost(), Some((pairs, svs)));
        assert_eq!(back.predict(&[0.5, 0.5, 0.5]), "v3");
        assert_eq!(back.predict(&[-0.5, -0.5, 0.5]), "v0");
    }
}
