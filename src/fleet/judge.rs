//! Judging one node's input under the fleet's policy and window: a result is checked and
//! judged again from its own runs (`result.rs`), history records are judged per host,
//! directory and engine over the window. An input is read as it streams in (`stream.rs`):
//! what is held is the window's runs of the policy, one result at a time, and the rows.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::Path;

use chrono::{DateTime, FixedOffset, Local, Utc};
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::stream::{self, MAX_OBJECT, Unit};
use super::{DecidingRule, NodeRow, RowSource};
use crate::evaluate::sequential::Pending;
use crate::evaluate::{Evaluation, Verdict};
use crate::history::{self, Line, RunScanner, SKIPPED_SHOWN};
use crate::policy::Policy;
use crate::select::{Filter, Grouping};

/// How the error for a fleet's own result begins.
const FLEET_RESULT: &str = "a fleet's result, not a node's";

/// Why an input gives no node's rows.
#[derive(Debug, Clone, PartialEq)]
pub enum InputError {
    /// It is a fleet's own result (`fleet --format json`), not a node's: left out where it
    /// was found in a directory given, refused where it was named.
    FleetResult,
    /// What the input is not, or which result was refused and why.
    Refused(String),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::FleetResult => write!(
                f,
                "{FLEET_RESULT}: give the nodes' own results or histories"
            ),
            InputError::Refused(why) => f.write_str(why),
        }
    }
}

impl From<String> for InputError {
    fn from(why: String) -> InputError {
        InputError::Refused(why)
    }
}

/// What a node's history holds beyond the window's records, from each line's head: enough to
/// say why it has no evidence without keeping its records.
#[derive(Debug, Default)]
struct Seen {
    heads: usize,
    hosts: BTreeSet<String>,
    policies: BTreeSet<String>,
    newest_of_policy: Option<DateTime<FixedOffset>>,
}

impl Seen {
    fn note(&mut self, h: &history::RecordHead, policy: &str) {
        self.heads += 1;
        if !self.hosts.contains(&h.host) {
            self.hosts.insert(h.host.clone());
        }
        if !self.policies.contains(&h.policy) {
            self.policies.insert(h.policy.clone());
        }
        if h.policy == policy {
            self.newest_of_policy = self.newest_of_policy.max(Some(h.timestamp));
        }
    }
}

/// What one file says: its rows, and warnings about the file itself.
#[derive(Debug, Default)]
pub struct NodeFile {
    pub rows: Vec<NodeRow>,
    pub warnings: Vec<String>,
    /// What reading it took.
    pub work: Work,
    /// The imported runs each history row counts (`shared::SharedRuns`): its index in
    /// `rows`, the run's key and time.
    pub imported: Vec<super::shared::Counted>,
}

/// The imported runs `ev` counts, for row `row`, taken from its runs (a fleet's node is
/// judged, never listed: its rows need them no more).
pub(super) fn imported(
    row: usize,
    ev: &mut Evaluation,
) -> impl Iterator<Item = super::shared::Counted> + '_ {
    super::shared::counted(row, ev)
}

/// Judges nodes' files under one policy and window.
pub struct Judge<'a> {
    pub policy: &'a Policy,
    pub head: Option<DecidingRule>,
    pub since: DateTime<Utc>,
    pub now: DateTime<Utc>,
    pub strict: bool,
    /// `--until-decided`: keep each node's runs for the sequential decision.
    pub until: bool,
}

/// What reading an input took, for a test to hold it to the input's size.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Bytes handed to a JSON parser, over every parse (a line parsed twice counts twice).
    pub parsed: u64,
    /// Bytes copied to gather pretty-printed objects.
    pub gathered: u64,
    /// Lines read.
    pub lines: usize,
}

/// How a line the tool wrote as a record begins: such a line goes to the history reader
/// without being looked at first.
const RECORD_START: &[u8] = b"{\"schema_version\":1,\"timestamp\":\"";

/// What the object on a line is, from its top-level keys alone.
#[derive(Deserialize)]
struct Probe {
    timestamp: Option<IgnoredAny>,
    metrics: Option<IgnoredAny>,
    verdict: Option<IgnoredAny>,
    policy: Option<IgnoredAny>,
    kind: Option<serde_json::Value>,
}

/// Lines passed over, by line: the first [`SKIPPED_SHOWN`] are kept to be named, the others
/// only counted.
#[derive(Default)]
struct Passed {
    first: Vec<(usize, String)>,
    more: usize,
}

impl Passed {
    fn push(&mut self, line: usize, why: impl FnOnce() -> String) {
        if self.first.len() < SKIPPED_SHOWN {
            self.first.push((line, why()));
        } else {
            self.more += 1;
        }
    }
    fn total(&self) -> usize {
        self.first.len() + self.more
    }
}

/// Stops a reader at the next read once the flag is set: an input is not read on after it
/// was refused.
struct Stoppable<'a, R> {
    inner: R,
    stop: &'a std::cell::Cell<bool>,
}

impl<R: std::io::Read> std::io::Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.get() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

impl<R: BufRead> BufRead for Stoppable<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.stop.get() {
            return Ok(&[]);
        }
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.inner.consume(n)
    }
}

impl Judge<'_> {
    /// One input, read as it streams in: results (each checked and judged again from its runs,
    /// see `result.rs`), history records (judged together, as one history, per host,
    /// directory and engine over the window), fleets' results (left out) and other lines
    /// (named, the first few). `stdin` names the input `stdin` and its results `stdin:LINE`;
    /// an empty stdin is an error where an empty file is a history without runs yet. Errors
    /// say what the input is not, or which result was refused and why.
    pub fn input(
        &self,
        name: &str,
        reader: impl BufRead,
        stdin: bool,
    ) -> Result<NodeFile, InputError> {
        let seen = RefCell::new(Seen::default());
        let filter = Filter {
            host: None,
            dir: None,
            engine: None,
            policy: self.policy.name.clone(),
            since: self.since,
        };
        let mut grouping = Grouping::new(&filter);
        let held = crate::evaluate::held_metrics(self.policy);
        let mut out = NodeFile::default();
        let mut passed = Passed::default();
        let mut fleets = Passed::default();
        let (mut units, mut results, mut lone_objects) = (0usize, 0usize, 0usize);
        let mut refused: Option<String> = None;
        let stop = std::cell::Cell::new(false);
        let policy = self.policy.name.as_str();
        let since = self.since;
        let moved = grouping.moved();
        let mut scanner = RunScanner::new(
            Path::new(name),
            history::MAX_LINE,
            // every head is read: the no-evidence row names the newest run before the window
            None,
            |h| {
                seen.borrow_mut().note(h, policy);
                h.policy == policy && h.timestamp >= since
            },
            // A node is judged, never listed: its runs hold only what judging reads.
            |r| grouping.add(r.holding(held)),
        );
        // one fio run in two nodes' evidence is found by what names it
        scanner.name_imported = true;
        scanner.moved = Some(moved);
        let mut work = Work::default();
        let reader = Stoppable {
            inner: reader,
            stop: &stop,
        };
        let split = stream::split(reader, MAX_OBJECT, |unit| {
            if refused.is_some() {
                return;
            }
            units += 1;
            match unit {
                Unit::Object { line, text } => {
                    let mut handle = |text: &[u8], kind: Kind, work: &mut Work| {
                        match kind {
                            Kind::Record => {
                                if text.len() > history::MAX_LINE {
                                    passed.push(line, || {
                                        format!(
                                            "skipped: line longer than {} KiB, not read",
                                            history::MAX_LINE / 1024
                                        )
                                    });
                                } else {
                                    work.parsed += text.len() as u64;
                                    scanner.line(line, 0, Line::Text(text));
                                }
                            }
                            Kind::Fleet => fleets.push(line, String::new),
                            Kind::Result => {
                                results += 1;
                                let at = if stdin || line > 1 {
                                    format!("{name}:{line}")
                                } else {
                                    name.to_string()
                                };
                                let node = self
                                    .result(&at, text, work)
                                    .map_err(|e| format!("line {line}: {e}"))?;
                                let base = out.rows.len();
                                out.imported.extend(
                                    node.imported.into_iter().map(|(i, k, t)| (base + i, k, t)),
                                );
                                out.rows.extend(node.rows);
                                out.warnings.extend(node.warnings);
                            }
                            Kind::Other => {
                                lone_objects += 1;
                                passed.push(line, || {
                                    format!(
                                        "not an iopscheck result, skipped: {}",
                                        shorten(&String::from_utf8_lossy(text))
                                    )
                                });
                            }
                            Kind::NotJson(e) => {
                                passed.push(line, || format!("skipped: not JSON ({e})"))
                            }
                        }
                        Ok::<(), String>(())
                    };
                    let r = match classify(text, &mut work) {
                        // Objects run together on one line (files without their last
                        // newline, concatenated) are read one by one.
                        Kind::NotJson(e) => match several(text, &mut work) {
                            Some(parts) => parts.into_iter().try_for_each(|p| {
                                let kind = classify(p, &mut work);
                                handle(p, kind, &mut work)
                            }),
                            None => handle(text, Kind::NotJson(e), &mut work),
                        },
                        kind => handle(text, kind, &mut work),
                    };
                    if let Err(e) = r {
                        refused = Some(e);
                        stop.set(true);
                    }
                }
                Unit::Other { line, text } => passed.push(line, || other_line(text)),
                Unit::Unread { first, last, why } => passed.push(first, || {
                    if first == last {
                        format!("skipped: {why}")
                    } else {
                        format!("skipped (to line {last}): {why}")
                    }
                }),
            }
        })
        .map_err(|e| InputError::Refused(format!("cannot read ({e})")))?;
        if let Some(e) = refused {
            return Err(e.into());
        }
        work.gathered = split.gathered;
        work.lines = split.lines;
        out.work = work;
        let read = Read {
            units,
            results,
            lone_objects,
            prefixed: split.prefixed,
            skipped: scanner.finish(),
            passed,
            fleets,
            seen: seen.into_inner(),
        };
        self.conclude(name, stdin, out, read, grouping)
    }

    /// An input read to its end: refused if it holds nothing of a node, else its rows (its
    /// history's evaluated per group) and the warnings about the file.
    fn conclude(
        &self,
        name: &str,
        stdin: bool,
        mut out: NodeFile,
        read: Read,
        grouping: Grouping,
    ) -> Result<NodeFile, InputError> {
        // The history reader's skipped lines and the lines passed over here, in line order.
        let total = history::skipped_count(&read.skipped) + read.passed.total();
        let mut named: Vec<(usize, String)> = read
            .skipped
            .into_iter()
            .take(SKIPPED_SHOWN)
            .map(|s| (s.line, format!("skipped: {}", s.reason)))
            .chain(read.passed.first)
            .collect();
        named.sort_by_key(|(line, _)| *line);
        named.truncate(SKIPPED_SHOWN);
        let seen = read.seen;

        if read.results == 0 && seen.heads == 0 {
            if read.units == 0 && !stdin && read.fleets.total() == 0 {
                // An empty history: a node that has not run yet.
                out.rows.push(self.no_evidence(name, &seen));
                return Ok(out);
            }
            return Err(nothing_of_a_node(
                stdin,
                read.units,
                read.lone_objects,
                read.prefixed,
                read.fleets.total(),
                named.first(),
            ));
        }
        if seen.heads > 0 {
            let evs = grouping.evaluate(self.policy, self.now, self.strict);
            if evs.is_empty() {
                out.rows.extend(self.no_evidence_rows(name, &seen));
            }
            for mut ev in evs {
                out.imported.extend(imported(out.rows.len(), &mut ev));
                out.rows.push(self.history_row(name, ev));
            }
        }
        for (line, why) in named {
            out.warnings.push(format!("{name}:{line}: {why}"));
        }
        if total > SKIPPED_SHOWN {
            out.warnings.push(format!(
                "{name}: {} more lines skipped",
                total - SKIPPED_SHOWN
            ));
        }
        for (line, _) in &read.fleets.first {
            out.warnings
                .push(format!("{name}:{line}: a fleet's result, left out"));
        }
        if read.fleets.more > 0 {
            out.warnings.push(format!(
                "{name}: {} more fleets' results left out",
                read.fleets.more
            ));
        }
        Ok(out)
    }

    /// A history group's evaluation as its row.
    fn history_row(&self, name: &str, ev: Evaluation) -> NodeRow {
        let g = ev.group.clone().expect("evaluate_groups sets the group");
        let mut row = NodeRow::of_evaluation(
            &ev,
            self.policy,
            self.head.as_ref(),
            g,
            name.to_string(),
            RowSource::History,
            "report",
        );
        row.pending = self
            .until
            .then(|| Pending::of(&ev, self.policy))
            .flatten()
            .map(|p| (p, Verdict::Pass));
        row
    }

    /// A history with no runs of the policy in the window: each host it names has no
    /// evidence (an input of several hosts is not one node named after the input).
    fn no_evidence_rows(&self, name: &str, seen: &Seen) -> Vec<NodeRow> {
        if seen.hosts.len() <= 1 {
            return vec![self.no_evidence(name, seen)];
        }
        seen.hosts
            .iter()
            .map(|h| {
                let mut row = self.no_evidence(name, seen);
                row.host = h.clone();
                row
            })
            .collect()
    }

    /// A history with no runs of the policy in the window: the node has no evidence.
    fn no_evidence(&self, name: &str, seen: &Seen) -> NodeRow {
        let hosts = &seen.hosts;
        let host = if hosts.len() == 1 {
            hosts.iter().next().expect("one").to_string()
        } else {
            stem(name)
        };
        let mut reason = format!(
            "no runs of policy {} since {} in {name}",
            self.policy.name,
            self.since.with_timezone(&Local).format("%Y-%m-%d %H:%M")
        );
        let newest: Option<DateTime<FixedOffset>> = seen.newest_of_policy;
        if let Some(t) = newest {
            reason.push_str(&format!(
                "; its newest run of the policy is from {}: widen the window with --since",
                t.format("%Y-%m-%d %H:%M")
            ));
        } else {
            let others = &seen.policies;
            if !others.is_empty() {
                reason.push_str(&format!(
                    "; it holds runs of {}",
                    others
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        NodeRow {
            host,
            dir: String::new(),
            engine: String::new(),
            file: name.to_string(),
            source: RowSource::History,
            scope: Some("report".into()),
            runs: 0,
            days: 0,
            value: None,
            threshold: self.head.as_ref().map(|h| h.threshold),
            verdict: Verdict::Inconclusive,
            reason,
            warnings: vec![],
            last_run: None,
            pending: None,
            standing: None,
            figures: Default::default(),
        }
    }
}

/// What reading an input found besides its rows, for [`Judge::conclude`].
struct Read {
    /// Objects and lines read.
    units: usize,
    /// Nodes' results among them.
    results: usize,
    /// Objects that are neither a result nor a record.
    lone_objects: usize,
    /// Its lines carried `kubectl logs` prefixes.
    prefixed: bool,
    /// Lines the history reader skipped.
    skipped: Vec<history::Skipped>,
    /// Lines passed over here.
    passed: Passed,
    /// Fleets' results, left out.
    fleets: Passed,
    seen: Seen,
}

/// Why an input with neither a node's result nor a history record gives no rows: it is a
/// fleet's result, an empty stdin, a lone object of another kind, or something else (named
/// by its first line passed over).
fn nothing_of_a_node(
    stdin: bool,
    units: usize,
    lone_objects: usize,
    prefixed: bool,
    fleets: usize,
    first: Option<&(usize, String)>,
) -> InputError {
    if fleets > 0 {
        return InputError::FleetResult;
    }
    if units == 0 {
        return InputError::Refused(
            "empty: no results or history records came in (did the command before the pipe print anything?)"
                .into(),
        );
    }
    let first = first
        .map(|(n, t)| format!(": line {n}: {t}"))
        .unwrap_or_default();
    if units == 1 && lone_objects == 1 {
        return InputError::Refused(
            "a JSON object that is neither an iopscheck result (`--format json`) nor a history record"
                .into(),
        );
    }
    if stdin || prefixed {
        return InputError::Refused(format!(
            "no iopscheck result or history record in it (the pods print theirs with `iopscheck run --format jsonl`){first}"
        ));
    }
    InputError::Refused(format!(
        "neither an iopscheck JSON result (`--format json`) nor a history (JSON Lines){first}"
    ))
}

/// A line passed over that is not a JSON object on its own: what it is, quoted short.
fn other_line(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    if text.contains("{\"schema_version\"") {
        format!(
            "a JSON object after text that is neither a `kubectl logs --prefix` prefix nor a `--timestamps` time, skipped: {}",
            shorten(&text)
        )
    } else {
        format!("not an iopscheck result, skipped: {}", shorten(&text))
    }
}

/// What an object on its own is.
enum Kind {
    Record,
    Result,
    Fleet,
    Other,
    NotJson(serde_json::Error),
}

/// Sorts an object by its top-level keys: a record has a timestamp and metrics, a fleet's
/// result says so, a node's result has a verdict and a policy.
fn classify(text: &[u8], work: &mut Work) -> Kind {
    if text.starts_with(RECORD_START) {
        return Kind::Record;
    }
    work.parsed += text.len() as u64;
    let probe: Probe = match serde_json::from_slice(text) {
        Ok(p) => p,
        Err(e) => return Kind::NotJson(e),
    };
    if probe.timestamp.is_some() && probe.metrics.is_some() {
        Kind::Record
    } else if probe
        .kind
        .as_ref()
        .and_then(|k| k.as_str())
        .is_some_and(|k| k == "fleet" || k == "devices")
    {
        Kind::Fleet
    } else if probe.verdict.is_some() && probe.policy.is_some() {
        Kind::Result
    } else {
        Kind::Other
    }
}

/// The objects of a line that holds several run together (`{...}{...}`), when it holds
/// nothing else; None for one object, or anything that is not only objects.
fn several<'t>(text: &'t [u8], work: &mut Work) -> Option<Vec<&'t [u8]>> {
    work.parsed += text.len() as u64;
    let mut it = serde_json::Deserializer::from_slice(text).into_iter::<IgnoredAny>();
    let mut parts = Vec::new();
    let mut start = 0;
    loop {
        match it.next() {
            None => break,
            Some(Ok(_)) => {
                let end = it.byte_offset();
                parts.push(text[start..end].trim_ascii());
                start = end;
            }
            Some(Err(_)) => return None,
        }
    }
    (parts.len() > 1 && parts.iter().all(|p| p.first() == Some(&b'{'))).then_some(parts)
}

/// Checks across files (after `fleet_input::dedupe`): hosts expected but absent (added as inconclusive
/// rows), hosts present but not expected.
pub fn cross_check(
    rows: &mut Vec<NodeRow>,
    expect: &[String],
    policy: &Policy,
    head: Option<&DecidingRule>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if !expect.is_empty() {
        let present: BTreeSet<String> = rows.iter().map(|r| r.host.clone()).collect();
        let expected: BTreeSet<&str> = expect.iter().map(String::as_str).collect();
        for h in &expected {
            if !present.contains(*h) {
                rows.push(NodeRow {
                    host: h.to_string(),
                    dir: String::new(),
                    engine: String::new(),
                    file: String::new(),
                    source: RowSource::Missing,
                    scope: None,
                    runs: 0,
                    days: 0,
                    value: None,
                    threshold: head.map(|h| h.threshold),
                    verdict: Verdict::Inconclusive,
                    reason: format!(
                        "no result or history of policy {} for this host among the files",
                        policy.name
                    ),
                    warnings: vec![],
                    last_run: None,
                    pending: None,
                    standing: None,
                    figures: Default::default(),
                });
            }
        }
        for h in present {
            if !expected.contains(h.as_str()) {
                warnings.push(format!(
                    "{h} is not among the hosts given with --expect; a different name for the same machine?"
                ));
            }
        }
    }
    warnings
}

/// A line as a warning quotes it: at most 120 characters.
fn shorten(s: &str) -> String {
    if s.chars().count() <= 120 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(119).collect::<String>())
    }
}

/// The file's name without directories and extensions, as the host of a file that names none.
pub(super) fn stem(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    base.split('.').next().unwrap_or(&base).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy;

    fn judge(policy: &Policy) -> Judge<'_> {
        let now = Utc::now();
        Judge {
            policy,
            head: DecidingRule::of(policy),
            until: false,
            since: now - chrono::Duration::days(7),
            now,
            strict: false,
        }
    }

    #[test]
    fn files_that_are_neither_are_refused_with_what_they_are_not() {
        let p = policy::resolve("swimlane").unwrap().policy;
        let j = judge(&p);
        let e = j
            .input("x.json", &b"{\"a\": 1}"[..], false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither an iopscheck result"), "{e}");
        let e = j
            .input("x.txt", &b"fio-3.33\nWRITE: bw=1MiB/s\n"[..], false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nor a history"), "{e}");
        let e = j
            .input(
                "f.json",
                &b"{\"kind\":\"fleet\",\"verdict\":\"pass\"}"[..],
                false,
            )
            .unwrap_err();
        assert_eq!(e, InputError::FleetResult);
        assert!(e.to_string().starts_with("a fleet's result"), "{e}");
    }

    /// A node's `report --format json` over six runs of two days before `now`, for `host`.
    fn result_text(host: &str, now: DateTime<Utc>) -> String {
        let p = policy::resolve("swimlane").unwrap().policy;
        let records: Vec<_> = (0..6)
            .map(|i| {
                let t =
                    now - chrono::Duration::hours(1 + 20 * (i / 3)) - chrono::Duration::minutes(i);
                let mut r = crate::evaluate::tests::rec(&t.to_rfc3339(), 16.4);
                r.host = host.into();
                r
            })
            .collect();
        let (mut evs, records) = crate::select::evaluate_groups(
            records,
            &p,
            &Filter {
                host: None,
                dir: None,
                engine: None,
                policy: p.name.clone(),
                since: now - chrono::Duration::days(7),
            },
            now,
            false,
        );
        let ev = evs.remove(0);
        let mut out = Vec::new();
        crate::report::render(
            crate::report::Format::Json,
            &ev,
            &records,
            &crate::report::Style::default(),
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_work_of_reading_grows_with_the_input_and_no_faster() {
        let p = policy::resolve("swimlane").unwrap().policy;
        let j = judge(&p);
        // Pretty results one after another with no prefix (each of them holding the word
        // "verdict"), notes among them, and a record whose host is "verdict".
        let one = result_text("NODE", j.now);
        let record = serde_json::to_string(&{
            let mut r = crate::evaluate::tests::rec(&j.now.to_rfc3339(), 16.4);
            r.host = "verdict".into();
            r
        })
        .unwrap();
        let stream = |n: usize| -> Vec<u8> {
            let mut s = String::new();
            for i in 0..n {
                if i % 50 == 0 {
                    s.push_str("iopscheck: note: io_uring refused; posixaio instead\n");
                }
                s.push_str(&one.replace("\"NODE\"", &format!("\"node{i}\"")));
            }
            s.push_str(&record);
            s.push('\n');
            s.into_bytes()
        };
        let mut per_byte = Vec::new();
        for n in [100, 400] {
            let bytes = stream(n);
            let node = j.input("stdin", &bytes[..], true).unwrap();
            assert_eq!(node.rows.len(), n + 1);
            let len = bytes.len() as u64;
            // Each byte is gathered at most once and parsed a bounded number of times (the
            // result's keys, its claims, its runs, and each run as a history line).
            assert!(node.work.gathered <= len, "{:?} {len}", node.work);
            assert!(node.work.parsed <= 5 * len, "{:?} {len}", node.work);
            per_byte.push(node.work.parsed as f64 / len as f64);
        }
        // Four times the input, the same work per byte.
        assert!(
            (per_byte[1] / per_byte[0] - 1.0).abs() < 0.01,
            "{per_byte:?}"
        );

        // A history of one host, one record of which is of the host "verdict".
        let line =
            serde_json::to_string(&crate::evaluate::tests::rec(&j.now.to_rfc3339(), 16.4)).unwrap();
        let history = |n: usize| -> Vec<u8> {
            let mut s = format!("{line}\n").repeat(n);
            s.push_str(&record);
            s.push('\n');
            s.into_bytes()
        };
        for n in [1000, 4000] {
            let bytes = history(n);
            let node = j.input("h.jsonl", &bytes[..], false).unwrap();
            assert_eq!(node.rows.len(), 2);
            assert_eq!(node.work.lines, n + 1);
            assert!(node.work.parsed <= bytes.len() as u64, "{:?}", node.work);
        }
    }

    #[test]
    fn an_empty_history_is_a_node_without_evidence() {
        let p = policy::resolve("swimlane").unwrap().policy;
        let n = judge(&p)
            .input("/r/node7.history.jsonl", &b""[..], false)
            .unwrap();
        assert_eq!(n.rows.len(), 1);
        assert_eq!(n.rows[0].host, "node7");
        assert_eq!(n.rows[0].verdict, Verdict::Inconclusive);
        assert!(n.rows[0].reason.starts_with("no runs of policy swimlane"));
    }

    #[test]
    fn expected_hosts_without_files_are_inconclusive_rows() {
        let p = policy::resolve("swimlane").unwrap().policy;
        let mut rows = vec![];
        let w = cross_check(&mut rows, &["a".into()], &p, None);
        assert!(w.is_empty());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].source, RowSource::Missing);
        assert_eq!(rows[0].verdict, Verdict::Inconclusive);
    }
}
