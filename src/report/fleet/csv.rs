//! The fleet as CSV: a header, then one row per node (RFC 4180 quoting, `\n` line ends).
//!
//! Columns: `host`, `dir`, `engine`, `file`, `source`, `scope`, `runs`, `days`, `metric`,
//! `aggregate`, `value`, `op`, `threshold`, `unit`, `verdict` (the node's), `reason`,
//! `last_run`, `warnings` (the node's, one per line; the first row also carries the
//! warnings about the set of files), `fleet_verdict` (repeated on every row, so a filtered
//! file still says what the fleet added up to), `judged_on` (`sitting`, `history` or
//! `nothing`: which evidence the node's verdict is of). With no nodes the file is the header
//! alone.

use std::io::{self, Write};

use super::Fleet;
use crate::numbers::fmt_exact;
use crate::report::csv::write_row;

const HEADER: [&str; 20] = [
    "host",
    "dir",
    "engine",
    "file",
    "source",
    "scope",
    "runs",
    "days",
    "metric",
    "aggregate",
    "value",
    "op",
    "threshold",
    "unit",
    "verdict",
    "reason",
    "last_run",
    "warnings",
    "fleet_verdict",
    "judged_on",
];

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    write_row(out, HEADER)?;
    let head = fleet.head.as_ref();
    let one_line = |s: &String| s.replace(['\r', '\n'], " ");
    for (i, r) in fleet.rows.iter().enumerate() {
        let mut warnings: Vec<String> = r.warnings.iter().map(one_line).collect();
        if i == 0 {
            warnings.extend(fleet.warnings.iter().map(one_line));
        }
        let row = [
            r.host.clone(),
            r.dir.clone(),
            r.engine.clone(),
            r.file.clone(),
            r.source.as_str().into(),
            r.scope.clone().unwrap_or_default(),
            r.runs.to_string(),
            r.days.to_string(),
            head.map(|h| h.metric.clone()).unwrap_or_default(),
            head.map(|h| h.aggregate.as_str().to_string())
                .unwrap_or_default(),
            r.value
                .filter(|v| v.is_finite())
                .map(fmt_exact)
                .unwrap_or_default(),
            head.map(|h| h.op.as_str().to_string()).unwrap_or_default(),
            r.threshold.map(fmt_exact).unwrap_or_default(),
            head.map(|h| h.unit.to_string()).unwrap_or_default(),
            r.verdict.as_str().into(),
            r.reason.clone(),
            r.last_run.map(|t| t.to_rfc3339()).unwrap_or_default(),
            warnings.join("\n"),
            fleet.verdict.as_str().into(),
            r.basis().as_str().into(),
        ];
        write_row(out, row)?;
    }
    Ok(())
}
