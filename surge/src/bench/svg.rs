//! The benchmark chart: per input, the best, default and worst variant and the reference.

use super::InputResult;
use crate::{Result, SurgeError};
use plotters::prelude::*;

/// Writes a grouped bar chart of `results` to `path` (SVG).
pub fn write_svg(path: &std::path::Path, title: &str, results: &[InputResult]) -> Result<()> {
    let err = |e: String| SurgeError::Usage(format!("writing {}: {e}", path.display()));
    let unit = results.first().map_or("", |r| r.unit);
    let ymax = results
        .iter()
        .flat_map(|r| [r.best_rate, r.reference_rate, r.default_rate, r.worst_rate])
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        * 1.15
        + 1e-9;
    let width = (160 + 110 * results.len()).max(640) as u32;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let n = results.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(90)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n, 0f64..ymax)
        .map_err(|e| err(e.to_string()))?;
    let names: Vec<String> = results
        .iter()
        .map(|r| r.name.chars().take(22).collect())
        .collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(results.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.26 {
                names.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(unit)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    type Series = (&'static str, RGBColor, fn(&InputResult) -> f64);
    let series: [Series; 4] = [
        ("best variant", RGBColor(31, 119, 180), |r| r.best_rate),
        ("default variant", RGBColor(44, 160, 44), |r| r.default_rate),
        ("worst variant", RGBColor(200, 200, 200), |r| r.worst_rate),
        ("reference", RGBColor(214, 39, 40), |r| r.reference_rate),
    ];
    for (k, (label, color, get)) in series.into_iter().enumerate() {
        let bars = results.iter().enumerate().map(|(i, r)| {
            let x0 = i as f64 + 0.1 + 0.2 * k as f64;
            let v = get(r);
            Rectangle::new(
                [(x0, 0.0), (x0 + 0.18, if v.is_finite() { v } else { 0.0 })],
                color.filled(),
            )
        });
        chart
            .draw_series(bars)
            .map_err(|e| err(e.to_string()))?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
