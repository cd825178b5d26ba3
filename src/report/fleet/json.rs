//! The fleet as one JSON object:
//!
//! ```text
//! schema_version   1
//! tool             { name, version }
//! kind             "fleet"
//! policy           { name, description, vendor, source, url, seen, test, aggregate }
//! rule             { metric, op, threshold, unit, aggregate } of the deciding rule, or null
//! verdict          "pass" | "fail" | "inconclusive"
//! reason           one line
//! since            start of the window history files were judged over (RFC 3339)
//! counts           { nodes, pass, fail, inconclusive }
//! judged_on        which evidence the nodes' verdicts are of ("2 nodes judged on one sitting
//!                  each, 1 on its history …")
//! hosts[]          { host, dir, engine, file, source ("result"|"history"|"missing"), scope,
//!                    judged_on ("sitting"|"history"|"nothing"),
//!                    runs, days, metric, aggregate, value, op, threshold, unit, verdict,
//!                    reason, last_run, warnings[] }
//! warnings[]       strings about the set of files
//! strict, generated
//! sequential       with --until-decided only: { nodes (N, the nodes judged by a sequence),
//!                    alpha, beta (the fleet's), alpha_per_node, beta_per_node (α/N, β/N) }
//! ```

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Fleet;

pub fn to_json(fleet: &Fleet) -> Value {
    let c = fleet.counts();
    let head = fleet.head.as_ref();
    let hosts: Vec<Value> = fleet
        .rows
        .iter()
        .map(|r| {
            json!({
                "host": r.host,
                "dir": r.dir,
                "engine": r.engine,
                "file": r.file,
                "source": r.source.as_str(),
                "scope": r.scope,
                "judged_on": r.basis().as_str(),
                "runs": r.runs,
                "days": r.days,
                "metric": head.map(|h| h.metric.as_str()),
                "aggregate": head.map(|h| h.aggregate.as_str()),
                "value": r.value.filter(|v| v.is_finite()),
                "op": head.map(|h| h.op.as_str()),
                "threshold": r.threshold,
                "unit": head.map(|h| h.unit),
                "verdict": r.verdict,
                "reason": r.reason,
                "last_run": r.last_run.map(|t| t.to_rfc3339()),
                "warnings": r.warnings,
            })
        })
        .collect();
    let mut v = json!({
        "schema_version": 1,
        "tool": crate::version::TOOL,
        "kind": if fleet.of_devices { "devices" } else { "fleet" },
        "policy": fleet.policy,
        "rule": head.map(|h| json!({
            "metric": h.metric,
            "op": h.op.as_str(),
            "threshold": h.threshold,
            "unit": h.unit,
            "aggregate": h.aggregate.as_str(),
        })),
        "verdict": fleet.verdict,
        "reason": fleet.reason,
        "judged_on": fleet.judged_on(),
        "since": fleet.since.to_rfc3339(),
        "counts": {
            "nodes": c.total(),
            "pass": c.pass,
            "fail": c.fail,
            "inconclusive": c.inconclusive,
        },
        "hosts": hosts,
        "warnings": fleet.warnings,
        "strict": fleet.strict,
        "generated": fleet.generated,
    });
    if let (Some(f), Some(o)) = (fleet.family, v.as_object_mut()) {
        let (a, b) = f.per_node();
        o.insert(
            "sequential".into(),
            json!({
                "nodes": f.nodes,
                "alpha": f.alpha,
                "beta": f.beta,
                "alpha_per_node": a,
                "beta_per_node": b,
            }),
        );
    }
    v
}

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_json(fleet))?;
    out.write_all(b"\n")
}

/// The same object as [`render`], compact on one line.
pub fn render_line(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &to_json(fleet))?;
    out.write_all(b"\n")
}
