//! CSV for spreadsheets and scripts: a header, then one row per run (RFC 4180 quoting, `\n`
//! line ends).
//!
//! Columns: `timestamp` (RFC 3339), `host`, `engine`, `source`, `dir`, `policy`, then one
//! column per metric that any run has (the rules' metrics first, in the policy's order, then
//! the others sorted by name; empty where a run lacks it), then `verdict` and `warnings`.
//!
//! The verdict and the warnings belong to the whole set of runs, yet a CSV has only rows of
//! runs. So that any CSV reader still sees a plain rectangular table, they are columns:
//! `verdict` repeats the set's verdict on every row (a filtered or concatenated file still
//! says what its runs added up to), and `warnings` holds every warning, one per line, on the
//! first run's row only and is empty on the others, so each warning appears once. With no
//! runs the file is the header alone.

use std::io::{self, Write};

use crate::evaluate::Evaluation;

const FIXED: [&str; 6] = ["timestamp", "host", "engine", "source", "dir", "policy"];

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let metrics = super::metric_columns(ev);
    let header: Vec<&str> = FIXED
        .iter()
        .copied()
        .chain(metrics.iter().map(String::as_str))
        .chain(["verdict", "warnings"])
        .collect();
    write_row(out, header.iter().copied())?;

    // One warning per line: a line break inside a warning's own text would split it in two.
    let warnings: Vec<String> = ev
        .warnings
        .iter()
        .map(|w| w.to_string().replace(['\r', '\n'], " "))
        .collect();
    let warnings = warnings.join("\n");
    for (i, run) in ev.runs.iter().enumerate() {
        let mut row: Vec<String> = vec![
            run.timestamp.to_rfc3339(),
            run.host.clone(),
            run.engine.clone(),
            run.source.as_str().to_string(),
            run.target.dir.clone(),
            run.policy.clone(),
        ];
        row.extend(metrics.iter().map(|m| {
            run.metrics
                .get(m)
                .filter(|v| v.is_finite())
                .map(|&v| super::fmt_exact(v))
                .unwrap_or_default()
        }));
        row.push(ev.verdict.as_str().to_string());
        row.push(if i == 0 {
            warnings.clone()
        } else {
            String::new()
        });
        write_row(out, row.iter().map(String::as_str))?;
    }
    Ok(())
}

fn write_row<'a>(out: &mut dyn Write, fields: impl Iterator<Item = &'a str>) -> io::Result<()> {
    let line: Vec<String> = fields.map(field).collect();
    writeln!(out, "{}", line.join(","))
}

/// One field, quoted when it holds a separator, a quote, a line break or edge spaces (which
/// some readers would trim); quotes inside are doubled.
fn field(s: &str) -> String {
    let needs = s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ');
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("node1"), "node1");
        assert_eq!(field("/data,1"), "\"/data,1\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("a\nb"), "\"a\nb\"");
        assert_eq!(field(" x"), "\" x\"");
        assert_eq!(field(""), "");
    }
}
