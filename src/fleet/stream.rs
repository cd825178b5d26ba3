//! A node's input read as it streams in: `kubectl logs --prefix --timestamps` of many pods
//! (each printing its result with `--format jsonl`), results one after another (`cat *.json`,
//! pretty or not), history records, or all of them mixed. [`split`] cuts it into JSON objects
//! and other lines in one pass, holding one line (or one pretty-printed object) at a time;
//! [`dedupe`] counts a node given more than once once.
//!
//! A pretty-printed object is gathered from a line that is `{` alone to the next line that
//! starts with `}`; the lines between are indented, as every JSON pretty-printer writes them.
//! A line that starts at its first column with anything else ends the gathering: a torn
//! object never swallows the lines after it (a history's next record, a pod's next line).

use std::collections::BTreeMap;
use std::io::BufRead;

use super::{NodeRow, RowSource};
use crate::history::{Line, for_each_line};

/// The largest object (one result, pretty or on one line) held at once; a larger one is named
/// and passed over. A node's result over a week is tens of KiB; a year of runs a few MiB.
pub const MAX_OBJECT: usize = 64 << 20;

/// One piece of the input.
#[derive(Debug, PartialEq)]
pub enum Unit<'a> {
    /// A JSON object's text (as far as its braces tell: the reader parses it), from the line
    /// it starts on: one line's, or the lines of a pretty-printed object.
    Object { line: usize, text: &'a [u8] },
    /// A line that is not a JSON object, as it was read (prefix and all).
    Other { line: usize, text: &'a [u8] },
    /// Lines passed over unread, and why.
    Unread {
        first: usize,
        last: usize,
        why: String,
    },
}

/// What the whole input was, once split.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Some line carried a `kubectl logs` prefix (`[pod/NAME/CONTAINER] `) or timestamp.
    pub prefixed: bool,
    /// Lines read.
    pub lines: usize,
    /// Bytes copied to gather pretty-printed objects (each input byte at most once).
    pub gathered: u64,
}

/// An object being gathered line by line.
struct Pending {
    line: usize,
    /// The log prefix its lines carry (each of its lines must carry the same).
    prefix: Option<Vec<u8>>,
    text: Vec<u8>,
    /// Past [`MAX_OBJECT`]: no longer held, only followed to its end.
    too_large: bool,
}

/// Splits `reader` into [`Unit`]s, calling `each` with every one in order. One pass; a line
/// longer than `max_object` bytes is passed over as it is read, and an object is held only
/// up to `max_object` bytes.
pub fn split(
    reader: impl BufRead,
    max_object: usize,
    mut each: impl FnMut(Unit<'_>),
) -> std::io::Result<Split> {
    let mut s = Split::default();
    let mut pending: Option<Pending> = None;
    let too_large = |what: &str| format!("{what} larger than {} MiB, not read", max_object >> 20);
    for_each_line(reader, max_object, |n, line| {
        s.lines = n;
        let raw = match line {
            // A byte-order mark some editors put first is not part of the line.
            Line::Text(t) if n == 1 => t.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(t),
            Line::Text(t) => t,
            Line::TooLong => {
                if let Some(p) = pending.take() {
                    each(unfinished(&p, n - 1));
                }
                each(Unit::Unread {
                    first: n,
                    last: n,
                    why: too_large("a line"),
                });
                return;
            }
        };
        let LogLine {
            pod: prefix,
            timestamped,
            content,
        } = strip_log_prefix(raw);
        s.prefixed |= prefix.is_some() || timestamped;
        if let Some(p) = &mut pending {
            let same_source = p.prefix.as_deref() == prefix;
            match content.first() {
                // Its closing brace: the object ends; what follows on the line is read afresh.
                Some(b'}') if same_source => {
                    let p = pending.take().expect("pending");
                    if p.too_large {
                        each(Unit::Unread {
                            first: p.line,
                            last: n,
                            why: too_large("a JSON object"),
                        });
                    } else {
                        let mut text = p.text;
                        text.push(b'}');
                        s.gathered += 1;
                        each(Unit::Object {
                            line: p.line,
                            text: &text,
                        });
                    }
                    fresh(n, raw, prefix, &content[1..], &mut pending, &mut each);
                    return;
                }
                // An indented line (or a blank one) of the object.
                None | Some(b' ' | b'\t' | b'\r') if same_source => {
                    if !p.too_large {
                        if p.text.len() + content.len() + 1 > max_object {
                            p.too_large = true;
                            p.text = Vec::new();
                        } else {
                            p.text.extend_from_slice(content);
                            p.text.push(b'\n');
                            s.gathered += content.len() as u64 + 1;
                        }
                    }
                    return;
                }
                // Anything else where the object's next line should be: it was torn.
                _ => {
                    let p = pending.take().expect("pending");
                    each(unfinished(&p, n - 1));
                }
            }
        }
        fresh(n, raw, prefix, content, &mut pending, &mut each);
    })?;
    if let Some(p) = pending.take() {
        each(unfinished(&p, s.lines));
    }
    Ok(s)
}

/// A line (or what is left of one after an object's closing brace) read on its own: an
/// object on one line, the `{` that starts a pretty-printed one, or another line.
fn fresh(
    n: usize,
    raw: &[u8],
    prefix: Option<&[u8]>,
    content: &[u8],
    pending: &mut Option<Pending>,
    each: &mut impl FnMut(Unit<'_>),
) {
    let text = content.trim_ascii();
    match text.first() {
        None => {}
        Some(b'{') if text.len() == 1 && content.first() == Some(&b'{') => {
            *pending = Some(Pending {
                line: n,
                prefix: prefix.map(<[u8]>::to_vec),
                text: b"{\n".to_vec(),
                too_large: false,
            });
        }
        Some(b'{') => each(Unit::Object { line: n, text }),
        Some(_) => each(Unit::Other { line: n, text: raw }),
    }
}

/// The lines of an object that never reached its closing brace.
fn unfinished(p: &Pending, last: usize) -> Unit<'static> {
    Unit::Unread {
        first: p.line,
        last: last.max(p.line),
        why: "a JSON object that does not end (no closing brace at the start of a line)".into(),
    }
}

/// What `kubectl logs` put before a container's line, taken off: `--prefix`'s
/// `[pod/NAME/CONTAINER] ` (a bracketed word without spaces or quotes, then one space) and
/// `--timestamps`' RFC 3339 time and one space, either or both.
#[derive(Debug, PartialEq)]
pub struct LogLine<'a> {
    /// The pod and container, `pod/NAME/CONTAINER`.
    pub pod: Option<&'a [u8]>,
    pub timestamped: bool,
    /// The container's own line.
    pub content: &'a [u8],
}

pub fn strip_log_prefix(line: &[u8]) -> LogLine<'_> {
    let mut out = LogLine {
        pod: None,
        timestamped: false,
        content: line,
    };
    if let Some(inner) = line.strip_prefix(b"[")
        && let Some(end) = memchr::memchr2(b']', b' ', &inner[..inner.len().min(512)])
        && inner[end] == b']'
        && inner.get(end + 1) == Some(&b' ')
    {
        let word = &inner[..end];
        if !word.is_empty() && !word.iter().any(|b| matches!(b, b'"' | b'{' | b'[')) {
            out.pod = Some(word);
            out.content = &inner[end + 2..];
        }
    }
    let rest = out.content;
    if rest.first().is_some_and(u8::is_ascii_digit)
        && let Some(space) = memchr::memchr(b' ', &rest[..rest.len().min(48)])
        && std::str::from_utf8(&rest[..space])
            .is_ok_and(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok())
    {
        out.timestamped = true;
        out.content = &rest[space + 1..];
    }
    out
}

/// Counts each node once. Rows of the same host, directory and engine are one node: the row
/// with the newest run is kept (on a tie, the one given later), and a warning names the rows
/// left out. A row without a directory (a history with no runs in the window) is left out
/// when the same host has a row with one. Missing-host rows are added after this.
pub fn dedupe(rows: Vec<NodeRow>) -> (Vec<NodeRow>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut keep: Vec<Option<NodeRow>> = Vec::with_capacity(rows.len());
    let mut by_node: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut dropped: BTreeMap<usize, Vec<NodeRow>> = BTreeMap::new();
    for row in rows {
        let key = (row.host.clone(), row.dir.clone(), row.engine.clone());
        match by_node.get(&key) {
            Some(&i) => {
                let kept = keep[i].take().expect("a kept row");
                let (winner, loser) = if row.last_run >= kept.last_run {
                    (row, kept)
                } else {
                    (kept, row)
                };
                keep[i] = Some(winner);
                dropped.entry(i).or_default().push(loser);
            }
            None => {
                by_node.insert(key, keep.len());
                keep.push(Some(row));
            }
        }
    }
    for (i, losers) in dropped {
        let w = keep[i].as_ref().expect("a kept row");
        let when = |r: &NodeRow| match r.last_run {
            Some(t) => format!("newest run {}", t.format("%Y-%m-%d %H:%M:%S %:z")),
            None => "no runs".into(),
        };
        let left: Vec<String> = losers
            .iter()
            .map(|r| format!("{} ({})", r.file, when(r)))
            .collect();
        let node = [w.host.as_str(), w.dir.as_str(), w.engine.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        warnings.push(format!(
            "{node} is given {} times and counted once: {} ({}) decides, the newest; left out: {}",
            losers.len() + 1,
            w.file,
            when(w),
            left.join(", ")
        ));
    }
    let rows: Vec<NodeRow> = keep.into_iter().flatten().collect();
    let with_dir: std::collections::BTreeSet<String> = rows
        .iter()
        .filter(|r| !r.dir.is_empty() && r.source != RowSource::Missing)
        .map(|r| r.host.clone())
        .collect();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        if r.dir.is_empty() && r.source != RowSource::Missing && with_dir.contains(&r.host) {
            warnings.push(format!(
                "{}: {} has no runs of the policy in the window, but other inputs have; it is left out",
                r.host, r.file
            ));
        } else {
            out.push(r);
        }
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;
    use crate::fleet::tests::row;

    /// The units of `text`, as (kind, first line, text) for objects and other lines and
    /// (kind, first line, last line) for lines passed over.
    fn units(text: &str, max: usize) -> (Vec<(String, usize, String)>, Split) {
        let mut v = Vec::new();
        let s = split(text.as_bytes(), max, |u| {
            v.push(match u {
                Unit::Object { line, text } => {
                    ("object".into(), line, String::from_utf8_lossy(text).into())
                }
                Unit::Other { line, text } => {
                    ("other".into(), line, String::from_utf8_lossy(text).into())
                }
                Unit::Unread { first, last, .. } => ("unread".into(), first, last.to_string()),
            })
        })
        .unwrap();
        (v, s)
    }

    fn u(kind: &str, line: usize, text: &str) -> (String, usize, String) {
        (kind.into(), line, text.into())
    }

    #[test]
    fn kubectl_prefixes_and_timestamps_come_off_and_only_theirs() {
        let l = strip_log_prefix(b"[pod/iopscheck-x/iopscheck] {\"a\":1}");
        assert_eq!(
            (l.pod, l.timestamped, l.content),
            (
                Some(&b"pod/iopscheck-x/iopscheck"[..]),
                false,
                &b"{\"a\":1}"[..]
            )
        );
        let l = strip_log_prefix(b"[pod/a/c] 2026-12-01T10:00:00.123456789Z {\"a\":1}");
        assert_eq!(
            (l.pod, l.timestamped, l.content),
            (Some(&b"pod/a/c"[..]), true, &b"{\"a\":1}"[..])
        );
        let l = strip_log_prefix(b"2026-12-01T10:00:00Z {}");
        assert_eq!((l.pod, l.timestamped, l.content), (None, true, &b"{}"[..]));
        for kept in [
            &b"{\"a\":1}"[..],
            b"[1, 2] x",
            b"[] x",
            b"2026-12-01 10:00:00 x",
            b"[\"a\"] x",
        ] {
            let l = strip_log_prefix(kept);
            assert_eq!((l.pod, l.timestamped, l.content), (None, false, kept));
        }
    }

    #[test]
    fn a_stream_splits_into_objects_and_other_lines() {
        let text = "[pod/a/c] iopscheck: note: io_uring refused\n\
                    [pod/a/c] {\"verdict\":\"pass\"}\n\
                    \n\
                    [pod/b/c] 2026-12-01T10:00:00.1Z {\"timestamp\":\"x\"}\n";
        let (v, s) = units(text, 1 << 20);
        assert!(s.prefixed);
        assert_eq!(
            v,
            [
                u("other", 1, "[pod/a/c] iopscheck: note: io_uring refused"),
                u("object", 2, "{\"verdict\":\"pass\"}"),
                u("object", 4, "{\"timestamp\":\"x\"}"),
            ]
        );
        assert_eq!(s.lines, 4);
        // A byte-order mark before the first line.
        let (v, _) = units("\u{feff}{\"a\":1}\n", 1 << 20);
        assert_eq!(v, [u("object", 1, "{\"a\":1}")]);
    }

    #[test]
    fn pretty_objects_are_gathered_one_after_another() {
        let one = "{\n  \"verdict\": \"pass\",\n  \"runs\": [\n    {\"a\": \"}\"}\n  ]\n}\n";
        // `cat a.json b.json`, and a file without its last newline before the next one.
        let text = format!("{one}{}{{\n  \"x\": 1\n}}", one.trim_end());
        let (v, s) = units(&text, 1 << 20);
        assert!(!s.prefixed);
        let starts: Vec<(String, usize)> = v.iter().map(|(k, l, _)| (k.clone(), *l)).collect();
        assert_eq!(
            starts,
            [
                ("object".to_string(), 1),
                ("object".to_string(), 7),
                ("object".to_string(), 12)
            ]
        );
        for (_, _, t) in &v {
            serde_json::from_str::<serde_json::Value>(t).unwrap();
        }
    }

    #[test]
    fn a_torn_object_never_swallows_the_lines_after_it() {
        // A pretty object cut short, then a history line, then a pod's pretty result.
        let text = "{\n  \"verdict\": \"pa\n{\"timestamp\":1}\n\
                    [pod/a/c] {\n[pod/a/c]   \"x\": 1\n[pod/b/c] {\"y\":2}\n[pod/a/c] }\n";
        let (v, _) = units(text, 1 << 20);
        assert_eq!(
            v,
            [
                u("unread", 1, "2"),
                u("object", 3, "{\"timestamp\":1}"),
                u("unread", 4, "5"),
                u("object", 6, "{\"y\":2}"),
                u("other", 7, "[pod/a/c] }"),
            ]
        );
        // The same pod's pretty result, line by line, is one object.
        let (v, _) = units(
            "[pod/a/c] {\n[pod/a/c] 2026-12-01T10:00:00Z   \"x\": 1\n[pod/a/c] }\n",
            1 << 20,
        );
        assert_eq!(v, [u("object", 1, "{\n  \"x\": 1\n}")]);
        // Unfinished at the end of the input.
        let (v, _) = units("{\n  \"x\": 1\n", 1 << 20);
        assert_eq!(v, [u("unread", 1, "2")]);
    }

    #[test]
    fn what_is_too_large_to_hold_is_passed_over_and_named() {
        let big = format!(
            "{{\n{}  \"z\": 0\n}}\n{{\"y\":1}}\n",
            "  \"k\": 12345,\n".repeat(10)
        );
        let (v, _) = units(&big, 64);
        assert_eq!(v, [u("unread", 1, "13"), u("object", 14, "{\"y\":1}")]);
        let long = format!("{{\"x\": \"{}\"}}\n{{\"y\":1}}\n", "a".repeat(100));
        let (v, _) = units(&long, 64);
        assert_eq!(v, [u("unread", 1, "1"), u("object", 2, "{\"y\":1}")]);
    }

    #[test]
    fn the_same_node_twice_counts_once_and_the_newest_decides() {
        let t = |h: i64| Some((chrono::Utc::now() - chrono::Duration::hours(h)).fixed_offset());
        let mut old = row("node1", Verdict::Fail, 2000.0);
        old.last_run = t(48);
        old.file = "old.json".into();
        let mut new = row("node1", Verdict::Pass, 4000.0);
        new.last_run = t(1);
        new.file = "new.json".into();
        let other = row("node2", Verdict::Pass, 4000.0);
        for order in [[old.clone(), new.clone()], [new.clone(), old.clone()]] {
            let mut rows = order.to_vec();
            rows.push(other.clone());
            let (rows, w) = dedupe(rows);
            assert_eq!(rows.len(), 2);
            assert_eq!(rows[0].file, "new.json");
            assert_eq!(rows[0].verdict, Verdict::Pass);
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(
                w[0].contains("counted once") && w[0].contains("old.json"),
                "{w:?}"
            );
        }
        // Two directories of one host are two nodes' worth of evidence, both kept.
        let mut elsewhere = row("node1", Verdict::Pass, 4000.0);
        elsewhere.dir = "/other".into();
        let (rows, w) = dedupe(vec![new.clone(), elsewhere]);
        assert_eq!((rows.len(), w.len()), (2, 0));
    }
}
