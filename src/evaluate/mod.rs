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
pub mod sequential;
mod stats;
mod warnings;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Duration as ChronoDuration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::deviation::{self, Deviation, Effect};
use crate::history::Record;
use crate::job::ShapeDifference;
use crate::policy::{Aggregate, Level, Op, Policy, TestOrigin};
use crate::runs::{Records, Run, RunFields};

use decide::{Judged, decide, straddles};
pub use stats::{CI_MAX_SPAN, CI_MIN_RUNS, Stats, ci95_of_mean, modified_z_scores, t_975};
pub use warnings::{FIRST_RUN_FACTOR, OUTLIER_Z, Warning};
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
    /// contract.md's exit codes.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::Inconclusive => 3,
        }
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
    /// Job-shape differences found by the caller (imports): they make the verdict inconclusive.
    pub shape_differences: Vec<ShapeDifference>,
    /// Scale differences and other caveats found by the caller, shown as warnings.
    pub notes: Vec<Warning>,
    /// Engines seen in the window outside this group (report): for the mixed-engine warning.
    pub other_engines: BTreeMap<String, usize>,
}

impl Options {
    pub fn new(scope: Scope, now: DateTime<Utc>) -> Options {
        Options {
            scope,
            strict: false,
            now,
            shape_differences: vec![],
            notes: vec![],
            other_engines: BTreeMap::new(),
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
    /// The judged runs, in time order (what each format reads of a run; whole records are
    /// read again through `records`).
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
    /// Where the whole records of `runs` and `excluded` are read again from.
    #[serde(skip)]
    pub records: Records,
    /// Each judged run's deviations in one line ("" for the policy's test), in run order.
    #[serde(skip)]
    pub run_deviations: Vec<String>,
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
}

/// Local calendar day of a record, in the offset it was recorded with: "several runs a day"
/// means the node's day, wherever the report is read.
pub fn day_of(r: &impl RunFields) -> NaiveDate {
    r.timestamp().date_naive()
}

/// Judges records against a policy (a run's or an import's, held in memory).
pub fn evaluate(records: impl Into<Vec<Record>>, policy: &Policy, opts: &Options) -> Evaluation {
    evaluate_left_out(records.into(), Vec::new(), policy, opts)
}

/// Judges `records`, with the records the caller left out of the verdict (an import's: a
/// job fio reported an error for, the same run given twice), each with its reason: they are
/// listed as not counted (`not_counted[]`, the table of runs not counted) as a report lists
/// the runs of another test.
pub fn evaluate_left_out(
    mut records: Vec<Record>,
    left_out: Vec<(Record, String)>,
    policy: &Policy,
    opts: &Options,
) -> Evaluation {
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
    judge(runs, left, records, policy, opts)
}

/// Judges runs against a policy; `records` is where their whole records are read again.
pub fn evaluate_runs(
    runs: Vec<Run>,
    records: Records,
    policy: &Policy,
    opts: &Options,
) -> Evaluation {
    judge(runs, Vec::new(), records, policy, opts)
}

/// [`evaluate_runs`], with runs the caller left out (each with its reason) listed first
/// among the runs not counted.
fn judge(
    mut runs: Vec<Run>,
    left_out: Vec<(Run, String)>,
    records: Records,
    policy: &Policy,
    opts: &Options,
) -> Evaluation {
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
    let mut run_deviations: Vec<String> = Vec::new();
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
            run_deviations.push(c.list.clone());
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
        future_warning = Some(Warning::Note(format!(
            "{} run{} dated in the future (the latest {}) {} not counted: a clock was wrong when {} recorded; fix the clock, the runs stay in the history",
            future.len(),
            if future.len() == 1 { "" } else { "s" },
            latest.format("%Y-%m-%d %H:%M %:z"),
            if future.len() == 1 { "is" } else { "are" },
            if future.len() == 1 {
                "it was"
            } else {
                "they were"
            },
        )));
        for r in future {
            excluded.push((r, FUTURE_REASON.into()));
        }
    }
    let not_counted: Vec<NotCounted> = not_counted
        .into_iter()
        .map(|(reason, runs)| NotCounted { reason, runs })
        .collect();

    // Statistics of every metric present in any run, one metric at a time: only one
    // metric's column of figures is held at once (8 bytes a run), never every metric's.
    // Runs of one kind share their list of names (`Metrics::names`): where a run's list is
    // the one before it, its value is found at the same place without looking its name up.
    let mut names: Vec<&'static str> = Vec::new();
    let mut last: Option<&[&str]> = None;
    for r in &runs {
        let list = r.metrics.names();
        if !last.is_some_and(|l| std::ptr::eq(l, list)) {
            for k in list {
                if !names.contains(k) {
                    names.push(k);
                }
            }
            last = Some(list);
        }
    }
    let mut metrics: BTreeMap<String, Stats> = BTreeMap::new();
    let mut column: Vec<f64> = Vec::new();
    for m in names {
        column.clear();
        let mut last: Option<&[&str]> = None;
        let mut slot: Option<usize> = None;
        for r in &runs {
            let list = r.metrics.names();
            if !last.is_some_and(|l| std::ptr::eq(l, list)) {
                slot = list.iter().position(|k| *k == m);
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
    let day_set: BTreeSet<NaiveDate> = runs.iter().map(day_of).collect();

    let rules: Vec<RuleResult> = policy
        .rules
        .iter()
        .map(|rule| {
            let stats = metrics.get(&rule.metric);
            let value = stats.map(|s| s.aggregate(agg));
            let passed = value.map(|v| rule.op.holds(v, rule.threshold));
            let marginal = stats.is_some_and(|s| straddles(s, rule.op, rule.threshold));
            RuleResult {
                metric: rule.metric.clone(),
                op: rule.op,
                threshold: rule.threshold,
                level: rule.level,
                value,
                passed,
                marginal,
                unit: crate::metrics::unit(&rule.metric),
                aggregate: agg,
                note: rule.note.clone(),
                per_run: runs
                    .iter()
                    .map(|r| {
                        r.metrics
                            .get(&rule.metric)
                            .map(|&v| rule.op.holds(v, rule.threshold))
                    })
                    .collect(),
                latest_day: latest_day(&runs, &rule.metric, agg),
            }
        })
        .collect();

    let e = &policy.evidence;
    let more_runs = (e.min_runs as usize).saturating_sub(runs.len());
    let more_days = (e.min_days as usize).saturating_sub(day_set.len());
    let evidence = EvidenceStatus {
        runs: runs.len(),
        days: day_set.len(),
        min_runs: e.min_runs,
        min_days: e.min_days,
        enough: more_runs == 0 && more_days == 0,
        more_runs,
        more_days,
        window: crate::units::format_duration(e.window.0),
    };

    let primary = policy
        .deciding_rules()
        .next()
        .map(|r| (r.metric.clone(), r.op));
    let days = primary
        .as_ref()
        .map(|(m, _)| per_day(&runs, m))
        .unwrap_or_default();

    let mut warnings = opts.notes.clone();
    warnings.extend(find_warnings(&runs, policy, &metrics, opts));

    // The interval says something only once the evidence rule is met.
    let mut rules = rules;
    for r in &mut rules {
        r.marginal &= evidence.enough;
    }
    warnings.extend(future_warning);
    for d in &deviations {
        warnings.push(Warning::Note(format!(
            "not the policy's test: {d}: {}",
            d.why()
        )));
    }
    dedup(&mut warnings);

    let judged = Judged {
        rules: &rules,
        evidence: &evidence,
        opts,
        runs: &runs,
        metrics: &metrics,
        deviations: &deviations,
        not_counted: &not_counted,
    };
    let (verdict, reason) = decide(&judged);
    let differences: Vec<ShapeDifference> = opts
        .shape_differences
        .iter()
        .cloned()
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

    Evaluation {
        scope: opts.scope,
        policy: PolicyInfo {
            name: policy.name.clone(),
            description: policy.description.clone(),
            vendor: policy.vendor.clone(),
            source: policy.source.title.clone(),
            url: policy.source.url.clone(),
            seen: policy.source.seen.clone(),
            test: match policy.source.test {
                TestOrigin::Prescribed => "prescribed".into(),
                TestOrigin::Assumed => "assumed".into(),
            },
            aggregate: agg,
        },
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
        evidence,
        days,
        differences,
        deviations,
        caveats,
        not_counted,
        excluded,
        records,
        run_deviations,
        run_effects,
        strict: opts.strict,
        generated: opts.now,
        runs,
        sequential: Vec::new(),
    }
}

/// `metric` over the runs of the latest day that measured it (runs are in time order).
fn latest_day(runs: &[Run], metric: &str, agg: Aggregate) -> Option<LatestDay> {
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

fn per_day(runs: &[Run], metric: &str) -> Vec<Day> {
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

#[cfg(test)]
pub(crate) mod tests;
