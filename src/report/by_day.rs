//! The table's run rows for a long history: past [`MAX_RUN_ROWS`] runs, one row per day (the
//! node's calendar day, as the evidence rule counts days) with the number of runs and the
//! day's mean of each column, instead of one row per run. Thousands of rows are read by no
//! one and cost memory and time; every run is still in `--format csv` and `json`.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use comfy_table::{Cell, CellAlignment};

use super::view::Align;
use crate::evaluate::RuleResult;
#[cfg(test)]
use crate::history::Record;
use crate::run_index::RunFields;

/// More runs than this are summarised by day.
pub const MAX_RUN_ROWS: usize = 200;

/// One day's runs: how many, the engines that ran, and per column the sum and count of the
/// values present (a run without the metric does not count towards that column's mean).
#[derive(Debug, Default, PartialEq)]
pub struct DayRow {
    pub runs: usize,
    pub engines: Vec<String>,
    pub sums: Vec<(f64, usize)>,
}

impl DayRow {
    pub fn mean(&self, column: usize) -> Option<f64> {
        let (sum, n) = self.sums[column];
        (n > 0).then(|| sum / n as f64)
    }
}

/// The runs grouped by day, in date order, with `columns` (metric names) summed per day.
pub fn days<R: RunFields>(
    runs: impl IntoIterator<Item = R>,
    columns: &[&str],
) -> BTreeMap<NaiveDate, DayRow> {
    let mut out: BTreeMap<NaiveDate, DayRow> = BTreeMap::new();
    for r in runs {
        let d = out.entry(crate::evaluate::day_of(&r)).or_default();
        if d.sums.is_empty() {
            d.sums = vec![(0.0, 0); columns.len()];
        }
        d.runs += 1;
        if !d.engines.iter().any(|e| e == r.engine()) {
            d.engines.push(r.engine().to_string());
        }
        for (i, m) in columns.iter().enumerate() {
            if let Some(&v) = r.metrics().get(*m)
                && v.is_finite()
            {
                d.sums[i].0 += v;
                d.sums[i].1 += 1;
            }
        }
    }
    out
}

/// The terminal table's rows for `runs` summarised by day ([`super::view::day_rows`]), or
/// None when there are few enough runs for a row each. Rule columns carry the mark of the
/// day's mean against the threshold.
pub fn rows(
    runs: &[impl RunFields],
    rules: &[&RuleResult],
    extra: &[&str],
    engine_col: bool,
    standing: Option<crate::deviation::Effect>,
) -> Option<Vec<Vec<Cell>>> {
    if runs.len() <= MAX_RUN_ROWS {
        return None;
    }
    let rows = super::view::day_rows(runs, rules, extra, engine_col, standing)
        .into_iter()
        .map(|row| {
            row.cells
                .into_iter()
                .map(|c| match c.align {
                    Align::Right => Cell::new(c.text).set_alignment(CellAlignment::Right),
                    Align::Left => Cell::new(c.text),
                })
                .collect()
        })
        .collect();
    Some(rows)
}

/// The line above a summarised table.
pub fn note(runs: usize) -> String {
    format!(
        "{runs} runs: one row per day with the mean of its runs (✓/✗ judge that mean); `--format csv` or `json` lists every run"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn run(ts: &str, engine: &str, iops: Option<f64>) -> Record {
        let line = format!(
            r#"{{"schema_version":1,"timestamp":"{ts}","host":"n","source":"native","engine":"{engine}","job":{{}},"metrics":{{{}}},"tool_version":"0","policy":"swimlane"}}"#,
            iops.map(|v| format!(r#""write_iops":{v},"end_fsync_ms":10"#))
                .unwrap_or(r#""end_fsync_ms":30"#.into())
        );
        let r: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(r.timestamp, DateTime::parse_from_rfc3339(ts).unwrap());
        r
    }

    #[test]
    fn runs_are_summed_per_node_day_and_a_missing_metric_is_not_a_zero() {
        let runs = [
            run("2026-11-29T23:30:00+01:00", "psync", Some(1000.0)),
            // the same UTC day as the run above, but the node's next day
            run("2026-11-30T00:10:00+01:00", "psync", Some(3000.0)),
            run("2026-11-30T12:00:00+01:00", "posixaio", Some(5000.0)),
            run("2026-11-30T13:00:00+01:00", "psync", None),
        ];
        let d = days(&runs, &["write_iops", "end_fsync_ms"]);
        let dates: Vec<String> = d.keys().map(|k| k.to_string()).collect();
        assert_eq!(dates, ["2026-11-29", "2026-11-30"]);
        let day = &d[&NaiveDate::from_ymd_opt(2026, 11, 30).unwrap()];
        assert_eq!(day.runs, 3);
        assert_eq!(day.engines, ["psync", "posixaio"]);
        assert_eq!(day.mean(0), Some(4000.0));
        assert_eq!(day.mean(1), Some(50.0 / 3.0));
    }

    #[test]
    fn few_runs_keep_a_row_each_and_many_are_one_row_per_day() {
        let rule = crate::evaluate::tests::rule("write_iops", 3000.0);
        let few: Vec<Record> = (0..MAX_RUN_ROWS)
            .map(|i| {
                run(
                    &format!("2026-11-30T{:02}:{:02}:00Z", i / 60 % 24, i % 60),
                    "psync",
                    Some(2000.0),
                )
            })
            .collect();
        assert!(rows(&few, &[&rule], &[], false, None).is_none());
        let many: Vec<Record> = (0..3 * 24 * 12)
            .map(|i| {
                let (day, min) = (i / (24 * 12), i % (24 * 12) * 5);
                let iops = if day == 1 { 2000.0 } else { 4000.0 };
                run(
                    &format!(
                        "2026-11-{:02}T{:02}:{:02}:00Z",
                        10 + day,
                        min / 60,
                        min % 60
                    ),
                    "psync",
                    Some(iops),
                )
            })
            .collect();
        let table = rows(&many, &[&rule], &["end_fsync_ms"], false, None).unwrap();
        assert_eq!(table.len(), 3);
        let text: Vec<Vec<String>> = table
            .iter()
            .map(|r| r.iter().map(|c| c.content()).collect())
            .collect();
        assert_eq!(text[0], ["288 runs", "2026-11-10", "4000 ✓", "10.00"]);
        assert_eq!(text[1], ["288 runs", "2026-11-11", "2000 ✗", "10.00"]);
    }
}
