//! contract.md's JSON: schema_version, tool, policy, verdict, runs[], summary, rules[],
//! warnings[], plus the evidence, per-day figures and the reason. Serialised straight from
//! the evaluation (no intermediate value tree: a year of runs is a large document).

use std::io::{self, Write};

use serde::Serialize;

use crate::evaluate::Evaluation;

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

/// The output object, in contract.md's key order, borrowing from the evaluation.
#[derive(Serialize)]
struct Out<'a> {
    schema_version: u32,
    tool: Tool,
    scope: &'a crate::evaluate::Scope,
    policy: &'a crate::evaluate::PolicyInfo,
    verdict: &'a crate::evaluate::Verdict,
    reason: &'a str,
    runs: Runs<'a>,
    summary: &'a crate::evaluate::Summary,
    rules: &'a [crate::evaluate::RuleResult],
    warnings: &'a [crate::evaluate::Warning],
    evidence: &'a crate::evaluate::EvidenceStatus,
    days: &'a [crate::evaluate::Day],
    group: &'a Option<crate::evaluate::Group>,
    differences: &'a [crate::job::ShapeDifference],
    deviations: &'a [crate::deviation::Deviation],
    caveats: &'a [String],
    not_counted: &'a [crate::evaluate::NotCounted],
    strict: bool,
    generated: &'a chrono::DateTime<chrono::Utc>,
}

/// `runs[]`: every judged run's whole record, read again one at a time from the evaluation's
/// records and written as it is read, so that a year of runs is never held whole.
struct Runs<'a>(&'a Evaluation);

impl Serialize for Runs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.0.runs.len()))?;
        let mut reader = self.0.records.reader();
        for run in &self.0.runs {
            reader
                .with_whole(run, |r| seq.serialize_element(r))
                .map_err(S::Error::custom)??;
        }
        seq.end()
    }
}

fn out(ev: &Evaluation) -> Out<'_> {
    Out {
        schema_version: 1,
        tool: Tool {
            name: "iopscheck",
            version: env!("CARGO_PKG_VERSION"),
        },
        scope: &ev.scope,
        policy: &ev.policy,
        verdict: &ev.verdict,
        reason: &ev.reason,
        runs: Runs(ev),
        summary: &ev.summary,
        rules: &ev.rules,
        warnings: &ev.warnings,
        evidence: &ev.evidence,
        days: &ev.days,
        group: &ev.group,
        differences: &ev.differences,
        deviations: &ev.deviations,
        caveats: &ev.caveats,
        not_counted: &ev.not_counted,
        strict: ev.strict,
        generated: &ev.generated,
    }
}

/// The same object as [`render`], compact on one line, ending with a newline.
pub fn render_line(ev: &Evaluation, w: &mut dyn Write) -> io::Result<()> {
    let mut buf = io::BufWriter::with_capacity(1 << 16, w);
    serde_json::to_writer(&mut buf, &out(ev))?;
    buf.write_all(b"\n")?;
    buf.flush()
}

pub fn render(ev: &Evaluation, w: &mut dyn Write) -> io::Result<()> {
    let mut buf = io::BufWriter::with_capacity(1 << 16, w);
    serde_json::to_writer_pretty(&mut buf, &out(ev))?;
    buf.write_all(b"\n")?;
    buf.flush()
}
