//! The policy's evidence rule: how many runs over how many days make a verdict, where a
//! node stands against it, and the count a report makes of it as the lines are read.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::deviation;
use crate::policy::Policy;
use crate::run_index::Run;

use super::is_future;

/// The evidence rule: how many runs over how many days make a verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EvidenceStatus {
    pub runs: usize,
    pub days: usize,
    pub min_runs: u32,
    pub min_days: u32,
    pub enough: bool,
    pub more_runs: usize,
    pub more_days: usize,
    pub window: String,
}

impl EvidenceStatus {
    /// The policy's evidence rule against `runs` runs over `days` days.
    pub fn of(policy: &Policy, runs: usize, days: usize) -> EvidenceStatus {
        let e = &policy.evidence;
        let more_runs = (e.min_runs as usize).saturating_sub(runs);
        let more_days = (e.min_days as usize).saturating_sub(days);
        EvidenceStatus {
            runs,
            days,
            min_runs: e.min_runs,
            min_days: e.min_days,
            enough: more_runs == 0 && more_days == 0,
            more_runs,
            more_days,
            window: crate::units::format_duration(e.window.0),
        }
    }

    /// "3 of 6 runs, 1 of 2 days"; past the rule, "8 runs (6 needed), 3 days (2 needed)".
    pub fn tally(&self) -> String {
        format!(
            "{}, {}",
            Self::part(self.runs, self.min_runs, "run"),
            Self::part(self.days, self.min_days, "day")
        )
    }

    /// "3 of 6 runs" while short of the rule; past it, "8 runs (6 needed)", never "8 of 6".
    fn part(n: usize, min: u32, unit: &str) -> String {
        let min = min as usize;
        let s = if n == 1 { "" } else { "s" };
        match n.cmp(&min) {
            std::cmp::Ordering::Greater if min == 0 => format!("{n} {unit}{s}"),
            std::cmp::Ordering::Greater => format!("{n} {unit}{s} ({min} needed)"),
            _ => format!("{n} of {min} {unit}s"),
        }
    }

    /// "4 of 6 runs over 1 of 2 days — run again tomorrow"; "8 runs (6 needed) over 3 days (2
    /// needed): enough evidence for a verdict".
    pub fn advice(&self) -> String {
        let part = Self::part;
        let head = format!(
            "{} over {}",
            part(self.runs, self.min_runs, "run"),
            part(self.days, self.min_days, "day")
        );
        if self.enough {
            return format!("{head}: enough evidence for a verdict");
        }
        let todo = match (self.more_runs, self.more_days) {
            (0, d) => format!("run again on {d} more day{}", if d == 1 { "" } else { "s" }),
            (r, 0) => format!("{r} more run{}", if r == 1 { "" } else { "s" }),
            (r, 1) => format!(
                "{r} more run{}, at least one of them tomorrow or later",
                if r == 1 { "" } else { "s" }
            ),
            (r, d) => format!(
                "{r} more run{} over {d} more days",
                if r == 1 { "" } else { "s" }
            ),
        };
        format!("{head} — {todo}")
    }
}

/// The policy's evidence over days counted as a report counts it, run by run as they are
/// read: the runs of the policy's test not dated in the future, and their days. Where a
/// verdict is over other runs (a `run`'s over its own), what the history holds towards the
/// evidence rule, without judging the history again.
pub struct EvidenceCount<'p> {
    checker: deviation::Checker<'p>,
    now: DateTime<Utc>,
    runs: usize,
    /// The quarter hours (of UTC) that hold a run: every zone's offset is whole quarter hours,
    /// so the days are counted in the latest run's zone at the end
    /// ([`super::days_in_one_zone`]), bounded by the window's length, not its runs.
    quarters: BTreeSet<i64>,
    latest: Option<DateTime<chrono::FixedOffset>>,
}

impl<'p> EvidenceCount<'p> {
    pub fn new(policy: &'p Policy, now: DateTime<Utc>) -> EvidenceCount<'p> {
        EvidenceCount {
            checker: deviation::Checker::new(policy),
            now,
            runs: 0,
            quarters: BTreeSet::new(),
            latest: None,
        }
    }

    pub fn add(&mut self, r: &Run) {
        if is_future(r, self.now) || !self.checker.check(r).check.is_policy_test() {
            return;
        }
        self.runs += 1;
        self.quarters
            .insert(r.timestamp.timestamp().div_euclid(900));
        if self.latest.is_none_or(|l| r.timestamp > l) {
            self.latest = Some(r.timestamp);
        }
    }

    pub fn status(&self) -> EvidenceStatus {
        let days = match self.latest {
            Some(l) => {
                let zone = *l.offset();
                let at =
                    |q: i64| DateTime::from_timestamp(q * 900, 0).map(|t| t.with_timezone(&zone));
                // the latest run first, so that its zone is the one counted in
                super::days_in_one_zone(
                    std::iter::once(l).chain(self.quarters.iter().filter_map(|&q| at(q))),
                )
            }
            None => 0,
        };
        EvidenceStatus::of(self.checker.policy(), self.runs, days)
    }
}
