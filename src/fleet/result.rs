//! A node's result (`--format json` or `jsonl` of run, import or report) as the fleet reads
//! it: a claim checked, never taken on trust. The result must have the shape iopscheck writes
//! (contract.md's keys); its `runs[]`, read one by one as history lines are (the same checks,
//! through `history::RunScanner`), are judged again here under the fleet's policy, window and
//! clock, exactly as a history's are. The verdict is never better than the one the runs give,
//! nor than the one the node gave; where they differ, the row says so.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;

use chrono::{DateTime, FixedOffset, Local, Utc};
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::judge::{Judge, NodeFile, Work, stem};
use super::{NodeRow, RowSource};
use crate::evaluate::{
    self, Evaluation, EvidenceStatus, Group, Options, PolicyInfo, RuleResult, Scope, Verdict,
};
use crate::history::{self, Line, RunScanner};
use crate::numbers::fmt_precise;
use crate::policy::Level;
use crate::run_index::Run;
use crate::select::{Filter, Grouping, in_window};

/// The keys every iopscheck result has (contract.md, "JSON output" and its extensions): an
/// object without one of them was not written by iopscheck's `--format json`.
const KEYS: [&str; 11] = [
    "schema_version",
    "tool",
    "scope",
    "policy",
    "verdict",
    "reason",
    "runs",
    "summary",
    "rules",
    "evidence",
    "generated",
];

/// Which of [`KEYS`] an object has, and the values checked before anything else is read.
#[derive(Deserialize)]
struct Peek {
    schema_version: Option<serde_json::Value>,
    tool: Option<serde_json::Value>,
    scope: Option<IgnoredAny>,
    policy: Option<IgnoredAny>,
    verdict: Option<serde_json::Value>,
    reason: Option<IgnoredAny>,
    runs: Option<IgnoredAny>,
    summary: Option<IgnoredAny>,
    rules: Option<IgnoredAny>,
    evidence: Option<IgnoredAny>,
    generated: Option<IgnoredAny>,
}

impl Peek {
    fn missing(&self) -> Vec<&'static str> {
        let has = [
            self.schema_version.is_some(),
            self.tool.is_some(),
            self.scope.is_some(),
            self.policy.is_some(),
            self.verdict.is_some(),
            self.reason.is_some(),
            self.runs.is_some(),
            self.summary.is_some(),
            self.rules.is_some(),
            self.evidence.is_some(),
            self.generated.is_some(),
        ];
        KEYS.iter()
            .zip(has)
            .filter(|(_, has)| !has)
            .map(|(k, _)| *k)
            .collect()
    }
}

/// What a result claims, read through the types it is written from (`crate::evaluate`), so
/// that what the fleet reads cannot drift from what a node writes. `runs` is read apart, one
/// run at a time ([`RunsOf`]).
#[derive(Deserialize)]
struct Claim {
    scope: Scope,
    policy: PolicyInfo,
    verdict: Verdict,
    reason: String,
    rules: Vec<RuleResult>,
    #[serde(default)]
    warnings: Vec<String>,
    evidence: EvidenceStatus,
    #[serde(default)]
    group: Option<Group>,
    generated: DateTime<Utc>,
}

/// Reads an object's `runs` array, handing each element to the closure as it is read (the
/// other keys are passed over): a result of many runs is never held as a tree whole.
struct RunsOf<'f>(&'f mut dyn FnMut(usize, serde_json::Value));

impl<'de> DeserializeSeed<'de> for RunsOf<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RunsOf<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let each = self.0;
        while let Some(key) = map.next_key::<String>()? {
            if key == "runs" {
                map.next_value_seed(Elements(&mut *each))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Elements<'f>(&'f mut dyn FnMut(usize, serde_json::Value));

impl<'de> DeserializeSeed<'de> for Elements<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Elements<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of records")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(v) = seq.next_element::<serde_json::Value>()? {
            (self.0)(i, v);
            i += 1;
        }
        Ok(())
    }
}

/// A result's runs, read as history lines are.
#[derive(Default)]
struct ReadRuns {
    /// Runs of the fleet's policy.
    runs: Vec<Run>,
    /// Elements that are not records, by index, with the history reader's reason.
    skipped: Vec<(usize, String)>,
    /// Elements that repeat an earlier one byte for byte: (index, index of the first).
    repeated: Vec<(usize, usize)>,
    /// Runs of other policies, by policy.
    other_policies: BTreeMap<String, usize>,
}

/// A result being judged again: what each of its rows is made with.
struct Rejudged<'a> {
    /// Where it is: "FILE" or "FILE:LINE".
    at: &'a str,
    claim: &'a Claim,
    /// Its runs' one host, if they name one.
    host: Option<&'a str>,
    /// Notes about the result itself, on each of its rows.
    notes: Vec<String>,
    /// Every run it carries is judged here (none skipped, repeated, of another policy or
    /// older than the window): what it states of its figures can be checked.
    complete: bool,
    /// Its runs give one evaluation.
    single: bool,
    /// The newest of its runs older than the window.
    newest_older: Option<DateTime<FixedOffset>>,
}

/// How many of a result's skipped or repeated runs are named one by one.
const NAMED: usize = 3;

impl Judge<'_> {
    /// One result object (`at`: where it is, "FILE" or "FILE:LINE"): its shape checked, its
    /// runs judged again. An object that cannot be a node's result is refused with the reason.
    pub(super) fn result(
        &self,
        at: &str,
        text: &[u8],
        work: &mut Work,
    ) -> Result<NodeFile, String> {
        work.parsed += text.len() as u64;
        let peek: Peek = serde_json::from_slice(text)
            .map_err(|e| format!("not a valid iopscheck JSON result ({e})"))?;
        // A newer schema or an unknown verdict is named before the rest is read (its keys may
        // have changed).
        if let Some(v) = peek.schema_version.as_ref().and_then(|v| v.as_u64())
            && v > 1
        {
            return Err(format!(
                "schema_version {v} is newer than this iopscheck understands (1); upgrade iopscheck to read it"
            ));
        }
        if let Some(v) = peek.verdict.as_ref().and_then(|v| v.as_str())
            && !matches!(v, "pass" | "fail" | "inconclusive")
        {
            return Err(format!("unknown verdict '{v}'"));
        }
        let missing = peek.missing();
        if !missing.is_empty() {
            return Err(format!(
                "not an iopscheck result: it has no {} (a node's `--format json` or `jsonl` output has {}; the fleet judges a node from the runs its result carries)",
                missing.join(", "),
                KEYS.join(", ")
            ));
        }
        let tool = peek
            .tool
            .as_ref()
            .and_then(|t| t.get("name"))
            .and_then(|n| n.as_str());
        if tool != Some("iopscheck") {
            return Err(format!(
                "not an iopscheck result: its tool is {}",
                tool.map_or("not named".to_string(), |t| format!("'{t}'"))
            ));
        }
        work.parsed += text.len() as u64;
        let claim: Claim = serde_json::from_slice(text)
            .map_err(|e| format!("not a valid iopscheck JSON result ({e})"))?;
        if claim.policy.name != self.policy.name {
            return Err(format!(
                "a result of policy {}, but the fleet is judged by {}: pass --policy {}, or leave the file out",
                claim.policy.name, self.policy.name, claim.policy.name
            ));
        }
        work.parsed += text.len() as u64;
        let read = self.read_runs(at, text, work)?;
        let hosts: BTreeSet<&str> = read.runs.iter().map(|r| r.host.as_str()).collect();
        if hosts.len() > 1 {
            return Err(format!(
                "its runs are of {} hosts ({}): a node's result is one host's; give each node's own result, or the histories",
                hosts.len(),
                hosts.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        let host = hosts.first().map(|h| h.to_string());
        self.rejudge(at, &claim, read, host)
    }

    fn read_runs(&self, at: &str, text: &[u8], work: &mut Work) -> Result<ReadRuns, String> {
        let mut read = ReadRuns::default();
        let other = std::cell::RefCell::new(BTreeMap::<String, usize>::new());
        let policy = self.policy.name.as_str();
        let mut runs = Vec::new();
        let mut first_of: HashMap<u64, usize> = HashMap::new();
        let mut too_long = Vec::new();
        let mut repeated = Vec::new();
        let mut parsed = 0u64;
        let mut scanner = RunScanner::new(
            Path::new(at),
            history::MAX_LINE,
            None,
            |h| {
                if h.policy == policy {
                    return true;
                }
                *other.borrow_mut().entry(h.policy.clone()).or_default() += 1;
                false
            },
            |r| runs.push(r),
        );
        scanner.name_imported = true;
        let mut each = |i: usize, v: serde_json::Value| {
            let line = serde_json::to_vec(&v).expect("a JSON value serialises");
            parsed += line.len() as u64;
            // The same run twice is one run: a result is never made of a run repeated.
            let mut h = std::collections::hash_map::DefaultHasher::new();
            line.hash(&mut h);
            if let Some(&first) = first_of.get(&h.finish()) {
                repeated.push((i, first));
                return;
            }
            first_of.insert(h.finish(), i);
            if line.len() > history::MAX_LINE {
                too_long.push((
                    i,
                    format!("longer than {} KiB, not read", history::MAX_LINE / 1024),
                ));
                return;
            }
            scanner.line(i + 1, 0, Line::Text(&line));
        };
        let mut de = serde_json::Deserializer::from_slice(text);
        RunsOf(&mut each)
            .deserialize(&mut de)
            .map_err(|e| format!("not a valid iopscheck JSON result ({e})"))?;
        work.parsed += parsed;
        read.skipped = too_long;
        read.skipped
            .extend(scanner.finish().into_iter().map(|s| (s.line - 1, s.reason)));
        read.skipped.sort_by_key(|(i, _)| *i);
        read.runs = runs;
        read.repeated = repeated;
        read.other_policies = other.into_inner();
        Ok(read)
    }

    /// The result's runs judged as the fleet judges a history's, in the scope the result
    /// states (a run's and an import's runs are judged as they are, a report's under the
    /// evidence rule), then set against what the result claims.
    fn rejudge(
        &self,
        at: &str,
        claim: &Claim,
        mut read: ReadRuns,
        host: Option<String>,
    ) -> Result<NodeFile, String> {
        let complete =
            read.skipped.is_empty() && read.repeated.is_empty() && read.other_policies.is_empty();
        let (in_window, older): (Vec<Run>, Vec<Run>) = std::mem::take(&mut read.runs)
            .into_iter()
            .partition(|r| in_window(r, self.since));
        let evs = self.evaluations(claim, in_window);
        let notes = self.notes(claim, &read, older.len(), &evs);
        let of = Rejudged {
            at,
            claim,
            host: host.as_deref(),
            notes,
            // what the result states of its figures is checked where it is of the same runs
            complete: complete && older.is_empty(),
            single: evs.len() == 1,
            newest_older: older.iter().map(|r| r.timestamp).max(),
        };
        let mut out = NodeFile::default();
        for mut ev in evs {
            // its runs, found in another node's evidence, are neither's
            out.imported
                .extend(super::judge::imported(out.rows.len(), &mut ev));
            out.rows.push(self.row(&of, ev));
        }
        Ok(out)
    }

    /// The runs in the window evaluated in the result's scope: a report's by host, directory
    /// and engine under the evidence rule (one evaluation without runs when none is left), a
    /// run's or an import's as one sitting.
    fn evaluations(&self, claim: &Claim, in_window: Vec<Run>) -> Vec<Evaluation> {
        let mut opts = Options::new(claim.scope, self.now);
        opts.strict = self.strict;
        match claim.scope {
            Scope::Report => {
                let filter = Filter {
                    host: None,
                    dir: None,
                    engine: None,
                    policy: self.policy.name.clone(),
                    since: self.since,
                };
                let mut grouping = Grouping::new(&filter);
                for r in in_window {
                    grouping.add(r);
                }
                let evs = grouping.evaluate(self.policy, self.now, self.strict);
                if evs.is_empty() {
                    vec![evaluate::evaluate_runs(vec![], self.policy, &opts)]
                } else {
                    evs
                }
            }
            Scope::Run | Scope::Import => {
                vec![evaluate::evaluate_runs(in_window, self.policy, &opts)]
            }
        }
    }

    /// Notes about the result itself, on each of its rows: runs skipped, repeated, of other
    /// policies or older than the window; a time in the future; a threshold not the fleet's.
    fn notes(
        &self,
        claim: &Claim,
        read: &ReadRuns,
        older: usize,
        evs: &[Evaluation],
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for (i, why) in read.skipped.iter().take(NAMED) {
            notes.push(format!("its runs[{i}] is skipped: {why}"));
        }
        if read.skipped.len() > NAMED {
            notes.push(format!(
                "{} more of its runs skipped",
                read.skipped.len() - NAMED
            ));
        }
        for (i, first) in read.repeated.iter().take(NAMED) {
            notes.push(format!(
                "its runs[{i}] repeats runs[{first}]: one run, counted once"
            ));
        }
        if read.repeated.len() > NAMED {
            notes.push(format!(
                "{} more of its runs repeat earlier ones, each counted once",
                read.repeated.len() - NAMED
            ));
        }
        for (p, n) in &read.other_policies {
            notes.push(format!(
                "{n} of its runs {} of policy {p}, not {}: not counted",
                if *n == 1 { "is" } else { "are" },
                self.policy.name
            ));
        }
        if older > 0 && evs.iter().any(|e| !e.runs.is_empty()) {
            notes.push(format!(
                "{} of its runs {} older than the window (since {}): not counted",
                older,
                if older == 1 { "is" } else { "are" },
                self.since.with_timezone(&Local).format("%Y-%m-%d %H:%M")
            ));
        }
        if claim.generated > self.now + chrono::Duration::seconds(evaluate::FUTURE_MARGIN_SECS) {
            notes.push(format!(
                "it says it was generated at {}, in the future: check the node's clock",
                claim
                    .generated
                    .with_timezone(&Local)
                    .format("%Y-%m-%d %H:%M")
            ));
        }
        if let (Some(h), Some(rule)) = (&self.head, self.claimed_rule(claim))
            && rule.threshold != h.threshold
        {
            notes.push(format!(
                "the node judged it against {} {} {}; the fleet's policy {} says {} {}, which decides here",
                h.metric,
                rule.op,
                fmt_precise(rule.threshold),
                self.policy.name,
                h.op,
                fmt_precise(h.threshold)
            ));
        }
        notes
    }

    /// One evaluation of the result's runs as its row: never better than the node said, and
    /// where the two differ (in verdict, group or figure), the row says so.
    fn row(&self, of: &Rejudged, ev: Evaluation) -> NodeRow {
        let claim = of.claim;
        let mut row_notes = of.notes.clone();
        let (host, dir, engine) = identity(&ev, claim, of.host, of.at);
        if let Some(g) = &claim.group
            && !ev.runs.is_empty()
            && (g.host != host || g.dir != dir || g.engine != engine)
        {
            row_notes.push(format!(
                "its group names {} {} {}, but its runs are {host} {dir} {engine}: the runs decide",
                g.host, g.dir, g.engine
            ));
        }
        let rule = self
            .head
            .as_ref()
            .and_then(|h| ev.rules.iter().find(|r| r.metric == h.metric));
        let value = rule.and_then(|r| r.value);
        if of.complete && of.single && ev.scope == claim.scope {
            row_notes.extend(self.stated_figure(claim, &ev, value));
        }
        let (verdict, reason, last_run) = self.verdict(of, &ev);
        let mut warnings: Vec<String> = ev.warnings.iter().map(|w| w.to_string()).collect();
        for w in &claim.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        warnings.extend(row_notes);
        NodeRow {
            host,
            dir,
            engine,
            file: of.at.to_string(),
            source: RowSource::Result,
            scope: Some(claim.scope.as_str().to_string()),
            runs: ev.evidence.runs,
            days: ev.evidence.days,
            value,
            threshold: rule
                .map(|r| r.threshold)
                .or(self.head.as_ref().map(|h| h.threshold)),
            verdict,
            reason,
            warnings,
            last_run,
            pending: (self.until && ev.scope == Scope::Report)
                .then(|| crate::evaluate::sequential::Pending::of(&ev, self.policy))
                .flatten()
                .map(|p| (p, claim.verdict)),
            standing: crate::deviation::effect_of(&ev.deviations),
            figures: super::fleet_figures(&ev, self.policy),
        }
    }

    /// What the result states of its figure where it differs from what its runs give (or
    /// where a report's result counts other runs than its own).
    fn stated_figure(&self, claim: &Claim, ev: &Evaluation, value: Option<f64>) -> Option<String> {
        let stated = self.claimed_rule(claim).and_then(|r| r.value);
        let differs = match (stated, value) {
            (Some(a), Some(b)) => (a - b).abs() > 1e-9 * a.abs().max(b.abs()).max(1.0),
            (a, b) => a.is_some() != b.is_some(),
        };
        // A run's result states where the node's history stands, not its own runs.
        let counted = claim.scope == Scope::Report && claim.evidence.runs != ev.evidence.runs;
        (differs || counted).then(|| {
            let shown = |v: Option<f64>| v.map_or("nothing".into(), fmt_precise);
            format!(
                "its result states {} over {} runs; its runs give {} over {}: the runs decide",
                shown(stated),
                claim.evidence.runs,
                shown(value),
                ev.evidence.runs
            )
        })
    }

    /// The row's verdict (never better than the node's own), its reason and its newest run; a
    /// result whose runs are all older than the window no longer describes the node.
    fn verdict(
        &self,
        of: &Rejudged,
        ev: &Evaluation,
    ) -> (Verdict, String, Option<DateTime<FixedOffset>>) {
        let claim = of.claim;
        let judged = ev.verdict;
        let verdict = Verdict::worst([claim.verdict, judged]);
        let reason = if claim.verdict == judged {
            ev.reason.clone()
        } else if verdict == judged {
            format!(
                "its runs give {judged}, not the {} its result states: {}",
                claim.verdict, ev.reason
            )
        } else {
            format!(
                "the node says {} ({}); judged here from its runs: {judged} ({})",
                claim.verdict, claim.reason, ev.reason
            )
        };
        let last_run = ev.runs.iter().map(|r| r.timestamp).max();
        if !ev.runs.is_empty() {
            return (verdict, reason, last_run);
        }
        let stale = of
            .newest_older
            .map(|t| t.with_timezone(&Utc))
            .or((claim.generated < self.since && ev.not_counted.is_empty())
                .then_some(claim.generated));
        match stale {
            Some(t) => (
                Verdict::Inconclusive,
                format!(
                    "stale: its newest run ({}) is older than the window (since {}); the node said {}: {}",
                    t.with_timezone(&Local).format("%Y-%m-%d %H:%M"),
                    self.since.with_timezone(&Local).format("%Y-%m-%d %H:%M"),
                    claim.verdict,
                    claim.reason
                ),
                of.newest_older,
            ),
            None => (verdict, reason, last_run),
        }
    }

    /// The result's own figure for the fleet's deciding rule.
    fn claimed_rule<'c>(&self, claim: &'c Claim) -> Option<&'c RuleResult> {
        let h = self.head.as_ref()?;
        claim
            .rules
            .iter()
            .filter(|x| x.metric == h.metric)
            .find(|x| x.level == Level::Fail)
    }
}

/// The node a result's evaluation is of: its runs' host, directory and engine (several
/// directories or engines of one run or import are joined); a result without runs is named by
/// the group it states, else by its file.
fn identity(
    ev: &Evaluation,
    claim: &Claim,
    host: Option<&str>,
    at: &str,
) -> (String, String, String) {
    if let Some(g) = &ev.group {
        return (g.host.clone(), g.dir.clone(), g.engine.clone());
    }
    let runs = ev.runs.iter().chain(ev.excluded.iter().map(|(r, _)| r));
    let joined = |f: &dyn Fn(&Run) -> &str| {
        let set: BTreeSet<&str> = runs.clone().map(f).collect();
        set.into_iter().collect::<Vec<_>>().join(",")
    };
    let (dir, engine) = (
        joined(&|r| r.target.dir.as_str()),
        joined(&|r| r.engine.as_str()),
    );
    match (host, &claim.group) {
        (Some(h), _) => (h.to_string(), dir, engine),
        (None, Some(g)) => (g.host.clone(), g.dir.clone(), g.engine.clone()),
        (None, None) => (stem(at), dir, engine),
    }
}
