//! The SVG pictures of the HTML pages, drawn by hand (no script, no external resource): the
//! frame and value axis every chart shares, and the four charts built on it — each run's
//! value over time ([`runs`]), IOPS inside a run ([`series`]), the mean of each day with the
//! range of its runs ([`days`]), and one bar per node of a fleet, failures first ([`nodes`]).
//!
//! Rules every chart keeps, so that what a reader sees is what the figures say: tick labels
//! all have the decimals their step needs and no more (a zero reads "0"), no two x labels
//! are the same or overlap, and a line's label is put where no point is drawn.

use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset};

use super::xml::{attr, text};
use super::{fmt_precise, fmt_value};
use crate::evaluate::{Evaluation, RuleResult};

/// The drawing area: the whole picture and its margins, in SVG user units (pixels).
#[derive(Clone, Copy)]
pub struct Frame {
    pub w: f64,
    pub h: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

impl Frame {
    pub fn plot_w(&self) -> f64 {
        self.w - self.left - self.right
    }
    pub fn plot_h(&self) -> f64 {
        self.h - self.top - self.bottom
    }
    fn x_end(&self) -> f64 {
        self.left + self.plot_w()
    }
    fn y_end(&self) -> f64 {
        self.top + self.plot_h()
    }
}

/// About how wide `s` is drawn at the charts' 11px font (the average glyph is ~0.6 em).
fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * 6.6
}

/// A step of 1, 2, 2.5 or 5 × 10ⁿ near `raw`, for round tick labels.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The value axis: round ticks covering every value given.
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub step: f64,
    pub ticks: Vec<f64>,
}

impl Axis {
    /// Covers every value with some room, ending on round ticks. A flat series (one run, all
    /// runs equal) still gets a visible range; nonnegative values never get a negative axis;
    /// `from_zero` starts it at zero (rates, where the height of a line is read as a size).
    pub fn new(values: impl Iterator<Item = f64>, from_zero: bool) -> Axis {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for v in values.filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        let nonnegative = lo >= 0.0;
        if from_zero && nonnegative {
            lo = 0.0;
        }
        let span = hi - lo;
        let pad = if span > 0.0 {
            span * 0.08
        } else {
            (hi.abs() * 0.1).max(1.0)
        };
        let (mut lo, mut hi) = (
            if from_zero && nonnegative {
                lo
            } else {
                lo - pad
            },
            hi + pad,
        );
        if nonnegative && lo < 0.0 {
            lo = 0.0;
        }
        let step = nice_step((hi - lo) / 5.0);
        lo = (lo / step).floor() * step;
        hi = (hi / step).ceil() * step;
        let mut ticks = Vec::new();
        let mut t = lo;
        while t <= hi + step * 1e-9 && ticks.len() < 20 {
            // 0.1 + 0.2 is not 0.3: round each tick to its step's decimals
            ticks.push((t / step).round() * step);
            t += step;
        }
        Axis {
            lo,
            hi,
            step,
            ticks,
        }
    }

    /// A tick's label: as many decimals as the step needs, the same for every tick, so that a
    /// zero reads "0" on an axis of thousands and "0.0" only where the step is 0.5. Thousands
    /// as "k" where every tick is a whole number of them.
    pub fn label(&self, v: f64) -> String {
        if v == 0.0 {
            return "0".into();
        }
        if self.step >= 1000.0 && self.hi >= 10_000.0 {
            let k = Axis {
                lo: self.lo / 1000.0,
                hi: self.hi / 1000.0,
                step: self.step / 1000.0,
                ticks: Vec::new(),
            };
            return format!("{}k", k.label(v / 1000.0));
        }
        let decimals = if self.step >= 1.0 {
            0
        } else {
            // 0.25 needs two; 0.5 one; 0.1 one
            let mut d = 0;
            let mut s = self.step;
            while (s - s.round()).abs() > 1e-9 * self.step.max(1.0) && d < 6 {
                s *= 10.0;
                d += 1;
            }
            d
        };
        format!("{v:.decimals$}")
    }

    pub fn y(&self, f: &Frame, v: f64) -> f64 {
        f.top + f.plot_h() * (1.0 - (v - self.lo) / (self.hi - self.lo))
    }
}

/// `<svg>` with its accessible name and a `<title>` tooltip.
fn open(s: &mut String, class: &str, f: &Frame, label: &str) {
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart {class}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">",
        f.w,
        f.h,
        f.w,
        f.h,
        attr(label)
    );
    let _ = writeln!(s, "<title>{}</title>", text(label));
}

/// Horizontal grid lines at the axis's ticks, labelled on the left, and the two axes.
fn value_grid(s: &mut String, f: &Frame, a: &Axis) {
    for t in &a.ticks {
        let ty = a.y(f, *t);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{:.1}\" y1=\"{ty:.1}\" x2=\"{:.1}\" y2=\"{ty:.1}\"/>",
            f.left,
            f.x_end()
        );
        let _ = writeln!(
            s,
            "<text class=\"tick-label y\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            f.left - 6.0,
            ty + 4.0,
            text(&a.label(*t))
        );
    }
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{l:.1}\" y1=\"{:.1}\" x2=\"{l:.1}\" y2=\"{:.1}\"/>\n<line class=\"axis\" x1=\"{l:.1}\" y1=\"{b:.1}\" x2=\"{:.1}\" y2=\"{b:.1}\"/>",
        f.top,
        f.y_end(),
        f.x_end(),
        l = f.left,
        b = f.y_end()
    );
}

/// Labels under the x axis at their positions, centred. A label the same as the one before it,
/// or that would touch it, is left out (its tick stays).
fn x_labels(s: &mut String, f: &Frame, labels: &[(f64, String)]) {
    let mut last_end: Option<f64> = None;
    let mut drawn = std::collections::HashSet::new();
    for (x, l) in labels {
        let half = text_w(l) / 2.0;
        if drawn.contains(l.as_str()) || last_end.is_some_and(|end| x - half < end + 6.0) {
            continue;
        }
        let _ = writeln!(
            s,
            "<text class=\"tick-label x\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            f.y_end() + 18.0,
            text(l)
        );
        last_end = Some(x + half);
        drawn.insert(l.as_str());
    }
}

/// A box a label takes: x from, x to, y top, y bottom.
type Bbox = (f64, f64, f64, f64);

/// Where a label for a horizontal line at `ly` goes: just above the line, then just below,
/// then a little further from it, each tried from the right end of the plot leftwards in
/// steps; the first box that holds no point (with its radius) and meets no box already taken
/// wins; the right end above when none does.
fn place_label(
    f: &Frame,
    ly: f64,
    label: &str,
    points: &[(f64, f64)],
    taken: &[Bbox],
) -> (f64, f64, &'static str, Bbox) {
    let w = text_w(label);
    let r = 6.0;
    let bbox = |x: f64, y: f64| -> Bbox { (x - w, x, y - 10.0, y + 2.0) };
    let clear = |b: Bbox| {
        b.0 >= f.left + 2.0
            && b.2 >= f.top - 2.0
            && b.3 <= f.y_end() + 2.0
            && points
                .iter()
                .all(|&(px, py)| px + r < b.0 || px - r > b.1 || py + r < b.2 || py - r > b.3)
            && taken
                .iter()
                .all(|t| t.1 < b.0 || t.0 > b.1 || t.3 < b.2 || t.2 > b.3)
    };
    let right = f.x_end() - 4.0;
    for y in [ly - 5.0, ly + 14.0, ly - 17.0, ly + 26.0] {
        let mut x = right;
        while x - w >= f.left + 2.0 {
            if clear(bbox(x, y)) {
                return (x, y, "end", bbox(x, y));
            }
            x -= 20.0;
        }
    }
    (right, ly - 5.0, "end", bbox(right, ly - 5.0))
}

/// A horizontal line across the plot with its label placed clear of `points`; returns the
/// label's box so later labels keep clear of it.
#[allow(clippy::too_many_arguments)]
fn hline(
    s: &mut String,
    f: &Frame,
    class: &str,
    ly: f64,
    label: &str,
    tip: &str,
    points: &[(f64, f64)],
    taken: &[Bbox],
) -> Bbox {
    let _ = writeln!(
        s,
        "<line class=\"{class}\" x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\"><title>{}</title></line>",
        f.left,
        f.x_end(),
        text(tip)
    );
    let (x, y, anchor, b) = place_label(f, ly, label, points, taken);
    let _ = writeln!(
        s,
        "<text class=\"{class}-label\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\">{}</text>",
        text(label)
    );
    b
}

/// The shaded side of the threshold that meets it.
fn zone(s: &mut String, f: &Frame, ty: f64, higher_is_better: bool) {
    let (zy, zh) = if higher_is_better {
        (f.top, ty - f.top)
    } else {
        (ty, f.y_end() - ty)
    };
    let _ = writeln!(
        s,
        "<rect class=\"zone\" x=\"{:.1}\" y=\"{zy:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
        f.left,
        f.plot_w(),
        zh.clamp(0.0, f.plot_h())
    );
}

fn unit_of(rule: &RuleResult) -> String {
    if rule.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", rule.unit)
    }
}

// ---- each run over time ---------------------------------------------------------------

/// One run's value of the charted metric.
pub struct Point<'a> {
    pub index: usize,
    pub time: DateTime<FixedOffset>,
    pub value: f64,
    pub run: &'a crate::runs::Run,
}

const RUNS: Frame = Frame {
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

// ---- IOPS inside a run ----------------------------------------------------------------

const SERIES: Frame = Frame {
    w: 640.0,
    h: 170.0,
    left: 56.0,
    right: 12.0,
    top: 14.0,
    bottom: 30.0,
};

/// One run's IOPS in each interval against `threshold`, the final fsync a shaded band after
/// the I/O. The last interval is drawn only when it is a full one: a partial interval's
/// handful of I/Os over a few milliseconds is noise (fio leaves it out of its samples too).
pub fn series(s: &crate::measure::series::Series, threshold: Option<f64>, label: &str) -> String {
    let f = SERIES;
    let dir = s.main_dir();
    let rates = s.rates(dir);
    let full = if s.last_ms >= s.interval_ms || rates.len() <= 1 {
        rates.len()
    } else {
        rates.len() - 1
    };
    let interval_s = s.interval_ms as f64 / 1000.0;
    let fsync_s = s.end_fsync_ms.unwrap_or(0.0) / 1000.0;
    let io_s =
        (rates.len().saturating_sub(1) as f64 * s.interval_ms as f64 + s.last_ms as f64) / 1000.0;
    let total_s = (io_s + fsync_s).max(0.001);
    let a = Axis::new(rates[..full].iter().copied().chain(threshold), true);
    let x = |t: f64| f.left + t / total_s * f.plot_w();

    let mut h = String::new();
    open(&mut h, "series-run", &f, label);
    value_grid(&mut h, &f, &a);
    // Seconds along the bottom, on a round step that gives at most about eight labels.
    let step = nice_step(total_s / 8.0);
    let decimals = if step >= 1.0 { 0 } else { 1 };
    let mut labels = Vec::new();
    let mut t = 0.0;
    while t <= total_s + 1e-9 {
        labels.push((x(t), format!("{t:.decimals$}s")));
        t += step;
    }
    x_labels(&mut h, &f, &labels);
    let mut taken = Vec::new();
    if fsync_s > 0.0 {
        let dur = if fsync_s < 1.0 {
            format!("{:.0} ms", fsync_s * 1000.0)
        } else {
            format!("{fsync_s:.1} s")
        };
        let band_w = (x(total_s) - x(io_s)).max(1.0);
        let _ = writeln!(
            h,
            "<rect class=\"zone fsync\" x=\"{:.1}\" y=\"{:.1}\" width=\"{band_w:.1}\" height=\"{:.1}\"><title>final fsync {dur}</title></rect>",
            x(io_s),
            f.top,
            f.plot_h()
        );
        // Its label above the plot, ending at the band's right edge.
        let lx = f.x_end();
        let l = format!("final fsync {dur}");
        let _ = writeln!(
            h,
            "<text class=\"fsync-label\" x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            f.top - 3.0,
            text(&l)
        );
        taken.push((lx - text_w(&l), lx, f.top - 13.0, f.top - 1.0));
    }
    let mut pts = Vec::new();
    for (k, v) in rates[..full].iter().enumerate() {
        let mid = (k as f64 + 0.5) * interval_s;
        pts.push((x(mid.min(io_s)), a.y(&f, *v)));
    }
    if let Some(th) = threshold {
        let tip = format!("threshold {}", fmt_value(th));
        hline(
            &mut h,
            &f,
            "threshold",
            a.y(&f, th),
            &tip,
            &tip,
            &pts,
            &taken,
        );
    }
    let list: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        h,
        "<polyline class=\"series-line\" points=\"{}\"/>",
        list.join(" ")
    );
    h.push_str("</svg>\n");
    h
}

// ---- each day's mean and range --------------------------------------------------------

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
            crate::evaluate::Stats::of(v).map(|s| (s.ci95_low, s.ci95_high))
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
        false,
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
    zone(&mut s, &f, ty, rule.op.higher_is_better());
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
        &format!("threshold {} {}", rule.op, fmt_value(rule.threshold)),
        &tip,
        &dots,
        &[],
    );
    for (i, (d, c)) in ev.days.iter().zip(&ci).enumerate() {
        let meets = rule.op.holds(d.mean, rule.threshold);
        let class = if meets { "pass" } else { "fail" };
        let interval = c
            .map(|c| format!(", 95% interval {}–{}", fmt_precise(c.0), fmt_precise(c.1)))
            .unwrap_or_default();
        let tip = format!(
            "{}: mean {}{unit} of {} run{}{interval}, range {}–{}",
            d.date,
            fmt_precise(d.mean),
            d.runs,
            if d.runs == 1 { "" } else { "s" },
            fmt_precise(d.min),
            fmt_precise(d.max)
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

// ---- a fleet's nodes ------------------------------------------------------------------

/// One node of a fleet as its chart shows it.
pub struct NodeBar {
    pub label: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    /// pass, fail or inconclusive.
    pub verdict: &'static str,
    pub tip: String,
}

/// How many nodes the chart draws; the table lists them all.
pub const NODES_DRAWN: usize = 200;

/// One horizontal bar per node, failures first, then the inconclusive, then the passing
/// (the order given within each), against the threshold; a node without a figure is a row
/// with its label and "no figure".
pub fn nodes(rows: &[NodeBar], unit: &str) -> String {
    let mut order: Vec<&NodeBar> = rows.iter().collect();
    let rank = |v: &str| match v {
        "fail" => 0,
        "inconclusive" => 1,
        _ => 2,
    };
    order.sort_by_key(|r| rank(r.verdict));
    order.truncate(NODES_DRAWN);
    let label_w = order
        .iter()
        .map(|r| text_w(&short(&r.label)))
        .fold(60.0, f64::max)
        .min(260.0);
    let row_h = 22.0;
    let f = Frame {
        w: 760.0,
        h: 50.0 + row_h * order.len() as f64,
        left: label_w + 12.0,
        right: 70.0,
        top: 10.0,
        bottom: 40.0,
    };
    let a = Axis::new(
        order.iter().flat_map(|r| [r.value, r.threshold]).flatten(),
        true,
    );
    let x = |v: f64| f.left + f.plot_w() * (v - a.lo) / (a.hi - a.lo);
    let unit_s = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let mut s = String::new();
    open(
        &mut s,
        "nodes",
        &f,
        &format!("the deciding figure of each node{unit_s}, failures first, against the threshold"),
    );
    // Vertical grid at the value ticks, labelled under the plot.
    let mut labels = Vec::new();
    for t in &a.ticks {
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
            f.top,
            f.y_end(),
            tx = x(*t)
        );
        labels.push((x(*t), a.label(*t)));
    }
    x_labels(&mut s, &f, &labels);
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        f.left + f.plot_w() / 2.0,
        f.h - 6.0,
        text(&format!(
            "{}{}the node's threshold: the red mark across its bar",
            unit.trim(),
            if unit.trim().is_empty() { "" } else { "; " }
        ))
    );
    for (i, r) in order.iter().enumerate() {
        let cy = f.top + row_h * (i as f64 + 0.5);
        let _ = writeln!(
            s,
            "<g class=\"node {}\"><title>{}</title>",
            r.verdict,
            text(&r.tip)
        );
        let _ = writeln!(
            s,
            "<text class=\"node-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            f.left - 6.0,
            cy + 4.0,
            text(&short(&r.label))
        );
        match r.value {
            Some(v) => {
                let (x0, x1) = (x(a.lo), x(v));
                let _ = writeln!(
                    s,
                    "<rect class=\"bar {}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                    r.verdict,
                    cy - row_h * 0.3,
                    (x1 - x0).max(1.0),
                    row_h * 0.6
                );
                let _ = writeln!(
                    s,
                    "<text class=\"bar-value\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    x1 + 4.0,
                    cy + 4.0,
                    text(&fmt_value(v))
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "<text class=\"bar-value none\" x=\"{:.1}\" y=\"{:.1}\">no figure</text>",
                    f.left + 4.0,
                    cy + 4.0
                );
            }
        }
        // The node's own threshold as a tick across its row.
        if let Some(t) = r.threshold {
            let _ = writeln!(
                s,
                "<line class=\"threshold\" x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
                cy - row_h / 2.0,
                cy + row_h / 2.0,
                tx = x(t)
            );
        }
        s.push_str("</g>\n");
    }
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{l:.1}\" y1=\"{:.1}\" x2=\"{l:.1}\" y2=\"{:.1}\"/>",
        f.top,
        f.y_end(),
        l = f.left
    );
    s.push_str("</svg>\n");
    s
}

/// A node label short enough for the chart's left margin (the tooltip has it whole).
fn short(label: &str) -> String {
    const MAX: usize = 38;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let head: String = label.chars().take(MAX - 1).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_values() {
        let a = Axis::new([2950.0, 3050.0, 3000.0].into_iter(), false);
        assert!(a.lo <= 2950.0 && a.hi >= 3050.0);
        assert!(a.ticks.len() >= 3 && a.ticks.len() <= 12);
        let a = Axis::new([0.0, 0.0].into_iter(), false);
        assert!(a.hi > a.lo);
        let a = Axis::new([4000.0].into_iter(), false);
        assert!(a.lo < 4000.0 && a.hi > 4000.0);
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(23.0), 25.0);
    }

    #[test]
    fn a_zero_reads_0_and_every_label_has_the_decimals_of_its_step() {
        let a = Axis::new([0.0, 150_000.0].into_iter(), true);
        assert_eq!(a.label(0.0), "0");
        assert!(
            a.ticks.iter().skip(1).all(|t| a.label(*t).ends_with('k')),
            "{:?}",
            a.ticks
        );
        let a = Axis::new([0.0, 3000.0].into_iter(), true);
        let l: Vec<String> = a.ticks.iter().map(|t| a.label(*t)).collect();
        assert_eq!(l[0], "0");
        assert!(l.iter().all(|s| !s.contains('.')), "{l:?}");
        let a = Axis::new([0.2, 1.1].into_iter(), false);
        let l: Vec<String> = a.ticks.iter().map(|t| a.label(*t)).collect();
        let decimals = |s: &str| s.split('.').nth(1).map_or(0, str::len);
        assert!(
            l.iter().skip(1).all(|s| decimals(s) == decimals(&l[1])),
            "{l:?}"
        );
        // distinct labels for distinct ticks
        let set: std::collections::BTreeSet<&String> = l.iter().collect();
        assert_eq!(set.len(), l.len(), "{l:?}");
    }

    #[test]
    fn x_labels_never_repeat_or_touch() {
        let f = RUNS;
        let mut s = String::new();
        let labels = vec![
            (100.0, "Nov 28".to_string()),
            (110.0, "Nov 29".to_string()),
            (200.0, "Nov 29".to_string()),
            (300.0, "Nov 30".to_string()),
            (400.0, "Nov 30".to_string()),
        ];
        x_labels(&mut s, &f, &labels);
        assert_eq!(s.matches("Nov 28").count(), 1);
        // the first Nov 29 touches Nov 28; the second is drawn; the second Nov 30 repeats
        assert_eq!(s.matches("Nov 29").count(), 1, "{s}");
        assert!(s.contains("x=\"200.0\""), "{s}");
        assert_eq!(s.matches("Nov 30").count(), 1);
    }

    #[test]
    fn a_line_label_moves_away_from_the_points_near_it() {
        let f = RUNS;
        let ly = 200.0;
        let apart = |b: Bbox, p: &[(f64, f64)]| {
            p.iter()
                .all(|&(x, y)| x + 6.0 < b.0 || x - 6.0 > b.1 || y + 6.0 < b.2 || y - 6.0 > b.3)
        };
        // a point where the right-end label would go: the label moves left along the line
        let points = [(f.x_end() - 20.0, ly - 9.0)];
        let (_, y, _, b) = place_label(&f, ly, "threshold ≥ 3000", &points, &[]);
        assert!(apart(b, &points) && y == ly - 5.0, "{b:?}");
        // points hugging the line on both sides all along: the label steps further away
        let points: Vec<(f64, f64)> = (0..70)
            .flat_map(|i| {
                let x = f.left + 10.0 * i as f64;
                [(x, ly - 9.0), (x, ly + 9.0)]
            })
            .collect();
        let (_, y, _, b) = place_label(&f, ly, "mean 8064", &points, &[]);
        assert!(apart(b, &points), "{b:?}");
        assert!((y - ly).abs() > 14.0, "{y}");
    }
}
