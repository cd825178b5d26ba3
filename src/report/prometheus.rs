//! Prometheus text exposition (format 0.0.4) for node_exporter's textfile collector: write it
//! with `--export prometheus=/var/lib/node_exporter/textfile/iopscheck.prom`; the file is
//! replaced atomically by rename (`super::write_file`), so the collector never reads half of
//! it. Samples carry no timestamps, as the textfile collector requires.
//!
//! Every series has the labels `policy`, `host`, `dir` and `engine` (what was judged);
//! the rule series add `metric` (a contract.md metric name, whose suffix gives the unit),
//! `op` (`>=`, `>`, `<=`, `<`) and `level` (`fail`, `warn`, `info`).
//!
//! | metric | meaning |
//! | --- | --- |
//! | `iopscheck_verdict` | 1 pass, 0 fail, NaN inconclusive |
//! | `iopscheck_verdict_state{verdict}` | 1 for the current verdict, 0 for the other two |
//! | `iopscheck_rule_value` | the rule's aggregate (mean or median) across runs; absent when no run measured it |
//! | `iopscheck_rule_latest_day_value` | the same aggregate over the latest day's runs alone; absent when no run measured it |
//! | `iopscheck_rule_threshold` | the rule's threshold |
//! | `iopscheck_rule_passed` | 1 met, 0 missed (or failed on its latest runs or a sustained level); absent when not measured |
//! | `iopscheck_rule_marginal` | 1 when the 95% interval of the mean straddles the threshold |
//! | `iopscheck_runs`, `iopscheck_run_dates` | runs judged; distinct calendar dates they ran on |
//! | `iopscheck_runs_required`, `iopscheck_run_dates_required` | the policy's evidence rule |
//! | `iopscheck_evidence_sufficient` | 1 when the runs and days meet the evidence rule |
//! | `iopscheck_last_run_timestamp_seconds` | Unix time of the latest run judged |
//! | `iopscheck_warnings` | number of warnings; their text follows as `# warning:` comments |
//!
//! All are gauges: each describes the latest evaluation, none counts up. Days are counted as
//! `run_dates`, not `days`: a count of dates is not a duration, and promtool's lint reads a
//! `days` suffix as a time unit that should be seconds.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::evaluate::{Evaluation, Verdict};

/// Label pairs in a fixed order; values are escaped when rendered. Shared with the fleet's
/// exposition.
pub(super) struct Labels(Vec<(&'static str, String)>);

impl Labels {
    pub(super) fn new(pairs: &[(&'static str, &str)]) -> Labels {
        Labels(pairs.iter().map(|(k, v)| (*k, v.to_string())).collect())
    }
    pub(super) fn with(&self, name: &'static str, value: &str) -> Labels {
        let mut v = self.0.clone();
        v.push((name, value.to_string()));
        Labels(v)
    }
    fn render(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", label_value(v)))
            .collect();
        format!("{{{}}}", parts.join(","))
    }
}

/// One metric family: HELP and TYPE, then its samples, kept together as the format requires.
/// Shared with the fleet's exposition.
pub(super) struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(String, f64)>,
}

impl Family {
    pub(super) fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: vec![],
        }
    }
    pub(super) fn push(&mut self, labels: &Labels, value: f64) {
        self.samples.push((labels.render(), value));
    }
    pub(super) fn write(&self, s: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let _ = writeln!(s, "# HELP {} {}", self.name, help_text(self.help));
        let _ = writeln!(s, "# TYPE {} gauge", self.name);
        for (labels, v) in &self.samples {
            let _ = writeln!(
                s,
                "{}{} {}",
                self.name,
                labels,
                crate::numbers::fmt_exact(*v)
            );
        }
    }
}

/// A verdict as two gauges: `value` 1 pass, 0 fail, NaN inconclusive; `state` 1 for the
/// verdict and 0 for the other two, under a `verdict` label.
pub(super) fn push_verdict(value: &mut Family, state: &mut Family, labels: &Labels, v: Verdict) {
    value.push(labels, verdict_value(v));
    for other in [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive] {
        state.push(
            &labels.with("verdict", other.as_str()),
            bool_value(v == other),
        );
    }
}

fn bool_value(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let id = super::identity(ev);
    let base = Labels::new(&[
        ("policy", &id.policy),
        ("host", &id.host),
        ("dir", &id.dir),
        ("engine", &id.engine),
    ]);
    let rules = RuleFamilies::of(ev, &base);
    let mut s = String::new();
    comments(ev, &rules.duplicates, &mut s);
    let families = verdict_families(ev, &base)
        .into_iter()
        .chain(rules.families)
        .chain(evidence_families(ev, &base))
        .chain(sequential_families(ev, &base));
    for f in families {
        f.write(&mut s);
    }
    out.write_all(s.as_bytes())
}

/// The comments that open the file: the verdict and its reason, what stands beside it
/// (deviations, caveats, runs not counted), the warnings, and the rules not exported.
fn comments(ev: &Evaluation, duplicates: &[String], s: &mut String) {
    let _ = writeln!(
        s,
        "# iopscheck {}: policy {}, verdict {} {}: {}",
        crate::version::VERSION,
        comment_text(&ev.policy.name),
        ev.verdict,
        comment_text(&ev.judged_on()),
        comment_text(&ev.reason)
    );
    for line in super::verdict_context(ev) {
        let _ = writeln!(s, "# {}", comment_text(&line));
    }
    for w in &ev.warnings {
        let _ = writeln!(s, "# warning: {}", comment_text(&w.to_string()));
    }
    for d in duplicates {
        let _ = writeln!(
            s,
            "# not exported: rule {} repeats the metric, operator and level of an earlier rule",
            comment_text(d)
        );
    }
}

/// `iopscheck_verdict` and `iopscheck_verdict_state`.
fn verdict_families(ev: &Evaluation, base: &Labels) -> [Family; 2] {
    let mut verdict = Family::new(
        "iopscheck_verdict",
        "Verdict of the latest evaluation: 1 pass, 0 fail, NaN inconclusive (see iopscheck_verdict_state).",
    );
    let mut state = Family::new(
        "iopscheck_verdict_state",
        "1 for the verdict of the latest evaluation (pass, fail or inconclusive), 0 for the others.",
    );
    push_verdict(&mut verdict, &mut state, base, ev.verdict);
    [verdict, state]
}

/// The rules' series, a sample a rule under its `metric`, `op` and `level`, and the rules
/// left out because an earlier one has the same labels.
struct RuleFamilies {
    families: [Family; 5],
    /// "metric op threshold" of each rule not exported.
    duplicates: Vec<String>,
}

impl RuleFamilies {
    fn of(ev: &Evaluation, base: &Labels) -> RuleFamilies {
        let mut value = Family::new(
            "iopscheck_rule_value",
            "Aggregate (mean or median) of the rule's metric across the runs, in the metric's own unit.",
        );
        let mut latest = Family::new(
            "iopscheck_rule_latest_day_value",
            "Aggregate (mean or median) of the rule's metric across the latest calendar day's runs alone, in the metric's own unit.",
        );
        let mut threshold = Family::new(
            "iopscheck_rule_threshold",
            "Threshold of the rule, in the metric's own unit.",
        );
        let mut passed = Family::new(
            "iopscheck_rule_passed",
            "1 when the aggregate meets the rule's threshold, 0 when it misses it or the rule fails on its latest runs or a run's sustained level (JSON rules[].fails_on).",
        );
        let mut marginal = Family::new(
            "iopscheck_rule_marginal",
            "1 when the 95% confidence interval of the mean straddles the threshold: more runs could change the result.",
        );
        let mut seen: Vec<(String, &str, &str)> = Vec::new();
        let mut duplicates = Vec::new();
        for r in &ev.rules {
            // Two rules with the same metric, operator and level would be the same series; the
            // first one is exported and the others named in a comment.
            let key = (r.metric.clone(), r.op.as_str(), r.level.as_str());
            if seen.contains(&key) {
                duplicates.push(format!("{} {} {}", r.metric, r.op.as_str(), r.threshold));
                continue;
            }
            seen.push(key);
            let l = base
                .with("metric", &r.metric)
                .with("op", r.op.as_str())
                .with("level", r.level.as_str());
            // A threshold the host facts cannot resolve has no value to export.
            if r.resolved() {
                threshold.push(&l, r.threshold);
            }
            if let Some(v) = r.value {
                value.push(&l, v);
            }
            if let Some(d) = &r.latest_day {
                latest.push(&l, d.value);
            }
            if let Some(p) = r.passed {
                passed.push(&l, bool_value(p));
            }
            marginal.push(&l, bool_value(r.marginal));
        }
        RuleFamilies {
            families: [value, latest, threshold, passed, marginal],
            duplicates,
        }
    }
}

/// The evidence: runs and dates judged and required, whether they suffice, the latest run's
/// time and the number of warnings.
fn evidence_families(ev: &Evaluation, base: &Labels) -> [Family; 7] {
    let mut runs = Family::new("iopscheck_runs", "Number of runs judged.");
    runs.push(base, ev.evidence.runs as f64);
    // Not "_days": a count of calendar dates, not a duration (promtool would ask for seconds).
    let mut days = Family::new(
        "iopscheck_run_dates",
        "Number of distinct calendar dates (each run's local date) with judged runs.",
    );
    days.push(base, ev.evidence.days as f64);
    let mut runs_required = Family::new(
        "iopscheck_runs_required",
        "Runs the policy's evidence rule asks for before a report gives a verdict.",
    );
    runs_required.push(base, f64::from(ev.evidence.min_runs));
    let mut days_required = Family::new(
        "iopscheck_run_dates_required",
        "Distinct calendar dates with runs the policy's evidence rule asks for before a report gives a verdict.",
    );
    days_required.push(base, f64::from(ev.evidence.min_days));
    let mut enough = Family::new(
        "iopscheck_evidence_sufficient",
        "1 when the runs and days meet the policy's evidence rule.",
    );
    enough.push(base, bool_value(ev.evidence.enough));
    let mut last = Family::new(
        "iopscheck_last_run_timestamp_seconds",
        "Unix time of the latest run judged.",
    );
    if let Some(t) = ev.runs.iter().map(|r| r.timestamp).max() {
        last.push(base, t.timestamp_millis() as f64 / 1000.0);
    }
    let mut warnings = Family::new(
        "iopscheck_warnings",
        "Number of warnings about the evidence; their text is in the comments of this file.",
    );
    warnings.push(base, ev.warnings.len() as f64);
    [
        runs,
        days,
        runs_required,
        days_required,
        enough,
        last,
        warnings,
    ]
}

/// The sequential decision (--until-decided): its run count, error rates and bounds, a sample
/// a decision under its `metric` and `op`; no samples (so nothing written) without one.
fn sequential_families(ev: &Evaluation, base: &Labels) -> [Family; 6] {
    let mut n = Family::new(
        "iopscheck_sequential_runs",
        "Runs in the sequential decision's current sequence (--until-decided).",
    );
    let mut alpha = Family::new(
        "iopscheck_sequential_alpha",
        "The sequential decision's bound on the chance of a false pass.",
    );
    let mut beta = Family::new(
        "iopscheck_sequential_beta",
        "The sequential decision's bound on the chance of a false fail.",
    );
    let mut delta = Family::new(
        "iopscheck_sequential_delta",
        "The sequential decision's indifference zone around the threshold, a fraction.",
    );
    let mut low = Family::new(
        "iopscheck_sequential_lower_bound",
        "Anytime-valid lower bound of the rule's mean, in the metric's own unit.",
    );
    let mut high = Family::new(
        "iopscheck_sequential_upper_bound",
        "Anytime-valid upper bound of the rule's mean, in the metric's own unit.",
    );
    for d in &ev.sequential {
        let l = base.with("metric", &d.metric).with("op", d.op.as_str());
        n.push(&l, d.sequence.n as f64);
        alpha.push(&l, d.sequence.alpha);
        beta.push(&l, d.sequence.beta);
        delta.push(&l, d.sequence.delta);
        if let Some(v) = d.sequence.low {
            low.push(&l, v);
        }
        if let Some(v) = d.sequence.high {
            high.push(&l, v);
        }
    }
    [n, alpha, beta, delta, low, high]
}

/// The verdict as a gauge: 1 pass, 0 fail, NaN inconclusive.
fn verdict_value(v: Verdict) -> f64 {
    match v {
        Verdict::Pass => 1.0,
        Verdict::Fail => 0.0,
        Verdict::Inconclusive => f64::NAN,
    }
}

/// A label value: backslash, double quote and line feed escaped, as the format requires.
pub(super) fn label_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// HELP text: backslash and line feed escaped.
fn help_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A comment line must stay one line; a comment that began "# HELP" or "# TYPE" would be read
/// as metadata, which cannot happen here since every comment starts with fixed text.
pub(super) fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_backslash_quote_and_newline() {
        assert_eq!(label_value(r#"C:\a"b"#), r#"C:\\a\"b"#);
        assert_eq!(label_value("a\nb"), "a\\nb");
        assert_eq!(help_text("a\\b\nc"), "a\\\\b\\nc");
        assert_eq!(comment_text("x\ny"), "x y");
    }
}
