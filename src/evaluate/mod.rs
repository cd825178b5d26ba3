//! Evaluation: records + policy → verdict, with per-rule values, statistics and warnings.
//! Pure: no I/O and no clock (the caller passes `now`), so every case is a plain unit test.
//! Every output format renders the [`Evaluation`] this module returns.
//!
//! The parts: [`stats`] (descriptive statistics and intervals), [`warnings`] (what a careful
//! reader should know), [`decide`] (the verdict and its one-line reason); which records are
//! judged at all is `crate::select`'s.

pub mod compare;
mod decide;
pub mod over_time;
mod run_lines;
pub mod sequential;
mod stats;
mod summary;
mod warnings;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Duration as ChronoDuration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::deviation::{self, Deviation, Effect};
use crate::history::Record;
use crate::job::ShapeDifference;
pub use crate::measure::changepoint::Sustained;
use crate::policy::{Aggregate, Level, Op, Policy, TestOrigin};
use crate::run_index::{Records, Run, RunFields};

use decide::{Judged, decide, straddles};
pub use run_lines::RunLines;
pub use stats::{Stats, t_975};
pub use summary::held_metrics;
pub use warnings::Warning;
use warnings::{dedup, find_warnings};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Inconclusive,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Run => "run",
            Scope::Import => "import",
            Scope::Report => "report",
        }
    }
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
        }
    }
    /// The verdict's exit code ([`crate::exit`]).
    pub fn exit_code(self) -> u8 {
        crate::exit::Exit::from(self).code()
    }

    /// The verdict of several judged together (the groups of a report, the nodes of a
    /// fleet), which every one must pass: fail if any fails, else inconclusive if any is or
    /// there are none, else pass.
    pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut worst = None;
        for v in verdicts {
            match v {
                Verdict::Fail => return Verdict::Fail,
                Verdict::Inconclusive => worst = Some(Verdict::Inconclusive),
                Verdict::Pass => {
                    worst.get_or_insert(Verdict::Pass);
                }
            }
        }
        worst.unwrap_or(Verdict::Inconclusive)
    }
}

impl From<Verdict> for crate::exit::Exit {
    fn from(v: Verdict) -> Self {
        match v {
            Verdict::Pass => crate::exit::Exit::Pass,
            Verdict::Fail => crate::exit::Exit::Fail,
            Verdict::Inconclusive => crate::exit::Exit::Inconclusive,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is being judged, which decides whether the evidence rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The runs of one `iopscheck run` invocation: judged as they are; the evidence rule is
    /// reported beside the verdict, not applied.
    Run,
    /// Outputs read by `iopscheck import`: judged as they are.
    Import,
    /// The history over a window (`iopscheck report`): too little evidence is inconclusive.
    Report,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub scope: Scope,
    /// Warn-level rules decide too.
    pub strict: bool,
    pub now: DateTime<Utc>,
    /// What an output contradicts of the job stated beside it (imports): each makes the
    /// verdict inconclusive.
    pub contradicted: Vec<deviation::Contradiction>,
    /// Scale differences and other caveats found by the caller, shown as warnings.
    pub notes: Vec<Warning>,
    /// Engines seen in the window outside this group (report): for the mixed-engine warning.
    pub other_engines: BTreeMap<String, usize>,
    /// What `run --sustained` found of the level the disk sustains; None for runs of the job
    /// as written (a policy with `sustained: required` cannot pass on those).
    pub sustained_check: Option<SustainedCheck>,
    /// The reason where there are no runs at all, none left out either (a report names the
    /// history and window that held none); None: the general advice.
    pub no_runs: Option<String>,
    /// Where the node stands against the evidence rule, counted by the caller
    /// ([`EvidenceCount`]: a `run`'s group in the history, or the sitting's runs of the
    /// policy's test), reported as the evaluation's `evidence` beside a verdict over the runs
    /// given; None: the runs given.
    pub evidence: Option<EvidenceStatus>,
}

/// Whether a `run --sustained` measured the level the disk sustains (`measure::steady`).
#[derive(Debug, Clone, PartialEq)]
pub enum SustainedCheck {
    /// The disk's rate held steady, after its burst credits ran out or over the whole
    /// budget: how, in words.
    Reached(String),
    /// The budget ended before a steady state: why, in words.
    NotReached(String),
}

impl Options {
    pub fn new(scope: Scope, now: DateTime<Utc>) -> Options {
        Options {
            scope,
            strict: false,
            now,
            contradicted: vec![],
            notes: vec![],
            other_engines: BTreeMap::new(),
            sustained_check: None,
            no_runs: None,
            evidence: None,
        }
    }
}

/// One rule's result. Read back (`Deserialize`) from a node's JSON result by `fleet`: what a
/// result leaves out takes its default, and the unit, derived from the metric, is not read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleResult {
    pub metric: String,
    pub op: Op,
    pub threshold: f64,
    #[serde(default)]
    pub level: Level,
    /// The aggregate (mean or median) across runs; absent when no run has the metric.
    #[serde(default)]
    pub value: Option<f64>,
    #[serde(default)]
    pub passed: Option<bool>,
    /// The 95% interval of the mean straddles the threshold: more runs could change the verdict.
    #[serde(default)]
    pub marginal: bool,
    #[serde(skip_deserializing)]
    pub unit: &'static str,
    #[serde(default)]
    pub aggregate: Aggregate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Per-run pass marks, in run order (None: the run lacks the metric).
    #[serde(default)]
    pub per_run: Vec<Option<bool>>,
    /// The aggregate over the latest calendar day's runs alone, beside the window's: a
    /// window's mean can hide the day a node began to fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_day: Option<LatestDay>,
    /// Why the rule fails although its aggregate meets the threshold (`passed` is false): its
    /// latest runs miss it ("the last 3 runs since 2026-12-01 average 2433 IOPS"), or a run's
    /// disk sustained less once its burst credits ran out. None when the aggregate decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fails_on: Option<String>,
    /// A threshold that scales with the machine (per vCPU, GiB of memory, TiB of capacity):
    /// how it was resolved against the runs' host facts, or why it could not be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled: Option<Scaled>,
}

impl RuleResult {
    /// Whether the threshold is known: a fixed one, or a scaled one the host facts resolve.
    pub fn resolved(&self) -> bool {
        self.scaled.as_ref().is_none_or(|s| s.count.is_some())
    }
    /// "≥ 4000" (resolved), "≥ 500 per vCPU (unresolved)": the threshold as a reader needs it.
    pub fn threshold_text(&self, figure: impl Fn(f64) -> String) -> String {
        match &self.scaled {
            Some(s) if s.count.is_none() => format!(
                "{} {} per {} (unresolved)",
                self.op,
                figure(s.per_unit),
                s.per.unit()
            ),
            _ => format!("{} {}", self.op, figure(self.threshold)),
        }
    }
}

/// A threshold per unit of the machine, resolved or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaled {
    pub per: crate::policy::Per,
    /// The policy's figure per unit (500 IOPS per vCPU).
    pub per_unit: f64,
    /// The units the runs' host facts state (8 vCPUs); None: it cannot be resolved.
    #[serde(default)]
    pub count: Option<f64>,
    /// "500 IOPS × 8 vCPUs = 4,000 IOPS", or why the threshold cannot be resolved.
    pub text: String,
}

/// Resolves a rule's threshold per unit of the machine against the host facts of the runs:
/// every run must state the same count (one machine), or the threshold is unresolved.
fn resolve_scaled(rule: &crate::policy::Rule, runs: &[Run]) -> Option<Scaled> {
    let per = rule.per?;
    let unit = crate::metrics::unit(&rule.metric);
    let figure = |v: f64| format!("{} {unit}", grouped(v));
    let head = format!(
        "{} {} per {}",
        rule.metric,
        figure(rule.threshold),
        per.unit()
    );
    let counts: Vec<Option<f64>> = runs.iter().map(|r| per.count(r.target())).collect();
    let unresolved = |why: String| Scaled {
        per,
        per_unit: rule.threshold,
        count: None,
        text: format!("{head}: the threshold cannot be resolved, {why}; this rule is not judged"),
    };
    if counts.is_empty() {
        return Some(unresolved("as there are no runs".into()));
    }
    let missing = counts.iter().filter(|c| c.is_none()).count();
    if missing > 0 {
        return Some(unresolved(format!(
            "as {} of {} run{} do not state {} (fio's output carries no host facts: an import has none)",
            missing,
            counts.len(),
            if counts.len() == 1 { "" } else { "s" },
            per.fact()
        )));
    }
    let mut distinct: Vec<f64> = counts.into_iter().flatten().collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() > 1 {
        let list: Vec<String> = distinct.iter().map(|c| per.describe(*c)).collect();
        return Some(unresolved(format!(
            "as the runs state different machines ({}): judge each on its own",
            list.join(", ")
        )));
    }
    let count = distinct[0];
    let resolved = rule.threshold * count;
    Some(Scaled {
        per,
        per_unit: rule.threshold,
        count: Some(count),
        text: format!(
            "{}: {} × {} = {}",
            rule.metric,
            figure(rule.threshold),
            per.describe(count),
            figure(resolved)
        ),
    })
}

/// A figure with thousands separated ("4,000", "1,234.5"), for the resolved thresholds.
fn grouped(v: f64) -> String {
    let text = crate::numbers::fmt_precise(v);
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if frac.is_empty() {
        format!("{sign}{out}")
    } else {
        format!("{sign}{out}.{frac}")
    }
}

/// A rule's metric over the latest day with runs that measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatestDay {
    pub date: NaiveDate,
    pub runs: usize,
    /// The policy's aggregate (mean or median) of that day's runs.
    pub value: f64,
}

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

/// The policy's evidence over days counted as a report counts it, run by run as they are
/// read: the runs of the policy's test not dated in the future, and their days. Where a
/// verdict is over other runs (a `run`'s over its own), what the history holds towards the
/// evidence rule, without judging the history again.
pub struct EvidenceCount<'p> {
    checker: deviation::Checker<'p>,
    now: DateTime<Utc>,
    runs: usize,
    days: BTreeSet<NaiveDate>,
}

impl<'p> EvidenceCount<'p> {
    pub fn new(policy: &'p Policy, now: DateTime<Utc>) -> EvidenceCount<'p> {
        EvidenceCount {
            checker: deviation::Checker::new(policy),
            now,
            runs: 0,
            days: BTreeSet::new(),
        }
    }

    pub fn add(&mut self, r: &Run) {
        if is_future(r, self.now) || !self.checker.check(r).check.is_policy_test() {
            return;
        }
        self.runs += 1;
        self.days.insert(day_of(r));
    }

    pub fn status(&self) -> EvidenceStatus {
        EvidenceStatus::of(self.checker.policy(), self.runs, self.days.len())
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

/// A record dated later than this after the evaluation's time is dated in the future: the
/// margin absorbs clocks a little apart between the nodes and the machine reading them.
pub const FUTURE_MARGIN_SECS: i64 = 300;

/// Why a run dated in the future is not counted, in the same words for each run (CSV,
/// Markdown, HTML, the terminal), for their count (`not_counted[]`) and in `report --list`.
pub const FUTURE_REASON: &str = "dated in the future (check the node's clock)";

/// Whether a record is dated in the future of `now` (beyond [`FUTURE_MARGIN_SECS`]).
pub fn is_future(r: &impl RunFields, now: DateTime<Utc>) -> bool {
    r.timestamp().with_timezone(&Utc) > now + ChronoDuration::seconds(FUTURE_MARGIN_SECS)
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
                EvidenceStatus {
                    runs: own.len(),
                    days: own
                        .iter()
                        .map(|r| day_of(*r))
                        .collect::<BTreeSet<_>>()
                        .len(),
                    ..self.evidence.clone()
                }
                .tally()
            }
            _ => self.evidence.tally(),
        };
        (n, s, tally)
    }
}

/// Local calendar day of a record, in the offset it was recorded with: "several runs a day"
/// means the node's day, wherever the report is read.
pub fn day_of(r: &impl RunFields) -> NaiveDate {
    r.timestamp().date_naive()
}

/// Judges records against a policy (a run's or an import's, held in memory).
pub fn evaluate(records: impl Into<Vec<Record>>, policy: &Policy, opts: &Options) -> Evaluation {
    evaluate_left_out(records.into(), Vec::new(), policy, opts).0
}

/// Judges `records`, with the records the caller left out of the verdict (an import's: a
/// job fio reported an error for, the same run given twice), each with its reason: they are
/// listed as not counted (`not_counted[]`, the table of runs not counted) as a report lists
/// the runs of another test. With the evaluation, where its runs' whole records are read
/// again (the records given, then those left out, by their index): the evaluation is a plain
/// value, and a format that prints whole records is given this source beside it.
pub fn evaluate_left_out(
    mut records: Vec<Record>,
    left_out: Vec<(Record, String)>,
    policy: &Policy,
    opts: &Options,
) -> (Evaluation, Records) {
    let counted = records.len();
    let mut reasons = Vec::with_capacity(left_out.len());
    for (r, why) in left_out {
        records.push(r);
        reasons.push(why);
    }
    let mut runs: Vec<Run> = records
        .iter()
        .enumerate()
        .map(|(i, r)| Run::of(r, i))
        .collect();
    let left: Vec<(Run, String)> = runs.drain(counted..).zip(reasons).collect();
    let records = if records.is_empty() {
        Records::None
    } else {
        Records::Memory(std::sync::Arc::new(records))
    };
    let ev = judge(runs, left, policy, opts, &records).expect("the records are held");
    (ev, records)
}

/// Judges runs that hold every figure of their records against a policy.
pub fn evaluate_runs(runs: Vec<Run>, policy: &Policy, opts: &Options) -> Evaluation {
    judge(runs, Vec::new(), policy, opts, &Records::None)
        .expect("runs that hold every figure are judged without reading their records")
}

/// Judges runs against a policy, the figures they do not hold (`Run::holding`) read again
/// from `records`: an error says the history could not be read again, or changed.
pub fn evaluate_runs_in(
    runs: Vec<Run>,
    policy: &Policy,
    opts: &Options,
    records: &Records,
) -> std::io::Result<Evaluation> {
    judge(runs, Vec::new(), policy, opts, records)
}

/// [`evaluate_runs`], with runs the caller left out (each with its reason) listed first
/// among the runs not counted.
fn judge(
    mut runs: Vec<Run>,
    left_out: Vec<(Run, String)>,
    policy: &Policy,
    opts: &Options,
    records: &Records,
) -> std::io::Result<Evaluation> {
    // A history is written in time order: sorting it again would allocate a scratch copy of
    // half the runs for nothing (the stable sort leaves sorted runs as they are).
    if !runs.is_sorted_by_key(|r| r.timestamp) {
        runs.sort_by_key(|r| r.timestamp);
    }
    let agg = policy.evidence.aggregate;

    // Which runs count. A run dated in the future never does (its clock is wrong); in a
    // report, only runs of the policy's test do. A run or an import judges what it was given,
    // and the deviations decide what its verdict can be.
    let mut future: Vec<Run> = Vec::new();
    let mut excluded: Vec<(Run, String)> = left_out;
    // In the order found, each once.
    let mut deviations: Vec<Deviation> = Vec::new();
    let mut caveats: Vec<String> = Vec::new();
    let mut run_deviations = RunLines::default();
    let mut run_effects: Vec<Option<deviation::Effect>> = Vec::new();
    // The runs left out are taken out in place (None: dated in the future), so that a year
    // of runs is never held twice.
    let mut left_out: Vec<Option<String>> = Vec::new();
    // Runs of one context are checked once.
    let mut checker = deviation::Checker::new(policy);
    let out: Vec<Run> = runs
        .extract_if(.., |r| {
            if is_future(r, opts.now) {
                left_out.push(None);
                return true;
            }
            let c = checker.check(r);
            if opts.scope == Scope::Report && !c.check.is_policy_test() {
                left_out.push(Some(c.list.clone()));
                return true;
            }
            run_deviations.push(&c.list);
            run_effects.push(c.check.effect());
            for d in &c.check.deviations {
                if !deviations.contains(d) {
                    deviations.push(d.clone());
                }
            }
            for c in &c.check.caveats {
                if !caveats.contains(c) {
                    caveats.push(c.clone());
                }
            }
            false
        })
        .collect();
    for (r, why) in out.into_iter().zip(left_out) {
        match why {
            None => future.push(r),
            Some(reason) => excluded.push((r, reason)),
        }
    }
    let mut not_counted: BTreeMap<String, usize> = BTreeMap::new();
    for (_, reason) in &excluded {
        *not_counted.entry(reason.clone()).or_default() += 1;
    }
    let mut future_warning = None;
    if !future.is_empty() {
        let latest = future.iter().map(|r| r.timestamp).max().expect("non-empty");
        not_counted.insert(FUTURE_REASON.into(), future.len());
        future_warning = Some(Warning::FutureRuns {
            count: future.len(),
            latest,
        });
        for r in future {
            excluded.push((r, FUTURE_REASON.into()));
        }
    }
    let not_counted: Vec<NotCounted> = not_counted
        .into_iter()
        .map(|(reason, runs)| NotCounted { reason, runs })
        .collect();

    let metrics = summary::metric_stats(&runs, records)?;
    let day_set: BTreeSet<NaiveDate> = runs.iter().map(day_of).collect();

    let rules: Vec<RuleResult> = policy
        .rules
        .iter()
        .map(|rule| {
            let stats = metrics.get(&rule.metric);
            let value = stats.map(|s| s.aggregate(agg));
            let scaled = resolve_scaled(rule, &runs);
            // A threshold that cannot be resolved judges nothing: never assumed.
            let threshold = match &scaled {
                Some(s) => s.count.map(|c| s.per_unit * c),
                None => Some(rule.threshold),
            };
            let passed = value.zip(threshold).map(|(v, t)| rule.op.holds(v, t));
            let marginal =
                threshold.is_some_and(|t| stats.is_some_and(|s| straddles(s, rule.op, t)));
            let note = match (&scaled, &rule.note) {
                (Some(s), Some(n)) => Some(format!("{}; {n}", s.text)),
                (Some(s), None) => Some(s.text.clone()),
                (None, n) => n.clone(),
            };
            RuleResult {
                metric: rule.metric.clone(),
                op: rule.op,
                threshold: threshold.unwrap_or(rule.threshold),
                level: rule.level,
                value,
                passed,
                marginal,
                unit: crate::metrics::unit(&rule.metric),
                aggregate: agg,
                note,
                per_run: runs
                    .iter()
                    .map(|r| {
                        let v = r.metrics.get(&rule.metric)?;
                        threshold.map(|t| rule.op.holds(*v, t))
                    })
                    .collect(),
                latest_day: summary::latest_day(&runs, &rule.metric, agg),
                fails_on: None,
                scaled,
            }
        })
        .collect();

    let evidence = EvidenceStatus::of(policy, runs.len(), day_set.len());

    let primary = policy
        .deciding_rules()
        .next()
        .map(|r| (r.metric.clone(), r.op));
    let days = primary
        .as_ref()
        .map(|(m, _)| summary::per_day(&runs, m))
        .unwrap_or_default();

    let mut warnings = opts.notes.clone();
    // A threshold that scales with the machine, said resolved (or why not) in every format;
    // without runs there is nothing to resolve it against, and nothing to say.
    warnings.extend(
        rules
            .iter()
            .filter(|_| !runs.is_empty())
            .filter_map(|r| r.scaled.as_ref())
            .map(|s| Warning::ScaledThreshold {
                resolution: s.text.clone(),
            }),
    );
    warnings.extend(find_warnings(&runs, policy, &metrics, opts));

    // The interval says something only once the evidence rule is met.
    let mut rules = rules;
    let bursts = judge_sustained(&runs, &mut rules);
    for r in &mut rules {
        r.marginal &= evidence.enough;
    }
    warnings.extend(future_warning);
    for d in &deviations {
        warnings.push(Warning::NotPolicysTest(d.clone()));
    }
    // A verdict is only as current as the vendor's page it encodes: said last, after what the
    // runs themselves show.
    warnings.extend(Warning::stale_source(&policy.source, opts.now.date_naive()));
    dedup(&mut warnings);

    let judged = Judged {
        rules: &rules,
        evidence: &evidence,
        opts,
        runs: &runs,
        metrics: &metrics,
        deviations: &deviations,
        not_counted: &not_counted,
        fleet: &policy.fleet,
    };
    let (verdict, reason, overruled) = decide(&judged);
    // A rule the verdict fails on its latest runs is a failed rule in every format, not a
    // met one beside a FAIL.
    if verdict == Verdict::Fail
        && let Some((metric, why)) = overruled
        && let Some(r) = rules.iter_mut().find(|r| r.metric == metric)
    {
        r.passed = Some(false);
        r.fails_on = Some(why);
    }
    // A run recorded by `run --sustained` that reached a steady state measured the level.
    let reached = runs.iter().any(|r| r.sustained == Some(true));
    let (verdict, reason) = sustained_verdict(verdict, reason, policy, opts, runs.len(), reached);
    let differences: Vec<ShapeDifference> = opts
        .contradicted
        .iter()
        .map(deviation::Contradiction::shape_difference)
        .chain(
            deviations
                .iter()
                .filter(|d| d.effect == Effect::EitherWay)
                .map(|d| ShapeDifference {
                    field: d.field,
                    expected: d.expected.clone(),
                    found: d.found.clone(),
                }),
        )
        .collect();

    Ok(Evaluation {
        scope: opts.scope,
        policy: PolicyInfo::of(policy),
        verdict,
        reason,
        summary: Summary {
            n: runs.len(),
            days: day_set.len(),
            metrics,
        },
        group: None,
        rules,
        warnings,
        evidence: opts.evidence.clone().unwrap_or(evidence),
        days,
        differences,
        deviations,
        caveats,
        not_counted,
        excluded,
        run_deviations,
        run_effects,
        strict: opts.strict,
        generated: opts.now,
        bursts,
        runs,
        sequential: Vec::new(),
    })
}

/// The verdict with what `run --sustained` found, or did not: a pass needs a steady state
/// where a sustained run looked for one, and where the policy requires the sustained level
/// (`sustained: required`), a run that measured it. A fail stays a fail: a disk that misses
/// the threshold before its rate settles does not meet it after.
fn sustained_verdict(
    verdict: Verdict,
    reason: String,
    policy: &Policy,
    opts: &Options,
    runs: usize,
    reached: bool,
) -> (Verdict, String) {
    use crate::policy::Sustained as Need;
    match (&opts.sustained_check, verdict) {
        (Some(SustainedCheck::NotReached(why)), Verdict::Pass) => (
            Verdict::Inconclusive,
            format!("the level the disk sustains is not known: {why}; so far {reason}"),
        ),
        (Some(SustainedCheck::NotReached(why)), _) => (verdict, format!("{reason}; {why}")),
        (Some(SustainedCheck::Reached(how)), _) => (verdict, format!("{reason}; {how}")),
        (None, Verdict::Pass) if policy.sustained == Need::Required && !reached && runs > 0 => (
            Verdict::Inconclusive,
            format!(
                "the policy requires the level the disk sustains (sustained: required), which {} not measure: run `iopscheck run --sustained`; the runs' figures: {reason}",
                if runs == 1 {
                    "this run does"
                } else {
                    "these runs do"
                }
            ),
        ),
        _ => (verdict, reason),
    }
}

/// The runs whose burst credits ran out (`Run::burst`, kept in their records), and each rule on a throughput
/// figure judged at their sustained level: a run whose disk sustained less than the rule asks
/// misses it, whatever its mean, and a rule such a run passed only on credits fails, with
/// `fails_on` saying so.
fn judge_sustained(runs: &[Run], rules: &mut [RuleResult]) -> Vec<Burst> {
    fn of(run: &Run) -> Option<&Sustained> {
        run.burst.as_deref()
    }
    let bursts: Vec<Burst> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, run)| {
            let s = of(run)?;
            Some(Burst {
                run: i + 1,
                step_s: s.step.at_s,
                burst_iops: s.step.before,
                sustained_iops: s.step.after,
                bucket_ios: s.step.bucket(),
                series: if s.device { "device" } else { "application" },
            })
        })
        .collect();
    if bursts.is_empty() {
        return bursts;
    }
    for r in rules.iter_mut().filter(|r| r.op.higher_is_better()) {
        let Some(dir) = crate::metrics::throughput(&r.metric) else {
            continue;
        };
        let mut first: Option<(usize, f64, f64, f64)> = None;
        for (i, run) in runs.iter().enumerate() {
            let (Some(s), Some(&v)) = (of(run), run.metrics.get(&r.metric)) else {
                continue;
            };
            let Some(ratio) = s.ratio[dir as usize] else {
                continue;
            };
            let kept = v * ratio;
            if !r.op.holds(kept, r.threshold) {
                if let Some(p) = r.per_run.get_mut(i) {
                    *p = Some(false);
                }
                if r.op.holds(v, r.threshold) {
                    first.get_or_insert((i, kept, v, s.step.at_s));
                }
            }
        }
        if let (Some((i, kept, v, at)), Some(true)) = (first, r.passed) {
            let unit = if r.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", r.unit)
            };
            let run = if runs.len() > 1 {
                format!("run {}: ", i + 1)
            } else {
                String::new()
            };
            r.passed = Some(false);
            r.fails_on = Some(format!(
                "{run}{}{unit} sustained after burst credits ran out at {at:.1} s, missing {} {}; the run's mean of {}{unit} passes only on credits",
                crate::numbers::short(kept),
                r.op,
                crate::numbers::short(r.threshold),
                crate::numbers::short(v),
            ));
        }
    }
    bursts
}

#[cfg(test)]
pub(crate) mod tests;
