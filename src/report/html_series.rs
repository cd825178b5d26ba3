//! The HTML report's picture of each run: IOPS in every 500 ms interval against the
//! threshold, with the final fsync marked as its own phase.

use std::fmt::Write as _;

use crate::evaluate::Evaluation;

const W: f64 = 640.0;
const H: f64 = 160.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A whole number of IOPS as an axis label: 0, 1500, 12k.
fn label(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

/// The section, empty when no run carries a series.
pub fn section(ev: &Evaluation) -> String {
    let runs: Vec<(usize, &crate::history::Record)> = ev
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.iops_series.is_some())
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    // The threshold, when the deciding rule is in IOPS.
    let threshold = ev
        .rules
        .iter()
        .find(|r| r.unit == "IOPS")
        .map(|r| r.threshold);
    let mut h = String::from(
        "<section id=\"inside\">\n<h2>IOPS inside each run</h2>\n<p class=\"muted\">I/Os completed in each 500 ms, as fio's samples; the shaded band is the final fsync, inside the measured time.</p>\n",
    );
    // Past the count the tables summarise by day, the latest runs' charts only: a chart per
    // run of a year of runs is a page no one reads (and hundreds of MB).
    let latest = crate::report::details::LATEST_SHOWN;
    let skip = if runs.len() > crate::report::by_day::MAX_RUN_ROWS {
        let _ = writeln!(
            h,
            "<p class=\"muted\">The {latest} latest of {} runs; <code>--format json</code> has every run's series.</p>",
            runs.len()
        );
        runs.len() - latest
    } else {
        0
    };
    for (i, r) in runs.into_iter().skip(skip) {
        let s = r.iops_series.as_ref().expect("filtered");
        let dir = s.main_dir();
        let rates = s.rates(dir);
        let fsync_s = s.end_fsync_ms.unwrap_or(0.0) / 1000.0;
        let run_s = (rates.len().saturating_sub(1) as f64 * s.interval_ms as f64
            + s.last_ms as f64)
            / 1000.0;
        let total_s = (run_s + fsync_s).max(0.001);
        let top = rates
            .iter()
            .copied()
            .chain(threshold)
            .fold(0.0f64, f64::max)
            .max(1.0)
            * 1.1;
        let x = |t: f64| LEFT + t / total_s * (W - LEFT - RIGHT);
        let y = |v: f64| TOP + (1.0 - v / top) * (H - TOP - BOTTOM);
        let _ = writeln!(
            h,
            "<figure class=\"series\"><figcaption>run {} — {}</figcaption>",
            i + 1,
            esc(&r.timestamp.format("%Y-%m-%d %H:%M:%S").to_string())
        );
        let _ = writeln!(
            h,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart series-run\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{dir} IOPS every 500 ms in run {}\">",
            i + 1
        );
        // Axes: 0 and the top at whole numbers, seconds along the bottom.
        for v in [0.0, top / 2.0, top / 1.1] {
            let _ = writeln!(
                h,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                y(v),
                y(v),
                LEFT - 4.0,
                y(v) + 4.0,
                label(v)
            );
        }
        let step = if total_s > 30.0 {
            10.0
        } else if total_s > 6.0 {
            2.0
        } else {
            0.5
        };
        let mut t = 0.0;
        while t <= total_s + 1e-9 {
            let _ = writeln!(
                h,
                "<text class=\"xlabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}s</text>",
                x(t),
                H - 8.0,
                if step < 1.0 {
                    format!("{t:.1}")
                } else {
                    format!("{t:.0}")
                }
            );
            t += step;
        }
        if fsync_s > 0.0 {
            let _ = writeln!(
                h,
                "<rect class=\"zone fsync\" x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\"><title>final fsync {:.1} s</title></rect><text class=\"fsync-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">final fsync {:.1} s</text>",
                x(run_s),
                (x(total_s) - x(run_s)).max(1.0),
                H - TOP - BOTTOM,
                fsync_s,
                W - RIGHT - 2.0,
                TOP + 12.0,
                fsync_s
            );
        }
        if let Some(th) = threshold {
            // The label sits at the left end, above the line, where no sample is drawn.
            let _ = writeln!(
                h,
                "<line class=\"threshold\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/><text class=\"threshold-label\" x=\"{:.1}\" y=\"{:.1}\">threshold {}</text>",
                W - RIGHT,
                y(th),
                y(th),
                LEFT + 4.0,
                y(th) - 4.0,
                label(th)
            );
        }
        let mut pts = String::new();
        let mut t0 = 0.0;
        for (k, v) in rates.iter().enumerate() {
            let len = if k + 1 == rates.len() {
                s.last_ms as f64
            } else {
                s.interval_ms as f64
            } / 1000.0;
            let _ = write!(pts, "{:.1},{:.1} ", x(t0 + len / 2.0), y(*v));
            t0 += len;
        }
        let _ = writeln!(
            h,
            "<polyline class=\"series-line\" points=\"{}\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\"/>",
            pts.trim_end()
        );
        h.push_str("</svg></figure>\n");
    }
    h.push_str("</section>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::{Options, Scope, evaluate};
    use crate::report::by_day::MAX_RUN_ROWS;
    use crate::report::details::LATEST_SHOWN;

    fn section_of(n: usize) -> String {
        let runs: Vec<crate::history::Record> = (0..n)
            .map(|i| {
                let ts = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap()
                    + chrono::Duration::minutes(5 * i as i64);
                let mut r = crate::evaluate::tests::rec(&ts.to_rfc3339(), 16.0);
                r.iops_series = Some(crate::measure::Series {
                    interval_ms: 500,
                    write: vec![2000, 2100, 900],
                    read: vec![],
                    last_ms: 250,
                    end_fsync_ms: Some(80.0),
                });
                r
            })
            .collect();
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        section(&evaluate(runs, &policy, &Options::new(Scope::Report, now)))
    }

    #[test]
    fn a_chart_for_every_run_up_to_the_by_day_limit_then_for_the_latest_and_it_says_so() {
        let all = section_of(MAX_RUN_ROWS);
        assert_eq!(
            all.matches("<figure class=\"series\">").count(),
            MAX_RUN_ROWS
        );
        assert!(!all.contains("latest of"));

        let n = MAX_RUN_ROWS + 1;
        let latest = section_of(n);
        assert_eq!(
            latest.matches("<figure class=\"series\">").count(),
            LATEST_SHOWN
        );
        assert!(latest.contains(&format!("The {LATEST_SHOWN} latest of {n} runs")));
        assert!(latest.contains(&format!("<figcaption>run {n} — ")));
        assert!(!latest.contains(&format!("<figcaption>run {} — ", n - LATEST_SHOWN)));
    }
}
