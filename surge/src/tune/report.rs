//! Evaluating a tuned model on held-out test inputs against exhaustive search, the default
//! variant and the vendor reference, and writing the report (JSON and SVG plots like the
//! dissertation's Figure 5.5).

use super::scoring::{self, Scored};
use super::select::Tuned;
use super::training::{self, Measurement, TrainingConfig};
use super::{TuneInput, TuningBackend, tune_err};
use crate::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One test input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestResult {
    pub name: String,
    pub features: Vec<f64>,
    /// Work per run (flops for spmv, elements for reduce and scan).
    pub work: f64,
    pub tuned: String,
    pub best: Option<String>,
    pub default: String,
    pub tuned_seconds: Option<f64>,
    pub best_seconds: Option<f64>,
    pub default_seconds: Option<f64>,
    pub reference_seconds: Option<f64>,
    /// best / tuned time, at most 1 (1 = the tuned choice is as fast as exhaustive search's).
    /// From the confirmation round when there is one.
    pub tuned_vs_best: Option<f64>,
    /// The same from the exhaustive rounds alone (where the best time is the least of many
    /// noisy times, so biased low: see [`training::confirm`]).
    pub tuned_vs_best_unconfirmed: Option<f64>,
    pub warnings: Vec<String>,
    /// The exhaustive rounds: every variant.
    pub measurements: Vec<Measurement>,
    /// The confirmation round: the exhaustive pick, the tuned pick and the default timed
    /// afresh, interleaved (empty when `confirm_rounds` is 0). The `*_seconds` above come from
    /// it where it succeeded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub confirmation: Vec<Measurement>,
    /// How disturbed the measurement was (steal by other guests, attempts discarded for it).
    pub disturbance: training::Disturbance,
}

#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub results: Vec<TestResult>,
    /// Geometric mean over test inputs of best time / tuned-choice time (each at most 1),
    /// from the confirmation round when there is one.
    pub tuned_vs_exhaustive: f64,
    /// The same from the exhaustive rounds alone (biased low, see
    /// [`TestResult::tuned_vs_best_unconfirmed`]).
    pub tuned_vs_exhaustive_unconfirmed: f64,
    /// The same for the default variant.
    pub default_vs_exhaustive: f64,
    /// Fraction of test inputs where the tuned choice is the fastest variant.
    pub exact_accuracy: f64,
    /// Mean time of the feature pass and of the model query per test input, in microseconds.
    pub mean_feature_us: f64,
    pub mean_query_us: f64,
}

fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x.max(1e-12).ln(), n + 1));
    if n == 0 {
        f64::NAN
    } else {
        (s / n as f64).exp()
    }
}

/// Times every variant on each test input and compares the tuned choice with the best, one
/// input after the other ([`scoring::score_each`]), then sums the scores up
/// ([`Evaluation::from_scored`]).
pub fn evaluate(
    tuned: &Tuned<'_>,
    backend: &dyn TuningBackend,
    inputs: &[TuneInput],
    cfg: &TrainingConfig,
    step: &mut dyn FnMut(&str, &str),
) -> Result<Evaluation> {
    Evaluation::from_scored(scoring::score_each(tuned, backend, inputs, cfg, step)?)
}

impl Evaluation {
    /// The evaluation of the test inputs' scores, in the inputs' order (an error for none).
    pub fn from_scored(scored: Vec<Scored>) -> Result<Evaluation> {
        if scored.is_empty() {
            return Err(tune_err("no test inputs"));
        }
        let n = scored.len() as f64;
        let feat_us = scored.iter().map(|s| s.feature_seconds * 1e6).sum::<f64>();
        let query_us = scored.iter().map(|s| s.query_seconds * 1e6).sum::<f64>();
        let results: Vec<TestResult> = scored.into_iter().map(|s| s.result).collect();
        let scored: Vec<&TestResult> = results
            .iter()
            .filter(|r| r.best_seconds.is_some())
            .collect();
        Ok(Evaluation {
            tuned_vs_exhaustive: geomean(scored.iter().map(|r| r.tuned_vs_best.unwrap_or(0.0))),
            tuned_vs_exhaustive_unconfirmed: geomean(scored.iter().map(|r| {
                r.tuned_vs_best_unconfirmed
                    .or(r.tuned_vs_best)
                    .unwrap_or(0.0)
            })),
            default_vs_exhaustive: geomean(scored.iter().map(|r| {
                r.best_seconds
                    .zip(r.default_seconds)
                    .map_or(0.0, |(b, d)| (b / d).min(1.0))
            })),
            exact_accuracy: scored
                .iter()
                .filter(|r| r.best.as_deref() == Some(r.tuned.as_str()))
                .count() as f64
                / scored.len().max(1) as f64,
            mean_feature_us: feat_us / n,
            mean_query_us: query_us / n,
            results,
        })
    }
}

/// Writes `report.json` (the given summary plus the evaluation), `performance.svg` and
/// `variants.svg` into `dir`; returns the files written.
pub fn write_report(
    dir: &Path,
    summary: &serde_json::Value,
    eval: &Evaluation,
    unit: &str,
) -> Result<Vec<PathBuf>> {
    let io = |p: &Path, e: String| crate::SurgeError::Input {
        input: p.display().to_string(),
        message: e,
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| io(dir, format!("cannot create the report directory: {e}")))?;
    let json_path = dir.join("report.json");
    let mut doc = summary.clone();
    if let Some(o) = doc.as_object_mut() {
        o.insert(
            "evaluation".into(),
            serde_json::to_value(eval).map_err(|e| tune_err(e.to_string()))?,
        );
    }
    let text = serde_json::to_string_pretty(&doc).map_err(|e| tune_err(e.to_string()))?;
    std::fs::write(&json_path, text).map_err(|e| io(&json_path, e.to_string()))?;
    let perf = dir.join("performance.svg");
    plot::performance(&perf, eval, unit).map_err(|e| io(&perf, format!("plotting: {e}")))?;
    let dist = dir.join("variants.svg");
    plot::distribution(&dist, eval).map_err(|e| io(&dist, format!("plotting: {e}")))?;
    Ok(vec![json_path, perf, dist])
}

mod plot {
    use super::Evaluation;
    use plotters::prelude::*;
    use std::path::Path;

    type R = std::result::Result<(), String>;
    /// A named, coloured point series.
    type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

    fn rate(work: f64, t: Option<f64>) -> Option<f64> {
        t.filter(|t| *t > 0.0).map(|t| work / t / 1e9)
    }

    /// Per test input: tuned, exhaustive-best, default and reference rate (Figure 5.5).
    pub fn performance(path: &Path, eval: &Evaluation, unit: &str) -> R {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        let n = eval.results.len();
        let series: Vec<Series<'_>> = vec![
            (
                "exhaustive best",
                BLACK,
                pts(eval, |r| rate(r.work, r.best_seconds)),
            ),
            ("tuned", RED, pts(eval, |r| rate(r.work, r.tuned_seconds))),
            (
                "default",
                BLUE,
                pts(eval, |r| rate(r.work, r.default_seconds)),
            ),
            (
                "reference",
                GREEN,
                pts(eval, |r| rate(r.work, r.reference_seconds)),
            ),
        ];
        let ymax = series
            .iter()
            .flat_map(|s| s.2.iter().map(|p| p.1))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        let root = SVGBackend::new(path, (1100, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let names: Vec<String> = eval.results.iter().map(|r| r.name.clone()).collect();
        let label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "tuned vs exhaustive: {:.1}% (geometric mean)",
                    eval.tuned_vs_exhaustive * 100.0
                ),
                ("sans-serif", 20),
            )
            .margin(10)
            .x_label_area_size(120)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..ymax)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.max(1))
            .x_label_formatter(&label)
            .x_label_style(
                ("sans-serif", 10)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            )
            .y_desc(unit)
            .draw()
            .map_err(|x| e(&x))?;
        for (name, color, p) in series {
            if p.is_empty() {
                continue;
            }
            let style = color.filled();
            chart
                .draw_series(p.iter().map(|&(x, y)| Circle::new((x, y), 4, style)))
                .map_err(|x| e(&x))?
                .label(name)
                .legend(move |(x, y)| Circle::new((x, y), 4, style));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))
    }

    fn pts(eval: &Evaluation, f: impl Fn(&super::TestResult) -> Option<f64>) -> Vec<(f64, f64)> {
        eval.results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| f(r).map(|y| (i as f64, y)))
            .collect()
    }

    /// Per test input: every variant's performance relative to the best (grey), the tuned
    /// choice (red).
    pub fn distribution(path: &Path, eval: &Evaluation) -> R {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        let n = eval.results.len();
        let root = SVGBackend::new(path, (1100, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "all variants, performance relative to the best",
                ("sans-serif", 20),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..1.05f64)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("test input (index, see report.json)")
            .y_desc("best time / variant time")
            .draw()
            .map_err(|x| e(&x))?;
        let mut all = Vec::new();
        for (i, r) in eval.results.iter().enumerate() {
            // Relative to the exhaustive rounds' own best, so every dot is at most 1.
            let b = r
                .measurements
                .iter()
                .filter_map(|m| m.seconds())
                .fold(f64::INFINITY, f64::min);
            if b.is_finite() {
                for m in &r.measurements {
                    if let Some(t) = m.seconds() {
                        all.push((i as f64, b / t));
                    }
                }
            }
        }
        let grey = RGBColor(150, 150, 150).filled();
        chart
            .draw_series(all.iter().map(|&(x, y)| Circle::new((x, y), 3, grey)))
            .map_err(|x| e(&x))?
            .label("variant")
            .legend(move |(x, y)| Circle::new((x, y), 3, grey));
        let tuned = pts(eval, |r| r.tuned_vs_best);
        chart
            .draw_series(
                tuned
                    .iter()
                    .map(|&(x, y)| Cross::new((x, y), 5, RED.stroke_width(2))),
            )
            .map_err(|x| e(&x))?
            .label("tuned")
            .legend(|(x, y)| Cross::new((x, y), 5, RED.stroke_width(2)));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))
    }
}
