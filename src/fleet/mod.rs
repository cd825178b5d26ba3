//! The fleet: many nodes' verdicts under one policy, and the one verdict they add up to. Every
//! node must pass: the fleet fails if any node fails, is inconclusive if any is (or has
//! no evidence at all) and none fails, and passes only when every node passes.
//!
//! [`Judge`] turns each node's input (a `--format json` result, a history, or a stream of both)
//! into rows, reading it as it streams in; a result is judged again from its own runs
//! (`result.rs`), never taken on trust; [`stream`] splits an input and counts a node given
//! twice once; [`Fleet::new`] decides. `iopscheck fleet` gathers the files and renders the [`Fleet`] (`report::fleet`).

pub mod devices;
mod judge;
mod result;
pub mod shared;
mod spread;
pub mod stream;

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset, Utc};

use crate::evaluate::{PolicyInfo, Verdict};
use crate::policy::{Aggregate, Op, Policy};

pub use judge::{InputError, Judge, cross_check};
pub use spread::{FleetRuleResult, judge_fleet_rule};

/// What a set and its members are called, in every sentence said of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nouns {
    /// The set: "fleet", "devices".
    pub set: &'static str,
    /// One member: "node", "device".
    pub one: &'static str,
    /// Members: "nodes", "devices".
    pub many: &'static str,
}

impl Nouns {
    /// A fleet of nodes.
    pub const NODES: Nouns = Nouns {
        set: "fleet",
        one: "node",
        many: "nodes",
    };
    /// One host's raw devices (`run --device`).
    pub const DEVICES: Nouns = Nouns {
        set: "devices",
        one: "device",
        many: "devices",
    };

    /// "node" for one, "nodes" for any other count.
    pub fn of(self, n: usize) -> &'static str {
        if n == 1 { self.one } else { self.many }
    }
}

/// Where a row's verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowSource {
    /// A node's `--format json` output, judged again here from the runs it carries.
    Result,
    /// A history file, judged here over the fleet's window.
    History,
    /// Nothing: a host named with `--expect` that no file speaks for.
    Missing,
}

impl RowSource {
    pub fn as_str(self) -> &'static str {
        match self {
            RowSource::Result => "result",
            RowSource::History => "history",
            RowSource::Missing => "missing",
        }
    }
}

/// The policy's deciding rule, which the fleet's value column shows.
#[derive(Debug, Clone, PartialEq)]
pub struct DecidingRule {
    pub metric: String,
    pub op: Op,
    pub threshold: f64,
    pub unit: &'static str,
    pub aggregate: Aggregate,
}

impl DecidingRule {
    /// The first fail-level rule of the policy, if it has one.
    pub fn of(policy: &Policy) -> Option<DecidingRule> {
        policy.deciding_rules().next().map(|r| DecidingRule {
            metric: r.metric.clone(),
            op: r.op,
            threshold: r.threshold,
            unit: crate::metrics::unit(&r.metric),
            aggregate: policy.evidence.aggregate,
        })
    }
}

/// One node (one host, directory and engine).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    pub host: String,
    pub dir: String,
    pub engine: String,
    /// The file the row was read from (empty for a missing host).
    pub file: String,
    pub source: RowSource,
    /// For a result: the scope it was judged in (run, import, report).
    pub scope: Option<String>,
    pub runs: usize,
    pub days: usize,
    /// The aggregate of the deciding rule's metric, when measured.
    pub value: Option<f64>,
    /// The threshold the node was judged against (the policy's, unless the node's result
    /// says otherwise).
    pub threshold: Option<f64>,
    pub verdict: Verdict,
    pub reason: String,
    pub warnings: Vec<String>,
    pub last_run: Option<DateTime<FixedOffset>>,
    /// With `fleet --until-decided`: the node's runs for the sequential decision, made once
    /// the number of nodes is known, and the verdict the row may not be better than (the
    /// node's own, for a result).
    pub pending: Option<(crate::evaluate::sequential::Pending, Verdict)>,
    /// Which way the node's judged runs deviate from the policy's test (None: its test):
    /// what its figure may say (a ✓ only on the policy's test).
    pub standing: Option<crate::deviation::Effect>,
    /// The node's aggregate of each metric the policy's fleet rules judge, where measured.
    pub figures: BTreeMap<String, f64>,
}

/// Which evidence a node's verdict is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The runs of one `iopscheck run` or `import`, judged as they are.
    Sitting,
    /// A history (or a `report` result) judged under the policy's rule of runs over days.
    History,
    /// Nothing to judge: a host no input speaks for.
    Nothing,
}

impl Basis {
    /// "sitting", "history", "nothing": the word every fleet format shows for a node.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Sitting => "sitting",
            Basis::History => "history",
            Basis::Nothing => "nothing",
        }
    }
}

/// A node's aggregate of each metric of the policy's fleet rules, from its evaluation.
pub fn fleet_figures(ev: &crate::evaluate::Evaluation, policy: &Policy) -> BTreeMap<String, f64> {
    let spread = policy.devices.iter().flat_map(|d| &d.spread);
    policy
        .fleet
        .iter()
        .map(|f| &f.metric)
        .chain(spread.map(|s| &s.metric))
        .filter_map(|m| {
            let s = ev.summary.metrics.get(m)?;
            Some((m.clone(), s.aggregate(policy.evidence.aggregate)))
        })
        .collect()
}

impl NodeRow {
    /// A group's evaluation as a row: its figures, verdict and reason as judged, with the
    /// deciding rule's value beside its threshold. `pending` is left for the caller.
    pub fn of_evaluation(
        ev: &crate::evaluate::Evaluation,
        policy: &Policy,
        head: Option<&DecidingRule>,
        group: crate::evaluate::Group,
        file: String,
        source: RowSource,
        scope: &str,
    ) -> NodeRow {
        let rule = head.and_then(|h| ev.rules.iter().find(|r| r.metric == h.metric));
        NodeRow {
            host: group.host,
            dir: group.dir,
            engine: group.engine,
            file,
            source,
            scope: Some(scope.into()),
            runs: ev.evidence.runs,
            days: ev.evidence.days,
            value: rule.and_then(|r| r.value),
            threshold: rule.map(|r| r.threshold),
            verdict: ev.verdict,
            reason: ev.reason.clone(),
            warnings: ev.warnings.iter().map(|w| w.to_string()).collect(),
            last_run: ev.runs.iter().map(|r| r.timestamp).max(),
            pending: None,
            standing: crate::deviation::effect_of(&ev.deviations),
            figures: fleet_figures(ev, policy),
        }
    }

    /// Which evidence the row's verdict is of: a run's or an import's result is one sitting,
    /// a history or a report's result the node's history.
    pub fn basis(&self) -> Basis {
        match (self.source, self.scope.as_deref()) {
            (RowSource::Missing, _) => Basis::Nothing,
            (RowSource::History, _) | (RowSource::Result, Some("report")) => Basis::History,
            (RowSource::Result, _) => Basis::Sitting,
        }
    }

    /// "one sitting of 3 runs", "history: 3 of 6 runs, 1 of 2 days" for the node's reason.
    pub fn judged_on(&self, min_runs: u32, min_days: u32) -> String {
        let e = crate::evaluate::EvidenceStatus {
            runs: self.runs,
            days: self.days,
            min_runs,
            min_days,
            ..Default::default()
        };
        match self.basis() {
            Basis::Sitting => format!(
                "one sitting of {} run{} (`iopscheck {}`)",
                self.runs,
                if self.runs == 1 { "" } else { "s" },
                self.scope.as_deref().unwrap_or("run")
            ),
            Basis::History => format!("its history: {}", e.tally()),
            Basis::Nothing => "nothing to judge".into(),
        }
    }

    /// "node1" or, where a host has several rows, "node1 /data posixaio".
    pub fn label(&self, fleet: &Fleet) -> String {
        // The rows are sorted by host (`Fleet::new`): the host's rows are one run of them,
        // found by halving, not by looking at every row for every row.
        let rows = &fleet.rows;
        let first = rows.partition_point(|r| r.host < self.host);
        let same_host = rows[first..]
            .iter()
            .take(2)
            .filter(|r| r.host == self.host)
            .count();
        if same_host > 1 {
            format!("{} {} {}", self.host, self.dir, self.engine)
        } else {
            self.host.clone()
        }
    }
}

/// How many rows have each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub pass: usize,
    pub fail: usize,
    pub inconclusive: usize,
}

impl Counts {
    pub fn total(&self) -> usize {
        self.pass + self.fail + self.inconclusive
    }
}

/// The value every fleet format renders.
#[derive(Debug, Clone, PartialEq)]
pub struct Fleet {
    pub policy: PolicyInfo,
    pub head: Option<DecidingRule>,
    pub verdict: Verdict,
    pub reason: String,
    /// Start of the window history files were judged over.
    pub since: DateTime<Utc>,
    pub rows: Vec<NodeRow>,
    /// About the set of files rather than one node: unreadable lines, duplicates, results of
    /// single invocations.
    pub warnings: Vec<String>,
    pub strict: bool,
    pub generated: DateTime<Utc>,
    /// With `--until-decided`: the error rates the verdict holds across the nodes.
    pub family: Option<Family>,
    /// The policy's evidence rule (runs, days), which a node's history is judged under.
    pub min_runs: u32,
    pub min_days: u32,
    /// `--require-evidence`: a node judged on one sitting is inconclusive.
    pub require_evidence: bool,
    /// The policy's rules over the fleet, judged ([`Fleet::judge_rules`]).
    pub rules: Vec<FleetRuleResult>,
    /// The rows are one host's raw devices (`run --device`, `report` of a policy with
    /// `devices`), and the rules their spread: JSON `kind: "devices"`.
    pub of_devices: bool,
}

/// A node's row under `--require-evidence`: a verdict of one sitting (a run's or an import's
/// result) is inconclusive, the policy's evidence being runs over days; the sitting's own
/// verdict stays in the reason.
pub fn require_evidence(rows: &mut [NodeRow], min_runs: u32, min_days: u32) {
    for r in rows.iter_mut().filter(|r| r.basis() == Basis::Sitting) {
        r.reason = format!(
            "judged on one sitting of {} run{}, and --require-evidence asks for the policy's evidence over days ({min_runs} runs over {min_days} days): give the node's history or its `iopscheck report --format json`; the sitting alone gives {}: {}",
            r.runs,
            if r.runs == 1 { "" } else { "s" },
            r.verdict,
            r.reason
        );
        r.verdict = Verdict::Inconclusive;
    }
}

/// `fleet --until-decided`: the fleet's error rates and the nodes they are shared over. Each
/// node's sequence is judged at α/N and β/N (Bonferroni), N the nodes judged by a sequence,
/// so a false pass (or a false fail) anywhere in the fleet has probability at most α (β).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    pub nodes: usize,
    pub alpha: f64,
    pub beta: f64,
}

impl Family {
    /// The error rates each node is judged at: α/N, β/N.
    pub fn per_node(&self) -> (f64, f64) {
        let n = self.nodes.max(1) as f64;
        (self.alpha / n, self.beta / n)
    }

    /// "error rate controlled across 3 nodes (Bonferroni: α/N per node, α 0.05 → 0.0167 …)".
    pub fn sentence(&self) -> String {
        if self.nodes == 0 {
            return "no node judged by a sequence (--until-decided): no error rate to state".into();
        }
        let (a, b) = self.per_node();
        format!(
            "error rate controlled across {} node{} (Bonferroni: α/N per node: α {} → {}, β {} → {})",
            self.nodes,
            if self.nodes == 1 { "" } else { "s" },
            short_p(self.alpha),
            short_p(a),
            short_p(self.beta),
            short_p(b)
        )
    }
}

fn short_p(p: f64) -> String {
    let s = format!("{p:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `fleet --until-decided`, once every input is read and each node counted once: judges every
/// row kept for it by its sequence at α/N and β/N, N the number of such rows, never better
/// than the node's own verdict. A pass that no sequence gave (a result of one `run` or
/// `import`) is inconclusive: the fleet's error rate says nothing of it.
pub fn decide_family(rows: &mut [NodeRow], s: &crate::evaluate::sequential::Settings) -> Family {
    let family = Family {
        nodes: rows.iter().filter(|r| r.pending.is_some()).count(),
        alpha: s.alpha,
        beta: s.beta,
    };
    let (alpha, beta) = family.per_node();
    let per = crate::evaluate::sequential::Settings { alpha, beta, ..*s };
    for r in rows.iter_mut() {
        match r.pending.take() {
            Some((p, cap)) => {
                let (v, reason, _) = p.decide(&per);
                r.verdict = Verdict::worst([cap, v]);
                r.reason = if r.verdict == v {
                    reason
                } else {
                    format!("the node says {cap}; its sequence here: {v} ({reason})")
                };
            }
            None if r.verdict == Verdict::Pass => {
                r.verdict = Verdict::Inconclusive;
                r.reason = format!(
                    "not judged by a sequence, so outside the fleet's error rate ({}): with --until-decided only a decided sequence passes",
                    r.reason
                );
            }
            None => {}
        }
    }
    family
}

impl Fleet {
    /// Judges the policy's rules over the fleet: a deciding one that fails makes the fleet
    /// fail, one that cannot be judged leaves it at best inconclusive; each is named in the
    /// reason and among the warnings, which every format carries.
    pub fn judge_rules(&mut self, rules: &[crate::policy::FleetRule]) {
        let results = rules
            .iter()
            .map(|r| judge_fleet_rule(r, &self.rows))
            .collect();
        self.apply_rules(results);
    }

    /// The rules over the set that decide its verdict: those of level fail, and with
    /// `--strict` those of level warn.
    pub fn deciding_rules(&self) -> impl Iterator<Item = &FleetRuleResult> {
        self.rules.iter().filter(|r| {
            r.level == crate::policy::Level::Fail
                || (self.strict && r.level == crate::policy::Level::Warn)
        })
    }

    /// Rules over the set already judged (a fleet's, or a device set's spread rules): their
    /// verdicts join the rows', as [`Fleet::judge_rules`] says.
    pub fn apply_rules(&mut self, results: Vec<FleetRuleResult>) {
        self.rules = results;
        let verdicts: Vec<Verdict> = self
            .deciding_rules()
            .map(|r| match r.passed {
                Some(true) => Verdict::Pass,
                Some(false) => Verdict::Fail,
                None => Verdict::Inconclusive,
            })
            .collect();
        if verdicts.is_empty() {
            return;
        }
        let rules_verdict = Verdict::worst(verdicts.iter().copied());
        let nodes = self.verdict;
        self.verdict = Verdict::worst([nodes, rules_verdict]);
        let said: Vec<&str> = self
            .deciding_rules()
            .filter(|r| r.passed != Some(true))
            .map(|r| r.text.as_str())
            .collect();
        if !said.is_empty() {
            self.reason = format!(
                "{}; {}: {}",
                said.join("; "),
                self.nouns().many,
                self.reason
            );
        }
        for r in &self.rules {
            if !self.warnings.contains(&r.text) {
                self.warnings.push(r.text.clone());
            }
        }
    }

    /// Sorts the rows (host, directory, engine) and decides the fleet's verdict and reason.
    pub fn new(
        policy: PolicyInfo,
        head: Option<DecidingRule>,
        since: DateTime<Utc>,
        mut rows: Vec<NodeRow>,
        warnings: Vec<String>,
        strict: bool,
        generated: DateTime<Utc>,
    ) -> Fleet {
        rows.sort_by(|a, b| {
            (&a.host, &a.dir, &a.engine, &a.file).cmp(&(&b.host, &b.dir, &b.engine, &b.file))
        });
        // Every node must pass.
        let verdict = Verdict::worst(rows.iter().map(|r| r.verdict));
        let mut fleet = Fleet {
            policy,
            head,
            verdict,
            reason: String::new(),
            since,
            rows,
            warnings,
            strict,
            generated,
            family: None,
            min_runs: 0,
            min_days: 0,
            require_evidence: false,
            rules: Vec::new(),
            of_devices: false,
        };
        fleet.reason = fleet.explain();
        fleet
    }

    /// The fleet judged with `--until-decided`: its reason says across how many nodes its
    /// error rates hold.
    pub fn with_family(mut self, family: Family) -> Fleet {
        self.family = Some(family);
        self.reason = format!("{}; {}", self.reason, family.sentence());
        self
    }

    /// The policy's evidence rule the nodes' histories were judged under, and whether
    /// `--require-evidence` applied it to every node: what [`Fleet::judged_on`] says.
    pub fn with_evidence(mut self, min_runs: u32, min_days: u32, required: bool) -> Fleet {
        self.min_runs = min_runs;
        self.min_days = min_days;
        self.require_evidence = required;
        self
    }

    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.rows {
            match r.verdict {
                Verdict::Pass => c.pass += 1,
                Verdict::Fail => c.fail += 1,
                Verdict::Inconclusive => c.inconclusive += 1,
            }
        }
        c
    }

    /// "2 of 3 nodes fail: node2, node3; every node must pass" (or devices, of one host's).
    fn explain(&self) -> String {
        let Nouns { one, many, .. } = self.nouns();
        let n = self.rows.len();
        if n == 0 {
            return format!("no {many} to judge: give the {many}' JSON results or history files");
        }
        let names = |v: Verdict| -> String {
            let names: Vec<String> = self
                .rows
                .iter()
                .filter(|r| r.verdict == v)
                .map(|r| r.label(self))
                .collect();
            const SHOWN: usize = 5;
            if names.len() > SHOWN {
                format!(
                    "{} and {} more",
                    names[..SHOWN].join(", "),
                    names.len() - SHOWN
                )
            } else {
                names.join(", ")
            }
        };
        let c = self.counts();
        match self.verdict {
            Verdict::Pass if n == 1 => format!("the only {one} passes"),
            Verdict::Pass => format!("all {n} {many} pass"),
            Verdict::Fail => {
                let mut s = format!(
                    "{} of {n} {} {}: {}",
                    c.fail,
                    self.nouns().of(n),
                    if c.fail == 1 { "fails" } else { "fail" },
                    names(Verdict::Fail)
                );
                if c.inconclusive > 0 {
                    s.push_str(&format!(
                        "; {} inconclusive: {}",
                        c.inconclusive,
                        names(Verdict::Inconclusive)
                    ));
                }
                s.push_str(&format!("; every {one} must pass"));
                s
            }
            Verdict::Inconclusive => format!(
                "{} of {n} {} {} inconclusive: {}; none fails, but every {one} must pass",
                c.inconclusive,
                self.nouns().of(n),
                if c.inconclusive == 1 { "is" } else { "are" },
                names(Verdict::Inconclusive)
            ),
        }
    }

    /// Which evidence the nodes' verdicts are of: "5 nodes judged on one sitting each, 3 on
    /// their history", "the only node judged on its history"; with `--require-evidence`, that
    /// it applies.
    pub fn judged_on(&self) -> String {
        let sitting = self
            .rows
            .iter()
            .filter(|r| r.basis() == Basis::Sitting)
            .count();
        let mut s = self.judged_on_short();
        if self.of_devices {
            // One host's devices, all of this sitting or all of its history.
            return s;
        }
        if self.require_evidence {
            s.push_str(&format!(
                " (--require-evidence: the policy's {} runs over {} days of every node)",
                self.min_runs, self.min_days
            ));
        } else if sitting > 0 {
            s.push_str(&format!(
                " (the policy's rule of {} runs over {} days judges histories only; --require-evidence applies it to every node)",
                self.min_runs, self.min_days
            ));
        }
        s
    }

    /// Which evidence the nodes' verdicts are of, without the policy's rule of evidence: "5
    /// nodes judged on one sitting each, 3 on their history".
    pub fn judged_on_short(&self) -> String {
        let n = self.rows.len();
        let count = |b: Basis| self.rows.iter().filter(|r| r.basis() == b).count();
        let (sitting, history, nothing) = (
            count(Basis::Sitting),
            count(Basis::History),
            count(Basis::Nothing),
        );
        let nouns = self.nouns();
        let (one, many) = (nouns.one, nouns.many);
        let nodes = |k: usize| nouns.of(k);
        if n == 0 {
            format!("no {many}")
        } else if sitting == n {
            match n {
                1 => format!("the only {one} judged on one sitting"),
                _ => format!("all {n} {many} judged on one sitting each"),
            }
        } else if history == n {
            match n {
                1 => format!("the only {one} judged on its history"),
                _ => format!("all {n} {many} judged on their history"),
            }
        } else {
            let mut parts = Vec::new();
            if sitting > 0 {
                parts.push(format!(
                    "{sitting} {} judged on one sitting{}",
                    nodes(sitting),
                    if sitting == 1 { "" } else { " each" }
                ));
            }
            if history > 0 {
                let on = if history == 1 { "its" } else { "their" };
                parts.push(if parts.is_empty() {
                    format!("{history} {} judged on {on} history", nodes(history))
                } else {
                    format!("{history} on {on} history")
                });
            }
            if nothing > 0 {
                parts.push(format!("{nothing} with nothing to judge"));
            }
            parts.join(", ")
        }
    }

    /// What the set and its rows are called, in every sentence of every format: a fleet's
    /// nodes, or one host's raw devices.
    pub fn nouns(&self) -> Nouns {
        if self.of_devices {
            Nouns::DEVICES
        } else {
            Nouns::NODES
        }
    }

    /// The set as one host's raw devices (`run --device`, `report` of a policy with
    /// `devices`): its reason said again in their words.
    pub fn for_devices(mut self) -> Fleet {
        self.of_devices = true;
        self.reason = self.explain();
        self
    }

    /// "mean write_iops_formula" for column titles.
    pub fn value_title(&self) -> String {
        match &self.head {
            Some(h) => format!("{} {}", h.aggregate.as_str(), h.metric),
            None => "value".into(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(host: &str, verdict: Verdict, value: f64) -> NodeRow {
        NodeRow {
            host: host.into(),
            dir: "/data".into(),
            engine: "posixaio".into(),
            file: format!("{host}.jsonl"),
            source: RowSource::History,
            scope: None,
            runs: 6,
            days: 2,
            value: Some(value),
            threshold: Some(3000.0),
            verdict,
            reason: format!("mean write_iops_formula is {value}"),
            warnings: vec![],
            last_run: None,
            pending: None,
            standing: None,
            figures: BTreeMap::new(),
        }
    }

    pub(crate) fn fleet(rows: Vec<NodeRow>) -> Fleet {
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let ev = crate::evaluate::evaluate(
            &[],
            &policy,
            &crate::evaluate::Options::new(crate::evaluate::Scope::Report, Utc::now()),
        );
        Fleet::new(
            ev.policy,
            DecidingRule::of(&policy),
            Utc::now(),
            rows,
            vec![],
            false,
            Utc::now(),
        )
        .with_evidence(6, 2, false)
    }

    #[test]
    fn every_node_must_pass() {
        use Verdict::*;
        let f = fleet(vec![row("a", Pass, 4000.0), row("b", Pass, 3500.0)]);
        assert_eq!((f.verdict, f.reason.as_str()), (Pass, "all 2 nodes pass"));
        let f = fleet(vec![
            row("a", Pass, 4000.0),
            row("b", Inconclusive, 3500.0),
            row("c", Fail, 2000.0),
        ]);
        assert_eq!(f.verdict, Fail);
        assert!(
            f.reason
                .starts_with("1 of 3 nodes fails: c; 1 inconclusive: b"),
            "{}",
            f.reason
        );
        let f = fleet(vec![row("a", Pass, 4000.0), row("b", Inconclusive, 3500.0)]);
        assert_eq!(f.verdict, Inconclusive);
        assert!(f.reason.starts_with("1 of 2 nodes is inconclusive: b"));
        assert_eq!(fleet(vec![]).verdict, Inconclusive);
    }

    #[test]
    fn rows_are_sorted_and_labelled_by_host_then_group() {
        use Verdict::*;
        let mut b2 = row("b", Pass, 1.0);
        b2.dir = "/other".into();
        let f = fleet(vec![row("c", Pass, 1.0), b2, row("b", Pass, 1.0)]);
        let labels: Vec<String> = f.rows.iter().map(|r| r.label(&f)).collect();
        assert_eq!(labels, ["b /data posixaio", "b /other posixaio", "c"]);
    }

    #[test]
    fn with_until_decided_a_pass_no_sequence_gave_is_inconclusive_and_n_counts_sequences() {
        use Verdict::*;
        let settings = crate::evaluate::sequential::Settings {
            alpha: 0.05,
            beta: 0.05,
            delta: 0.1,
            max_runs: 30,
            max_days: 7,
        };
        let mut rows = vec![row("a", Pass, 4000.0), row("b", Fail, 2000.0)];
        let f = decide_family(&mut rows, &settings);
        assert_eq!(f.nodes, 0);
        assert_eq!((rows[0].verdict, rows[1].verdict), (Inconclusive, Fail));
        assert!(rows[0].reason.contains("not judged by a sequence"));
        let fleet = fleet(rows).with_family(f);
        assert!(fleet.reason.contains("no node judged by a sequence"));
    }

    #[test]
    fn a_fleet_rule_fails_on_a_spread_already_too_wide_and_passes_only_on_every_node() {
        let rule = crate::policy::FleetRule {
            metric: "total_iops".into(),
            max_over_min: 1.1,
            level: crate::policy::Level::Fail,
            note: None,
        };
        let node = |host: &str, dir: &str, v: Option<f64>| {
            let mut r = row(host, Verdict::Pass, 0.0);
            r.dir = dir.into();
            r.figures = v
                .map(|v| ("total_iops".to_string(), v))
                .into_iter()
                .collect();
            r
        };
        let judged = |rows: &[NodeRow]| judge_fleet_rule(&rule, rows);
        let r = judged(&[node("a", "/d", Some(1000.0)), node("b", "/d", Some(1050.0))]);
        assert_eq!(r.passed, Some(true), "{}", r.text);
        // 1200 / 1000 = 1.2 > 1.1, whatever the node that did not measure it would say
        let r = judged(&[
            node("a", "/d", Some(1000.0)),
            node("b", "/d", Some(1200.0)),
            node("c", "/d", None),
        ]);
        assert_eq!(r.passed, Some(false), "{}", r.text);
        assert!(
            r.text.contains("b 1200 IOPS / a 1000 IOPS") && r.text.contains("not measured on c")
        );
        // within the bound so far, but a node unmeasured could be anywhere
        let r = judged(&[
            node("a", "/d", Some(1000.0)),
            node("b", "/d", Some(1050.0)),
            node("c", "/d", None),
        ]);
        assert_eq!(r.passed, None, "{}", r.text);
        // several rows of one host are named by directory
        let r = judged(&[
            node("a", "/nvme0", Some(1000.0)),
            node("a", "/nvme1", Some(2000.0)),
        ]);
        assert!(
            r.text.contains("a /nvme1 2000 IOPS / a /nvme0 1000 IOPS"),
            "{}",
            r.text
        );
        // one node is alike only with itself: no evidence about the nodes not given
        assert_eq!(judged(&[node("a", "/d", Some(5.0))]).passed, None);
        assert_eq!(judged(&[node("a", "/d", None)]).passed, None);
    }
}
