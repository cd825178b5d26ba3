//! CSV for spreadsheets and scripts: a header, then one row per run (RFC 4180 quoting, `\n`
//! line ends).
//!
//! Columns: `timestamp` (RFC 3339), `host`, `engine`, `source`, `dir`, `policy`, then one
//! column per metric that any run has (the rules' metrics first, in the policy's order, then
//! the others sorted by name; empty where a run lacks it), then:
//!
//! - `result`: that run's own result against the deciding rules (`pass`, `fail`,
//!   `not measured`), or `not counted: REASON` for a run a report leaves out (not the policy's
//!   test, dated in the future), listed after the judged runs;
//! - `size`, `runtime`: the run's job as recorded (empty where the output did not state it);
//! - `overrides`: the flags that changed the policy's test, `--size 64m --runtime 3s`;
//! - `deviations`: how the run's test differs from the policy's, one per line;
//! - `verdict`, `reason`, `warnings`: the whole set's verdict, why, and every warning (one per
//!   line, with the deviations, caveats and runs not counted), on the first row only, so that
//!   no run's row reads as that run's verdict and each warning appears once.
//!
//! With no runs the file is the header alone.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use crate::evaluate::Evaluation;
use crate::run_index::Records;

const FIXED: [&str; 6] = ["timestamp", "host", "engine", "source", "dir", "policy"];
const AFTER: [&str; 9] = [
    "result",
    "size",
    "runtime",
    "overrides",
    "deviations",
    "verdict",
    "reason",
    "warnings",
    "judged_on",
];

/// `records` is where a run's figures it does not hold are read again (`Run::holding`).
pub fn render(ev: &Evaluation, records: &Records, out: &mut dyn Write) -> io::Result<()> {
    // A row per run: written through one buffer, each row built in one reused line.
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    let metrics = super::metric_columns(ev);
    let header: Vec<&str> = FIXED
        .iter()
        .copied()
        .chain(metrics.iter().map(String::as_str))
        .chain(AFTER)
        .collect();
    write_row(&mut out, header.iter().copied())?;

    // One warning per line: a line break inside a warning's own text would split it in two.
    let warnings: Vec<String> = super::verdict_context(ev)
        .into_iter()
        .chain(ev.warnings.iter().map(|w| w.to_string()))
        .map(|w| w.replace(['\r', '\n'], " "))
        .collect();
    let warnings = warnings.join("\n");
    let judged_on = ev.judged_on();
    let judged = ev.runs.iter().enumerate().map(|(i, r)| {
        let d = ev.run_deviations.get(i).unwrap_or("");
        (r, super::view::run_result(ev, i), d)
    });
    let excluded = ev
        .excluded
        .iter()
        .map(|(r, why)| (r, Cow::Owned(format!("not counted: {why}")), why.as_str()));
    let mut line = String::new();
    let mut text = String::new();
    // Where each metric column is in a run's figures: worked out once per list of names (runs
    // of one kind share one), not looked up by name for each of a row's 33 figures.
    let mut names: Option<&[&str]> = None;
    let mut places: Vec<Option<usize>> = Vec::with_capacity(metrics.len());
    let mut reader = records.reader();
    let mut read;
    for (i, (run, result, deviations)) in judged.chain(excluded).enumerate() {
        line.clear();
        let mut row = Row {
            line: &mut line,
            fields: 0,
        };
        row.field(&run.timestamp.to_rfc3339());
        row.field(&run.host);
        row.field(&run.engine);
        row.field(run.source.as_str());
        row.field(&run.target.dir);
        row.field(&run.policy);
        let all = if run.holds_all() {
            &run.metrics
        } else {
            read = reader.metrics(run)?;
            &read
        };
        let these = all.names();
        if !names.is_some_and(|n| std::ptr::eq(n, these)) {
            names = Some(these);
            places.clear();
            places.extend(
                metrics
                    .iter()
                    .map(|m| these.binary_search(&m.as_str()).ok()),
            );
        }
        let figures = all.figures();
        for place in &places {
            // fmt_exact of a finite figure: digits, a point and a sign, never quoted.
            row.next();
            if let Some(&v) = place.map(|k| &figures[k]).filter(|v| v.is_finite()) {
                crate::shortest::push_f64(row.line, v);
            }
        }
        row.field(&result);
        text.clear();
        if let Some(size) = run.job.size {
            write!(text, "{size}").expect("a String takes any text");
        }
        row.field(&text);
        text.clear();
        if let Some(runtime) = run.job.runtime_s {
            text.push_str(&crate::numbers::fmt_exact(runtime));
        }
        row.field(&text);
        text.clear();
        for (k, (flag, value)) in run.overrides.iter().enumerate() {
            if k > 0 {
                text.push(' ');
            }
            write!(text, "--{flag} {value}").expect("a String takes any text");
        }
        row.field(&text);
        if deviations.contains("; ") {
            row.field(&deviations.replace("; ", "\n"));
        } else {
            row.field(deviations);
        }
        let first = i == 0;
        row.field(if first { ev.verdict.as_str() } else { "" });
        row.field(if first { ev.reason.as_str() } else { "" });
        row.field(if first { warnings.as_str() } else { "" });
        row.field(if first { judged_on.as_str() } else { "" });
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}

/// A row being built: fields as [`write_row`] writes them, separated by commas.
struct Row<'a> {
    line: &'a mut String,
    fields: usize,
}

impl Row<'_> {
    /// Starts the next field, to be written straight into the line (one that needs no quotes).
    fn next(&mut self) {
        if self.fields > 0 {
            self.line.push(',');
        }
        self.fields += 1;
    }

    fn field(&mut self, s: &str) {
        self.next();
        let s = &*neutralised(s);
        if needs_quotes(s) {
            self.line.push('"');
            self.line.push_str(&s.replace('"', "\"\""));
            self.line.push('"');
        } else {
            self.line.push_str(s);
        }
    }
}

/// One row: the fields, each quoted where needed, joined by commas, ended by `\n`. The node
/// and the fleet CSV both write their rows here.
///
/// By hand rather than with the `csv` crate (a dev-dependency: the tests read these files back
/// with it): the crate quotes a field only for a separator, a quote or a line break, and
/// leaves a field's edge spaces bare, which some readers trim away.
pub(crate) fn write_row<S: AsRef<str>>(
    out: &mut dyn Write,
    fields: impl IntoIterator<Item = S>,
) -> io::Result<()> {
    let line: Vec<String> = fields.into_iter().map(|f| field(f.as_ref())).collect();
    writeln!(out, "{}", line.join(","))
}

/// A field a spreadsheet would take for a formula (OWASP's CSV injection rule: one that begins
/// with `=`, `+`, `-`, `@`, a tab or a CR), with a `'` put before it so that it is shown as
/// text. A number (`-0.5`) is left as it is: it is a figure, not a formula.
fn neutralised(s: &str) -> Cow<'_, str> {
    let risky = s
        .bytes()
        .next()
        .is_some_and(|b| matches!(b, b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'));
    if risky && !s.parse::<f64>().is_ok_and(f64::is_finite) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

fn needs_quotes(s: &str) -> bool {
    // Bytes, not chars: these are ASCII, which no byte of a longer UTF-8 character equals.
    s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        || s.starts_with(' ')
        || s.ends_with(' ')
}

/// One field, quoted when it holds a separator, a quote, a line break or edge spaces (which
/// some readers would trim); quotes inside are doubled.
pub(super) fn field(s: &str) -> String {
    let s = &*neutralised(s);
    if needs_quotes(s) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    /// Every figure as Rust's `Display` writes it (never an exponent, no `.0`), in its own
    /// column, whatever magnitude or however the runs' lists of metrics differ.
    #[test]
    fn figures_are_written_in_full_in_their_own_columns() {
        let figures = [4000.0, 1e-7, 1.5e300, -0.0, 3733.3333333333335, 1e16, 0.1];
        let records: Vec<_> = figures
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let mut r = crate::evaluate::tests::rec(&format!("2026-11-01T{i:02}:00:00Z"), 16.0);
                r.metrics.insert("zz_figure".into(), v);
                if i % 2 == 1 {
                    // Another kind of record: another list of names.
                    r.metrics.insert("aa_odd".into(), i as f64);
                }
                r
            })
            .collect();
        let ev = crate::evaluate::tests::swimlane_report(records, "2026-11-02T00:00:00Z");
        let mut out = Vec::new();
        super::render(&ev, &crate::run_index::Records::None, &mut out).unwrap();
        let mut rows = csv::Reader::from_reader(out.as_slice());
        let header = rows.headers().unwrap().clone();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (fig, odd, ts) = (col("zz_figure"), col("aa_odd"), col("timestamp"));
        let mut seen = 0;
        for row in rows.records() {
            let row = row.unwrap();
            let i: usize = row[ts][11..13].parse().unwrap();
            assert_eq!(&row[fig], format!("{}", figures[i]), "run {i}");
            let want_odd = if i % 2 == 1 {
                i.to_string()
            } else {
                String::new()
            };
            assert_eq!(row[odd], want_odd, "run {i}");
            seen += 1;
        }
        assert_eq!(seen, figures.len());
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(",0.0000001,") && !text.contains("e-7"),
            "{text}"
        );
    }

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
