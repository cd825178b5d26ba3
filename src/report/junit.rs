//! JUnit XML for CI pipelines: one test suite for the policy, one test case per rule (and,
//! for a report, one for the evidence rule), so a pipeline shows which limit a node missed.
//!
//! How outcomes map, chosen so the failure count is non-zero exactly when the verdict is fail
//! and the suite is never red for something that does not decide the verdict:
//!
//! | rule | outcome |
//! | --- | --- |
//! | deciding (fail level, or warn level with `--strict`), met | passed |
//! | deciding, missed, verdict fail | `<failure message="mean M is X IOPS, threshold ≥ Y IOPS">` |
//! | deciding, verdict inconclusive (too little evidence, not the policy's test, not measured) | `<error type="inconclusive" message="inconclusive: REASON">` with the value so far: an inconclusive verdict is never green |
//! | warn level without `--strict`, missed | `<skipped message="soft limit missed: …">`: visible, but not a failure |
//! | info level, missed | `<skipped message="shown only: …">` |
//! | warn or info level, met | passed |
//! | not measured by any run, not deciding | `<skipped message="not measured: …">` |
//!
//! The verdict, its reason and the evidence are suite properties, with what was judged:
//! `runs` (the runs judged), `runs.not_counted`, and one `deviation`, `caveat` and
//! `not_counted` property each; the warnings, each once, are the suite's `<system-out>`, with
//! the verdict line after them.

use std::io::{self, Write};

use crate::evaluate::{Evaluation, RuleResult, Scope, Verdict};

use super::view;
use super::xml::{attr, text};
use crate::numbers::fmt_precise;

/// A test case's outcome, as the node's and the fleet's JUnit write it.
pub(super) enum CaseOutcome {
    Passed,
    Error {
        message: String,
    },
    /// `kind` is the failure's `type` attribute.
    Failure {
        message: String,
        kind: &'static str,
        detail: String,
    },
    Skipped {
        message: String,
    },
}

struct Case {
    name: String,
    outcome: CaseOutcome,
    out: String,
}

fn describe(r: &RuleResult) -> String {
    match r.value {
        Some(v) => format!(
            "{} {} is {}{u}, threshold {}{u}",
            r.aggregate.as_str(),
            r.metric,
            fmt_precise(v),
            r.threshold_text(fmt_precise),
            u = unit(r.unit),
        ),
        None => format!(
            "no run measures {}, threshold {}{}",
            r.metric,
            r.threshold_text(fmt_precise),
            unit(r.unit)
        ),
    }
}

fn unit(u: &str) -> String {
    if u.is_empty() {
        String::new()
    } else {
        format!(" {u}")
    }
}

fn rule_case(ev: &Evaluation, r: &RuleResult) -> Case {
    let deciding = super::view::deciding(r, ev.strict);
    let what = match &r.fails_on {
        Some(why) => format!("{}; fails: {why}", describe(r)),
        None => describe(r),
    };
    let outcome = match view::outcome(ev, r) {
        _ if deciding && ev.verdict == Verdict::Inconclusive => CaseOutcome::Error {
            message: format!("inconclusive: {} ({what})", ev.reason),
        },
        view::Outcome::NotMeasured => CaseOutcome::Skipped {
            message: format!("not measured: {what}"),
        },
        view::Outcome::Undecided => CaseOutcome::Skipped {
            message: format!(
                "undecided: {}",
                r.undecided.as_deref().unwrap_or(what.as_str())
            ),
        },
        view::Outcome::Meets => CaseOutcome::Passed,
        view::Outcome::NotJudged => CaseOutcome::Skipped {
            message: format!(
                "{} ({}): {what}",
                view::NOT_JUDGED,
                crate::deviation::list(&ev.deviations)
            ),
        },
        view::Outcome::Fails => CaseOutcome::Failure {
            message: what.clone(),
            kind: "threshold",
            detail: failure_detail(ev, r),
        },
        view::Outcome::Soft => CaseOutcome::Skipped {
            message: format!("soft limit missed: {what}; it decides only with --strict"),
        },
        view::Outcome::ShownOnly => CaseOutcome::Skipped {
            message: format!("shown only, never decides: {what}"),
        },
    };
    let mut out = format!("{} ({} level", what, r.level.as_str());
    if r.marginal {
        out.push_str("; undecided: the 95% interval of the mean straddles the threshold");
    }
    out.push(')');
    if let Some(note) = &r.note {
        out.push_str("\nnote: ");
        out.push_str(note);
    }
    Case {
        name: format!(
            "{} {} {}",
            r.metric,
            r.op.as_str(),
            fmt_precise(r.threshold)
        ),
        outcome,
        out,
    }
}

/// Each run's value of the rule's metric, so a CI log shows which runs missed.
fn failure_detail(ev: &Evaluation, r: &RuleResult) -> String {
    let mut s = String::new();
    for (i, run) in ev.runs.iter().enumerate() {
        let v = run
            .metrics
            .get(&r.metric)
            .map(|&v| {
                let mark = if r.op.holds(v, r.threshold) {
                    "meets"
                } else {
                    "misses"
                };
                format!("{}{} ({mark})", fmt_precise(v), unit(r.unit))
            })
            .unwrap_or_else(|| "not measured".into());
        s.push_str(&format!(
            "run {} at {}: {}\n",
            i + 1,
            run.timestamp.to_rfc3339(),
            v
        ));
    }
    if r.marginal {
        s.push_str("undecided: the 95% interval of the mean straddles the threshold; more runs could change the verdict\n");
    }
    s
}

fn evidence_case(ev: &Evaluation) -> Case {
    let e = &ev.evidence;
    let advice = e.advice();
    Case {
        name: format!(
            "evidence >= {} runs over >= {} days",
            e.min_runs, e.min_days
        ),
        outcome: if e.enough {
            CaseOutcome::Passed
        } else {
            CaseOutcome::Error {
                message: format!("inconclusive: {advice}"),
            }
        },
        out: format!("{advice} (window {})", e.window),
    }
}

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let mut cases: Vec<Case> = ev.rules.iter().map(|r| rule_case(ev, r)).collect();
    if ev.scope == Scope::Report {
        cases.push(evidence_case(ev));
    }
    let failures = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Failure { .. }))
        .count();
    // An inconclusive verdict is an error however it came about (no runs at all, say).
    if ev.verdict == Verdict::Inconclusive
        && !cases
            .iter()
            .any(|c| matches!(c.outcome, CaseOutcome::Error { .. }))
    {
        cases.push(Case {
            name: "verdict".into(),
            outcome: CaseOutcome::Error {
                message: format!("inconclusive {}: {}", ev.judged_on(), ev.reason),
            },
            out: ev.reason.clone(),
        });
    }
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Skipped { .. }))
        .count();
    let errors = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Error { .. }))
        .count();
    let id = super::identity(ev);
    let policy = &ev.policy.name;
    let mut s = String::new();
    suite_start(
        &mut s,
        "iopscheck",
        policy,
        CaseCounts {
            tests: cases.len(),
            failures,
            errors,
            skipped,
        },
        ev.generated,
        Some(&id.host),
    );
    let mut props: Vec<(&str, String)> = vec![
        ("verdict", ev.verdict.as_str().to_string()),
        ("reason", ev.reason.clone()),
        ("judged_on", ev.judged_on()),
        ("policy", policy.clone()),
        ("policy.source", ev.policy.source.clone()),
        ("policy.url", ev.policy.url.clone()),
        ("host", id.host.clone()),
        ("dir", id.dir.clone()),
        ("engine", id.engine.clone()),
        ("scope", format!("{:?}", ev.scope).to_lowercase()),
        ("strict", ev.strict.to_string()),
        ("runs", ev.runs.len().to_string()),
        (
            "runs.not_counted",
            ev.not_counted
                .iter()
                .map(|n| n.runs)
                .sum::<usize>()
                .to_string(),
        ),
        ("evidence.runs", ev.evidence.runs.to_string()),
        ("days", ev.evidence.days.to_string()),
        ("evidence", ev.evidence.advice()),
        ("warnings", ev.warnings.len().to_string()),
    ];
    for d in &ev.sequential {
        props.push(("sequential.metric", d.metric.clone()));
        props.push((
            "sequential.outcome",
            d.sequence.outcome.as_str().to_string(),
        ));
        props.push(("sequential", d.figures()));
    }
    props.extend(ev.differences.iter().map(|d| ("difference", d.to_string())));
    props.extend(ev.deviations.iter().map(|d| ("deviation", d.to_string())));
    props.extend(ev.caveats.iter().map(|c| ("caveat", c.clone())));
    props.extend(
        ev.not_counted
            .iter()
            .map(|n| ("not_counted", n.to_string())),
    );
    properties(&mut s, &props);

    let classname = format!("iopscheck.{policy}");
    for c in &cases {
        testcase(&mut s, &classname, &c.name, &c.outcome, &c.out);
    }

    let log: Vec<String> = super::verdict_context(ev)
        .into_iter()
        .chain(ev.warnings.iter().map(|w| w.to_string()))
        .collect();
    suite_end(&mut s, &log, ev.verdict, &ev.judged_on(), &ev.reason);
    out.write_all(s.as_bytes())
}

/// How many test cases a suite has, and of each outcome.
pub(super) struct CaseCounts {
    pub tests: usize,
    pub failures: usize,
    pub errors: usize,
    pub skipped: usize,
}

/// Opens the document, `<testsuites name="NAME">` and the one `<testsuite>` in it, named
/// "NAME POLICY"; the counts on both. Shared with the fleet's JUnit.
pub(super) fn suite_start(
    s: &mut String,
    name: &str,
    policy: &str,
    c: CaseCounts,
    generated: chrono::DateTime<chrono::Utc>,
    hostname: Option<&str>,
) {
    let counts = format!(
        "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"0\"",
        c.tests, c.failures, c.errors, c.skipped
    );
    s.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!("<testsuites name=\"{}\" {counts}>\n", attr(name)));
    let host = hostname
        .map(|h| format!(" hostname=\"{}\"", attr(h)))
        .unwrap_or_default();
    s.push_str(&format!(
        "  <testsuite name=\"{}\" {counts} timestamp=\"{}\"{host}>\n",
        attr(&format!("{name} {policy}")),
        generated.format("%Y-%m-%dT%H:%M:%S"),
    ));
}

/// The suite's `<properties>`, one `<property>` a pair, in order (a name may repeat).
pub(super) fn properties(s: &mut String, props: &[(&str, String)]) {
    s.push_str("    <properties>\n");
    for (k, v) in props {
        s.push_str(&format!(
            "      <property name=\"{}\" value=\"{}\"/>\n",
            attr(k),
            attr(v)
        ));
    }
    s.push_str("    </properties>\n");
}

/// One `<testcase>`: its outcome, then `out` as its `<system-out>`.
pub(super) fn testcase(
    s: &mut String,
    classname: &str,
    name: &str,
    outcome: &CaseOutcome,
    out: &str,
) {
    s.push_str(&format!(
        "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n",
        attr(classname),
        attr(name)
    ));
    match outcome {
        CaseOutcome::Passed => {}
        CaseOutcome::Failure {
            message,
            kind,
            detail,
        } => s.push_str(&format!(
            "      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n",
            attr(message),
            text(detail)
        )),
        CaseOutcome::Skipped { message } => {
            s.push_str(&format!("      <skipped message=\"{}\"/>\n", attr(message)))
        }
        CaseOutcome::Error { message } => s.push_str(&format!(
            "      <error message=\"{}\" type=\"inconclusive\"/>\n",
            attr(message)
        )),
    }
    s.push_str(&format!("      <system-out>{}</system-out>\n", text(out)));
    s.push_str("    </testcase>\n");
}

/// Closes the suite: its warnings and the verdict as the suite's output, for the CI log.
/// Shared with the fleet's JUnit.
pub(super) fn suite_end(
    s: &mut String,
    warnings: &[impl std::fmt::Display],
    verdict: crate::evaluate::Verdict,
    judged_on: &str,
    reason: &str,
) {
    let mut log = String::new();
    for w in warnings {
        log.push_str(&format!("warning: {w}\n"));
    }
    log.push_str(&format!(
        "verdict: {} {judged_on} — {reason}\n",
        verdict.as_str().to_uppercase()
    ));
    s.push_str(&format!("    <system-out>{}</system-out>\n", text(&log)));
    s.push_str("  </testsuite>\n</testsuites>\n");
}
