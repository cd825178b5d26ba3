//! The SVG pictures of the HTML pages, drawn by hand (no script, no external resource): the
//! frame and value axis every chart shares, and the four charts built on it — each run's
//! value over time ([`runs`]), IOPS inside a run ([`series`]), the mean of each day with the
//! range of its runs ([`days`]), and one bar per node of a fleet, failures first ([`nodes`]).
//! This file has the shared part (frame, axis, grid, labels, lines, the shaded side); each
//! chart is one file beside it, with what it plots (`runs::points`, `series_threshold`).
//!
//! Rules every chart keeps, so that what a reader sees is what the figures say: tick labels
//! all have the decimals their step needs and no more (a zero reads "0"), no two x labels
//! are the same or overlap, and a line's label is put where no point is drawn.

use std::fmt::Write as _;

use super::xml::{attr, text};
use crate::evaluate::RuleResult;
use crate::numbers::{fmt_precise, fmt_value};

mod days;
mod nodes;
mod runs;
mod series;

pub use days::days;
pub use nodes::{NODES_DRAWN, NodeBar, nodes};
pub use runs::{by_day as runs_by_day, points, runs};
pub use series::{series, series_threshold};

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
    // Each of the line's classes as a label's ("threshold reference": "threshold-label
    // reference-label").
    let label_class: Vec<String> = class
        .split_whitespace()
        .map(|c| format!("{c}-label"))
        .collect();
    let _ = writeln!(
        s,
        "<text class=\"{}\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\">{}</text>",
        label_class.join(" "),
        text(label)
    );
    b
}

/// The class of a figure drawn against `rule` on a test that deviates by `standing`
/// (`report::view::judge_on`): "pass" or "fail" on the policy's test, "fail" on a test that
/// only flatters, else "unjudged", drawn in no verdict's colour.
fn mark_class(
    rule: &RuleResult,
    v: f64,
    standing: Option<crate::deviation::Effect>,
) -> &'static str {
    use crate::deviation::Effect;
    if rule.undecided.is_some() {
        // a mean of figures fio printed too coarsely to tell
        return "unjudged";
    }
    match (rule.op.holds(v, rule.threshold), standing) {
        (true, None) => "pass",
        (false, None | Some(Effect::Flatters)) => "fail",
        _ => "unjudged",
    }
}

/// The side of the threshold that meets it, shaded in the pass colour; in grey where the runs
/// are not the policy's test (`judged` false), since meeting it there is no pass.
fn zone(s: &mut String, f: &Frame, ty: f64, higher_is_better: bool, judged: bool) {
    let (zy, zh) = if higher_is_better {
        (f.top, ty - f.top)
    } else {
        (ty, f.y_end() - ty)
    };
    let _ = writeln!(
        s,
        "<rect class=\"zone{}\" x=\"{:.1}\" y=\"{zy:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
        if judged { "" } else { " unjudged" },
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
        let f = runs::RUNS;
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
        let f = runs::RUNS;
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
