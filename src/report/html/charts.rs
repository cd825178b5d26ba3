//! The node report's charts: each run's figure of the primary metric over time, and IOPS
//! inside each run that carries a series. What they plot is taken from `report/chart/`
//! (`points`, `series_threshold`), which draws them.

use std::fmt::Write as _;

use crate::evaluate::Evaluation;
use crate::report::chart;
use crate::report::xml::text;
use crate::run_index::Records;

/// Each run's figure of the primary metric (or the first rule's) over time.
pub fn runs_section(h: &mut String, ev: &Evaluation) {
    let Some(rule) = ev.primary_rule().or(ev.rules.first()) else {
        h.push_str("<section id=\"chart\">\n<h2>Chart</h2>\n<p class=\"muted\">No chart: the policy has no rule.</p>\n</section>\n");
        return;
    };
    let points = chart::points(ev, rule);
    let by_day = chart::runs_by_day(ev);
    let _ = writeln!(
        h,
        "<section id=\"chart\">\n<h2>{} per {}</h2>",
        text(&rule.metric),
        if by_day { "day" } else { "run" }
    );
    if points.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"muted\">No chart: no run measures {}.</p>\n</section>",
            text(&rule.metric)
        );
        return;
    }
    if by_day {
        let _ = writeln!(
            h,
            "<p class=\"muted\">{} runs: each day's mean (dot) and the range of its runs, lowest to highest (line), as the tables show past {} runs; <code>--format csv</code> or <code>json</code> lists every run.</p>",
            ev.runs.len(),
            crate::report::by_day::MAX_RUN_ROWS
        );
    }
    h.push_str(&chart::runs(ev, rule, &points));
    h.push_str("</section>\n");
}

/// IOPS in every 500 ms interval of each run against the threshold, with the final fsync
/// marked as its own phase; nothing when no run carries a series.
/// The series drawn are read from each shown run's whole record, again from the
/// evaluation's records.
pub fn series_section(h: &mut String, ev: &Evaluation, records: &Records) -> std::io::Result<()> {
    h.push_str(&series(ev, records)?);
    Ok(())
}

fn series(ev: &Evaluation, records: &Records) -> std::io::Result<String> {
    let runs: Vec<(usize, &crate::run_index::Run)> = ev
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.has_series)
        .collect();
    if runs.is_empty() {
        return Ok(String::new());
    }
    let mut reader = records.reader();
    let threshold = chart::series_threshold(ev);
    let mut h = String::from(
        "<section id=\"inside\">\n<h2>IOPS inside each run</h2>\n<p class=\"muted\">I/Os completed in each 500 ms, as fio's samples (the last, partial interval left out, as fio does); the shaded band is the final fsync, inside the measured time.</p>\n",
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
        let Some(s) = reader.with(r, |whole| whole.iops_series.clone())? else {
            continue;
        };
        let s = &s;
        let _ = writeln!(
            h,
            "<figure class=\"series\"><figcaption>run {} — {}</figcaption>",
            i + 1,
            text(&r.timestamp.format("%Y-%m-%d %H:%M:%S").to_string())
        );
        h.push_str(&chart::series(
            s,
            threshold,
            &format!(
                "{} IOPS every {} ms in run {}",
                s.main_dir(),
                s.interval_ms,
                i + 1
            ),
        ));
        h.push_str("</figure>\n");
    }
    h.push_str("</section>\n");
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let (ev, records) =
            crate::evaluate::tests::swimlane_report_held(runs, "2026-12-02T00:00:00Z");
        series(&ev, &records).unwrap()
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

    /// `n` runs an hour apart from 2026-11-01 00:00 UTC, alternately 10 and 16 MB/s (one
    /// misses the threshold, one meets it), judged; and the chart section over time.
    fn chart_of(n: usize) -> (crate::evaluate::Evaluation, String) {
        let runs: Vec<crate::history::Record> = (0..n)
            .map(|i| {
                let ts = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap()
                    + chrono::Duration::hours(i as i64);
                crate::evaluate::tests::rec(&ts.to_rfc3339(), if i % 2 == 0 { 10.0 } else { 16.0 })
            })
            .collect();
        let ev = crate::evaluate::tests::swimlane_report(runs, "2026-12-02T00:00:00Z");
        let mut h = String::new();
        runs_section(&mut h, &ev);
        (ev, h)
    }

    #[test]
    fn the_chart_over_time_has_a_circle_per_run_up_to_the_by_day_limit() {
        let (_, h) = chart_of(MAX_RUN_ROWS);
        assert_eq!(h.matches("<circle class=\"run ").count(), MAX_RUN_ROWS);
        assert!(h.contains(" per run</h2>"), "{h}");
        assert!(!h.contains("<g class=\"day "));
        assert!(!h.contains("each day's mean"));
    }

    #[test]
    fn past_the_by_day_limit_the_chart_over_time_has_a_mark_per_day_and_says_so() {
        let n = MAX_RUN_ROWS + 1;
        let (ev, h) = chart_of(n);
        let rule = ev.primary_rule().unwrap();
        // hourly from midnight: 8 whole days of 24 runs, then 9 runs on the ninth
        assert_eq!(h.matches("<g class=\"day ").count(), n.div_ceil(24));
        assert_eq!(h.matches("<circle class=\"run ").count(), 0);
        assert!(
            h.contains(&format!(
                " per day</h2>\n<p class=\"muted\">{n} runs: each day's mean"
            )),
            "{h}"
        );
        assert!(
            h.contains(&format!("{n} runs on 9 days: each day's mean and range")),
            "{h}"
        );
        // a whole day: its mean, its range, and how many of its runs miss
        let low = crate::evaluate::tests::rec("2026-11-01T00:00:00Z", 10.0).metrics[&rule.metric];
        let high = crate::evaluate::tests::rec("2026-11-01T00:00:00Z", 16.0).metrics[&rule.metric];
        assert!(!rule.op.holds(low, rule.threshold) && rule.op.holds(high, rule.threshold));
        let tip = format!(
            "2026-11-02: mean {} {} of 24 runs, range {}–{}; 12 runs miss",
            crate::numbers::fmt_value((low + high) / 2.0),
            rule.unit,
            crate::numbers::fmt_value(low),
            crate::numbers::fmt_value(high)
        );
        assert!(h.contains(&tip), "{tip}\n{h}");
        assert!(h.contains("2026-11-09: mean "), "{h}");
    }
}
