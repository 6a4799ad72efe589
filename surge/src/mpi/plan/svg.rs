//! The plan's chart: per rank count, the predicted SpMV time (with its parts on the slowest
//! rank) and the parallel efficiency, two bar panels in the style of `surge bench`'s charts.

use super::Plan;
use crate::Result;
use crate::bench::svg::{Panel, Series, bar_panels};
use plotters::style::RGBColor;

/// Writes the chart of `plans` to `path`; `t1` is the measured one-thread time.
pub fn write_svg(path: &std::path::Path, title: &str, plans: &[Plan], t1: f64) -> Result<()> {
    let groups: Vec<String> = plans.iter().map(|p| format!("{} ranks", p.ranks)).collect();
    let us = |f: fn(&Plan) -> f64| plans.iter().map(|p| f(p) * 1e6).collect::<Vec<_>>();
    let time = Panel {
        title: format!("{title}: predicted time per SpMV"),
        y_desc: "microseconds".into(),
        series: vec![
            Series {
                label: "predicted (slowest rank)".into(),
                color: RGBColor(31, 119, 180),
                values: us(|p| p.predicted_seconds),
            },
            Series {
                label: "its exchange".into(),
                color: RGBColor(214, 39, 40),
                values: us(|p| p.worst_rank.exchange_seconds),
            },
            Series {
                label: "ideal T1 / R".into(),
                color: RGBColor(200, 200, 200),
                values: plans.iter().map(|p| t1 / p.ranks as f64 * 1e6).collect(),
            },
        ],
    };
    let efficiency = Panel {
        title: "predicted parallel efficiency".into(),
        y_desc: "T1 / (R x T_R)".into(),
        series: vec![Series {
            label: "efficiency".into(),
            color: RGBColor(44, 160, 44),
            values: plans.iter().map(|p| p.efficiency).collect(),
        }],
    };
    bar_panels(path, &groups, &[time, efficiency])
}
