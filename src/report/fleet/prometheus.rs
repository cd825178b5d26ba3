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
use crate::report::fmt_exact;

use super::Fleet;

/// One family: HELP and TYPE, then its samples.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(String, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: vec![],
        }
    }
    fn push(&mut self, labels: &[(&str, &str)], value: f64) {
        let parts: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", label_value(v)))
            .collect();
        self.samples
            .push((format!("{{{}}}", parts.join(",")), value));
    }
    fn write(&self, s: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let _ = writeln!(s, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(s, "# TYPE {} gauge", self.name);
        for (labels, v) in &self.samples {
            let _ = writeln!(s, "{}{} {}", self.name, labels, fmt_exact(*v));
        }
    }
}

fn verdict_value(v: Verdict) -> f64 {
    match v {
        Verdict::Pass => 1.0,
        Verdict::Fail => 0.0,
        Verdict::Inconclusive => f64::NAN,
    }
}

const VERDICTS: [Verdict; 3] = [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive];

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let policy = fleet.policy.name.as_str();
    let mut verdict = Family::new(
        "iopscheck_fleet_verdict",
        "Verdict of the fleet (every node must pass): 1 pass, 0 fail, NaN inconclusive.",
    );
    verdict.push(&[("policy", policy)], verdict_value(fleet.verdict));
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
        state.push(
            &[("policy", policy), ("verdict", v.as_str())],
            if fleet.verdict == v { 1.0 } else { 0.0 },
        );
        let n = match v {
            Verdict::Pass => c.pass,
            Verdict::Fail => c.fail,
            Verdict::Inconclusive => c.inconclusive,
        };
        nodes.push(&[("policy", policy), ("verdict", v.as_str())], n as f64);
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
        node_verdict.push(&base, verdict_value(r.verdict));
        for v in VERDICTS {
            let mut l = base.to_vec();
            l.push(("verdict", v.as_str()));
            node_state.push(&l, if r.verdict == v { 1.0 } else { 0.0 });
        }
        if let Some(h) = &fleet.head {
            let mut l = base.to_vec();
            l.push(("metric", h.metric.as_str()));
            if let Some(v) = r.value.filter(|v| v.is_finite()) {
                value.push(&l, v);
            }
            if let Some(t) = r.threshold {
                l.push(("op", h.op.as_str()));
                threshold.push(&l, t);
            }
        }
        runs.push(&base, r.runs as f64);
        dates.push(&base, r.days as f64);
        if let Some(t) = r.last_run {
            last.push(&base, t.timestamp_millis() as f64 / 1000.0);
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
    for r in &fleet.rows {
        for w in &r.warnings {
            let _ = writeln!(
                s,
                "# warning: {}: {}",
                comment_text(&r.label(fleet)),
                comment_text(w)
            );
        }
    }
    for w in &fleet.warnings {
        let _ = writeln!(s, "# warning: {}", comment_text(w));
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

/// A label value: backslash, double quote and line feed escaped, as the format requires.
fn label_value(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A comment stays on one line.
fn comment_text(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn label_values_are_escaped() {
        assert_eq!(super::label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
