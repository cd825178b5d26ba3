//! The fleet as JUnit XML for CI pipelines: one test suite, one test case per node, so a
//! pipeline lists the nodes and shows which failed. A failing node is a `<failure>` with its
//! reason; an inconclusive one is `<skipped>` (not a failure, but visible); a passing one
//! passes. The failure count is non-zero exactly when the fleet's verdict is fail. The fleet's
//! verdict, reason and counts are suite properties; every warning is in the suite's
//! `<system-out>`, with the verdict line last.

use std::io::{self, Write};

use crate::evaluate::Verdict;

use super::super::junit::{self, CaseOutcome};
use super::super::view_fleet::{Node, fleet_view};
use super::Fleet;
use crate::numbers::fmt_precise;

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let c = fleet.counts();
    let policy = &fleet.policy.name;
    let mut s = String::new();
    junit::suite_start(
        &mut s,
        "iopscheck fleet",
        policy,
        junit::CaseCounts {
            tests: c.total(),
            failures: c.fail,
            errors: 0,
            skipped: c.inconclusive,
        },
        fleet.generated,
        None,
    );
    let props: Vec<(&str, String)> = vec![
        ("verdict", fleet.verdict.as_str().into()),
        ("reason", fleet.reason.clone()),
        ("judged_on", fleet.judged_on()),
        ("policy", policy.clone()),
        ("policy.url", fleet.policy.url.clone()),
        ("since", fleet.since.to_rfc3339()),
        ("nodes", c.total().to_string()),
        ("pass", c.pass.to_string()),
        ("fail", c.fail.to_string()),
        ("inconclusive", c.inconclusive.to_string()),
        ("strict", fleet.strict.to_string()),
    ];
    junit::properties(&mut s, &props);

    let view = fleet_view(fleet);
    let classname = format!("iopscheck.fleet.{policy}");
    for (r, n) in fleet.rows.iter().zip(&view.nodes) {
        let outcome = match r.verdict {
            Verdict::Pass => CaseOutcome::Passed,
            Verdict::Fail => CaseOutcome::Failure {
                message: r.reason.clone(),
                kind: "fail",
                detail: detail(fleet, r, n),
            },
            Verdict::Inconclusive => CaseOutcome::Skipped {
                message: format!("inconclusive: {}", r.reason),
            },
        };
        let mut log = detail(fleet, r, n);
        for w in &r.warnings {
            log.push_str(&format!("warning: {w}\n"));
        }
        junit::testcase(&mut s, &classname, &n.label, &outcome, &log);
    }

    junit::suite_end(
        &mut s,
        &fleet.warnings,
        fleet.verdict,
        &fleet.judged_on(),
        &fleet.reason,
    );
    out.write_all(s.as_bytes())
}

/// What a CI log should show for a node: where it came from and its figures (the value as
/// precise as a message gives it, not rounded as in the table).
fn detail(fleet: &Fleet, r: &super::NodeRow, n: &Node) -> String {
    let mut s = format!(
        "{} {} on {} (engine {}), from {} {}\n",
        n.verdict_word(),
        r.host,
        n.dir.text,
        n.engine.text,
        r.source.as_str(),
        r.file
    );
    s.push_str(&format!(
        "judged on {}\n",
        r.judged_on(fleet.min_runs, fleet.min_days)
    ));
    s.push_str(&format!("runs {}, days {}", r.runs, r.days));
    if let Some(v) = r.value {
        s.push_str(&format!(
            ", {} {}{} (threshold {})",
            fleet.value_title(),
            fmt_precise(v),
            fleet
                .head
                .as_ref()
                .map(|h| format!(" {}", h.unit))
                .unwrap_or_default(),
            n.threshold.text
        ));
    }
    s.push('\n');
    s.push_str(&format!("reason: {}\n", r.reason));
    s
}
