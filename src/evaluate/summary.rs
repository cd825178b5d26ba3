//! The summary's statistics of every metric the judged runs have, and the per-day figures.
//!
//! A run of a long window holds only the figures its policy's rules and the warnings read
//! (`run_index::Run::holding`); the statistics of the other metrics are taken from the runs'
//! records, read again from the history in passes over the window, a few metrics' columns at
//! a time: at most [`COLUMN_BYTES`] of figures are gathered at once, whatever the window.
//! Each metric's column is the same figures in the same order as when every run held every
//! figure, so the statistics are the same to the bit.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;

use crate::policy::Aggregate;
use crate::run_index::{Records, Run};

use super::stats::Stats;
use super::{Day, LatestDay, day_of};

/// The figures gathered at once when the statistics are read from the records: the columns
/// of as many metrics as fit, one pass over the window's records for each such batch.
pub const COLUMN_BYTES: usize = 16 << 20;

/// The statistics of every metric present in any of `runs`, one metric at a time from the
/// figures the runs hold, then the rest from their records in `records`, in batches.
pub(super) fn metric_stats(
    runs: &[Run],
    records: &Records,
) -> std::io::Result<BTreeMap<String, Stats>> {
    // Runs of one kind share their lists of names (`Metrics::names`): a run whose lists are
    // the ones before it adds nothing.
    let mut names: Vec<&'static str> = Vec::new();
    let mut unheld: BTreeSet<&'static str> = BTreeSet::new();
    let mut last: Option<(&[&str], &[&str])> = None;
    for r in runs {
        let lists = (r.names, r.metrics.names());
        if last.is_some_and(|l| std::ptr::eq(l.0, lists.0) && std::ptr::eq(l.1, lists.1)) {
            continue;
        }
        for k in lists.0 {
            if !names.contains(k) {
                names.push(k);
            }
            if !lists.1.contains(k) {
                unheld.insert(k);
            }
        }
        last = Some(lists);
    }
    let mut metrics: BTreeMap<String, Stats> = BTreeMap::new();
    let mut column: Vec<f64> = Vec::new();
    for m in names.iter().filter(|m| !unheld.contains(*m)) {
        column.clear();
        let mut last: Option<&[&str]> = None;
        let mut slot: Option<usize> = None;
        for r in runs {
            let list = r.metrics.names();
            if !last.is_some_and(|l| std::ptr::eq(l, list)) {
                slot = list.iter().position(|k| k == m);
                last = Some(list);
            }
            if let Some(i) = slot {
                column.push(r.metrics.figures()[i]);
            }
        }
        if let Some(s) = Stats::of(&column) {
            metrics.insert(m.to_string(), s);
        }
    }
    drop(column);
    // An evaluation only judged, never listed (a fleet's node, `Records::None`): the
    // statistics of what its runs hold are all that is read of it.
    if matches!(records, Records::None) {
        return Ok(metrics);
    }
    let unheld: Vec<&'static str> = unheld.into_iter().collect();
    let per_batch = (COLUMN_BYTES / 8 / runs.len().max(1)).max(1);
    for batch in unheld.chunks(per_batch) {
        let mut columns: Vec<Vec<f64>> = vec![Vec::new(); batch.len()];
        let mut reader = records.reader();
        for r in runs {
            if !batch.iter().any(|m| r.names.contains(m)) {
                continue;
            }
            let all = reader.metrics(r)?;
            for (m, c) in batch.iter().zip(&mut columns) {
                if let Some(&v) = all.get(*m) {
                    c.push(v);
                }
            }
        }
        for (m, c) in batch.iter().zip(columns) {
            if let Some(s) = Stats::of(&c) {
                metrics.insert(m.to_string(), s);
            }
        }
    }
    Ok(metrics)
}

/// `metric` over the runs of the latest day that measured it (runs are in time order).
pub(super) fn latest_day(runs: &[Run], metric: &str, agg: Aggregate) -> Option<LatestDay> {
    let date = runs
        .iter()
        .rev()
        .find(|r| r.metrics.get(metric).is_some())
        .map(day_of)?;
    let v: Vec<f64> = runs
        .iter()
        .rev()
        .take_while(|r| day_of(*r) >= date)
        .filter(|r| day_of(*r) == date)
        .filter_map(|r| r.metrics.get(metric).copied())
        .collect();
    Some(LatestDay {
        date,
        runs: v.len(),
        value: Stats::of(&v)?.aggregate(agg),
    })
}

pub(super) fn per_day(runs: &[Run], metric: &str) -> Vec<Day> {
    let mut by_day: BTreeMap<NaiveDate, Vec<f64>> = BTreeMap::new();
    for r in runs {
        if let Some(&v) = r.metrics.get(metric) {
            by_day.entry(day_of(r)).or_default().push(v);
        }
    }
    by_day
        .into_iter()
        .map(|(date, v)| {
            let s = Stats::of(&v).expect("non-empty");
            Day {
                date,
                runs: v.len(),
                mean: s.mean,
                min: s.min,
                max: s.max,
            }
        })
        .collect()
}

/// The figures a judged run must hold for `policy`: its rules' metrics (the fleet's and a
/// device set's too) and what the warnings and the tables read of every run (runtimes, the
/// end fsync). A stored list, one per
/// distinct set (see `Metrics::only`).
pub fn held_metrics(policy: &crate::policy::Policy) -> &'static [&'static str] {
    thread_local! {
        static LISTS: std::cell::RefCell<Vec<&'static [&'static str]>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut want: Vec<&str> = ["write_runtime_ms", "read_runtime_ms", "end_fsync_ms"].to_vec();
    let spread = policy
        .devices
        .iter()
        .flat_map(|d| &d.spread)
        .map(|s| &s.metric);
    let fleet = policy.fleet.iter().map(|f| &f.metric);
    for m in policy
        .rules
        .iter()
        .map(|r| &r.metric)
        .chain(fleet)
        .chain(spread)
    {
        if !want.contains(&m.as_str()) {
            want.push(m);
        }
    }
    want.sort_unstable();
    LISTS.with(|l| {
        let mut l = l.borrow_mut();
        if let Some(k) = l.iter().find(|k| **k == want.as_slice()) {
            return *k;
        }
        let k: &'static [&'static str] = Box::leak(
            want.iter()
                .map(|m| &*Box::leak(m.to_string().into_boxed_str()))
                .collect::<Vec<&'static str>>()
                .into_boxed_slice(),
        );
        l.push(k);
        k
    })
}
