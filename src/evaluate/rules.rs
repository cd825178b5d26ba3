//! Each rule of the policy judged over the runs: its aggregate against its threshold (resolved
//! against the machine where it scales with it), the per-run marks, the latest day's figure,
//! and what a disk whose burst credits ran out sustained.

use serde::{Deserialize, Serialize};

use chrono::NaiveDate;

use crate::policy::{Aggregate, Level, Op, Policy};
use std::collections::BTreeMap;

use crate::run_index::{Run, RunFields};

use super::decide::straddles;
use super::{Burst, Options, Stats, Sustained, SustainedCheck, Verdict};

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
    /// Why the rule is not decided (`passed` is None although `value` is set): its figure is
    /// one fio printed to 3–4 significant digits (text; terse truncates), and the values that
    /// printed figure may stand for lie on both sides of the threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
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
/// Each rule of `policy` judged over `runs`, by the statistics of their metrics.
pub(super) fn rule_results(
    policy: &Policy,
    runs: &[Run],
    metrics: &BTreeMap<String, Stats>,
) -> Vec<RuleResult> {
    let agg = policy.evidence.aggregate;
    policy
        .rules
        .iter()
        .map(|rule| {
            let stats = metrics.get(&rule.metric);
            let value = stats.map(|s| s.aggregate(agg));
            let scaled = resolve_scaled(rule, runs);
            // A threshold that cannot be resolved judges nothing: never assumed.
            let threshold = match &scaled {
                Some(s) => s.count.map(|c| s.per_unit * c),
                None => Some(rule.threshold),
            };
            let mut passed = value.zip(threshold).map(|(v, t)| rule.op.holds(v, t));
            // A figure fio printed is known only to the digits it printed: it meets the
            // threshold only where every value it may stand for does.
            let printed = threshold.and_then(|t| printed_straddle(rule, runs, agg, t));
            let undecided = printed.as_ref().map(|p| {
                passed = None;
                p.words.clone()
            });
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
                        let t = threshold?;
                        let (lo, hi) = known_within(r, &rule.metric, *v);
                        // a run whose printed figure cannot tell is not marked either way
                        (rule.op.holds(lo, t) == rule.op.holds(hi, t)).then(|| rule.op.holds(*v, t))
                    })
                    .collect(),
                latest_day: super::summary::latest_day(runs, &rule.metric, agg),
                fails_on: None,
                scaled,
                undecided,
            }
        })
        .collect()
}

/// A rule whose aggregate, over the values the runs' printed figures may stand for, lies on
/// both sides of its threshold.
struct Straddle {
    words: String,
}

/// The least and most a run's figure of `metric` may be: the figure itself, unless the run's
/// figures are ones fio printed (`bw_basis: printed`: a text, terse or fio 2 JSON output), then
/// what the printed figure may stand for ([`printed_interval`]).
fn known_within(run: &Run, metric: &str, v: f64) -> (f64, f64) {
    if run.bw_basis == Some(crate::measure::BwBasis::Printed) && v.is_finite() {
        printed_interval(metric, v)
    } else {
        (v, v)
    }
}

/// What a figure fio printed may stand for. Bandwidth and IOPS: within
/// [`crate::numbers::PRINTED`] either way (text prints 3–4 significant digits, terse truncates
/// to KiB/s and whole IOPS). Latency, in µs: a text percentile is the exact one rounded up to
/// the whole unit it is printed in (fio's `(v + 999) / 1000` per step: ns, µs or ms, so a
/// figure of whole milliseconds may be up to 1 ms above the exact one), and terse truncates
/// percentiles, minimum and maximum to whole µs (the exact one up to 1 µs above); the record
/// does not say which format it came from, so both are allowed for. A mean, a minimum or a
/// maximum in text is printed to 2 decimals or 4–6 significant digits: within
/// [`crate::numbers::PRINTED`]. Any other figure (runtimes, counts) is exact.
pub(super) fn printed_interval(metric: &str, v: f64) -> (f64, f64) {
    let relative = v.abs() * crate::numbers::PRINTED;
    if crate::metrics::throughput(metric).is_some() || metric == "total_iops" {
        return (v - relative, v + relative);
    }
    if crate::metrics::unit(metric) != "µs" {
        return (v, v);
    }
    let whole = v.fract() == 0.0;
    // terse's truncation: the exact figure may be up to a microsecond above
    let truncated = if whole { 1.0 } else { 0.0 };
    if is_percentile(metric) {
        // text's rounding up: a figure of whole ms or µs may be up to a unit below
        let unit = if whole && v >= 1000.0 && v % 1000.0 == 0.0 {
            1000.0
        } else if whole {
            1.0
        } else {
            0.0
        };
        (v - unit, v + truncated)
    } else {
        (v - relative, v + relative.max(truncated))
    }
}

/// A latency percentile's metric (`…_p99_us`, `…_p99_9_us`): one of the percentiles the
/// metrics are made of ([`crate::metrics::PERCENTILES`]).
fn is_percentile(metric: &str) -> bool {
    metric.strip_suffix("_us").is_some_and(|m| {
        crate::metrics::PERCENTILES
            .iter()
            .any(|(_, p)| m.strip_suffix(p).is_some_and(|head| head.ends_with('_')))
    })
}

/// How fio prints a figure of `metric`, for the words of an undecided rule.
fn printed_how(metric: &str) -> &'static str {
    if crate::metrics::unit(metric) == "µs" {
        "whole µs or ms, rounded up in text, truncated in terse"
    } else {
        "3–4 significant digits, or truncated"
    }
}

/// Where some run's figure of the rule's metric is a printed one and the aggregate of the
/// least values those figures may stand for and that of the most fall on either side of
/// `threshold`: the rule cannot be decided on those figures.
fn printed_straddle(
    rule: &crate::policy::Rule,
    runs: &[Run],
    agg: Aggregate,
    threshold: f64,
) -> Option<Straddle> {
    let mut printed = 0usize;
    let (mut lows, mut highs, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for r in runs {
        let Some(&v) = r.metrics.get(&rule.metric) else {
            continue;
        };
        let (lo, hi) = known_within(r, &rule.metric, v);
        if lo != hi {
            printed += 1;
        }
        lows.push(lo);
        highs.push(hi);
        values.push(v);
    }
    if printed == 0 {
        return None;
    }
    let at = |v: &[f64]| Stats::of(v).map(|s| s.aggregate(agg));
    let (lo, hi, v) = (at(&lows)?, at(&highs)?, at(&values)?);
    if rule.op.holds(lo, threshold) == rule.op.holds(hi, threshold) {
        return None;
    }
    let unit = crate::metrics::unit(&rule.metric);
    let figure = |x: f64| {
        if unit.is_empty() {
            crate::numbers::fmt_precise(x)
        } else {
            format!("{} {unit}", crate::numbers::fmt_precise(x))
        }
    };
    let (whose, what) = if values.len() == 1 {
        (
            format!("{} {}", rule.metric, figure(v)),
            format!("as fio printed it ({})", printed_how(&rule.metric)),
        )
    } else {
        (
            format!("{} {} {}", agg.as_str(), rule.metric, figure(v)),
            format!(
                "{} figures fio printed ({})",
                if printed == values.len() {
                    "of"
                } else {
                    "with"
                },
                printed_how(&rule.metric)
            ),
        )
    };
    Some(Straddle {
        words: format!(
            "{whose} {what} cannot tell {} {}: the exact figure may be anywhere from {} to {}",
            rule.op,
            crate::numbers::threshold_as(threshold, crate::numbers::fmt_precise),
            figure(lo),
            figure(hi)
        ),
    })
}

pub(super) fn resolve_scaled(rule: &crate::policy::Rule, runs: &[Run]) -> Option<Scaled> {
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

/// The verdict with what `run --sustained` found, or did not: a pass needs a steady state
/// where a sustained run looked for one, and where the policy requires the sustained level
/// (`sustained: required`), a run that measured it. A fail stays a fail: a disk that misses
/// the threshold before its rate settles does not meet it after.
pub(super) fn sustained_verdict(
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
pub(super) fn judge_sustained(runs: &[Run], rules: &mut [RuleResult]) -> Vec<Burst> {
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
mod printed_tests {
    use super::printed_interval;

    #[test]
    fn a_printed_latency_stands_for_what_text_rounds_up_and_terse_truncates() {
        // a percentile of whole ms (text's msec rows round up): up to 1 ms below
        assert_eq!(
            printed_interval("sync_p99_us", 10_000.0),
            (9_000.0, 10_001.0)
        );
        // whole µs (text's usec rows, terse): 1 µs either way
        assert_eq!(printed_interval("write_clat_p99_us", 37.0), (36.0, 38.0));
        assert_eq!(
            printed_interval("write_clat_p99_9_us", 1234.0),
            (1233.0, 1235.0)
        );
        // nanoseconds (text's nsec rows) are the exact figure
        assert_eq!(printed_interval("write_clat_p99_us", 37.12), (37.12, 37.12));
        // a maximum terse truncated: at least 1 µs above
        let (lo, hi) = printed_interval("read_clat_max_us", 50.0);
        assert!(lo < 50.0 && hi == 51.0, "{lo} {hi}");
        // a mean: relative
        let (lo, hi) = printed_interval("write_clat_mean_us", 1000.5);
        assert!(lo < 1000.5 && hi > 1000.5 && hi < 1007.0, "{lo} {hi}");
        // bandwidth and IOPS as before; a runtime is exact
        let (lo, hi) = printed_interval("write_bw_mb_s", 100.0);
        assert!((lo - 99.4).abs() < 1e-9 && (hi - 100.6).abs() < 1e-9);
        assert_eq!(
            printed_interval("write_runtime_ms", 2000.0),
            (2000.0, 2000.0)
        );
    }
}
