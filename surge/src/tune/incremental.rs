//! Incremental tuning (Nitro's active learning): label a small seed set spread over feature
//! space, then repeatedly label the input the current model is least sure about — the smallest
//! best-vs-second-best margin, weighted by distance to what is already labelled — until an
//! iteration budget or a cross-validated accuracy is reached.
//! Labelling (timing every variant) is the expensive part of tuning; this spends it where the
//! decision boundary is.

use super::features::{FeatureSet, FeatureValues};
use super::labelling::{label, train_model};
use super::model::Scaler;
pub use super::options::IncrementalStop;
use super::options::{Progress, TuneOptions};
use super::record::InputRecord;
use super::{TuneInput, TuningBackend};
use crate::Result;

/// The seed set: farthest-point sampling in scaled feature space, one input per variant (at
/// least two), so the seed covers the spread of inputs and, as far as the spread predicts it,
/// every winning variant.
pub fn seed(features: &[FeatureValues], log: &[bool], count: usize) -> Vec<usize> {
    let raw: Vec<Vec<f64>> = features.iter().map(|f| f.values.clone()).collect();
    if raw.is_empty() {
        return Vec::new();
    }
    let scaler = Scaler::fit(&raw, log);
    let pts: Vec<Vec<f64>> = raw.iter().map(|r| scaler.transform(r)).collect();
    let dist = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
    // Start at the input with the smallest scaled feature sum (a corner), deterministically.
    let start = (0..pts.len())
        .min_by(|&i, &j| {
            pts[i]
                .iter()
                .sum::<f64>()
                .total_cmp(&pts[j].iter().sum::<f64>())
                .then(i.cmp(&j))
        })
        .unwrap_or(0);
    let mut chosen = vec![start];
    let mut dmin: Vec<f64> = pts.iter().map(|p| dist(p, &pts[start])).collect();
    while chosen.len() < count.min(pts.len()) {
        let next = (0..pts.len())
            .filter(|i| !chosen.contains(i))
            .max_by(|&i, &j| dmin[i].total_cmp(&dmin[j]).then(j.cmp(&i)))
            .expect("unchosen inputs remain");
        chosen.push(next);
        for (i, p) in pts.iter().enumerate() {
            dmin[i] = dmin[i].min(dist(p, &pts[next]));
        }
    }
    chosen
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    backend: &dyn TuningBackend,
    features: &FeatureSet,
    inputs: &[TuneInput],
    fv: &[FeatureValues],
    variants: &[String],
    opts: &TuneOptions,
    stop: &IncrementalStop,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<InputRecord>> {
    let seed_set = seed(fv, &features.log_scaled(), variants.len().max(2));
    let mut labelled: Vec<bool> = vec![false; inputs.len()];
    let mut records = Vec::new();
    for &i in &seed_set {
        labelled[i] = true;
        records.push(label(
            backend,
            &inputs[i],
            &fv[i],
            variants,
            &opts.training,
            progress,
        ));
    }
    // Scaled features of every input and each one's distance to the nearest labelled input.
    let raw: Vec<Vec<f64>> = fv.iter().map(|f| f.values.clone()).collect();
    let scaler = Scaler::fit(&raw, &features.log_scaled());
    let pts: Vec<Vec<f64>> = raw.iter().map(|r| scaler.transform(r)).collect();
    let mut dmin = vec![f64::INFINITY; inputs.len()];
    for &i in &seed_set {
        update_distances(&pts, i, &mut dmin);
    }
    let mut iterations = 0usize;
    loop {
        // None when every labelled input failed on every variant: keep labelling in input order.
        let model = train_model(features, &records, opts).ok();
        let acc = model.as_ref().and_then(|m| m.cv_accuracy);
        progress(Progress::Iteration {
            labelled: records.len(),
            cv_accuracy: acc,
        });
        if stop.iterations.is_some_and(|n| iterations >= n) {
            break;
        }
        if stop
            .accuracy
            .zip(acc)
            .is_some_and(|(target, a)| a >= target)
        {
            break;
        }
        let next = pick(model.as_ref(), fv, &pts, &labelled, &mut dmin);
        let Some(next) = next else { break };
        labelled[next] = true;
        update_distances(&pts, next, &mut dmin);
        records.push(label(
            backend,
            &inputs[next],
            &fv[next],
            variants,
            &opts.training,
            progress,
        ));
        iterations += 1;
    }
    Ok(records)
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

fn update_distances(pts: &[Vec<f64>], added: usize, dmin: &mut [f64]) {
    for (i, p) in pts.iter().enumerate() {
        dmin[i] = dmin[i].min(dist(p, &pts[added]));
    }
}

/// The next input to label: the most uncertain (smallest best-vs-second-best margin), with
/// uncertainty (1 − margin) multiplied by the distance to the nearest labelled input, relative
/// to the farthest unlabelled one. Pure BvSB keeps picking
/// near-duplicates on one stretch of the boundary and, while the model still knows one class
/// only, has no preference at all; the distance term spreads the picks.
fn pick(
    model: Option<&super::model::Model>,
    fv: &[FeatureValues],
    pts: &[Vec<f64>],
    labelled: &[bool],
    dmin: &mut [f64],
) -> Option<usize> {
    let pool: Vec<usize> = (0..pts.len()).filter(|&i| !labelled[i]).collect();
    let far = pool.iter().map(|&i| dmin[i]).fold(0.0f64, f64::max);
    let score = |i: usize| {
        let uncertainty = model.map_or(1.0, |m| 1.0 - m.margin(&fv[i].values));
        let spread = if far > 0.0 { dmin[i] / far } else { 0.0 };
        uncertainty * spread
    };
    pool.into_iter()
        .map(|i| (i, score(i)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(i, _)| i)
}
