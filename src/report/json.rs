//! contract.md's JSON: schema_version, tool, policy, verdict, runs[], summary, rules[],
//! warnings[], plus the evidence, per-day figures and the reason.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::evaluate::Evaluation;

pub fn to_json(ev: &Evaluation) -> Value {
    json!({
        "schema_version": 1,
        "tool": { "name": "iopscheck", "version": env!("CARGO_PKG_VERSION") },
        "scope": ev.scope,
        "policy": ev.policy,
        "verdict": ev.verdict,
        "reason": ev.reason,
        "runs": ev.runs,
        "summary": ev.summary,
        "rules": ev.rules,
        "warnings": ev.warnings,
        "evidence": ev.evidence,
        "days": ev.days,
        "group": ev.group,
        "differences": ev.differences,
        "strict": ev.strict,
        "generated": ev.generated,
    })
}

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_json(ev))?;
    out.write_all(b"\n")
}
