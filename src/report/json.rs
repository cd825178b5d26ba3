//! contract.md's JSON: schema_version, tool, policy, verdict, runs[], summary, rules[],
//! warnings[], plus the evidence, per-day figures and the reason. Serialised straight from
//! the evaluation (no intermediate value tree: a year of runs is a large document).

use std::io::{self, Write};

use serde::Serialize;

use crate::evaluate::Evaluation;
use crate::run_index::Records;

/// The output object, in contract.md's key order, borrowing from the evaluation: the keys
/// before `runs`, then `runs[]` (written record by record, see [`write_runs`]), then the rest.
#[derive(Serialize)]
struct Head<'a> {
    schema_version: u32,
    tool: crate::version::Tool,
    scope: &'a crate::evaluate::Scope,
    policy: &'a crate::evaluate::PolicyInfo,
    verdict: &'a crate::evaluate::Verdict,
    reason: &'a str,
    judged_on: String,
}

#[derive(Serialize)]
struct Tail<'a> {
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
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    bursts: &'a [crate::evaluate::Burst],
    sequential: &'a [crate::evaluate::sequential::Decision],
    #[serde(skip_serializing_if = "Option::is_none")]
    narrowed: &'a Option<crate::hold::Narrowed>,
}

fn head(ev: &Evaluation) -> Head<'_> {
    Head {
        schema_version: 1,
        tool: crate::version::TOOL,
        scope: &ev.scope,
        policy: &ev.policy,
        verdict: &ev.verdict,
        reason: &ev.reason,
        judged_on: ev.judged_on(),
    }
}

fn tail(ev: &Evaluation) -> Tail<'_> {
    Tail {
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
        bursts: &ev.bursts,
        sequential: &ev.sequential,
        narrowed: &ev.narrowed,
    }
}

/// The whole object, as serde_json writes one struct of every key in this order: the head's
/// object without its closing brace, `runs`, then the tail's object without its opening one.
fn write(ev: &Evaluation, records: &Records, w: &mut dyn Write, pretty: bool) -> io::Result<()> {
    let mut buf = io::BufWriter::with_capacity(1 << 16, w);
    // The head is a few lines; the tail holds each rule's per-run marks, a year of runs long:
    // it is written as it is made, never gathered.
    let head = if pretty {
        serde_json::to_vec_pretty(&head(ev))?
    } else {
        serde_json::to_vec(&head(ev))?
    };
    // "{...\n}" and "{\n  ...": neither is empty, so each has its brace to drop.
    let close = if pretty { 2 } else { 1 };
    buf.write_all(&head[..head.len() - close])?;
    buf.write_all(if pretty {
        b",\n  \"runs\": ["
    } else {
        b",\"runs\":["
    })?;
    write_runs(ev, records, &mut buf, pretty)?;
    buf.write_all(b",")?;
    let mut rest = WithoutFirstByte {
        out: &mut buf,
        first: true,
    };
    if pretty {
        serde_json::to_writer_pretty(&mut rest, &tail(ev))?;
    } else {
        serde_json::to_writer(&mut rest, &tail(ev))?;
    }
    buf.write_all(b"\n")?;
    buf.flush()
}

/// Passes on what is written to it but its first byte: the tail's object without its opening
/// brace.
struct WithoutFirstByte<W> {
    out: W,
    first: bool,
}

impl<W: Write> Write for WithoutFirstByte<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.first && !data.is_empty() {
            self.first = false;
            self.out.write_all(&data[1..])?;
            return Ok(data.len());
        }
        self.out.write(data)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `runs[]`'s elements and closing bracket: every judged run's whole record, read again one at
/// a time from `records` and written as it is read, so that a year of runs is
/// never held whole. Each record is written into one reused buffer, indented as serde_json's
/// pretty printer would at this depth (the object's keys at two levels: [`Indent`]), then
/// passed on in one piece.
fn write_runs(
    ev: &Evaluation,
    records: &Records,
    out: &mut impl Write,
    pretty: bool,
) -> io::Result<()> {
    let mut reader = records.reader();
    let mut one: Vec<u8> = Vec::with_capacity(1 << 14);
    for (i, run) in ev.runs.iter().enumerate() {
        one.clear();
        one.extend_from_slice(match (i, pretty) {
            (0, true) => b"\n    ",
            (_, true) => b",\n    ",
            (0, false) => b"",
            (_, false) => b",",
        });
        reader.with_whole(run, |r| {
            if pretty {
                let mut s = serde_json::Serializer::with_formatter(&mut one, Indent::at(2));
                r.serialize(&mut s)
            } else {
                r.serialize(&mut serde_json::Serializer::new(&mut one))
            }
        })??;
        out.write_all(&one)?;
    }
    out.write_all(match (ev.runs.is_empty(), pretty) {
        (false, true) => b"\n  ]",
        _ => b"]",
    })
}

/// serde_json's `PrettyFormatter` (two spaces a level), starting at a given depth, and writing
/// each line break and its indentation in one piece rather than a write per level.
struct Indent {
    level: usize,
    has_value: bool,
}

/// A line break, then spaces for [`Indent`]'s deepest usual levels.
const BREAK: &[u8; 65] = b"\n                                                                ";

impl Indent {
    fn at(level: usize) -> Indent {
        Indent {
            level,
            has_value: false,
        }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        let spaces = 2 * self.level;
        if spaces < BREAK.len() {
            w.write_all(&BREAK[..1 + spaces])
        } else {
            w.write_all(b"\n")?;
            for _ in 0..self.level {
                w.write_all(b"  ")?;
            }
            Ok(())
        }
    }
}

impl Indent {
    /// `[` or `{`: one level deeper, nothing in it yet.
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    /// `]` or `}`: on a line of its own when the array or object holds anything.
    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    /// Before an element or a key: a comma after the first, then a new line.
    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }
}

impl serde_json::ser::Formatter for Indent {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// The same object as [`render`], compact on one line, ending with a newline.
pub fn render_line(ev: &Evaluation, records: &Records, w: &mut dyn Write) -> io::Result<()> {
    write(ev, records, w, false)
}

pub fn render(ev: &Evaluation, records: &Records, w: &mut dyn Write) -> io::Result<()> {
    write(ev, records, w, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Record;

    /// What the document was before it was written in pieces: one struct of every key, its
    /// runs the records themselves, serialised by serde_json whole.
    #[derive(Serialize)]
    struct Whole<'a> {
        #[serde(flatten)]
        head: Head<'a>,
        runs: Vec<Record>,
        #[serde(flatten)]
        tail: Tail<'a>,
    }

    fn evaluation(n: usize) -> (Evaluation, Records) {
        let mut records: Vec<Record> = (0..n)
            .map(|i| {
                let ts = format!("2026-11-01T{:02}:{:02}:00Z", i / 60, i % 60);
                crate::evaluate::tests::rec(&ts, 15.0 + i as f64 / 7.0)
            })
            .collect();
        if let Some(r) = records.first_mut() {
            // Strings with escapes, a figure in exponent form, an override: every kind of value.
            r.host = "nœud \"1\"\\\t/é\u{1}".into();
            r.metrics.insert("tiny".into(), 1.5e-9);
            r.metrics.insert("huge".into(), 2.5e300);
            r.overrides = [("size".to_string(), "64m".to_string())].into();
        }
        crate::evaluate::tests::swimlane_report_held(records, "2026-11-02T00:00:00Z")
    }

    type Render = fn(&Evaluation, &Records, &mut dyn Write) -> io::Result<()>;

    fn text(f: Render, ev: &Evaluation, records: &Records) -> String {
        let mut out = Vec::new();
        f(ev, records, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_document_written_in_pieces_is_the_one_serde_json_writes_whole() {
        for n in [0, 1, 5] {
            let (ev, records) = evaluation(n);
            let mut reader = records.reader();
            let runs: Vec<Record> = ev
                .runs
                .iter()
                .map(|r| reader.with(r, Record::clone).unwrap())
                .collect();
            assert_eq!(runs.len(), n);
            let whole = Whole {
                head: head(&ev),
                runs,
                tail: tail(&ev),
            };
            let pretty = serde_json::to_string_pretty(&whole).unwrap() + "\n";
            assert_eq!(text(render, &ev, &records), pretty, "{n} runs");
            let line = serde_json::to_string(&whole).unwrap() + "\n";
            assert_eq!(text(render_line, &ev, &records), line, "{n} runs");
        }
    }

    #[test]
    fn the_indentation_is_serde_jsons_at_any_depth() {
        let v = serde_json::json!({
            "a": [], "b": {}, "c": [[], {}, [1, [2, {"d": {}}]]],
            "e": {"f": [{"g": null}], "h": "x,\n{}[]:\""}, "i": 1.5
        });
        for level in [0, 1, 2, 40] {
            let mut mine = Vec::new();
            let mut s = serde_json::Serializer::with_formatter(&mut mine, Indent::at(level));
            v.serialize(&mut s).unwrap();
            let mut theirs = Vec::new();
            let pad = "  ".repeat(level);
            let mut s = serde_json::Serializer::with_formatter(
                &mut theirs,
                serde_json::ser::PrettyFormatter::with_indent(b"  "),
            );
            v.serialize(&mut s).unwrap();
            let theirs = String::from_utf8(theirs)
                .unwrap()
                .replace('\n', &format!("\n{pad}"));
            assert_eq!(String::from_utf8(mine).unwrap(), theirs, "level {level}");
        }
    }
}
