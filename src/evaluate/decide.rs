//! The verdict and its one-line reason, from the rules' results, the evidence rule, the
//! deviations from the policy's test and what was not counted.

use std::collections::BTreeMap;

use super::over_time::{Kind, LATEST_MIN_RUNS, Latest, latest};
use super::{EvidenceStatus, NotCounted, Options, RuleResult, Scope, Stats, Verdict};
use crate::deviation::{self, Deviation, Effect};
use crate::numbers::{short, threshold_as};
use crate::policy::{Level, Op};
use crate::run_index::Run;

/// Everything the verdict is decided from.
pub(super) struct Judged<'a> {
    pub(super) rules: &'a [RuleResult],
    pub(super) evidence: &'a EvidenceStatus,
    pub(super) opts: &'a Options,
    pub(super) runs: &'a [Run],
    pub(super) metrics: &'a BTreeMap<String, Stats>,
    pub(super) deviations: &'a [Deviation],
    pub(super) not_counted: &'a [NotCounted],
    /// The policy's rules over the fleet: their metrics must be measured on each node too.
    pub(super) fleet: &'a [crate::policy::FleetRule],
}

impl Judged<'_> {
    /// The rules that decide: fail-level, and warn-level under --strict.
    fn deciding(&self) -> impl Iterator<Item = &RuleResult> {
        let strict = self.opts.strict;
        self.rules
            .iter()
            .filter(move |r| r.level == Level::Fail || (strict && r.level == Level::Warn))
    }
}

/// Whether the 95% interval of the mean lies on both sides of the threshold.
pub(super) fn straddles(s: &Stats, op: Op, threshold: f64) -> bool {
    s.n > 1 && op.holds(s.ci95_low, threshold) != op.holds(s.ci95_high, threshold)
}

/// The verdict, its reason, the effect whose deviations the reason names each
/// (`Evaluation::reason_names`), and the rule it fails on its latest runs although the
/// window's aggregate meets it (its metric, and those runs in words), which every format then
/// shows as failed.
pub(super) fn decide(j: &Judged) -> (Verdict, String, Option<Effect>, Option<(String, String)>) {
    let ((verdict, reason), names) = verdict(j);
    let overruled = (verdict == Verdict::Fail && !j.deciding().any(|r| r.passed == Some(false)))
        .then(|| latest_miss(j.deciding(), j.runs))
        .flatten()
        .map(|(r, l)| {
            (
                r.metric.clone(),
                format!(
                    "its last {} runs, since {}, average {} {}",
                    l.runs,
                    l.since.format("%Y-%m-%d"),
                    short(l.value),
                    r.unit
                ),
            )
        });
    (verdict, reason, names, overruled)
}

/// The verdict and its reason: the cases in the order they are tried, the first that applies
/// deciding. Nothing to judge; a test the output contradicts; not the policy's test; a rule
/// not measured; a threshold the runs cannot resolve; too little evidence for a report; the
/// latest runs missing a rule the window meets; then pass or fail on the rules. With it, the
/// effect whose deviations the reason names each: those that move the figure either way where
/// the runs are not the policy's test, those that flatter in a pass or a fail.
fn verdict(j: &Judged) -> ((Verdict, String), Option<Effect>) {
    let not_counted = if j.not_counted.is_empty() {
        String::new()
    } else {
        let l: Vec<String> = j.not_counted.iter().map(|n| n.to_string()).collect();
        format!(" ({})", l.join("; "))
    };
    let nc = not_counted.as_str();
    if j.runs.is_empty() {
        return (no_runs(j, nc), None);
    }
    if let Some(v) = contradicted(j, nc) {
        return (v, None);
    }
    if let Some(v) = not_the_test(j, nc) {
        return (v, Some(Effect::EitherWay));
    }
    if let Some(v) = not_measured(j, nc) {
        return (v, None);
    }
    let failed: Vec<&RuleResult> = j.deciding().filter(|r| r.passed == Some(false)).collect();
    if let Some(v) = unresolved(j, &failed, nc) {
        return (v, None);
    }
    if let Some(v) = printed_undecided(j, &failed, nc) {
        return (v, None);
    }
    // The latest runs that miss a rule the window's aggregate meets (over_time.rs): the
    // window's mean must not hide a node that fails now.
    let latest = latest_miss(j.deciding(), j.runs);
    if j.opts.scope == Scope::Report && !j.evidence.enough {
        let leaning = if failed.is_empty() && latest.is_none() {
            "pass"
        } else {
            "fail"
        };
        return (
            (
                Verdict::Inconclusive,
                format!(
                    "not enough evidence yet ({}){nc}; so far the runs lean towards {leaning}",
                    j.evidence.advice()
                ),
            ),
            None,
        );
    }
    let marg = undecided(j);
    // A pass or a fail names the deviations that flatter the disk.
    let flatters = (!flattering(j).is_empty()).then_some(Effect::Flatters);
    // a failing verdict names the soft limits missed too, as a pass does
    let with_soft = |(v, reason): (Verdict, String)| match v {
        Verdict::Fail => (v, format!("{reason}{}", soft_missed(j))),
        _ => (v, reason),
    };
    match (failed.is_empty(), &latest) {
        (true, Some((r, l))) => (with_soft(failing_lately(r, l, nc)), None),
        (true, None) => (passed(j, &marg, nc), flatters),
        (false, _) => (with_soft(failed_on(j, &failed, &marg, nc)), flatters),
    }
}

/// No runs to judge: what would count, where runs were left out; else the caller's words.
fn no_runs(j: &Judged, not_counted: &str) -> (Verdict, String) {
    if !j.not_counted.is_empty() {
        // An import's blocks are left out for more than their test: say what would count.
        let advice = match j.opts.scope {
            Scope::Import => {
                "import the output of a run of the policy's test that ended without an error"
            }
            _ => "run `iopscheck run` without --size or --runtime on the node's disk",
        };
        return (
            Verdict::Inconclusive,
            format!("no runs of the policy's test to judge{not_counted}: {advice}"),
        );
    }
    let reason = j.opts.no_runs.clone().unwrap_or_else(|| {
        "no runs to judge: run `iopscheck run`, or widen the window with --since".into()
    });
    (Verdict::Inconclusive, reason)
}

/// An output whose figures contradict the job stated beside it (imports).
fn contradicted(j: &Judged, not_counted: &str) -> Option<(Verdict, String)> {
    if j.opts.contradicted.is_empty() {
        return None;
    }
    let d: Vec<String> = j
        .opts
        .contradicted
        .iter()
        .map(|c| c.shape_difference().to_string())
        .collect();
    Some((
        Verdict::Inconclusive,
        format!("not the policy's test: {}{not_counted}", d.join("; ")),
    ))
}

/// Runs that differ from the policy's test in a way that moves the figure either way.
fn not_the_test(j: &Judged, not_counted: &str) -> Option<(Verdict, String)> {
    let either: Vec<Deviation> = j
        .deviations
        .iter()
        .filter(|d| d.effect == Effect::EitherWay)
        .cloned()
        .collect();
    if either.is_empty() {
        return None;
    }
    let first = j
        .deciding()
        .next()
        .filter(|r| r.value.is_some())
        .map(|r| {
            format!(
                "{} {} {} {}",
                r.aggregate.as_str(),
                r.metric,
                r.value.map(short).unwrap_or_default(),
                r.unit
            )
        })
        .map(|m| format!("; its runs measured {m}, which says nothing about the policy's test"))
        .unwrap_or_default();
    Some((
        Verdict::Inconclusive,
        format!(
            "not the policy's test: {}{first}{not_counted}",
            deviation::list(&either)
        ),
    ))
}

/// A deciding rule's metric (or a fleet rule's) that the runs do not measure.
fn not_measured(j: &Judged, not_counted: &str) -> Option<(Verdict, String)> {
    let mut missing: Vec<&str> = j
        .deciding()
        .filter(|r| r.value.is_none())
        .map(|r| r.metric.as_str())
        .collect();
    for f in j.fleet {
        if !j.metrics.contains_key(&f.metric) && !missing.contains(&f.metric.as_str()) {
            missing.push(&f.metric);
        }
    }
    (!missing.is_empty()).then(|| {
        (
            Verdict::Inconclusive,
            format!(
                "the runs do not measure {}, which the policy judges{not_counted}",
                missing.join(", ")
            ),
        )
    })
}

/// A threshold that scales with the machine, on runs that do not state the machine: that
/// rule cannot be judged, so nothing better than inconclusive (a rule that fails still fails).
fn unresolved(j: &Judged, failed: &[&RuleResult], not_counted: &str) -> Option<(Verdict, String)> {
    let unresolved: Vec<&str> = j
        .deciding()
        .filter(|r| !r.resolved())
        .filter_map(|r| r.scaled.as_ref().map(|s| s.text.as_str()))
        .collect();
    (failed.is_empty() && !unresolved.is_empty()).then(|| {
        (
            Verdict::Inconclusive,
            format!("{}{not_counted}", unresolved.join("; ")),
        )
    })
}

/// A rule whose figure fio printed too coarsely to tell against its threshold: nothing better
/// than inconclusive (a rule that fails whatever the printed figures stand for still fails).
fn printed_undecided(
    j: &Judged,
    failed: &[&RuleResult],
    not_counted: &str,
) -> Option<(Verdict, String)> {
    let undecided: Vec<&str> = j
        .deciding()
        .filter_map(|r| r.undecided.as_deref())
        .collect();
    (failed.is_empty() && !undecided.is_empty()).then(|| {
        (
            Verdict::Inconclusive,
            format!(
                "undecided: {}; the exact figure is in fio's JSON output (--output-format=json){not_counted}",
                undecided.join("; ")
            ),
        )
    })
}

/// What a pass or a fail adds where the runs cannot settle it: the interval straddles the
/// threshold (and how many runs would take it clear), or the runs are too few to bound the
/// mean. Marginal only where the evidence rule is met; before that, the runs are too few to
/// bound the mean at all.
fn undecided(j: &Judged) -> String {
    let (evidence, runs) = (j.evidence, j.runs);
    if let Some(r) = j.deciding().find(|r| r.marginal) {
        // The distance to a decision, from the spread seen (a planning figure: the ordinary
        // interval re-tested after each run is no decision rule; --until-decided is).
        let values: Vec<f64> = runs
            .iter()
            .filter_map(|run| run.metrics.get(&r.metric).copied())
            .collect();
        let more = j
            .metrics
            .get(&r.metric)
            .and_then(|s| s.runs_to_decide(&values, r.threshold).map(|m| (s.n, m)))
            .map(|(n, m)| {
                let more = m.saturating_sub(n);
                format!(
                    "; about {more} more run{} at the spread seen would take it clear of the threshold",
                    if more == 1 { "" } else { "s" }
                )
            })
            .unwrap_or_else(|| "; no number of runs at the spread seen would take it clear".into());
        format!(
            "; undecided: the 95% interval of the mean straddles the threshold{more} (decide with --until-decided)"
        )
    } else if !evidence.enough {
        let straddling = j.deciding().any(|r| {
            r.resolved()
                && j.metrics
                    .get(&r.metric)
                    .is_some_and(|s| straddles(s, r.op, r.threshold))
        });
        format!(
            "; {} run{} {} too few to bound the mean{} (the evidence rule asks for {} runs over {} days)",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            if runs.len() == 1 { "is" } else { "are" },
            if straddling {
                ", and their 95% interval straddles the threshold"
            } else {
                ""
            },
            evidence.min_runs,
            evidence.min_days
        )
    } else {
        String::new()
    }
}

/// The latest runs miss a rule the window's aggregate meets: a fail where they are enough
/// runs to tell, else inconclusive.
fn failing_lately(r: &RuleResult, l: &Latest, not_counted: &str) -> (Verdict, String) {
    let since = l.since.format("%Y-%m-%d");
    let how = match l.kind {
        Kind::Step => format!("{} before", short(l.before)),
        Kind::Decline => format!("the daily mean fell steadily from {}", short(l.before)),
    };
    let figure = format!(
        "the last {} run{} average {} {}, missing {} {} ({how})",
        l.runs,
        if l.runs == 1 { "" } else { "s" },
        short(l.value),
        r.unit,
        r.op,
        threshold_as(r.threshold, short),
    );
    let window = format!(
        "the window's {} {} of {} {} meets it only on older runs",
        r.aggregate.as_str(),
        r.metric,
        r.value.map(short).unwrap_or_default(),
        r.unit
    );
    if l.runs >= LATEST_MIN_RUNS {
        (
            Verdict::Fail,
            format!("failing since {since}: {figure}; {window}{not_counted}"),
        )
    } else {
        (
            Verdict::Inconclusive,
            format!(
                "since {since}, {figure}: too few runs to tell whether the node now fails ({LATEST_MIN_RUNS} needed); {window}{not_counted}"
            ),
        )
    }
}

/// "; soft limit missed: …": the soft limits (warn-level rules, without --strict) the runs
/// miss. They do not change the verdict, but a verdict on the rules says so, pass or fail.
fn soft_missed(j: &Judged) -> String {
    let soft: Vec<String> = j
        .rules
        .iter()
        .filter(|r| !j.opts.strict && r.level == Level::Warn && r.passed == Some(false))
        .map(describe)
        .collect();
    if soft.is_empty() {
        String::new()
    } else {
        format!("; soft limit missed: {}", soft.join("; "))
    }
}

/// Every deciding rule met: a pass, unless only on a test that flatters the disk.
fn passed(j: &Judged, marg: &str, not_counted: &str) -> (Verdict, String) {
    let flatters = flattering(j);
    // every deciding rule met, as a fail names every rule missed
    let met: Vec<String> = j.deciding().map(describe).collect();
    let first = if met.is_empty() {
        fleet_only(j)
    } else {
        met.join("; ")
    };
    let soft = soft_missed(j);
    if !flatters.is_empty() {
        // What the output does not state could only flatter: say what would settle it.
        let settle = if flatters.iter().any(|d| d.is_unknown()) {
            format!(" (what the output does not state: {})", deviation::SETTLE)
        } else {
            String::new()
        };
        return (
            Verdict::Inconclusive,
            format!(
                "passed only on a test that {} the disk ({}): {first}{soft}; only the policy's own test can pass{settle}{not_counted}",
                flatter_words(&flatters),
                deviation::list(&flatters)
            ),
        );
    }
    (Verdict::Pass, format!("{first}{soft}{marg}{not_counted}"))
}

/// A deciding rule missed: a fail, even on a test that flatters the disk.
fn failed_on(
    j: &Judged,
    failed: &[&RuleResult],
    marg: &str,
    not_counted: &str,
) -> (Verdict, String) {
    let flatters = flattering(j);
    let d: Vec<String> = failed.iter().map(|r| describe(r)).collect();
    let even = if flatters.is_empty() {
        String::new()
    } else {
        format!(
            "; failed even on a test that {} the disk ({})",
            flatter_words(&flatters),
            deviation::list(&flatters)
        )
    };
    (
        Verdict::Fail,
        format!("{}{even}{marg}{not_counted}", d.join("; ")),
    )
}

/// "flatters", or "may flatter" where every one is only unknown (not stated in the output).
fn flatter_words(flatters: &[Deviation]) -> &'static str {
    if flatters.iter().all(|d| d.is_unknown()) {
        "may flatter"
    } else {
        "flatters"
    }
}

/// The deviations that flatter the disk.
fn flattering(j: &Judged) -> Vec<Deviation> {
    j.deviations
        .iter()
        .filter(|d| d.effect == Effect::Flatters)
        .cloned()
        .collect()
}

/// A rule's figure against its threshold in words (or why it fails on its latest runs).
fn describe(r: &RuleResult) -> String {
    if let Some(why) = &r.fails_on {
        return format!("{}: {why}", r.metric);
    }
    format!(
        "{} {} is {} {}, {} {} {}",
        r.aggregate.as_str(),
        r.metric,
        r.value.map(short).unwrap_or_default(),
        r.unit,
        if r.passed == Some(true) {
            "meeting"
        } else {
            "missing"
        },
        r.op,
        threshold_as(r.threshold, short),
    )
}

/// The reason of a node under a policy whose rules are all over the fleet: what it measured,
/// and that `fleet` judges the nodes together.
fn fleet_only(j: &Judged) -> String {
    let parts: Vec<String> = j
        .fleet
        .iter()
        .map(|f| {
            let figure = j
                .metrics
                .get(&f.metric)
                .map(|s| format!("{} {}", short(s.mean), crate::metrics::unit(&f.metric)))
                .unwrap_or_else(|| "not measured".into());
            format!(
                "mean {} {figure} (the fleet's max/min must be ≤ {})",
                f.metric,
                short(f.max_over_min)
            )
        })
        .collect();
    format!(
        "no rule judges one node alone: this policy's rules are over the fleet, which `iopscheck fleet` judges from every node's runs; measured here: {}",
        parts.join("; ")
    )
}

/// The first deciding rule whose latest runs miss it although the window's aggregate meets it,
/// with those runs: of the latest parts found, the one with the most runs.
fn latest_miss<'a>(
    rules: impl Iterator<Item = &'a RuleResult>,
    runs: &[Run],
) -> Option<(&'a RuleResult, Latest)> {
    rules.filter(|r| r.passed == Some(true)).find_map(|r| {
        let values: Vec<_> = runs
            .iter()
            .filter_map(|run| run.metrics.get(&r.metric).map(|&v| (run.timestamp, v)))
            .collect();
        latest(&values, r.op)
            .into_iter()
            .filter(|l| !r.op.holds(l.value, r.threshold))
            .max_by_key(|l| l.runs)
            .map(|l| (r, l))
    })
}
