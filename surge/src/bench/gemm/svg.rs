//! The GEMM chart: per shape, every contender's fraction of the measured peak.

use super::GemmReport;
use crate::Result;
use crate::bench::svg::{Series, grouped_bars};
use plotters::style::RGBColor;

const COLORS: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(23, 190, 207),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Writes a grouped bar chart of `r` to `path` (SVG).
pub fn write_svg(path: &std::path::Path, r: &GemmReport) -> Result<()> {
    let names: Vec<String> = r.shapes.first().map_or(vec![], |s| {
        s.contenders.iter().map(|c| c.name.clone()).collect()
    });
    let groups: Vec<String> = r.shapes.iter().map(|s| s.shape.label()).collect();
    let series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(k, name)| Series {
            label: name.clone(),
            color: COLORS[k % COLORS.len()],
            values: r
                .shapes
                .iter()
                .map(|s| {
                    s.contenders
                        .iter()
                        .find(|c| &c.name == name)
                        .map_or(f64::NAN, |c| c.fraction_of_peak)
                })
                .collect(),
        })
        .collect();
    let title = format!(
        "surge bench gemm: fraction of the measured peak ({} threads)",
        r.threads
    );
    grouped_bars(path, &title, "fraction of peak FLOP/s", &groups, &series)
}
