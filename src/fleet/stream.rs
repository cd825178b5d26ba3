//! A stream of node outputs (`kubectl logs --prefix` of many pods, each printing its result
//! with `--format jsonl`): how it splits into results and history records, and how the same
//! node given more than once is counted once.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{NodeRow, RowSource};

/// What a stream holds: the results and history records in it, and the lines that are neither.
#[derive(Debug, Default)]
pub struct Stream {
    /// Results (`--format json`/`jsonl` objects), with the line they start on.
    pub results: Vec<(usize, Map<String, Value>)>,
    /// The history records, one per line, as a history file would hold them.
    pub records: Vec<u8>,
    /// Lines that are not an iopscheck result or record: (line number, the line's text).
    pub other: Vec<(usize, String)>,
    /// Fleets' own results in the stream, by line: left out.
    pub fleets: Vec<usize>,
    /// Some line carried a `kubectl logs --prefix` prefix.
    pub prefixed: bool,
}

impl Stream {
    /// Splits a stream: first as concatenated JSON objects (`cat *.json`, pretty or not), else
    /// line by line, each line's `[pod/NAME/CONTAINER] ` prefix taken off.
    pub fn split(bytes: &[u8]) -> Stream {
        let mut s = Stream::default();
        if let Some(docs) = concatenated(bytes) {
            for (line, doc) in docs {
                s.add(line, doc, None);
            }
            return s;
        }
        for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let line_no = i + 1;
            let text = String::from_utf8_lossy(raw);
            let (prefix, rest) = strip_prefix(&text);
            s.prefixed |= prefix.is_some();
            let rest = rest.trim();
            if rest.is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(rest) {
                Ok(Value::Object(obj)) => s.add(line_no, obj, Some(rest)),
                _ => s.other.push((line_no, text.trim_end().to_string())),
            }
        }
        s
    }

    fn add(&mut self, line: usize, obj: Map<String, Value>, text: Option<&str>) {
        if is_record(&obj) {
            match text {
                Some(t) => self.records.extend_from_slice(t.as_bytes()),
                None => self.records.extend(
                    serde_json::to_vec(&Value::Object(obj)).expect("a JSON value serialises"),
                ),
            }
            self.records.push(b'\n');
        } else if obj.get("kind").and_then(|k| k.as_str()) == Some("fleet") {
            self.fleets.push(line);
        } else if obj.contains_key("verdict") && obj.contains_key("policy") {
            self.results.push((line, obj));
        } else {
            let shown = serde_json::to_string(&Value::Object(obj)).unwrap_or_default();
            self.other.push((line, shown));
        }
    }
}

/// Whether the bytes may hold results or `kubectl logs --prefix` lines: some line starts with
/// `[`, or the text has a `"verdict"` key somewhere. A history has neither.
pub fn may_be_stream(bytes: &[u8]) -> bool {
    const KEY: &[u8] = b"\"verdict\"";
    bytes.first() == Some(&b'[')
        || bytes.windows(2).any(|w| w == b"\n[")
        || bytes.windows(KEY.len()).any(|w| w == KEY)
}

/// A history record rather than a result: it has a timestamp and metrics.
pub fn is_record(obj: &Map<String, Value>) -> bool {
    obj.contains_key("timestamp") && obj.contains_key("metrics")
}

/// The objects of a text made only of JSON objects one after another (at least two), with the
/// line each starts on; `None` when anything else is in it.
fn concatenated(bytes: &[u8]) -> Option<Vec<(usize, Map<String, Value>)>> {
    let mut docs = Vec::new();
    let mut it = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    loop {
        let start = it.byte_offset();
        match it.next() {
            None => break,
            Some(Ok(Value::Object(obj))) => {
                let skipped_ws = bytes[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
                let at = start + skipped_ws;
                let line = 1 + bytes[..at].iter().filter(|b| **b == b'\n').count();
                docs.push((line, obj));
            }
            Some(_) => return None,
        }
    }
    (docs.len() >= 2).then_some(docs)
}

/// Takes off `kubectl logs --prefix`'s `[pod/NAME/CONTAINER] `: a bracketed word without
/// spaces or quotes, then one space.
pub fn strip_prefix(line: &str) -> (Option<&str>, &str) {
    if let Some(rest) = line.strip_prefix('[')
        && let Some(end) = rest.find("] ")
    {
        let inside = &rest[..end];
        if !inside.is_empty() && !inside.contains([' ', '"', '{', '[']) {
            return (Some(inside), &rest[end + 2..]);
        }
    }
    (None, line)
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

    #[test]
    fn kubectl_prefixes_come_off_and_only_theirs() {
        assert_eq!(
            strip_prefix("[pod/iopscheck-x/iopscheck] {\"a\":1}"),
            (Some("pod/iopscheck-x/iopscheck"), "{\"a\":1}")
        );
        assert_eq!(strip_prefix("{\"a\":1}"), (None, "{\"a\":1}"));
        assert_eq!(strip_prefix("[1, 2] x"), (None, "[1, 2] x"));
        assert_eq!(strip_prefix("[] x"), (None, "[] x"));
    }

    #[test]
    fn a_stream_splits_into_results_records_and_other_lines() {
        let text = "[pod/a/c] iopscheck: note: io_uring refused\n\
                    [pod/a/c] {\"verdict\":\"pass\",\"policy\":{\"name\":\"swimlane\"}}\n\
                    \n\
                    [pod/b/c] {\"timestamp\":\"x\",\"metrics\":{}}\n\
                    [pod/b/c] {\"kind\":\"fleet\",\"verdict\":\"pass\",\"policy\":{}}\n";
        let s = Stream::split(text.as_bytes());
        assert!(s.prefixed);
        assert_eq!(s.results.len(), 1);
        assert_eq!(s.results[0].0, 2);
        assert_eq!(s.records, b"{\"timestamp\":\"x\",\"metrics\":{}}\n");
        assert_eq!(s.other.len(), 1);
        assert_eq!(s.other[0].0, 1);
        assert_eq!(s.fleets, vec![5]);
    }

    #[test]
    fn only_what_may_be_a_stream_is_split() {
        assert!(!may_be_stream(
            b"{\"timestamp\":1,\"metrics\":{}}\n{\"timestamp\":2}\n"
        ));
        assert!(may_be_stream(b"[pod/a/c] x\n"));
        assert!(may_be_stream(b"x\n[pod/a/c] x\n"));
        assert!(may_be_stream(b"{\"verdict\": \"pass\"}"));
    }

    #[test]
    fn concatenated_pretty_results_are_each_read() {
        let one = "{\n  \"verdict\": \"pass\",\n  \"policy\": {\"name\": \"swimlane\"}\n}\n";
        let s = Stream::split(format!("{one}{one}").as_bytes());
        assert_eq!(s.results.len(), 2);
        assert_eq!((s.results[0].0, s.results[1].0), (1, 5));
        assert!(!s.prefixed);
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
