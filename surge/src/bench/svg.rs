//! The benchmark charts: grouped bars, one group per input and one series per contender. `surge
//! bench APP` draws per input the best, default and worst variant and the reference; `surge
//! bench gemm` every contender's fraction of the measured peak per shape; `surge plan spmv` the
//! predicted time and efficiency per rank count, side by side.

use super::InputResult;
use crate::{Result, SurgeError};
use plotters::prelude::*;

/// One series of bars: its legend, color and one value per group (non-finite: no bar).
pub(crate) struct Series {
    pub label: String,
    pub color: RGBColor,
    pub values: Vec<f64>,
}

/// One chart of a figure: its title, y axis and series over the figure's groups.
pub(crate) struct Panel {
    pub title: String,
    pub y_desc: String,
    pub series: Vec<Series>,
}

/// Writes a grouped bar chart to `path` (SVG): `groups` along x, `series` side by side in each.
pub(crate) fn grouped_bars(
    path: &std::path::Path,
    title: &str,
    y_desc: &str,
    groups: &[String],
    series: &[Series],
) -> Result<()> {
    let width = (160 + 30 * series.len().max(1) * groups.len()).max(640) as u32;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    let err = |e: String| SurgeError::Usage(format!("writing {}: {e}", path.display()));
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    draw_bars(&root, title, y_desc, groups, series).map_err(err)?;
    root.present().map_err(|e| err(e.to_string()))
}

/// Writes `panels` side by side to `path` (SVG), each a grouped bar chart over `groups`.
pub(crate) fn bar_panels(
    path: &std::path::Path,
    groups: &[String],
    panels: &[Panel],
) -> Result<()> {
    let per = panels
        .iter()
        .map(|p| (160 + 30 * p.series.len().max(1) * groups.len()).max(480))
        .max()
        .unwrap_or(480);
    let root = SVGBackend::new(path, ((per * panels.len().max(1)) as u32, 480)).into_drawing_area();
    let err = |e: String| SurgeError::Usage(format!("writing {}: {e}", path.display()));
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    for (area, p) in root
        .split_evenly((1, panels.len().max(1)))
        .iter()
        .zip(panels)
    {
        draw_bars(area, &p.title, &p.y_desc, groups, &p.series).map_err(err)?;
    }
    root.present().map_err(|e| err(e.to_string()))
}

/// Draws one grouped bar chart on `area`.
fn draw_bars(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    groups: &[String],
    series: &[Series],
) -> std::result::Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let ymax = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        * 1.15
        + 1e-9;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(90)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..groups.len().max(1) as f64, 0f64..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.26 {
                groups.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    let w = 0.8 / series.len().max(1) as f64;
    for (k, s) in series.iter().enumerate() {
        let color = s.color;
        let bars = s.values.iter().enumerate().map(|(i, &v)| {
            let x0 = i as f64 + 0.1 + w * k as f64;
            let top = if v.is_finite() { v } else { 0.0 };
            Rectangle::new([(x0, 0.0), (x0 + w * 0.9, top)], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(s.label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    Ok(())
}

/// Writes the chart of `results` to `path`: per input, the best, default and worst variant
/// and the reference.
pub fn write_svg(path: &std::path::Path, title: &str, results: &[InputResult]) -> Result<()> {
    let unit = results.first().map_or("", |r| r.unit);
    let groups: Vec<String> = results
        .iter()
        .map(|r| r.name.chars().take(22).collect())
        .collect();
    type Get = fn(&InputResult) -> f64;
    let columns: [(&str, RGBColor, Get); 4] = [
        ("best variant", RGBColor(31, 119, 180), |r| r.best_rate),
        ("default variant", RGBColor(44, 160, 44), |r| r.default_rate),
        ("worst variant", RGBColor(200, 200, 200), |r| r.worst_rate),
        ("reference", RGBColor(214, 39, 40), |r| r.reference_rate),
    ];
    let series: Vec<Series> = columns
        .into_iter()
        .map(|(label, color, get)| Series {
            label: label.into(),
            color,
            values: results.iter().map(get).collect(),
        })
        .collect();
    grouped_bars(path, title, unit, &groups, &series)
}
