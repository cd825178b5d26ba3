//! The policy's evidence rule: how many runs over how many days make a verdict, where a
//! node stands against it, and the count a report makes of it as the lines are read.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
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
    /// Runs a day needs to count towards `min_days` (the policy's `min_runs_per_day`).
    pub min_runs_per_day: u32,
    /// The calendar days the runs fall on, counted or not: more than `days` where a day's
    /// runs were too few or too soon after the day counted before it.
    pub calendar_days: usize,
    /// Runs whose output states no time (terse output, text without its job's date): counted
    /// among `runs`, towards no day (`Run::stated_time`).
    pub undated_runs: usize,
}

/// Hours between the last run of a day counted towards the policy's `min_days` and the runs
/// that make the next counted day: runs minutes apart across midnight are one sitting.
pub const DAY_GAP_HOURS: i64 = 12;

/// The days of the evidence ([`super::evidence_days`]): those counted towards `min_days`,
/// and the calendar days the runs fall on; with the runs that count towards no day, as their
/// output states no time ([`super::run_days`], [`DayTally::add_run`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvidenceDays {
    pub counted: usize,
    pub calendar: usize,
    pub undated: usize,
}

/// The runs' times by the minute (UTC), for [`EvidenceDays`]: bounded by the window's
/// length, not by its runs. The gap between days is measured in whole minutes.
#[derive(Debug, Clone, Default)]
pub struct DayTally {
    minutes: BTreeMap<i64, usize>,
    latest: Option<DateTime<FixedOffset>>,
    /// Runs added whose time was assumed: they count towards no day.
    undated: usize,
}

impl DayTally {
    /// A run: its time as its output states it, or, where its output states none, a run that
    /// counts towards no day.
    pub fn add_run(&mut self, r: &Run) {
        match r.stated_time() {
            Some(t) => self.add(t),
            None => self.undated += 1,
        }
    }

    pub fn add(&mut self, t: DateTime<FixedOffset>) {
        *self
            .minutes
            .entry(t.timestamp().div_euclid(60))
            .or_default() += 1;
        if self.latest.is_none_or(|l| t > l) {
            self.latest = Some(t);
        }
    }

    /// The days in the latest run's zone; a day counts with `per_day` runs (at least one)
    /// made [`DAY_GAP_HOURS`] or more after the last run of the day counted before it.
    /// Counting every day that can be counted, in order, counts the most days: a counted day
    /// can keep only the next day from counting, never one after it (a day later than that
    /// starts more than a day after it ends).
    pub fn days(&self, per_day: u32) -> EvidenceDays {
        let undated = self.undated;
        let Some(zone) = self.latest.map(|l| *l.offset()) else {
            return EvidenceDays {
                undated,
                ..EvidenceDays::default()
            };
        };
        EvidenceDays {
            undated,
            ..count_days(self.minutes.iter().map(|(&m, &n)| (m, n)), zone, per_day)
        }
    }
}

/// The days of runs given by the minute in time order (a minute may come more than once), in
/// `zone`: see [`DayTally::days`].
pub(super) fn count_days(
    minutes: impl IntoIterator<Item = (i64, usize)>,
    zone: FixedOffset,
    per_day: u32,
) -> EvidenceDays {
    let per_day = per_day.max(1) as usize;
    let gap = DAY_GAP_HOURS * 60;
    let date =
        |m: i64| DateTime::from_timestamp(m * 60, 0).map(|t| t.with_timezone(&zone).date_naive());
    let mut out = EvidenceDays::default();
    // the last minute of the latest counted day
    let mut counted_last: Option<i64> = None;
    // the day being read: its date, its runs far enough from the counted day, its last
    let mut day: Option<(NaiveDate, usize, i64)> = None;
    let close = |day: Option<(NaiveDate, usize, i64)>,
                 out: &mut EvidenceDays,
                 counted_last: &mut Option<i64>| {
        if let Some((_, apart, last)) = day {
            out.calendar += 1;
            if apart >= per_day {
                out.counted += 1;
                *counted_last = Some(last);
            }
        }
    };
    for (m, n) in minutes {
        let Some(d) = date(m) else { continue };
        if day.is_none_or(|(current, _, _)| current != d) {
            close(day.take(), &mut out, &mut counted_last);
            day = Some((d, 0, m));
        }
        if let Some((_, apart, last)) = day.as_mut() {
            *last = m;
            if counted_last.is_none_or(|c| m - c >= gap) {
                *apart += n;
            }
        }
    }
    close(day, &mut out, &mut counted_last);
    out
}

impl EvidenceStatus {
    /// The policy's evidence rule against `runs` runs over `days` days.
    pub fn of(policy: &Policy, runs: usize, days: EvidenceDays) -> EvidenceStatus {
        let e = &policy.evidence;
        let more_runs = (e.min_runs as usize).saturating_sub(runs);
        let more_days = (e.min_days as usize).saturating_sub(days.counted);
        EvidenceStatus {
            runs,
            days: days.counted,
            min_runs_per_day: e.min_runs_per_day,
            calendar_days: days.calendar,
            undated_runs: days.undated,
            min_runs: e.min_runs,
            min_days: e.min_days,
            enough: more_runs == 0 && more_days == 0,
            more_runs,
            more_days,
            window: crate::units::format_duration(e.window.0),
        }
    }

    /// The calendar days the runs fall on, counted or not (a status made without them: its
    /// days).
    pub fn dates(&self) -> usize {
        self.calendar_days.max(self.days)
    }

    /// "3 of 6 runs, 1 of 2 days"; past the rule, "8 runs (6 needed), 3 days (2 needed)".
    pub fn tally(&self) -> String {
        // in few words: the advice says what makes a day count
        let uncounted = if self.calendar_days > self.days {
            format!(
                " ({} calendar days, {} not counted)",
                self.calendar_days,
                self.calendar_days - self.days
            )
        } else {
            String::new()
        };
        // in few words: the advice says why
        let undated = match self.undated_runs {
            0 => String::new(),
            1 => " (1 run states no date)".to_string(),
            n => format!(" ({n} runs state no date)"),
        };
        format!(
            "{}, {}{uncounted}{undated}",
            Self::part(self.runs, self.min_runs, "run"),
            Self::part(self.days, self.min_days, "day"),
        )
    }

    /// The runs whose output states no date, where there are some, and what does state it:
    /// " (3 runs state no date (terse output, …): they count towards no day; …)".
    fn undated(&self) -> String {
        let (n, it) = match self.undated_runs {
            0 => return String::new(),
            1 => ("1 run states".to_string(), "it counts"),
            n => (format!("{n} runs state"), "they count"),
        };
        format!(
            " ({n} no date (terse output, or text without its job's date line): {it} towards no day; fio's JSON output states the date)"
        )
    }

    /// What makes a day count: "a run" or "3 runs", "made 12 h or more after the last run of
    /// the day counted before it".
    fn a_day(&self) -> String {
        let k = self.min_runs_per_day.max(1);
        format!(
            "{} made {DAY_GAP_HOURS} h or more after the last run of the day counted before it",
            if k == 1 {
                "a run".to_string()
            } else {
                format!("{k} runs")
            }
        )
    }

    /// Why calendar days the runs fall on are not counted, where some are not: " (the runs
    /// fall on 2 calendar days; a day counts with a run made 12 h or more after …)".
    fn uncounted_days(&self) -> String {
        if self.calendar_days <= self.days {
            return String::new();
        }
        let n = self.calendar_days - self.days;
        format!(
            " (the runs fall on {} calendar days, {n} of them not counted: a day counts with {})",
            self.calendar_days,
            self.a_day()
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
            "{} over {}{}{}",
            part(self.runs, self.min_runs, "run"),
            part(self.days, self.min_days, "day"),
            self.uncounted_days(),
            self.undated()
        );
        if self.enough {
            return format!("{head}: enough evidence for a verdict");
        }
        let k = self.min_runs_per_day.max(1) as usize;
        let s = |n: usize| if n == 1 { "" } else { "s" };
        let todo = match (self.more_runs, self.more_days) {
            (0, d) => format!("run again on {d} more day{}", s(d)),
            (r, 0) => format!("{r} more run{}", s(r)),
            (r, 1) if k == 1 => format!(
                "{r} more run{}, at least one of them tomorrow or later",
                s(r)
            ),
            (r, 1) if r <= k => format!("{k} more runs tomorrow or later"),
            (r, 1) => format!("{r} more runs, at least {k} of them tomorrow or later"),
            (r, d) => format!("{} more runs over {d} more days", r.max(k * d)),
        };
        // what makes a day count, said once: after the days not counted, or with what to do
        if self.more_days == 0 || self.days == 0 || self.calendar_days > self.days {
            return format!("{head} — {todo}");
        }
        format!("{head} — {todo} (a day counts with {})", self.a_day())
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
    /// The runs' times, their days counted at the end as a report counts them
    /// ([`super::run_days`]).
    days: DayTally,
}

impl<'p> EvidenceCount<'p> {
    pub fn new(policy: &'p Policy, now: DateTime<Utc>) -> EvidenceCount<'p> {
        EvidenceCount {
            checker: deviation::Checker::new(policy),
            now,
            runs: 0,
            days: DayTally::default(),
        }
    }

    pub fn add(&mut self, r: &Run) {
        // what a report leaves out: a repeat of an earlier record (one fio run is one run),
        // a run dated in the future, a run of another test
        if r.repeat_of.is_some()
            || is_future(r, self.now)
            || !self.checker.check(r).check.is_policy_test()
        {
            return;
        }
        self.runs += 1;
        self.days.add_run(r);
    }

    pub fn status(&self) -> EvidenceStatus {
        let policy = self.checker.policy();
        let days = self.days.days(policy.evidence.min_runs_per_day);
        EvidenceStatus::of(policy, self.runs, days)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(offset_h: i32, day: u32, h: u32, m: u32) -> DateTime<FixedOffset> {
        FixedOffset::east_opt(offset_h * 3600)
            .unwrap()
            .with_ymd_and_hms(2026, 12, day, h, m, 0)
            .unwrap()
    }

    fn days(times: &[DateTime<FixedOffset>], per_day: u32) -> (usize, usize) {
        let d = super::super::evidence_days(times.iter().copied(), per_day);
        (d.counted, d.calendar)
    }

    #[test]
    fn times_in_order_are_counted_as_the_tally_counts_them() {
        // a pseudo-random schedule over a fortnight, in two zones, with equal instants
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..200 {
            let mut t: Vec<DateTime<FixedOffset>> = (0..next(40) + 1)
                .map(|_| {
                    let off = [0, 5, -8][next(3) as usize];
                    at(0, 1 + next(14) as u32, next(24) as u32, next(60) as u32)
                        .with_timezone(&FixedOffset::east_opt(off * 3600).unwrap())
                })
                .collect();
            let per_day = 1 + next(3) as u32;
            let mut tally = DayTally::default();
            for &x in &t {
                tally.add(x);
            }
            let held = tally.days(per_day);
            t.sort();
            let streamed = super::super::evidence_days(t.iter().copied(), per_day);
            assert_eq!(streamed, held, "{t:?} {per_day}");
        }
    }

    #[test]
    fn runs_minutes_apart_across_midnight_are_one_day() {
        let late: Vec<_> = (0..5).map(|i| at(0, 2, 23, 50 + 2 * i)).collect();
        let mut t = late.clone();
        t.push(at(0, 3, 0, 1));
        assert_eq!(days(&t, 1), (1, 2));
        // a run 12 h after the first day's last makes the second day
        t.push(at(0, 3, 11, 58));
        assert_eq!(days(&t, 1), (2, 2));
        // ... unless the day needs three runs that far apart
        assert_eq!(days(&t, 3), (1, 2));
    }

    #[test]
    fn a_timer_every_four_hours_counts_every_day() {
        let t: Vec<_> = (2..=4)
            .flat_map(|d| (0..6).map(move |k| at(0, d, 4 * k, 0)))
            .collect();
        // day 3's runs from 08:00 are 12 h after day 2's 20:00
        assert_eq!(days(&t, 3), (3, 3));
        // five from 08:00 are too few: day 3 is not counted, day 4 then is, whole
        assert_eq!(days(&t, 5), (2, 3));
    }

    #[test]
    fn days_are_counted_in_the_latest_runs_zone() {
        // 23:00 and 11:00 the next day at +02:00: 21:00 and 09:00 UTC, 12 h apart
        let t = [at(2, 2, 23, 0), at(2, 3, 11, 0)];
        assert_eq!(days(&t, 1), (2, 2));
        let t = [at(2, 2, 23, 0), at(2, 3, 10, 59)];
        assert_eq!(days(&t, 1), (1, 2));
        assert_eq!(days(&[], 1), (0, 0));
    }

    #[test]
    fn a_run_whose_output_states_no_time_is_a_run_on_no_day() {
        use crate::evaluate::tests::{rec, swimlane_report};
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let now = "2026-12-05T00:00:00Z";
        // six runs over three days, 12 h and more apart: enough, where the times are stated
        let mut recs: Vec<_> = (1..=3)
            .flat_map(|d| [8, 20].map(|h| rec(&format!("2026-12-0{d}T{h:02}:00:00Z"), 16.0)))
            .collect();
        for r in &mut recs {
            r.time_assumed = Some("the file's modification time".into());
        }
        // `run`'s count of the history, as a report counts
        let counted = |recs: &[crate::history::Record]| {
            let at = DateTime::parse_from_rfc3339(now).unwrap().to_utc();
            let mut count = EvidenceCount::new(&policy, at);
            for (i, r) in recs.iter().enumerate() {
                count.add(&Run::of(r, i));
            }
            count.status()
        };
        let e = swimlane_report(recs.clone(), now).evidence;
        assert_eq!(counted(&recs), e);
        assert_eq!(
            (e.runs, e.days, e.calendar_days, e.undated_runs, e.enough),
            (6, 0, 0, 6, false),
            "{e:?}"
        );
        assert_eq!(e.tally(), "6 of 6 runs, 0 of 2 days (6 runs state no date)");
        assert!(
            e.advice().starts_with("6 of 6 runs over 0 of 2 days (6 runs state no date (terse output, or text without its job's date line): they count towards no day; fio's JSON output states the date) — "),
            "{}",
            e.advice()
        );
        // the first day's runs state their time: that day counts, the others none
        recs[0].time_assumed = None;
        recs[1].time_assumed = None;
        let e = swimlane_report(recs.clone(), now).evidence;
        assert_eq!(counted(&recs), e);
        assert_eq!(
            (e.runs, e.days, e.calendar_days, e.undated_runs),
            (6, 1, 1, 4)
        );
        // every time stated: three days
        for r in &mut recs {
            r.time_assumed = None;
        }
        let e = swimlane_report(recs.clone(), now).evidence;
        assert_eq!((e.days, e.undated_runs, e.enough), (3, 0, true));
    }

    #[test]
    fn the_tally_says_why_a_calendar_day_is_not_counted() {
        let e = EvidenceStatus {
            runs: 6,
            days: 1,
            min_runs: 6,
            min_days: 2,
            more_days: 1,
            min_runs_per_day: 3,
            calendar_days: 2,
            ..Default::default()
        };
        assert_eq!(
            e.advice(),
            "6 of 6 runs over 1 of 2 days (the runs fall on 2 calendar days, 1 of them not counted: a day counts with 3 runs made 12 h or more after the last run of the day counted before it) — run again on 1 more day"
        );
    }
}
