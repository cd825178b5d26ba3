//! What an evaluation holds: the value every output format renders.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::deviation::{self, Deviation};
use crate::job::ShapeDifference;
use crate::policy::{Aggregate, Level, Policy, TestOrigin};
use crate::run_index::{Run, RunFields};

use super::{EvidenceStatus, RuleResult, RunLines, Scope, Stats, Verdict, Warning, sequential};

/// One day of runs, for the per-day table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Day {
    pub date: NaiveDate,
    pub runs: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub days: usize,
    pub metrics: BTreeMap<String, Stats>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyInfo {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub seen: String,
    #[serde(default)]
    pub test: String,
    #[serde(default)]
    pub aggregate: Aggregate,
    /// The fio command that runs the policy's test, as a customer would type it (the reply
    /// format asks for it); empty where the evaluation was read back from JSON.
    #[serde(skip)]
    pub fio_command: String,
}

impl PolicyInfo {
    /// What every format says of the policy judged by.
    pub fn of(policy: &Policy) -> PolicyInfo {
        PolicyInfo {
            name: policy.name.clone(),
            description: policy.description.clone(),
            vendor: policy.vendor.clone(),
            source: policy.source.title.clone(),
            url: policy.source.url.clone(),
            seen: policy.source.seen.to_string(),
            test: match policy.source.test {
                TestOrigin::Prescribed => "prescribed".into(),
                TestOrigin::Assumed => "assumed".into(),
            },
            aggregate: policy.evidence.aggregate,
            fio_command: crate::fio::customer_command(&policy.job),
        }
    }
}

/// The group a report judges: one host, policy, directory and engine.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Group {
    pub host: String,
    #[serde(default)]
    pub policy: String,
    pub dir: String,
    pub engine: String,
}

impl Group {
    pub fn of(r: &impl RunFields) -> Group {
        Group {
            host: r.host().to_string(),
            policy: r.policy().to_string(),
            dir: r.target().dir.clone(),
            engine: r.engine().to_string(),
        }
    }
}

/// The one value every format renders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    pub scope: Scope,
    pub policy: PolicyInfo,
    pub verdict: Verdict,
    /// One line saying why: the deciding rule, marginality, missing evidence, differences.
    pub reason: String,
    /// The judged runs, in time order (what each format reads of a run; a format that prints
    /// whole records reads them again from the source it is given, `run_index::Records`, by each
    /// run's place).
    #[serde(skip)]
    pub runs: Vec<Run>,
    pub summary: Summary,
    pub rules: Vec<RuleResult>,
    pub warnings: Vec<Warning>,
    pub evidence: EvidenceStatus,
    pub days: Vec<Day>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
    pub differences: Vec<ShapeDifference>,
    /// How the judged runs' test differs from the policy's (run, import): each named in the
    /// verdict; a flattering one turns a pass into inconclusive.
    pub deviations: Vec<Deviation>,
    /// The deviations of this effect are each named in `reason` (either way: not the policy's
    /// test; flatters: a pass or a fail on a test that flatters), so a format that prints the
    /// reason need not list them again.
    #[serde(skip)]
    pub reason_names: Option<deviation::Effect>,
    /// What the judged runs' outputs do not state, where a deviation could hide ("end fsync
    /// not stated"): shown with the verdict.
    pub caveats: Vec<String>,
    /// Runs left out of the verdict, by reason (report: not the policy's test; any scope:
    /// dated in the future).
    pub not_counted: Vec<NotCounted>,
    /// The runs left out, each with its reason, for the formats that list runs.
    #[serde(skip)]
    pub excluded: Vec<(Run, String)>,
    /// Each judged run's deviations in one line ("" for the policy's test), in run order.
    #[serde(skip)]
    pub run_deviations: RunLines,
    /// Which way each judged run's deviations can move its figures (the strongest: either way
    /// over flatters; None for the policy's test), in run order: what ✓ and ✗ a figure may
    /// carry (`report::view::judge_on`).
    #[serde(skip)]
    pub run_effects: Vec<Option<deviation::Effect>>,
    pub strict: bool,
    pub generated: DateTime<Utc>,
    /// The sequential decision (`--until-decided`), one per deciding rule; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sequential: Vec<sequential::Decision>,
    /// The runs whose burst credits ran out inside them, with the level the disk sustained
    /// after (docs/sustained.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bursts: Vec<Burst>,
    /// The window narrowed to the runs that could be held (`hold`): its oldest runs were let
    /// go, and the verdict is inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub narrowed: Option<crate::hold::Narrowed>,
}

/// A run whose disk's burst credits ran out inside it (`measure::changepoint`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Burst {
    /// The run, from 1, in the order of `runs`.
    pub run: usize,
    /// Seconds from the first timed I/O to the step.
    pub step_s: f64,
    /// The series' I/Os per second before and after the step.
    pub burst_iops: f64,
    pub sustained_iops: f64,
    /// (burst − sustained) × time to the step, I/Os.
    pub bucket_ios: f64,
    /// The series it was found in: `device` (the disk's own, /proc/diskstats) or
    /// `application` (the run's own completions, direct I/O).
    pub series: &'static str,
}

/// Runs left out of the verdict for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotCounted {
    pub reason: String,
    pub runs: usize,
}

impl fmt::Display for NotCounted {
    /// "4 runs not counted: size 64 MiB instead of 4 GiB".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} run{} not counted: {}",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.reason
        )
    }
}

/// A run's result against the deciding rules alone: "pass", "fail" or "not measured".
pub fn run_result(ev: &Evaluation, index: usize) -> &'static str {
    let mut result = "pass";
    for r in ev
        .rules
        .iter()
        .filter(|r| r.level == Level::Fail || (ev.strict && r.level == Level::Warn))
    {
        if !r.resolved() {
            result = "not judged: threshold unresolved";
            continue;
        }
        match r.per_run.get(index).copied().flatten() {
            Some(true) => {}
            Some(false) => return "fail",
            None => result = "not measured",
        }
    }
    result
}

impl Evaluation {
    /// The metric of the first deciding rule: what charts and per-day tables show.
    pub fn primary_metric(&self) -> Option<&str> {
        self.rules
            .iter()
            .find(|r| r.level == Level::Fail)
            .map(|r| r.metric.as_str())
    }
    pub fn primary_rule(&self) -> Option<&RuleResult> {
        self.rules.iter().find(|r| r.level == Level::Fail)
    }

    /// The rules that decide the verdict: fail-level ones, and warn-level ones with
    /// `--strict`.
    pub fn deciding_rules(&self) -> impl Iterator<Item = &RuleResult> {
        let strict = self.strict;
        self.rules
            .iter()
            .filter(move |r| r.level == Level::Fail || (strict && r.level == Level::Warn))
    }

    /// The soft limits (warn-level rules, without `--strict`) the runs miss: they do not
    /// change the verdict, and every format says them beside it.
    pub fn soft_missed(&self) -> impl Iterator<Item = &RuleResult> {
        let strict = self.strict;
        self.rules
            .iter()
            .filter(move |r| !strict && r.level == Level::Warn && r.passed == Some(false))
    }

    /// Where the policy's evidence stands ([`EvidenceStatus::advice`]), and, for a sitting whose
    /// runs are not the policy's test, that they are not counted in it: a quick look of 2 runs
    /// beside "0 of 6 runs" says why.
    pub fn evidence_line(&self) -> String {
        let advice = self.evidence.advice();
        if self.scope == Scope::Report {
            return advice;
        }
        let other = self.run_effects.iter().filter(|e| e.is_some()).count();
        if other == 0 {
            return advice;
        }
        let n = self.runs.len();
        let which = if other == n {
            match n {
                1 => "this sitting's run is".to_string(),
                _ => format!("this sitting's {n} runs are"),
            }
        } else {
            format!("{other} of this sitting's {n} runs are")
        };
        format!("{advice} ({which} not the policy's test, so not counted)")
    }

    /// Which evidence the verdict is of, said with the verdict in every format: "for this
    /// sitting of 3 runs; the policy's evidence over days: 3 of 6 runs, 1 of 2 days" (run), "for
    /// the 2 imported runs as given; …" (import), "on the history: 8 runs (6
    /// needed), 3 days (2 needed)" (report). A run's and an import's verdict is of one
    /// sitting; only a report applies the policy's rule of runs over days.
    pub fn judged_on(&self) -> String {
        let (n, s, tally) = self.scope_tally();
        match self.scope {
            Scope::Run => {
                format!("for this sitting of {n} run{s}; the policy's evidence over days: {tally}")
            }
            Scope::Import => format!(
                "for the {n} imported run{s} as given; the policy's evidence over days: {tally}"
            ),
            Scope::Report => format!("on the history: {tally}"),
        }
    }

    /// [`Self::judged_on`] in fewer words, for the one-line summary: which runs answered ("for
    /// this sitting of 3 runs", "for 2 imported runs", "on the history: 3 of 6 runs, 1 of 2
    /// days"), and what the policy's rule asks when too few runs are why it is inconclusive.
    pub fn judged_on_short(&self) -> String {
        let (n, s, tally) = self.scope_tally();
        let e = &self.evidence;
        let mut out = match self.scope {
            Scope::Run => format!("for this sitting of {n} run{s}"),
            Scope::Import => format!("for {n} imported run{s}"),
            // the history's runs are the policy's evidence: the tally is the scope
            Scope::Report => return format!("on the history: {tally}"),
        };
        if !e.enough && self.verdict == Verdict::Inconclusive && self.deviations.is_empty() {
            out.push_str(&format!(
                " (the policy needs {} runs over {} days)",
                e.min_runs, e.min_days
            ));
        }
        out
    }

    /// The runs judged, their plural's "s", and the policy's evidence as its rule counts it.
    fn scope_tally(&self) -> (usize, &'static str, String) {
        let n = self.runs.len();
        let s = if n == 1 { "" } else { "s" };
        let tally = match self.scope {
            // An import's runs count towards the policy's evidence only where they are its test.
            Scope::Import => {
                let own: Vec<&Run> = self
                    .runs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| self.run_effects.get(*i).copied().flatten().is_none())
                    .map(|(_, r)| r)
                    .collect();
                let days = super::run_days(own.iter().copied(), self.evidence.min_runs_per_day);
                EvidenceStatus {
                    runs: own.len(),
                    days: days.counted,
                    calendar_days: days.calendar,
                    undated_runs: days.undated,
                    ..self.evidence.clone()
                }
                .tally()
            }
            _ => self.evidence.tally(),
        };
        (n, s, tally)
    }
}
