//! The GEMM chart: per shape, every contender's fraction of the measured peak.

use super::GemmReport;
use crate::{Result, SurgeError};
use plotters::prelude::*;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Writes a grouped bar chart of `r` to `path` (SVG).
pub fn write_svg(path: &std::path::Path, r: &GemmReport) -> Result<()> {
    let err = |e: String| SurgeError::Usage(format!("writing {}: {e}", path.display()));
    let names: Vec<String> = r.shapes.first().map_or(vec![], |s| {
        s.contenders.iter().map(|c| c.name.clone()).collect()
    });
    let labels: Vec<String> = r.shapes.iter().map(|s| s.shape.label()).collect();
    let width = (160 + 60 * names.len().max(1) * r.shapes.len()).max(640) as u32;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let n = r.shapes.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "surge bench gemm: fraction of the measured peak ({} threads)",
                r.threads
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n, 0f64..1.1f64)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(r.shapes.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.26 {
                labels.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("fraction of peak FLOP/s")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let w = 0.8 / names.len().max(1) as f64;
    for (k, name) in names.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let bars = r.shapes.iter().enumerate().filter_map(|(i, s)| {
            let c = s.contenders.iter().find(|c| &c.name == name)?;
            let x0 = i as f64 + 0.1 + w * k as f64;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + w * 0.9, c.fraction_of_peak.min(1.1))],
                color.filled(),
            ))
        });
        chart
            .draw_series(bars)
            .map_err(|e| err(e.to_string()))?
            .label(name.as_str())
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
