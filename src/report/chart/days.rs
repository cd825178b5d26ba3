//! Each day's mean with its 95% interval and the range of its runs.

use std::fmt::Write as _;

use super::*;
use crate::evaluate::Evaluation;

const DAYS: Frame = Frame {
    w: 760.0,
    h: 260.0,
    left: 72.0,
    right: 20.0,
    top: 20.0,
    bottom: 40.0,
};

/// The 95% interval of each day's mean, from the day's runs, where the evaluation holds
/// them all and there are two or more (one run has no interval).
fn day_intervals(ev: &Evaluation, metric: &str) -> Vec<Option<(f64, f64)>> {
    let mut by_day: std::collections::BTreeMap<chrono::NaiveDate, Vec<f64>> = Default::default();
    for r in &ev.runs {
        if let Some(v) = r.metrics.get(metric).filter(|v| v.is_finite()) {
            by_day
                .entry(crate::evaluate::day_of(r))
                .or_default()
                .push(*v);
        }
    }
    ev.days
        .iter()
        .map(|d| {
            let v = by_day
                .get(&d.date)
                .filter(|v| v.len() == d.runs && v.len() > 1)?;
            // A day of too few runs for an interval draws none (`Stats::bounded`).
            crate::evaluate::Stats::of(v)
                .filter(|s| s.bounded())
                .map(|s| (s.ci95_low, s.ci95_high))
        })
        .collect()
}

/// Each day's mean of the primary metric as a dot with its 95% interval as a bar, the range
/// of that day's runs (min to max) as a thin line, against the threshold.
pub fn days(ev: &Evaluation, rule: &RuleResult) -> String {
    let f = DAYS;
    let unit = unit_of(rule);
    let ci = day_intervals(ev, &rule.metric);
    let a = Axis::new(
        // The runs and the threshold set the scale; an interval wider than that (two runs
        // give a wide one) is cut at the plot's edge, its figures in the tooltip.
        ev.days
            .iter()
            .flat_map(|d| [d.min, d.max, d.mean])
            .chain([rule.threshold]),
        // From zero, as the runs chart: no axis that turns a small miss into a cliff.
        true,
    );
    let n = ev.days.len().max(1) as f64;
    let slot = f.plot_w() / n;
    let x = |i: usize| f.left + slot * (i as f64 + 0.5);
    let mut s = String::new();
    let label = format!(
        "mean {} of each day with its 95% interval and the range of its runs, threshold {} {}{unit}",
        rule.metric,
        rule.op,
        fmt_precise(rule.threshold)
    );
    open(&mut s, "days", &f, &label);
    let ty = a.y(&f, rule.threshold);
    let standing = crate::report::view::standing(ev);
    zone(
        &mut s,
        &f,
        ty,
        rule.op.higher_is_better(),
        standing.is_none(),
    );
    value_grid(&mut s, &f, &a);
    // At most about twelve date labels.
    let every = ev.days.len().div_ceil(12).max(1);
    let labels: Vec<(f64, String)> = ev
        .days
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0)
        .map(|(i, d)| (x(i), d.date.format("%b %-d").to_string()))
        .collect();
    x_labels(&mut s, &f, &labels);
    let mut dots = Vec::new();
    for (i, d) in ev.days.iter().enumerate() {
        dots.push((x(i), a.y(&f, d.mean)));
        // the bar's ends count as drawn too
        dots.push((x(i), a.y(&f, d.min)));
        dots.push((x(i), a.y(&f, d.max)));
    }
    let tip = format!(
        "threshold {} {}{unit}",
        rule.op,
        fmt_precise(rule.threshold)
    );
    hline(
        &mut s,
        &f,
        "threshold",
        ty,
        &format!(
            "threshold {} {}",
            rule.op,
            crate::numbers::fmt_threshold(rule.threshold)
        ),
        &tip,
        &dots,
        &[],
    );
    for (i, (d, c)) in ev.days.iter().zip(&ci).enumerate() {
        let class = mark_class(rule, d.mean, standing);
        let interval = c
            .map(|c| format!(", 95% interval {}–{}", fmt_value(c.0), fmt_value(c.1)))
            .unwrap_or_default();
        let tip = format!(
            "{}: mean {}{unit} of {} run{}{interval}, range {}–{}",
            d.date,
            fmt_value(d.mean),
            d.runs,
            if d.runs == 1 { "" } else { "s" },
            fmt_value(d.min),
            fmt_value(d.max)
        );
        let x = x(i);
        let _ = write!(
            s,
            "<g class=\"day {class}\"><title>{}</title><line class=\"range\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>",
            text(&tip),
            a.y(&f, d.min),
            a.y(&f, d.max),
        );
        if let Some((lo, hi)) = c {
            let (y0, y1) = (a.y(&f, hi.min(a.hi)), a.y(&f, lo.max(a.lo)));
            let _ = write!(
                s,
                "<rect class=\"interval\" x=\"{:.1}\" y=\"{y0:.1}\" width=\"8\" height=\"{:.1}\"/>",
                x - 4.0,
                (y1 - y0).max(1.0)
            );
        }
        let _ = writeln!(
            s,
            "<circle class=\"mean {class}\" cx=\"{x:.1}\" cy=\"{:.1}\" r=\"4.5\"/></g>",
            a.y(&f, d.mean),
        );
    }
    s.push_str("</svg>\n");
    s
}
