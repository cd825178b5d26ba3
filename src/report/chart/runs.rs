//! Each run's value of the charted metric over time.

use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset};

use super::*;
use crate::evaluate::Evaluation;
use crate::report::view::Emphasis;

/// One run's value of the charted metric.
pub struct Point<'a> {
    pub index: usize,
    pub time: DateTime<FixedOffset>,
    pub value: f64,
    pub run: &'a crate::run_index::Run,
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
    let a = Axis::new(
        points
            .iter()
            .map(|p| p.value)
            .chain([rule.threshold])
            .chain(rule.value),
        // From zero: a height is read as a size, and an axis from 2,800 makes a 5% miss a
        // cliff.
        true,
    );
    let time = TimeScale::new(&f, points);
    let x = |t| time.x(t);
    let y = |v| a.y(&f, v);
    let standing = crate::report::view::standing(ev);

    let mut s = String::new();
    open(&mut s, "runs", &f, &chart_label(ev, rule));
    zone(
        &mut s,
        &f,
        y(rule.threshold),
        rule.op.higher_is_better(),
        standing.is_none(),
    );
    value_grid(&mut s, &f, &a);
    value_axis_label(&mut s, &f, rule);
    time_axis(&mut s, &f, &time);

    // Past the runs table's limit, a mark per day (the day's mean and the range of its runs)
    // instead of a circle per run: a year of runs is a hundred thousand circles, tens of MB
    // of page that no one can read apart.
    let days = by_day(ev).then(|| day_marks(points, rule));
    // Threshold, aggregate, then the runs on top; each label where no run is drawn and clear
    // of the other label.
    let drawn = drawn(points, days.as_deref(), &x, &y);
    reference_lines(&mut s, &f, rule, &drawn, &y);
    match &days {
        Some(days) => day_lines(&mut s, rule, standing, days, &x, &y),
        None => run_marks(&mut s, ev, rule, points, &x, &y),
    }
    heading(&mut s, &f, ev, rule, points, days.as_deref());
    s.push_str("</svg>\n");
    s
}

/// What the chart shows, for a screen reader: the metric, the threshold and the verdict.
fn chart_label(ev: &Evaluation, rule: &RuleResult) -> String {
    format!(
        "{} of each {} over time, threshold {} {}{}; verdict {}",
        rule.metric,
        if by_day(ev) {
            "day (the mean and range of its runs)"
        } else {
            "run"
        },
        rule.op,
        fmt_precise(rule.threshold),
        unit_of(rule),
        ev.verdict.as_str().to_uppercase()
    )
}

/// The value axis's title, upright along the left edge: the metric and its unit.
fn value_axis_label(s: &mut String, f: &Frame, rule: &RuleResult) {
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
}

/// Where a time falls across the plot: by its seconds since the first run, inset a little
/// from each end; the middle when every run is at one instant. Labels are in the first run's
/// own offset.
struct TimeScale {
    first: DateTime<FixedOffset>,
    last: DateTime<FixedOffset>,
    offset: FixedOffset,
    /// Seconds from the first run to the last.
    span: f64,
    left: f64,
    plot_w: f64,
    inset: f64,
}

impl TimeScale {
    fn new(f: &Frame, points: &[Point]) -> TimeScale {
        let plot_w = f.plot_w();
        let first = points.iter().map(|p| p.time).min().expect("non-empty");
        let last = points.iter().map(|p| p.time).max().expect("non-empty");
        TimeScale {
            first,
            last,
            offset: *points[0].time.offset(),
            span: (last - first).num_milliseconds() as f64 / 1000.0,
            left: f.left,
            plot_w,
            inset: plot_w * 0.04,
        }
    }

    fn x(&self, t: DateTime<FixedOffset>) -> f64 {
        if self.span <= 0.0 {
            self.left + self.plot_w / 2.0
        } else {
            let s = (t - self.first).num_milliseconds() as f64 / 1000.0;
            self.left + self.inset + (self.plot_w - 2.0 * self.inset) * s / self.span
        }
    }
}

/// The time axis, in the first run's offset: its ticks and labels, and its title with the
/// date or the years it covers. Within one day: five evenly spaced times. Over several: a
/// boundary at each midnight and the date under each day's stretch.
fn time_axis(s: &mut String, f: &Frame, time: &TimeScale) {
    let (l0, l1) = (
        time.first.with_timezone(&time.offset),
        time.last.with_timezone(&time.offset),
    );
    let (d0, d1) = (l0.date_naive(), l1.date_naive());
    let mut labels: Vec<(f64, String)> = Vec::new();
    let axis_note = if d0 == d1 {
        clock_ticks(s, f, time, l0, &mut labels);
        d0.format("%Y-%m-%d").to_string()
    } else {
        day_ticks(s, f, time, (l0, l1), &mut labels);
        if d0.format("%Y").to_string() == d1.format("%Y").to_string() {
            d0.format("%Y").to_string()
        } else {
            format!("{}–{}", d0.format("%Y"), d1.format("%Y"))
        }
    };
    x_labels(s, f, &labels);
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        f.left + f.plot_w() / 2.0,
        f.h - 10.0,
        text(&format!("time of run (UTC{}, {axis_note})", time.offset))
    );
}

/// A tick under the time axis at `tx`.
fn tick(s: &mut String, f: &Frame, tx: f64) {
    let axis_y = f.y_end();
    let _ = writeln!(
        s,
        "<line class=\"tick\" x1=\"{tx:.1}\" y1=\"{axis_y:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
        axis_y + 5.0
    );
}

/// Runs within one day: five evenly spaced times from the first run's (one at a single
/// instant), to the second under ten minutes.
fn clock_ticks(
    s: &mut String,
    f: &Frame,
    time: &TimeScale,
    l0: DateTime<FixedOffset>,
    labels: &mut Vec<(f64, String)>,
) {
    let span = time.span;
    let n = if span <= 0.0 { 1 } else { 5 };
    let fmt = if span >= 600.0 { "%H:%M" } else { "%H:%M:%S" };
    for i in 0..n {
        let ms = if n == 1 {
            0.0
        } else {
            span * 1000.0 * i as f64 / (n - 1) as f64
        };
        let t = l0 + chrono::Duration::milliseconds(ms as i64);
        tick(s, f, time.x(t));
        labels.push((time.x(t), t.format(fmt).to_string()));
    }
}

/// Runs over several days: a grid line and tick at each midnight, and the date under each
/// day's stretch where it has room.
fn day_ticks(
    s: &mut String,
    f: &Frame,
    time: &TimeScale,
    (l0, l1): (DateTime<FixedOffset>, DateTime<FixedOffset>),
    labels: &mut Vec<(f64, String)>,
) {
    let midnight = |d: chrono::NaiveDate| {
        d.and_hms_opt(0, 0, 0)
            .and_then(|m| m.and_local_timezone(time.offset).single())
            .expect("a fixed offset has one midnight")
    };
    let (d0, d1) = (l0.date_naive(), l1.date_naive());
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
            let bx = time.x(start);
            let _ = writeln!(
                s,
                "<line class=\"grid day\" x1=\"{bx:.1}\" y1=\"{:.1}\" x2=\"{bx:.1}\" y2=\"{:.1}\"/>",
                f.top,
                f.y_end()
            );
            tick(s, f, bx);
        }
        let (sx, ex) = (time.x(start), time.x(end));
        if i % every == 0 && ex - sx >= 36.0 {
            labels.push(((sx + ex) / 2.0, d.format("%b %-d").to_string()));
        }
    }
}

/// Where marks are drawn, for the labels to keep clear of: each run, or each day's mean and
/// the ends of its range.
fn drawn(
    points: &[Point],
    days: Option<&[DayMark]>,
    x: &dyn Fn(DateTime<FixedOffset>) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> Vec<(f64, f64)> {
    match days {
        None => points.iter().map(|p| (x(p.time), y(p.value))).collect(),
        Some(days) => days
            .iter()
            .flat_map(|d| {
                let dx = x(d.time());
                [(dx, y(d.mean())), (dx, y(d.min)), (dx, y(d.max))]
            })
            .collect(),
    }
}

/// The threshold's line, then the aggregate's (where there is one), each label clear of the
/// marks and of the other label.
fn reference_lines(
    s: &mut String,
    f: &Frame,
    rule: &RuleResult,
    drawn: &[(f64, f64)],
    y: &dyn Fn(f64) -> f64,
) {
    let unit = unit_of(rule);
    let agg = rule.aggregate.as_str();
    let b = hline(
        s,
        f,
        "threshold",
        y(rule.threshold),
        &format!(
            "threshold {} {}",
            rule.op,
            crate::numbers::fmt_threshold(rule.threshold)
        ),
        &format!(
            "threshold {} {}{unit}",
            rule.op,
            fmt_precise(rule.threshold)
        ),
        drawn,
        &[],
    );
    if let Some(v) = rule.value {
        hline(
            s,
            f,
            "aggregate",
            y(v),
            &format!("{agg} {}", fmt_value(v)),
            &format!("{agg} {}{unit}", fmt_value(v)),
            drawn,
            &[b],
        );
    }
}

/// The runs in time order joined by a line, then each run as a `circle.run` (pass, fail or
/// unjudged) with a tooltip.
fn run_marks(
    s: &mut String,
    ev: &Evaluation,
    rule: &RuleResult,
    points: &[Point],
    x: &dyn Fn(DateTime<FixedOffset>) -> f64,
    y: &dyn Fn(f64) -> f64,
) {
    let unit = unit_of(rule);
    if points.len() > 1 {
        let mut sorted: Vec<&Point> = points.iter().collect();
        sorted.sort_by_key(|p| p.time);
        series_line(s, sorted.iter().map(|p| (x(p.time), y(p.value))));
    }
    for p in points {
        // marked as the tables mark it: a run that failed the rule on more than its figure
        // (its sustained level) misses it, a figure fio printed too coarsely to tell has none
        let class = match crate::report::view::judge_run(ev, rule, p.index, p.value) {
            Emphasis::Pass => "pass",
            Emphasis::Fail => "fail",
            _ => "unjudged",
        };
        let tip = format!(
            "run {}, {}, {}, {}: {} {}{unit} ({}{} {})",
            p.index + 1,
            p.time.format("%Y-%m-%d %H:%M:%S %:z"),
            p.run.host,
            p.run.engine,
            rule.metric,
            fmt_value(p.value),
            match class {
                "pass" => "meets ".to_string(),
                "fail" => "misses ".to_string(),
                _ => format!("{}; threshold ", crate::report::view::NOT_JUDGED),
            },
            rule.op,
            fmt_precise(rule.threshold)
        );
        let _ = writeln!(
            s,
            "<circle class=\"run {class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4.5\"><title>{}</title></circle>",
            x(p.time),
            y(p.value),
            text(&tip)
        );
    }
}

/// The line through the marks at `(x, y)`, in order: `polyline.series`.
fn series_line(s: &mut String, marks: impl Iterator<Item = (f64, f64)>) {
    let path: Vec<String> = marks.map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        s,
        "<polyline class=\"series\" points=\"{}\"/>",
        path.join(" ")
    );
}

/// Above the plot: the count of runs (and days) with the aggregate on the left, the verdict
/// on the right.
fn heading(
    s: &mut String,
    f: &Frame,
    ev: &Evaluation,
    rule: &RuleResult,
    points: &[Point],
    days: Option<&[DayMark]>,
) {
    let verdict = ev.verdict.as_str();
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
            "{} run{}{}, {} {}",
            points.len(),
            if points.len() == 1 { "" } else { "s" },
            days.map(|d| format!(
                " on {} day{}: each day's mean and range",
                d.len(),
                if d.len() == 1 { "" } else { "s" }
            ))
            .unwrap_or_default(),
            rule.aggregate.as_str(),
            rule.value.map(fmt_value).unwrap_or("—".into())
        ))
    );
}

/// Whether the chart over time draws a mark per day rather than per run: past the runs
/// table's limit, as the tables do.
pub fn by_day(ev: &Evaluation) -> bool {
    crate::report::view::runs_by_day(ev)
}

/// One day's runs of the chart over time (the node's calendar day, as the tables count days).
pub(super) struct DayMark {
    pub date: chrono::NaiveDate,
    pub runs: usize,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// The day's first and last run.
    pub first: DateTime<FixedOffset>,
    pub last: DateTime<FixedOffset>,
    /// Runs that miss the threshold.
    pub misses: usize,
}

impl DayMark {
    pub fn mean(&self) -> f64 {
        self.sum / self.runs as f64
    }
    /// Where the day is drawn: halfway between its first run and its last.
    pub fn time(&self) -> DateTime<FixedOffset> {
        self.first + (self.last - self.first) / 2
    }
}

/// The points grouped by day, in date order.
pub(super) fn day_marks(points: &[Point], rule: &RuleResult) -> Vec<DayMark> {
    let mut days: std::collections::BTreeMap<chrono::NaiveDate, DayMark> = Default::default();
    for p in points {
        let date = crate::evaluate::day_of(p.run);
        let d = days.entry(date).or_insert(DayMark {
            date,
            runs: 0,
            sum: 0.0,
            min: p.value,
            max: p.value,
            first: p.time,
            last: p.time,
            misses: 0,
        });
        d.runs += 1;
        d.sum += p.value;
        d.min = d.min.min(p.value);
        d.max = d.max.max(p.value);
        d.first = d.first.min(p.time);
        d.last = d.last.max(p.time);
        if !rule.op.holds(p.value, rule.threshold) {
            d.misses += 1;
        }
    }
    days.into_values().collect()
}

/// The days' means joined by a line, then each day as a `g.day` (pass or fail by its mean,
/// as the per-day chart judges it) with a tooltip: the range of its runs as `line.range`
/// and its mean as `circle.mean`.
fn day_lines(
    s: &mut String,
    rule: &RuleResult,
    standing: Option<crate::deviation::Effect>,
    days: &[DayMark],
    x: &dyn Fn(DateTime<FixedOffset>) -> f64,
    y: &dyn Fn(f64) -> f64,
) {
    let unit = unit_of(rule);
    if days.len() > 1 {
        series_line(s, days.iter().map(|d| (x(d.time()), y(d.mean()))));
    }
    for d in days {
        let mean = d.mean();
        let class = mark_class(rule, mean, standing);
        let judged = match (standing, d.misses) {
            (None, 0) => "every run meets".to_string(),
            (None | Some(crate::deviation::Effect::Flatters), 1) => "1 run misses".to_string(),
            (None | Some(crate::deviation::Effect::Flatters), n) if n > 0 => {
                format!("{n} runs miss")
            }
            _ => format!("{}; threshold", crate::report::view::NOT_JUDGED),
        };
        let tip = format!(
            "{}: mean {}{unit} of {} run{}, range {}–{}; {judged} {} {}",
            d.date,
            fmt_value(mean),
            d.runs,
            if d.runs == 1 { "" } else { "s" },
            fmt_value(d.min),
            fmt_value(d.max),
            rule.op,
            fmt_precise(rule.threshold)
        );
        let dx = x(d.time());
        let _ = writeln!(
            s,
            "<g class=\"day {class}\"><title>{}</title><line class=\"range\" x1=\"{dx:.1}\" y1=\"{:.1}\" x2=\"{dx:.1}\" y2=\"{:.1}\"/><circle class=\"mean {class}\" cx=\"{dx:.1}\" cy=\"{:.1}\" r=\"3\"/></g>",
            text(&tip),
            y(d.min),
            y(d.max),
            y(mean)
        );
    }
}
