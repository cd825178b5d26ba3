//! Each run's value of the charted metric over time.

use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset};

use super::*;
use crate::evaluate::Evaluation;

/// One run's value of the charted metric.
pub struct Point<'a> {
    pub index: usize,
    pub time: DateTime<FixedOffset>,
    pub value: f64,
    pub run: &'a crate::history::Record,
}

/// The points of the runs chart: each run that measures `rule`'s metric (a finite figure),
/// in the runs' order.
pub fn points<'a>(ev: &'a Evaluation, rule: &RuleResult) -> Vec<Point<'a>> {
    ev.runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            r.metrics
                .get(&rule.metric)
                .filter(|v| v.is_finite())
                .map(|&v| Point {
                    index: i,
                    time: r.timestamp,
                    value: v,
                    run: r,
                })
        })
        .collect()
}

pub(super) const RUNS: Frame = Frame {
    w: 760.0,
    h: 320.0,
    left: 72.0,
    right: 20.0,
    top: 30.0,
    bottom: 56.0,
};

/// Each run's value of `rule`'s metric over time: one `circle.run` per run with a tooltip, the
/// threshold as `line.threshold`, the aggregate as `line.aggregate`, the side that meets the
/// threshold shaded, and the verdict.
pub fn runs(ev: &Evaluation, rule: &RuleResult, points: &[Point]) -> String {
    let f = RUNS;
    let unit = unit_of(rule);
    let a = Axis::new(
        points
            .iter()
            .map(|p| p.value)
            .chain([rule.threshold])
            .chain(rule.value),
        false,
    );
    let plot_w = f.plot_w();
    // Times as seconds since the first run; labels in the first run's own offset.
    let offset = *points[0].time.offset();
    let t0 = points.iter().map(|p| p.time).min().expect("non-empty");
    let t1 = points.iter().map(|p| p.time).max().expect("non-empty");
    let span = (t1 - t0).num_milliseconds() as f64 / 1000.0;
    let inset = plot_w * 0.04;
    let x = |t: DateTime<FixedOffset>| {
        if span <= 0.0 {
            f.left + plot_w / 2.0
        } else {
            let s = (t - t0).num_milliseconds() as f64 / 1000.0;
            f.left + inset + (plot_w - 2.0 * inset) * s / span
        }
    };
    let verdict = ev.verdict.as_str();
    let agg = rule.aggregate.as_str();

    let mut s = String::new();
    let label = format!(
        "{} of each run over time, threshold {} {}{unit}; verdict {}",
        rule.metric,
        rule.op,
        fmt_precise(rule.threshold),
        verdict.to_uppercase()
    );
    open(&mut s, "runs", &f, &label);
    let ty = a.y(&f, rule.threshold);
    zone(&mut s, &f, ty, rule.op.higher_is_better());
    value_grid(&mut s, &f, &a);
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        f.top + f.plot_h() / 2.0,
        text(&format!(
            "{}{}",
            rule.metric,
            if rule.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", rule.unit)
            }
        ))
    );

    // Time axis, in the first run's offset. Within one day: five evenly spaced times. Over
    // several: a boundary at each midnight and the date under each day's stretch.
    let (l0, l1) = (t0.with_timezone(&offset), t1.with_timezone(&offset));
    let (d0, d1) = (l0.date_naive(), l1.date_naive());
    let axis_y = f.y_end();
    let tick = |s: &mut String, tx: f64| {
        let _ = writeln!(
            s,
            "<line class=\"tick\" x1=\"{tx:.1}\" y1=\"{axis_y:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
            axis_y + 5.0
        );
    };
    let mut labels: Vec<(f64, String)> = Vec::new();
    let axis_note = if d0 == d1 {
        let n = if span <= 0.0 { 1 } else { 5 };
        let fmt = if span >= 600.0 { "%H:%M" } else { "%H:%M:%S" };
        for i in 0..n {
            let ms = if n == 1 {
                0.0
            } else {
                span * 1000.0 * i as f64 / (n - 1) as f64
            };
            let t = l0 + chrono::Duration::milliseconds(ms as i64);
            tick(&mut s, x(t));
            labels.push((x(t), t.format(fmt).to_string()));
        }
        d0.format("%Y-%m-%d").to_string()
    } else {
        let midnight = |d: chrono::NaiveDate| {
            d.and_hms_opt(0, 0, 0)
                .and_then(|m| m.and_local_timezone(offset).single())
                .expect("a fixed offset has one midnight")
        };
        let days: Vec<chrono::NaiveDate> = d0.iter_days().take_while(|d| *d <= d1).collect();
        // at most about ten date labels, so they never run into each other
        let every = days.len().div_ceil(10).max(1);
        // A grid line a day for up to two months; beyond, only at the labelled days, so a
        // span of years (an absurd timestamp) stays a small page.
        let grid_every = if days.len() > 62 { every } else { 1 };
        for (i, d) in days.iter().enumerate() {
            if i % grid_every != 0 {
                continue;
            }
            let start = midnight(*d).max(l0);
            let end = d
                .checked_add_days(chrono::Days::new(grid_every as u64))
                .map(midnight)
                .unwrap_or(l1)
                .min(l1);
            if i > 0 {
                let bx = x(start);
                let _ = writeln!(
                    s,
                    "<line class=\"grid day\" x1=\"{bx:.1}\" y1=\"{:.1}\" x2=\"{bx:.1}\" y2=\"{axis_y:.1}\"/>",
                    f.top
                );
                tick(&mut s, bx);
            }
            let (sx, ex) = (x(start), x(end));
            if i % every == 0 && ex - sx >= 36.0 {
                labels.push(((sx + ex) / 2.0, d.format("%b %-d").to_string()));
            }
        }
        if d0.format("%Y").to_string() == d1.format("%Y").to_string() {
            d0.format("%Y").to_string()
        } else {
            format!("{}–{}", d0.format("%Y"), d1.format("%Y"))
        }
    };
    x_labels(&mut s, &f, &labels);
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        f.left + plot_w / 2.0,
        f.h - 10.0,
        text(&format!("time of run (UTC{offset}, {axis_note})"))
    );

    // Threshold, aggregate, then the runs on top; each label where no run is drawn and clear
    // of the other label.
    let dots: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (x(p.time), a.y(&f, p.value)))
        .collect();
    let b = hline(
        &mut s,
        &f,
        "threshold",
        ty,
        &format!("threshold {} {}", rule.op, fmt_value(rule.threshold)),
        &format!(
            "threshold {} {}{unit}",
            rule.op,
            fmt_precise(rule.threshold)
        ),
        &dots,
        &[],
    );
    if let Some(v) = rule.value {
        hline(
            &mut s,
            &f,
            "aggregate",
            a.y(&f, v),
            &format!("{agg} {}", fmt_value(v)),
            &format!("{agg} {}{unit}", fmt_precise(v)),
            &dots,
            &[b],
        );
    }
    if points.len() > 1 {
        let mut sorted: Vec<&Point> = points.iter().collect();
        sorted.sort_by_key(|p| p.time);
        let path: Vec<String> = sorted
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.time), a.y(&f, p.value)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline class=\"series\" points=\"{}\"/>",
            path.join(" ")
        );
    }
    for p in points {
        let meets = rule.op.holds(p.value, rule.threshold);
        let class = if meets { "pass" } else { "fail" };
        let tip = format!(
            "run {}, {}, {}, {}: {} {}{unit} ({} {} {})",
            p.index + 1,
            p.time.format("%Y-%m-%d %H:%M:%S %:z"),
            p.run.host,
            p.run.engine,
            rule.metric,
            fmt_precise(p.value),
            if meets { "meets" } else { "misses" },
            rule.op,
            fmt_precise(rule.threshold)
        );
        let _ = writeln!(
            s,
            "<circle class=\"run {class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4.5\"><title>{}</title></circle>",
            x(p.time),
            a.y(&f, p.value),
            text(&tip)
        );
    }
    let _ = writeln!(
        s,
        "<text class=\"verdict-{verdict}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">verdict: {}</text>",
        f.x_end(),
        f.top - 10.0,
        verdict.to_uppercase()
    );
    let _ = writeln!(
        s,
        "<text class=\"legend\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        f.left,
        f.top - 10.0,
        text(&format!(
            "{} run{}, {agg} {}",
            points.len(),
            if points.len() == 1 { "" } else { "s" },
            rule.value.map(fmt_value).unwrap_or("—".into())
        ))
    );
    s.push_str("</svg>\n");
    s
}
