//! Evaluation: records + policy → verdict, with per-rule values, statistics and warnings.
//! Pure: no I/O and no clock (the caller passes `now`), so every case is a plain unit test.
//! Every output format renders the [`Evaluation`] this module returns.
//!
//! The parts: [`stats`] (descriptive statistics and intervals), [`warnings`] (what a careful
//! reader should know), [`decide`] (the verdict and its one-line reason); which records are
//! judged at all is `crate::select`'s.

pub mod compare;
mod counted;
mod decide;
mod evaluation;
mod evidence;
pub mod over_time;
mod rules;
mod run_lines;
pub mod sequential;
mod stats;
mod summary;
mod warnings;

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Duration as ChronoDuration, FixedOffset, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::deviation::{self, Effect};
use crate::history::Record;
use crate::job::ShapeDifference;
pub use crate::measure::changepoint::Sustained;
use crate::policy::Policy;
use crate::run_index::{Records, Run, RunFields};

use counted::Counted;
pub(crate) use counted::REPEATED;
use decide::{Judged, decide};
pub use evaluation::{Burst, Day, Evaluation, Group, NotCounted, PolicyInfo, Summary, run_result};
pub use evidence::{EvidenceCount, EvidenceStatus};
pub use rules::{LatestDay, RuleResult};
use rules::{judge_sustained, sustained_verdict};
pub use run_lines::RunLines;
pub use stats::{Stats, t_975};
pub use summary::held_metrics;
#[cfg(test)]
pub(crate) use warnings::examples as warning_examples;
pub use warnings::{Warning, caveat};
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
    /// `--until-decided`: the sequential rule decides the verdict where it can judge the runs
    /// (`sequential::settle`).
    pub sequential: Option<sequential::Settings>,
    /// The window narrowed to the runs that could be held (`hold`): the verdict cannot be a
    /// pass or a fail, and says what the runs judged would make of it.
    pub narrowed: Option<crate::hold::Narrowed>,
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
            sequential: None,
            narrowed: None,
        }
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

/// Local calendar day of a record, in the offset it was recorded with: "several runs a day"
/// means the node's day, wherever the report is read.
pub fn day_of(r: &impl RunFields) -> NaiveDate {
    r.timestamp().date_naive()
}

/// How many days the evidence's runs are over ([`EvidenceDays`]): a day is a calendar day in
/// one zone, the latest run's (the node's day as it tells time now: counted in each run's own
/// offset, runs minutes apart recorded in +14:00 and −12:00 were two days), and it counts
/// towards the policy's `min_days` only with `per_day` runs or more made at least
/// `evidence::DAY_GAP_HOURS` after the last run of the day counted before it: runs a few minutes
/// either side of midnight are one sitting, on one cache state, not two days.
/// Times in order (a report's runs) are counted as they come, holding nothing; others are
/// tallied by the minute first ([`DayTally`]).
pub fn evidence_days(
    times: impl IntoIterator<Item = DateTime<FixedOffset>> + Clone,
    per_day: u32,
) -> EvidenceDays {
    let mut latest: Option<DateTime<FixedOffset>> = None;
    let mut in_order = true;
    for t in times.clone() {
        in_order &= latest.is_none_or(|l| l <= t);
        if latest.is_none_or(|l| t > l) {
            latest = Some(t);
        }
    }
    let Some(zone) = latest.map(|l| *l.offset()) else {
        return EvidenceDays::default();
    };
    if in_order {
        let minutes = times.into_iter().map(|t| (t.timestamp().div_euclid(60), 1));
        return evidence::count_days(minutes, zone, per_day);
    }
    let mut tally = DayTally::default();
    for t in times {
        tally.add(t);
    }
    tally.days(per_day)
}

pub use evidence::{DAY_GAP_HOURS, DayTally, EvidenceDays};

/// The days of runs' evidence ([`evidence_days`]) over the times their outputs state
/// (`Run::stated_time`): a run whose time was assumed counts towards no day, only among the
/// `undated`. Every count of a set of runs' days of evidence is this one.
pub fn run_days<'a>(runs: impl Iterator<Item = &'a Run> + Clone, per_day: u32) -> EvidenceDays {
    let undated = runs.clone().filter(|r| r.stated_time().is_none()).count();
    EvidenceDays {
        undated,
        ..evidence_days(runs.filter_map(Run::stated_time), per_day)
    }
}

/// The days of the runs' evidence under the policy's rule ([`run_days`]).
fn days_of(runs: &[Run], policy: &Policy) -> EvidenceDays {
    run_days(runs.iter(), policy.evidence.min_runs_per_day)
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

    let Counted {
        excluded,
        deviations,
        restated,
        caveats,
        run_deviations,
        run_effects,
        not_counted,
        future_warning,
    } = counted::sort_out(&mut runs, left_out, policy, opts);

    let metrics = summary::metric_stats(&runs, records)?;
    let days_over = days_of(&runs, policy);

    let rules = rules::rule_results(policy, &runs, &metrics);

    let evidence = EvidenceStatus::of(policy, runs.len(), days_over);

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
    let (verdict, reason, reason_names, overruled) = decide(&judged);
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
    // --until-decided: the sequence decides where it can judge the runs.
    let unlike = !deviations.is_empty() || !opts.contradicted.is_empty();
    let (vr, nc) = ((verdict, reason), &not_counted);
    let settled = sequential::settle(vr, &runs, &rules, unlike, nc, policy, opts);
    // Last: a window narrowed to what could be held was not judged whole, whatever decided.
    let (verdict, reason) = narrowed(opts.narrowed.as_ref(), settled.verdict, settled.reason);
    let differences: Vec<ShapeDifference> = opts
        .contradicted
        .iter()
        .map(deviation::Contradiction::shape_difference)
        .chain(
            deviations
                .iter()
                .filter(|d| d.effect == Effect::EitherWay && !restated.contains(d))
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
            days: days_over.counted,
            metrics,
        },
        group: None,
        rules,
        warnings,
        evidence: opts.evidence.clone().unwrap_or(evidence),
        days,
        differences,
        deviations,
        reason_names,
        caveats,
        not_counted,
        excluded,
        run_deviations,
        run_effects,
        strict: opts.strict,
        generated: opts.now,
        bursts,
        runs,
        sequential: settled.decisions,
        narrowed: opts.narrowed.clone(),
    })
}

/// The verdict on a window narrowed to the runs that could be held: inconclusive, with why,
/// and what the runs judged would make of it alone; else the verdict as it was decided.
fn narrowed(
    n: Option<&crate::hold::Narrowed>,
    verdict: Verdict,
    reason: String,
) -> (Verdict, String) {
    let Some(n) = n else {
        return (verdict, reason);
    };
    let alone = match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Inconclusive => "be inconclusive",
    };
    (
        Verdict::Inconclusive,
        format!(
            "{}; judged alone, the runs after them would {alone}: {reason}",
            n.reason()
        ),
    )
}

#[cfg(test)]
pub(crate) mod tests;
