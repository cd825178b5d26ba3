//! A self-contained HTML report to attach to a ticket or archive: one file, inline CSS and an
//! inline SVG chart, no script and no external resource (a Content-Security-Policy meta tag
//! forbids both), readable offline in any browser.
//!
//! It is written as well-formed XHTML (every element closed, void elements self-closed, only
//! XML's own entities), so XML tools can read it as well as browsers. The chart shows each
//! run's value of the primary metric (the first fail-level rule's) over time: one
//! `circle.run` per run with a `<title>` tooltip, the threshold as `line.threshold`, the
//! aggregate as `line.aggregate`, the side that meets the threshold shaded, and the verdict.

use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::{DateTime, FixedOffset};

use crate::evaluate::{Evaluation, RuleResult};
use crate::policy::Level;

use super::xml::{attr, text};
use super::{fmt_precise, fmt_value};

const CSS: &str = "
:root { --pass: #1a7f37; --fail: #cf222e; --inconclusive: #9a6700; --fg: #1f2328;
  --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --zone: rgba(26, 127, 55, 0.07); }
@media (prefers-color-scheme: dark) {
  :root { --pass: #3fb950; --fail: #f85149; --inconclusive: #d29922; --fg: #e6edf3;
    --muted: #9198a1; --line: #3d444d; --bg: #0d1117; --zone: rgba(63, 185, 80, 0.10); }
}
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 64rem; padding: 1rem 1.5rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 0.25rem 0; }
h2 { font-size: 1.15rem; margin-top: 1.75rem; border-bottom: 1px solid var(--line); }
.banner { border-left: 0.5rem solid; padding: 0.75rem 1rem; margin: 1rem 0; }
.banner.pass { border-color: var(--pass); }
.banner.fail { border-color: var(--fail); }
.banner.inconclusive { border-color: var(--inconclusive); }
.banner .word { font-size: 1.75rem; font-weight: 700; letter-spacing: 0.05em; }
.pass .word, td.pass, .result.pass { color: var(--pass); }
.fail .word, td.fail, .result.fail { color: var(--fail); }
.inconclusive .word, .result.soft { color: var(--inconclusive); }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.aggregate td { font-weight: 600; }
.scroll { overflow-x: auto; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
dt { color: var(--muted); }
dd { margin: 0; }
ul.warnings li { margin-bottom: 0.4rem; }
.muted, footer { color: var(--muted); font-size: 0.85rem; }
svg.chart { width: 100%; max-width: 760px; height: auto; font-size: 11px; }
svg.chart text { fill: var(--fg); }
svg.chart .axis, svg.chart .tick { stroke: var(--muted); stroke-width: 1; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .zone { fill: var(--zone); }
svg.chart .threshold { stroke: var(--fail); stroke-width: 1.5; }
svg.chart .aggregate { stroke: var(--muted); stroke-width: 1; stroke-dasharray: 5 4; }
svg.chart .series { fill: none; stroke: var(--muted); stroke-width: 1; opacity: 0.6; }
svg.chart circle.run { stroke: var(--bg); stroke-width: 1; }
svg.chart circle.pass { fill: var(--pass); }
svg.chart circle.fail { fill: var(--fail); }
svg.chart text.verdict-pass { fill: var(--pass); font-weight: 700; }
svg.chart text.verdict-fail { fill: var(--fail); font-weight: 700; }
svg.chart text.verdict-inconclusive { fill: var(--inconclusive); font-weight: 700; }
@media print { .scroll { overflow: visible; } }
";

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let mut h = String::new();
    let id = super::identity(ev);
    let p = &ev.policy;
    let word = ev.verdict.as_str().to_uppercase();
    let on = if id.host.is_empty() {
        String::new()
    } else {
        format!(" on {}", id.host)
    };

    page_start(&mut h, &format!("iopscheck: {} — {word}{on}", p.name), CSS);

    // Verdict banner.
    let v = ev.verdict.as_str();
    let _ = writeln!(h, "<header class=\"banner {v}\" id=\"verdict\">");
    let _ = writeln!(h, "<h1>iopscheck: {}{}</h1>", text(&p.name), text(&on));
    let _ = writeln!(h, "<p><span class=\"word\">{word}</span></p>");
    let _ = writeln!(h, "<p class=\"reason\">{}</p>", text(&ev.reason));
    // The test's shape and what keeps it from being the policy's, in the banner itself.
    let context = super::verdict_context(ev);
    if !ev.runs.is_empty() || !context.is_empty() {
        h.push_str("<ul class=\"test\">\n");
        if !ev.runs.is_empty() {
            let _ = writeln!(
                h,
                "<li class=\"shape\">test: {}</li>",
                text(&super::test_shape(ev))
            );
        }
        for line in &context {
            let _ = writeln!(h, "<li class=\"deviation\">{}</li>", text(line));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</header>\n<main>\n");

    policy_section(&mut h, ev, &id);
    chart_section(&mut h, ev);
    h.push_str(&super::html_series::section(ev));
    runs_section(&mut h, ev);
    rules_section(&mut h, ev);
    days_section(&mut h, ev);
    evidence_section(&mut h, ev);
    warnings_section(&mut h, ev);

    h.push_str("</main>\n");
    let _ = writeln!(
        h,
        "<footer><p>Generated by iopscheck {} at {}.</p></footer>",
        env!("CARGO_PKG_VERSION"),
        ev.generated.format("%Y-%m-%d %H:%M:%S UTC")
    );
    h.push_str("</body>\n</html>\n");
    out.write_all(h.as_bytes())
}

fn policy_section(h: &mut String, ev: &Evaluation, id: &super::Identity) {
    let p = &ev.policy;
    h.push_str("<section id=\"policy\">\n<h2>Policy</h2>\n<dl>\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(h, "<dt>{}</dt><dd>{v}</dd>", text(k));
    };
    row(
        "policy",
        format!(
            "<strong>{}</strong>: {}",
            text(&p.name),
            text(&p.description)
        ),
    );
    row("vendor", text(&p.vendor));
    let title = if p.source.is_empty() {
        &p.url
    } else {
        &p.source
    };
    let source = match super::safe_url(&p.url) {
        Some(url) => format!(
            "<a href=\"{}\" rel=\"noreferrer\">{}</a>",
            attr(url),
            text(title)
        ),
        None if p.url.is_empty() => text(title),
        None => format!("{} ({})", text(title), text(&p.url)),
    };
    row(
        "source",
        format!(
            "{source} <span class=\"muted\">(seen {}; test {})</span>",
            text(&p.seen),
            text(&p.test)
        ),
    );
    row("host", text(dash(&id.host)));
    row("directory", text(dash(&id.dir)));
    row("engine", text(dash(&id.engine)));
    row(
        "judged",
        text(&format!(
            "{} of {}{}",
            p.aggregate.as_str(),
            match ev.scope {
                crate::evaluate::Scope::Run => "the runs of this invocation",
                crate::evaluate::Scope::Import => "imported fio outputs",
                crate::evaluate::Scope::Report => "the history over the window",
            },
            if ev.strict {
                "; strict: warn-level rules decide too"
            } else {
                ""
            }
        )),
    );
    h.push_str("</dl>\n</section>\n");
}

/// The start of a self-contained page: XHTML (so tests can read it with an XML parser), a
/// content security policy that forbids scripts and outside resources, the inline style.
pub(super) fn page_start(h: &mut String, title: &str, css: &str) {
    h.push_str("<!DOCTYPE html>\n");
    h.push_str(
        "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\" xml:lang=\"en\">\n<head>\n",
    );
    h.push_str("<meta charset=\"utf-8\"/>\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    h.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"/>\n",
    );
    let _ = writeln!(h, "<title>{}</title>", text(title));
    let _ = writeln!(h, "<style>{css}</style>\n</head>\n<body>");
}

pub(super) fn dash(s: &str) -> &str {
    if s.is_empty() { "—" } else { s }
}

// ---- chart ----------------------------------------------------------------------------

const W: f64 = 760.0;
const H: f64 = 320.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 56.0;

/// A step of 1, 2, 2.5 or 5 × 10ⁿ near `raw`, for round tick labels.
fn nice_step(raw: f64) -> f64 {
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

/// The value axis: covers every value, the threshold and the aggregate, with some room, and
/// ends on round ticks. A flat series (one run, all runs equal) still gets a visible range.
fn y_axis(values: impl Iterator<Item = f64>) -> (f64, f64, Vec<f64>) {
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
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.08
    } else {
        (hi.abs() * 0.1).max(1.0)
    };
    let (mut lo, mut hi) = (lo - pad, hi + pad);
    if nonnegative && lo < 0.0 {
        lo = 0.0;
    }
    let step = nice_step((hi - lo) / 5.0);
    lo = (lo / step).floor() * step;
    hi = (hi / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut t = lo;
    while t <= hi + step * 1e-9 && ticks.len() < 20 {
        ticks.push(t);
        t += step;
    }
    (lo, hi, ticks)
}

struct Point<'a> {
    index: usize,
    time: DateTime<FixedOffset>,
    value: f64,
    run: &'a crate::history::Record,
}

fn chart_section(h: &mut String, ev: &Evaluation) {
    let Some(rule) = ev.primary_rule().or(ev.rules.first()) else {
        h.push_str("<section id=\"chart\">\n<h2>Chart</h2>\n<p class=\"muted\">No chart: the policy has no rule.</p>\n</section>\n");
        return;
    };
    let points: Vec<Point> = ev
        .runs
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
        .collect();
    let _ = writeln!(
        h,
        "<section id=\"chart\">\n<h2>{} per run</h2>",
        text(&rule.metric)
    );
    if points.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"muted\">No chart: no run measures {}.</p>\n</section>",
            text(&rule.metric)
        );
        return;
    }
    h.push_str(&svg(ev, rule, &points));
    h.push_str("</section>\n");
}

fn svg(ev: &Evaluation, rule: &RuleResult, points: &[Point]) -> String {
    let unit = if rule.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", rule.unit)
    };
    let (lo, hi, ticks) = y_axis(
        points
            .iter()
            .map(|p| p.value)
            .chain([rule.threshold])
            .chain(rule.value),
    );
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let y = |v: f64| TOP + plot_h * (1.0 - (v - lo) / (hi - lo));
    // Times as seconds since the first run; labels in the first run's own offset.
    let offset = *points[0].time.offset();
    let t0 = points.iter().map(|p| p.time).min().expect("non-empty");
    let t1 = points.iter().map(|p| p.time).max().expect("non-empty");
    let span = (t1 - t0).num_milliseconds() as f64 / 1000.0;
    let inset = plot_w * 0.04;
    let x = |t: DateTime<FixedOffset>| {
        if span <= 0.0 {
            LEFT + plot_w / 2.0
        } else {
            let s = (t - t0).num_milliseconds() as f64 / 1000.0;
            LEFT + inset + (plot_w - 2.0 * inset) * s / span
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
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        attr(&label)
    );
    let _ = writeln!(s, "<title>{}</title>", text(&label));

    // The side of the threshold that meets it.
    let ty = y(rule.threshold);
    let (zy, zh) = if rule.op.higher_is_better() {
        (TOP, ty - TOP)
    } else {
        (ty, TOP + plot_h - ty)
    };
    let _ = writeln!(
        s,
        "<rect class=\"zone\" x=\"{LEFT:.1}\" y=\"{zy:.1}\" width=\"{plot_w:.1}\" height=\"{:.1}\"/>",
        zh.max(0.0)
    );

    // Value axis with grid lines.
    for t in &ticks {
        let ty = y(*t);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{LEFT:.1}\" y1=\"{ty:.1}\" x2=\"{:.1}\" y2=\"{ty:.1}\"/>",
            LEFT + plot_w
        );
        let _ = writeln!(
            s,
            "<text class=\"tick-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            ty + 4.0,
            text(&fmt_value(*t))
        );
    }
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{LEFT:.1}\" y1=\"{TOP:.1}\" x2=\"{LEFT:.1}\" y2=\"{:.1}\"/>",
        TOP + plot_h
    );
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{LEFT:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h
    );
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        TOP + plot_h / 2.0,
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
    let axis_y = TOP + plot_h;
    let tick = |s: &mut String, tx: f64, label: Option<String>| {
        let _ = writeln!(
            s,
            "<line class=\"tick\" x1=\"{tx:.1}\" y1=\"{axis_y:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
            axis_y + 5.0
        );
        if let Some(l) = label {
            let _ = writeln!(
                s,
                "<text class=\"tick-label\" x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                axis_y + 18.0,
                text(&l)
            );
        }
    };
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
            tick(&mut s, x(t), Some(t.format(fmt).to_string()));
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
                    "<line class=\"grid day\" x1=\"{bx:.1}\" y1=\"{TOP:.1}\" x2=\"{bx:.1}\" y2=\"{axis_y:.1}\"/>"
                );
                tick(&mut s, bx, None);
            }
            let (sx, ex) = (x(start), x(end));
            if i % every == 0 && ex - sx >= 36.0 {
                let _ = writeln!(
                    s,
                    "<text class=\"tick-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    (sx + ex) / 2.0,
                    axis_y + 18.0,
                    d.format("%b %-d")
                );
            }
        }
        if d0.format("%Y").to_string() == d1.format("%Y").to_string() {
            d0.format("%Y").to_string()
        } else {
            format!("{}–{}", d0.format("%Y"), d1.format("%Y"))
        }
    };
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + plot_w / 2.0,
        H - 10.0,
        text(&format!("time of run (UTC{offset}, {axis_note})"))
    );

    // Threshold, aggregate, then the runs on top. Each label sits on the side of its line away
    // from the other line, so the two never overprint when the aggregate is near the threshold.
    let agg_above = rule.value.is_some_and(|a| y(a) <= ty);
    let above = |line_y: f64, up: bool| if up { line_y - 5.0 } else { line_y + 14.0 };
    let _ = writeln!(
        s,
        "<line class=\"threshold\" x1=\"{LEFT:.1}\" y1=\"{ty:.1}\" x2=\"{:.1}\" y2=\"{ty:.1}\"><title>{}</title></line>",
        LEFT + plot_w,
        text(&format!(
            "threshold {} {}{unit}",
            rule.op,
            fmt_precise(rule.threshold)
        ))
    );
    let _ = writeln!(
        s,
        "<text class=\"threshold-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
        LEFT + plot_w - 4.0,
        above(ty, !agg_above),
        text(&format!(
            "threshold {} {}",
            rule.op,
            fmt_value(rule.threshold)
        ))
    );
    if let Some(a) = rule.value {
        let ay = y(a);
        let _ = writeln!(
            s,
            "<line class=\"aggregate\" x1=\"{LEFT:.1}\" y1=\"{ay:.1}\" x2=\"{:.1}\" y2=\"{ay:.1}\"><title>{}</title></line>",
            LEFT + plot_w,
            text(&format!("{agg} {}{unit}", fmt_precise(a)))
        );
        let _ = writeln!(
            s,
            "<text class=\"aggregate-label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            LEFT + 4.0,
            above(ay, agg_above),
            text(&format!("{agg} {}", fmt_value(a)))
        );
    }
    if points.len() > 1 {
        let mut sorted: Vec<&Point> = points.iter().collect();
        sorted.sort_by_key(|p| p.time);
        let path: Vec<String> = sorted
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.time), y(p.value)))
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
            y(p.value),
            text(&tip)
        );
    }
    let _ = writeln!(
        s,
        "<text class=\"verdict-{verdict}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">verdict: {}</text>",
        LEFT + plot_w,
        TOP - 10.0,
        verdict.to_uppercase()
    );
    let _ = writeln!(
        s,
        "<text class=\"legend\" x=\"{LEFT:.1}\" y=\"{:.1}\">{}</text>",
        TOP - 10.0,
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

// ---- tables ---------------------------------------------------------------------------

fn rule_columns(ev: &Evaluation) -> Vec<&RuleResult> {
    let mut cols: Vec<&RuleResult> = Vec::new();
    for r in &ev.rules {
        if !cols.iter().any(|c| c.metric == r.metric) {
            cols.push(r);
        }
    }
    cols
}

fn runs_section(h: &mut String, ev: &Evaluation) {
    h.push_str("<section id=\"runs\">\n<h2>Runs</h2>\n");
    if ev.runs.is_empty() {
        h.push_str("<p>No runs.</p>\n</section>\n");
        return;
    }
    let cols = rule_columns(ev);
    h.push_str("<div class=\"scroll\"><table class=\"runs\">\n<thead><tr><th class=\"num\">#</th><th>time</th><th>host</th><th>engine</th><th>source</th>");
    for r in &cols {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!("<br/>{}", text(r.unit))
        };
        let _ = write!(h, "<th class=\"num\">{}{unit}</th>", text(&r.metric));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (i, run) in ev.runs.iter().enumerate() {
        let source = match &run.source_file {
            Some(f) => format!("{} ({})", run.source.as_str(), f),
            None => run.source.as_str().to_string(),
        };
        let _ = write!(
            h,
            "<tr class=\"run\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            i + 1,
            text(&run.timestamp.format("%Y-%m-%d %H:%M:%S %:z").to_string()),
            text(&run.host),
            text(&run.engine),
            text(&source)
        );
        for r in &cols {
            match run.metrics.get(&r.metric) {
                Some(&v) => {
                    let (class, mark) = match r.level {
                        Level::Info => ("num", ""),
                        _ if r.op.holds(v, r.threshold) => ("num pass", " ✓"),
                        _ => ("num fail", " ✗"),
                    };
                    let _ = write!(h, "<td class=\"{class}\">{}{mark}</td>", fmt_value(v));
                }
                None => h.push_str("<td class=\"num\">—</td>"),
            }
        }
        h.push_str("</tr>\n");
    }
    let _ = write!(
        h,
        "<tr class=\"aggregate\"><td colspan=\"5\">{}</td>",
        ev.policy.aggregate.as_str()
    );
    for r in &cols {
        let _ = write!(
            h,
            "<td class=\"num\">{}</td>",
            r.value.map(fmt_value).unwrap_or("—".into())
        );
    }
    h.push_str("</tr>\n</tbody>\n</table></div>\n");

    // Every metric the runs have, folded away: a <details> element needs no script.
    let all = super::metric_columns(ev);
    h.push_str("<details><summary>All metrics of each run</summary>\n<div class=\"scroll\"><table class=\"all-metrics\">\n<thead><tr><th class=\"num\">#</th><th>directory</th>");
    for m in &all {
        let _ = write!(h, "<th class=\"num\">{}</th>", text(m));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (i, run) in ev.runs.iter().enumerate() {
        let _ = write!(
            h,
            "<tr><td class=\"num\">{}</td><td>{}</td>",
            i + 1,
            text(&run.target.dir)
        );
        for m in &all {
            let cell = run
                .metrics
                .get(m)
                .map(|&v| fmt_precise(v))
                .unwrap_or("—".into());
            let _ = write!(h, "<td class=\"num\">{}</td>", text(&cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table></div>\n</details>\n</section>\n");
}

fn rules_section(h: &mut String, ev: &Evaluation) {
    h.push_str("<section id=\"rules\">\n<h2>Rules</h2>\n");
    if ev.rules.is_empty() {
        h.push_str("<p>The policy has no rules.</p>\n</section>\n");
        return;
    }
    let _ = writeln!(
        h,
        "<div class=\"scroll\"><table class=\"rules\">\n<thead><tr><th>level</th><th>metric</th><th class=\"num\">{}</th><th class=\"num\">95% interval</th><th class=\"num\">min–max</th><th class=\"num\">threshold</th><th>result</th><th>note</th></tr></thead>\n<tbody>",
        ev.policy.aggregate.as_str()
    );
    for r in &ev.rules {
        let stats = ev.summary.metrics.get(&r.metric);
        let ci = stats
            .filter(|s| s.n > 1)
            .map(|s| format!("{}–{}", fmt_value(s.ci95_low), fmt_value(s.ci95_high)))
            .unwrap_or("—".into());
        let range = stats
            .map(|s| format!("{}–{}", fmt_value(s.min), fmt_value(s.max)))
            .unwrap_or("—".into());
        let deciding = r.level == Level::Fail || (ev.strict && r.level == Level::Warn);
        let (class, result) = match (r.passed, r.level) {
            (None, _) => ("result", "not measured"),
            (Some(true), _) => ("result pass", "meets"),
            (Some(false), _) if deciding => ("result fail", "fails"),
            (Some(false), Level::Warn) => ("result soft", "misses the soft limit"),
            (Some(false), _) => ("result", "misses (shown only)"),
        };
        let marginal = if r.marginal { " (marginal)" } else { "" };
        let _ = writeln!(
            h,
            "<tr class=\"rule\"><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{ci}</td><td class=\"num\">{range}</td><td class=\"num\">{} {} {}</td><td class=\"{class}\">{result}{marginal}</td><td>{}</td></tr>",
            r.level.as_str(),
            text(&r.metric),
            r.value.map(fmt_precise).unwrap_or("—".into()),
            text(&r.op.to_string()),
            fmt_precise(r.threshold),
            text(r.unit),
            text(r.note.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</tbody>\n</table></div>\n</section>\n");
}

fn days_section(h: &mut String, ev: &Evaluation) {
    if ev.days.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<section id=\"days\">\n<h2>Per day ({})</h2>\n<table class=\"days\">\n<thead><tr><th>day</th><th class=\"num\">runs</th><th class=\"num\">mean</th><th class=\"num\">min</th><th class=\"num\">max</th></tr></thead>\n<tbody>",
        text(ev.primary_metric().unwrap_or(""))
    );
    for d in &ev.days {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            d.date,
            d.runs,
            fmt_value(d.mean),
            fmt_value(d.min),
            fmt_value(d.max)
        );
    }
    h.push_str("</tbody>\n</table>\n</section>\n");
}

fn evidence_section(h: &mut String, ev: &Evaluation) {
    h.push_str("<section id=\"evidence\">\n<h2>Evidence</h2>\n");
    let applied = if ev.scope == crate::evaluate::Scope::Report {
        ""
    } else {
        "; a report over the history applies this rule"
    };
    let _ = writeln!(
        h,
        "<p>{}</p>",
        text(&format!(
            "{} (window {}){applied}",
            ev.evidence.advice(),
            ev.evidence.window
        ))
    );
    if !ev.differences.is_empty() {
        h.push_str("<p>Differences from the policy's test:</p>\n<ul class=\"differences\">\n");
        for d in &ev.differences {
            let _ = writeln!(h, "<li>{}</li>", text(&d.to_string()));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

fn warnings_section(h: &mut String, ev: &Evaluation) {
    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    if ev.warnings.is_empty() {
        h.push_str("<p class=\"muted\">None.</p>\n");
    } else {
        h.push_str("<ul class=\"warnings\">\n");
        for w in &ev.warnings {
            let _ = writeln!(h, "<li class=\"warning\">{}</li>", text(&w.to_string()));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;

    #[test]
    fn ticks_are_round_and_cover_the_values() {
        let (lo, hi, ticks) = y_axis([2950.0, 3050.0, 3000.0].into_iter());
        assert!(lo <= 2950.0 && hi >= 3050.0, "{lo} {hi}");
        // evenly spaced by a round step (here 25), so the labels read 2925, 2950, …
        let step = ticks[1] - ticks[0];
        assert_eq!(step, 25.0, "{ticks:?}");
        assert!(ticks.iter().all(|t| (t / step).fract() == 0.0), "{ticks:?}");
        // a flat series still has a range, and IOPS do not go below zero
        let (lo, hi, _) = y_axis([0.0, 0.0].into_iter());
        assert!(lo == 0.0 && hi > 0.0);
        let (lo, hi, _) = y_axis([4000.0].into_iter());
        assert!(lo < 4000.0 && hi > 4000.0);
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(23.0), 25.0);
    }

    #[test]
    fn verdict_class_names_exist_for_each_verdict() {
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive] {
            assert!(CSS.contains(&format!(".banner.{}", v.as_str())));
            assert!(CSS.contains(&format!("text.verdict-{}", v.as_str())));
        }
    }
}
