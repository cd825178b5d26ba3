//! The fleet in Prometheus text exposition (format 0.0.4), for a textfile collector on the
//! machine that gathers the nodes' results. Names start with `iopscheck_fleet_`, so they never
//! collide with the series each node exports about itself (`iopscheck_verdict`, …).
//!
//! | metric | labels | meaning |
//! | --- | --- | --- |
//! | `iopscheck_fleet_verdict` | policy | 1 pass, 0 fail, NaN inconclusive |
//! | `iopscheck_fleet_verdict_state` | policy, verdict | 1 for the fleet's verdict, 0 for the others |
//! | `iopscheck_fleet_nodes` | policy, verdict | number of nodes with each verdict |
//! | `iopscheck_fleet_node_verdict` | policy, host, dir, engine | 1 pass, 0 fail, NaN inconclusive |
//! | `iopscheck_fleet_node_verdict_state` | … , verdict | 1 for the node's verdict, 0 for the others |
//! | `iopscheck_fleet_node_value` | … , metric | the deciding rule's aggregate; absent when not measured |
//! | `iopscheck_fleet_node_threshold` | … , metric, op | the threshold the node was judged against |
//! | `iopscheck_fleet_node_runs`, `iopscheck_fleet_node_run_dates` | … | runs judged; distinct dates they ran on |
//! | `iopscheck_fleet_node_last_run_timestamp_seconds` | … | Unix time of the node's latest run |
//!
//! All are gauges without timestamps, as the textfile collector requires.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::evaluate::Verdict;
use crate::report::prometheus::{Family, comment_text, verdict_value};

use super::super::view_fleet::fleet_view;
use super::Fleet;

const VERDICTS: [Verdict; 3] = [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive];

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let policy = fleet.policy.name.as_str();
    let mut verdict = Family::new(
        "iopscheck_fleet_verdict",
        "Verdict of the fleet (every node must pass): 1 pass, 0 fail, NaN inconclusive.",
    );
    verdict.push_pairs(&[("policy", policy)], verdict_value(fleet.verdict));
    let mut state = Family::new(
        "iopscheck_fleet_verdict_state",
        "1 for the fleet's verdict (pass, fail or inconclusive), 0 for the others.",
    );
    let mut nodes = Family::new(
        "iopscheck_fleet_nodes",
        "Number of nodes with each verdict.",
    );
    let c = fleet.counts();
    for v in VERDICTS {
        state.push_pairs(
            &[("policy", policy), ("verdict", v.as_str())],
            if fleet.verdict == v { 1.0 } else { 0.0 },
        );
        let n = match v {
            Verdict::Pass => c.pass,
            Verdict::Fail => c.fail,
            Verdict::Inconclusive => c.inconclusive,
        };
        nodes.push_pairs(&[("policy", policy), ("verdict", v.as_str())], n as f64);
    }

    let mut node_verdict = Family::new(
        "iopscheck_fleet_node_verdict",
        "Verdict of one node: 1 pass, 0 fail, NaN inconclusive.",
    );
    let mut node_state = Family::new(
        "iopscheck_fleet_node_verdict_state",
        "1 for the node's verdict (pass, fail or inconclusive), 0 for the others.",
    );
    let mut value = Family::new(
        "iopscheck_fleet_node_value",
        "Aggregate (mean or median) of the deciding rule's metric across the node's runs.",
    );
    let mut threshold = Family::new(
        "iopscheck_fleet_node_threshold",
        "Threshold of the deciding rule the node was judged against.",
    );
    let mut runs = Family::new("iopscheck_fleet_node_runs", "Runs judged for the node.");
    let mut dates = Family::new(
        "iopscheck_fleet_node_run_dates",
        "Distinct calendar dates with judged runs for the node.",
    );
    let mut last = Family::new(
        "iopscheck_fleet_node_last_run_timestamp_seconds",
        "Unix time of the node's latest judged run.",
    );
    for r in &fleet.rows {
        let base = [
            ("policy", policy),
            ("host", r.host.as_str()),
            ("dir", r.dir.as_str()),
            ("engine", r.engine.as_str()),
        ];
        node_verdict.push_pairs(&base, verdict_value(r.verdict));
        for v in VERDICTS {
            let mut l = base.to_vec();
            l.push(("verdict", v.as_str()));
            node_state.push_pairs(&l, if r.verdict == v { 1.0 } else { 0.0 });
        }
        if let Some(h) = &fleet.head {
            let mut l = base.to_vec();
            l.push(("metric", h.metric.as_str()));
            if let Some(v) = r.value.filter(|v| v.is_finite()) {
                value.push_pairs(&l, v);
            }
            if let Some(t) = r.threshold {
                l.push(("op", h.op.as_str()));
                threshold.push_pairs(&l, t);
            }
        }
        runs.push_pairs(&base, r.runs as f64);
        dates.push_pairs(&base, r.days as f64);
        if let Some(t) = r.last_run {
            last.push_pairs(&base, t.timestamp_millis() as f64 / 1000.0);
        }
    }

    let mut s = String::new();
    let _ = writeln!(
        s,
        "# iopscheck {} fleet: policy {}, verdict {}: {}",
        env!("CARGO_PKG_VERSION"),
        comment_text(policy),
        fleet.verdict,
        comment_text(&fleet.reason)
    );
    for note in fleet_view(fleet).notes {
        let _ = match &note.node {
            Some(label) => writeln!(
                s,
                "# warning: {}: {}",
                comment_text(label),
                comment_text(&note.text)
            ),
            None => writeln!(s, "# warning: {}", comment_text(&note.text)),
        };
    }
    for f in [
        &verdict,
        &state,
        &nodes,
        &node_verdict,
        &node_state,
        &value,
        &threshold,
        &runs,
        &dates,
        &last,
    ] {
        f.write(&mut s);
    }
    out.write_all(s.as_bytes())
}
