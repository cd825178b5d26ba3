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
use crate::report::prometheus::{Family, Labels, comment_text, push_verdict};

use super::super::view_fleet::fleet_view;
use super::Fleet;

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let policy = fleet.policy.name.as_str();
    let fleet_labels = Labels::new(&[("policy", policy)]);
    let mut verdict = Family::new(
        "iopscheck_fleet_verdict",
        "Verdict of the fleet (every node must pass): 1 pass, 0 fail, NaN inconclusive.",
    );
    let mut state = Family::new(
        "iopscheck_fleet_verdict_state",
        "1 for the fleet's verdict (pass, fail or inconclusive), 0 for the others.",
    );
    push_verdict(&mut verdict, &mut state, &fleet_labels, fleet.verdict);
    let mut nodes = Family::new(
        "iopscheck_fleet_nodes",
        "Number of nodes with each verdict.",
    );
    let c = fleet.counts();
    for (v, n) in [
        (Verdict::Pass, c.pass),
        (Verdict::Fail, c.fail),
        (Verdict::Inconclusive, c.inconclusive),
    ] {
        nodes.push(&fleet_labels.with("verdict", v.as_str()), n as f64);
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
    let mut on_history = Family::new(
        "iopscheck_fleet_node_judged_on_history",
        "1 when the node's verdict is of its history (the policy's runs over days), 0 when of one sitting (a run's or an import's result).",
    );
    let mut dates = Family::new(
        "iopscheck_fleet_node_run_dates",
        "Distinct calendar dates with judged runs for the node.",
    );
    let mut last = Family::new(
        "iopscheck_fleet_node_last_run_timestamp_seconds",
        "Unix time of the node's latest judged run.",
    );
    for r in &fleet.rows {
        let base = fleet_labels
            .with("host", &r.host)
            .with("dir", &r.dir)
            .with("engine", &r.engine);
        push_verdict(&mut node_verdict, &mut node_state, &base, r.verdict);
        if let Some(h) = &fleet.head {
            let l = base.with("metric", &h.metric);
            if let Some(v) = r.value.filter(|v| v.is_finite()) {
                value.push(&l, v);
            }
            if let Some(t) = r.threshold {
                threshold.push(&l.with("op", h.op.as_str()), t);
            }
        }
        runs.push(&base, r.runs as f64);
        match r.basis() {
            crate::fleet::Basis::History => on_history.push(&base, 1.0),
            crate::fleet::Basis::Sitting => on_history.push(&base, 0.0),
            crate::fleet::Basis::Nothing => {}
        }
        dates.push(&base, r.days as f64);
        if let Some(t) = r.last_run {
            last.push(&base, t.timestamp_millis() as f64 / 1000.0);
        }
    }

    let mut s = String::new();
    let _ = writeln!(
        s,
        "# iopscheck {} fleet: policy {}, verdict {} ({}): {}",
        crate::version::VERSION,
        comment_text(policy),
        fleet.verdict,
        comment_text(&fleet.judged_on()),
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
        &on_history,
        &dates,
        &last,
    ] {
        f.write(&mut s);
    }
    out.write_all(s.as_bytes())
}
