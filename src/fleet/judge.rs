//! Judging one node's file: a result's verdict is taken as the node gave it (stale past the
//! window), a history is judged here per host, directory and engine over the window.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{DateTime, FixedOffset, Local, Utc};
use serde::Deserialize;

use super::stream::{self, Stream};
use super::{DecidingRule, NodeRow, RowSource};
use crate::evaluate::{self, EvidenceStatus, Group, PolicyInfo, RuleResult, Scope, Verdict};
use crate::history::{self, Record, SKIPPED_SHOWN};
use crate::policy::Level;
use crate::policy::Policy;
use crate::report::fmt_precise;
use crate::select::{Filter, evaluate_groups};

/// How the error for a fleet's own result begins.
pub const FLEET_RESULT: &str = "a fleet's result, not a node's";

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
}

/// Judges nodes' files under one policy and window.
pub struct Judge<'a> {
    pub policy: &'a Policy,
    pub head: Option<DecidingRule>,
    pub since: DateTime<Utc>,
    pub now: DateTime<Utc>,
    pub strict: bool,
}

/// A node's `--format json` result, read through the types it is written from
/// (`crate::evaluate`, contract.md's keys), so that what the fleet reads cannot drift from
/// what a node writes. Keys the fleet does not use are not read; keys a result may lack take
/// their defaults.
#[derive(Debug, Deserialize)]
struct NodeResult {
    schema_version: u64,
    #[serde(default)]
    scope: Option<Scope>,
    policy: PolicyInfo,
    verdict: Verdict,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    runs: Vec<Record>,
    #[serde(default)]
    rules: Vec<RuleResult>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    evidence: Option<EvidenceStatus>,
    #[serde(default)]
    group: Option<Group>,
    #[serde(default)]
    generated: Option<DateTime<Utc>>,
}

/// Reads a result object: a newer schema or an unknown verdict is named before the rest is
/// read (its keys may have changed).
fn node_result(obj: serde_json::Map<String, serde_json::Value>) -> Result<NodeResult, String> {
    if let Some(v) = obj.get("schema_version").and_then(|v| v.as_u64())
        && v > 1
    {
        return Err(format!(
            "schema_version {v} is newer than this iopscheck understands (1); upgrade iopscheck to read it"
        ));
    }
    if let Some(v) = obj.get("verdict").and_then(|v| v.as_str())
        && !matches!(v, "pass" | "fail" | "inconclusive")
    {
        return Err(format!("unknown verdict '{v}'"));
    }
    serde_json::from_value(serde_json::Value::Object(obj))
        .map_err(|e| format!("not a valid iopscheck JSON result ({e})"))
}

impl Judge<'_> {
    /// One file: a JSON result (one object, usually pretty-printed) or a history (JSON Lines,
    /// possibly a single line). Errors say what the file is not.
    pub fn file(&self, name: &str, bytes: &[u8]) -> Result<NodeFile, String> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'{')
            && let Ok(serde_json::Value::Object(obj)) =
                serde_json::from_slice::<serde_json::Value>(bytes)
        {
            let is_record = obj.contains_key("timestamp") && obj.contains_key("metrics");
            if !is_record {
                if obj.get("kind").and_then(|k| k.as_str()) == Some("fleet") {
                    return Err(format!(
                        "{FLEET_RESULT}: give the nodes' own results or histories"
                    ));
                }
                if !(obj.contains_key("verdict") && obj.contains_key("policy")) {
                    return Err(
                        "a JSON object that is neither an iopscheck result (`--format json`) nor a history record"
                            .into(),
                    );
                }
                return self.result(name, node_result(obj)?);
            }
        }
        // A history (the common, large input) holds no results and no log prefixes: read it
        // as one without splitting it first.
        if !stream::may_be_stream(bytes) {
            return self.history(name, bytes);
        }
        let stream = Stream::split(bytes);
        if stream.results.is_empty() && !stream.prefixed {
            return self.history(name, bytes);
        }
        self.stream(name, stream)
    }

    /// A stream of results and records (e.g. `kubectl logs --prefix` of many pods): each
    /// result is a row, the records are judged as one history, other lines are named in
    /// warnings (a pod's error message is among them).
    fn stream(&self, name: &str, s: Stream) -> Result<NodeFile, String> {
        if s.results.is_empty() && s.records.is_empty() {
            let first = s
                .other
                .first()
                .map(|(n, t)| format!(": line {n}: {}", shorten(t)))
                .unwrap_or_default();
            return Err(format!(
                "no iopscheck result or history record in it (the pods print theirs with `iopscheck run --format jsonl`){first}"
            ));
        }
        let mut out = NodeFile::default();
        for (line, obj) in s.results {
            let at = format!("{name}:{line}");
            let result = node_result(obj).map_err(|e| format!("line {line}: {e}"))?;
            let node = self
                .result(&at, result)
                .map_err(|e| format!("line {line}: {e}"))?;
            out.rows.extend(node.rows);
            out.warnings.extend(node.warnings);
        }
        if !s.records.is_empty() {
            let node = self.history(name, &s.records)?;
            out.rows.extend(node.rows);
            out.warnings.extend(node.warnings);
        }
        for line in s.fleets {
            out.warnings
                .push(format!("{name}:{line}: a fleet's result, left out"));
        }
        for (line, text) in s.other.iter().take(SKIPPED_SHOWN) {
            out.warnings.push(format!(
                "{name}:{line}: not an iopscheck result, skipped: {}",
                shorten(text)
            ));
        }
        if s.other.len() > SKIPPED_SHOWN {
            out.warnings.push(format!(
                "{name}: {} more lines that are not iopscheck results skipped",
                s.other.len() - SKIPPED_SHOWN
            ));
        }
        Ok(out)
    }

    fn result(&self, name: &str, r: NodeResult) -> Result<NodeFile, String> {
        debug_assert!(r.schema_version <= 1, "checked by node_result");
        if r.policy.name != self.policy.name {
            return Err(format!(
                "a result of policy {}, but the fleet is judged by {}: pass --policy {}, or leave the file out",
                r.policy.name, self.policy.name, r.policy.name
            ));
        }
        let verdict = r.verdict;
        let joined = |f: &dyn Fn(&Record) -> &str| {
            let set: BTreeSet<&str> = r.runs.iter().map(f).collect();
            set.into_iter().collect::<Vec<_>>().join(",")
        };
        let (host, dir, engine) = match &r.group {
            Some(g) => (g.host.clone(), g.dir.clone(), g.engine.clone()),
            None => (
                joined(&|x| x.host.as_str()),
                joined(&|x| x.target.dir.as_str()),
                joined(&|x| x.engine.as_str()),
            ),
        };
        let host = if host.is_empty() { stem(name) } else { host };
        let (runs, days) = match &r.evidence {
            Some(e) => (e.runs, e.days),
            None => (
                r.runs.len(),
                r.runs
                    .iter()
                    .map(evaluate::day_of)
                    .collect::<BTreeSet<_>>()
                    .len(),
            ),
        };
        let mut warnings = Vec::new();
        let mut row_warnings = r.warnings.clone();
        // The node's figure for the fleet's deciding rule.
        let rule = self.head.as_ref().and_then(|h| {
            r.rules
                .iter()
                .filter(|x| x.metric == h.metric)
                .find(|x| x.level == Level::Fail)
        });
        if let (Some(h), Some(rule)) = (&self.head, rule)
            && rule.threshold != h.threshold
        {
            row_warnings.push(format!(
                "judged against {} {} {}, while the fleet's policy {} says {} {}; the node's verdict is kept",
                h.metric,
                h.op,
                fmt_precise(rule.threshold),
                self.policy.name,
                h.op,
                fmt_precise(h.threshold)
            ));
        }
        let last_run = r.runs.iter().map(|x| x.timestamp).max();
        let mut row = NodeRow {
            host,
            dir,
            engine,
            file: name.to_string(),
            source: RowSource::Result,
            scope: r.scope.map(|s| s.as_str().to_string()),
            runs,
            days,
            value: rule.and_then(|x| x.value),
            threshold: rule
                .map(|x| x.threshold)
                .or(self.head.as_ref().map(|h| h.threshold)),
            verdict,
            reason: r.reason.clone(),
            warnings: row_warnings,
            last_run,
        };
        // A result older than the window no longer describes the node.
        let newest = last_run
            .map(|t| t.with_timezone(&Utc))
            .or(r.generated)
            .filter(|t| *t < self.since);
        if let Some(t) = newest {
            row.verdict = Verdict::Inconclusive;
            row.reason = format!(
                "stale: its newest run ({}) is older than the window (since {}); the node said {}: {}",
                t.with_timezone(&Local).format("%Y-%m-%d %H:%M"),
                self.since.with_timezone(&Local).format("%Y-%m-%d %H:%M"),
                verdict,
                r.reason
            );
        }
        if matches!(r.scope, Some(Scope::Run | Scope::Import)) {
            warnings.push(format!(
                "{name}: the result of one `iopscheck {}`, judged as it is: the policy's evidence rule ({} runs over {} days) applies only to histories and `iopscheck report` results",
                r.scope.map_or("run", Scope::as_str),
                self.policy.evidence.min_runs,
                self.policy.evidence.min_days
            ));
        }
        Ok(NodeFile {
            rows: vec![row],
            warnings,
        })
    }

    fn history(&self, name: &str, bytes: &[u8]) -> Result<NodeFile, String> {
        // Streamed: only the policy's records in the window are parsed in full and kept; of
        // the rest, what the no-evidence row says (hosts, policies, the newest run) is noted.
        let seen = std::cell::RefCell::new(Seen::default());
        let mut records = Vec::new();
        let skipped = history::scan_from(
            bytes,
            Path::new(name),
            history::MAX_LINE,
            // every head is read: the no-evidence row names the newest run before the window
            None,
            |h| {
                seen.borrow_mut().note(h, &self.policy.name);
                h.policy == self.policy.name && h.timestamp >= self.since
            },
            |r| records.push(r),
        )
        .map_err(|e| format!("cannot read ({e})"))?;
        let seen = seen.into_inner();
        if seen.heads == 0 && records.is_empty() && !skipped.is_empty() {
            return Err(format!(
                "neither an iopscheck JSON result (`--format json`) nor a history (JSON Lines): line {}: {}",
                skipped[0].line, skipped[0].reason
            ));
        }
        let warnings = history::skipped_warnings(&skipped);
        let filter = Filter {
            host: None,
            dir: None,
            engine: None,
            policy: self.policy.name.clone(),
            since: self.since,
        };
        let evs = evaluate_groups(records, self.policy, &filter, self.now, self.strict);
        let mut rows: Vec<NodeRow> = evs
            .into_iter()
            .map(|ev| {
                let g = ev.group.clone().expect("evaluate_groups sets the group");
                let rule = self
                    .head
                    .as_ref()
                    .and_then(|h| ev.rules.iter().find(|r| r.metric == h.metric));
                NodeRow {
                    host: g.host,
                    dir: g.dir,
                    engine: g.engine,
                    file: name.to_string(),
                    source: RowSource::History,
                    scope: Some("report".into()),
                    runs: ev.evidence.runs,
                    days: ev.evidence.days,
                    value: rule.and_then(|r| r.value),
                    threshold: rule.map(|r| r.threshold),
                    verdict: ev.verdict,
                    reason: ev.reason.clone(),
                    warnings: ev.warnings.iter().map(|w| w.to_string()).collect(),
                    last_run: ev.runs.iter().map(|r| r.timestamp).max(),
                }
            })
            .collect();
        if rows.is_empty() {
            rows.push(self.no_evidence(name, &seen));
        }
        Ok(NodeFile { rows, warnings })
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
        }
    }
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
fn stem(name: &str) -> String {
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
            since: now - chrono::Duration::days(7),
            now,
            strict: false,
        }
    }

    #[test]
    fn files_that_are_neither_are_refused_with_what_they_are_not() {
        let p = policy::resolve("swimlane").unwrap().policy;
        let j = judge(&p);
        let e = j.file("x.json", b"{\"a\": 1}").unwrap_err();
        assert!(e.contains("neither an iopscheck result"), "{e}");
        let e = j
            .file("x.txt", b"fio-3.33\nWRITE: bw=1MiB/s\n")
            .unwrap_err();
        assert!(e.contains("nor a history"), "{e}");
        let e = j
            .file("f.json", b"{\"kind\":\"fleet\",\"verdict\":\"pass\"}")
            .unwrap_err();
        assert!(e.contains("a fleet's result"), "{e}");
    }

    #[test]
    fn an_empty_history_is_a_node_without_evidence() {
        let p = policy::resolve("swimlane").unwrap().policy;
        let n = judge(&p).file("/r/node7.history.jsonl", b"").unwrap();
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
