//! A rule over a set, judged: how far apart its members' figures of one metric are, the
//! largest over the smallest, against the rule's bound. One judge for a fleet's nodes
//! (`fleet:` rules, Confluent's alike brokers) and for one host's raw devices
//! (`devices.spread`, IBM's drives of one type): each says it in its own words, given as
//! [`Terms`], so nothing is reworded after it is said.

use super::{NodeRow, Nouns};
use crate::numbers::fmt_precise;
use crate::policy::FleetRule;
use crate::policy::devices::Bound;

/// A rule over the set, judged: the spread of a metric's aggregates across its members.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetRuleResult {
    pub metric: String,
    pub max_over_min: f64,
    pub level: crate::policy::Level,
    /// The largest member's figure over the smallest's, over the members that measured it.
    pub ratio: Option<f64>,
    /// None: it cannot be told (fewer than two members measured it, or some did not while
    /// the others agree).
    pub passed: Option<bool>,
    /// "fleet rule total_iops: max/min across nodes ≤ 1.1: fails, max/min 1.25 (node2 5000
    /// IOPS / node1 4000 IOPS) exceeds it"
    pub text: String,
    /// The text in fewer characters, for a line with little room: the members that did not
    /// measure the metric said by their count ("not measured on 3 nodes"), and for a rule
    /// that fails not said at all (more members can only widen a spread).
    pub brief: String,
}

/// The words a spread is judged in.
#[derive(Debug, Clone)]
pub struct Terms<'a> {
    /// The rule as stated, before what was found: "fleet rule total_iops: max/min across
    /// nodes ≤ 1.1".
    pub rule: String,
    /// What the members are called.
    pub nouns: Nouns,
    /// How a spread found is stated: as max/min, or as IBM's difference percentage.
    pub bound: Bound,
    /// What to give when one member alone was given: "give every node's results to compare
    /// them".
    pub give_all: &'a str,
}

impl Terms<'static> {
    /// A fleet rule's words: over nodes, as max/min.
    pub fn nodes(rule: &FleetRule) -> Terms<'static> {
        Terms {
            rule: format!(
                "fleet rule {}: max/min across nodes ≤ {}",
                rule.metric,
                fmt_precise(rule.max_over_min)
            ),
            nouns: Nouns::NODES,
            bound: Bound::MaxOverMin(rule.max_over_min),
            give_all: "give every node's results to compare them",
        }
    }
}

/// What a spread judge found, before it is said with the rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub ratio: Option<f64>,
    pub passed: Option<bool>,
    /// What was found, in the set's words: "fails, max/min 2 (b 2000 IOPS / a 1000 IOPS)
    /// exceeds it".
    pub said: String,
    /// The same, with the members that did not measure the metric counted, not named; not
    /// said where the rule fails ([`FleetRuleResult::brief`]).
    pub said_brief: String,
}

impl Found {
    /// The rule's result: its text is the rule as stated, then what was found.
    pub fn result(self, rule: &FleetRule, terms: &Terms) -> FleetRuleResult {
        FleetRuleResult {
            metric: rule.metric.clone(),
            max_over_min: rule.max_over_min,
            level: rule.level,
            ratio: self.ratio,
            passed: self.passed,
            text: format!("{}: {}", terms.rule, self.said),
            brief: format!("{}: {}", terms.rule, self.said_brief),
        }
    }
}

/// Judges a fleet rule over the rows, in the nodes' words.
pub fn judge_fleet_rule(rule: &FleetRule, rows: &[NodeRow]) -> FleetRuleResult {
    let terms = Terms::nodes(rule);
    judge(rule, rows, &terms).result(rule, &terms)
}

/// Judges a rule's bound over the rows. A spread already too wide among the members that
/// measured the metric fails (more members can only widen it); a pass needs every member's
/// figure; one member is alike only with itself, which says nothing of the members not given.
pub fn judge(rule: &FleetRule, rows: &[NodeRow], terms: &Terms) -> Found {
    let Nouns { one, many, .. } = terms.nouns;
    let unit = crate::metrics::unit(&rule.metric);
    let figure = |v: f64| format!("{} {unit}", fmt_precise(v));
    // A host with several rows (directories, devices) is named with the directory.
    let label = |r: &NodeRow| -> String {
        if rows.iter().filter(|o| o.host == r.host).count() > 1 {
            format!("{} {}", r.host, r.dir)
        } else {
            r.host.clone()
        }
    };
    let measured: Vec<(String, f64)> = rows
        .iter()
        .filter_map(|r| r.figures.get(&rule.metric).map(|&v| (label(r), v)))
        .collect();
    let unmeasured: Vec<String> = rows
        .iter()
        .filter(|r| !r.figures.contains_key(&rule.metric))
        .map(label)
        .collect();
    let largest = measured.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let smallest = measured.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let (ratio, spread) = match (largest, smallest) {
        (Some(l), Some(s)) if measured.len() >= 2 => {
            let ratio = if s.1 > 0.0 {
                l.1 / s.1
            } else if l.1 > 0.0 {
                f64::INFINITY
            } else {
                1.0
            };
            (
                Some(ratio),
                format!(
                    "{} ({} {} / {} {})",
                    terms.bound.state(ratio),
                    l.0,
                    figure(l.1),
                    s.0,
                    figure(s.1)
                ),
            )
        }
        _ => (None, String::new()),
    };
    let (missing, counted) = match unmeasured.len() {
        0 => (String::new(), String::new()),
        k => (
            format!("; not measured on {}", unmeasured.join(", ")),
            format!("; not measured on {k} {}", terms.nouns.of(k)),
        ),
    };
    // Said twice: with the members not measured by name, and by count.
    let say = |missing: &str| match ratio {
        Some(r) if r > rule.max_over_min => {
            (Some(false), format!("fails, {spread} exceeds it{missing}"))
        }
        Some(_) if unmeasured.is_empty() => (Some(true), format!("meets it, {spread}")),
        Some(_) => (
            None,
            format!("cannot be judged over every {one}: {spread} so far{missing}"),
        ),
        None if rows.len() == 1 && unmeasured.is_empty() => (
            None,
            format!("cannot be judged on one {one}; {}", terms.give_all),
        ),
        None => (
            None,
            format!("cannot be judged: fewer than two {many} measured it{missing}"),
        ),
    };
    let (passed, said) = say(&missing);
    let brief = if passed == Some(false) { "" } else { &counted };
    let (_, said_brief) = say(brief);
    Found {
        ratio,
        passed,
        said,
        said_brief,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;
    use crate::fleet::tests::row;

    /// What a fleet rule says in each case, word for word: the text every format carries.
    #[test]
    fn a_fleet_rule_says_each_case_in_the_nodes_terms() {
        let rule = crate::policy::FleetRule {
            metric: "total_iops".into(),
            max_over_min: 1.1,
            level: crate::policy::Level::Fail,
            note: None,
        };
        let node = |host: &str, v: Option<f64>| {
            let mut r = row(host, Verdict::Pass, 0.0);
            r.figures = v
                .map(|v| ("total_iops".to_string(), v))
                .into_iter()
                .collect();
            r
        };
        let sets: Vec<Vec<NodeRow>> = vec![
            vec![node("a", Some(1000.0)), node("b", Some(1050.0))],
            vec![node("a", Some(1000.0)), node("b", Some(2000.0))],
            vec![node("a", Some(1000.0)), node("b", Some(0.0))],
            vec![
                node("a", Some(1000.0)),
                node("b", Some(1050.0)),
                node("c", None),
            ],
            vec![
                node("a", Some(1000.0)),
                node("b", Some(2000.0)),
                node("c", None),
            ],
            vec![node("a", Some(1000.0))],
            vec![node("a", Some(1000.0)), node("c", None)],
            vec![node("a", None)],
        ];
        let said: Vec<(Option<bool>, String)> = sets
            .iter()
            .map(|s| {
                let r = judge_fleet_rule(&rule, s);
                (r.passed, r.text)
            })
            .collect();
        let expected: &[(Option<bool>, &str)] = &[
            (
                Some(true),
                "fleet rule total_iops: max/min across nodes ≤ 1.1: meets it, max/min 1.05 (b 1050 IOPS / a 1000 IOPS)",
            ),
            (
                Some(false),
                "fleet rule total_iops: max/min across nodes ≤ 1.1: fails, max/min 2 (b 2000 IOPS / a 1000 IOPS) exceeds it",
            ),
            (
                Some(false),
                "fleet rule total_iops: max/min across nodes ≤ 1.1: fails, max/min unbounded (a 1000 IOPS / b 0 IOPS) exceeds it",
            ),
            (
                None,
                "fleet rule total_iops: max/min across nodes ≤ 1.1: cannot be judged over every node: max/min 1.05 (b 1050 IOPS / a 1000 IOPS) so far; not measured on c",
            ),
            (
                Some(false),
                "fleet rule total_iops: max/min across nodes ≤ 1.1: fails, max/min 2 (b 2000 IOPS / a 1000 IOPS) exceeds it; not measured on c",
            ),
            (
                None,
                "fleet rule total_iops: max/min across nodes ≤ 1.1: cannot be judged on one node; give every node's results to compare them",
            ),
            (
                None,
                "fleet rule total_iops: max/min across nodes ≤ 1.1: cannot be judged: fewer than two nodes measured it; not measured on c",
            ),
            (
                None,
                "fleet rule total_iops: max/min across nodes ≤ 1.1: cannot be judged: fewer than two nodes measured it; not measured on a",
            ),
        ];
        assert_eq!(said.len(), expected.len());
        for (s, e) in said.iter().zip(expected) {
            assert_eq!((s.0, s.1.as_str()), *e);
        }

        // In fewer words: the nodes not measured counted; for a rule that fails, not said.
        let rows = |b: f64| {
            vec![
                node("a", Some(1000.0)),
                node("b", Some(b)),
                node("c", None),
                node("d", None),
            ]
        };
        let open = judge_fleet_rule(&rule, &rows(1050.0));
        assert_eq!(
            open.brief,
            open.text
                .replace("not measured on c, d", "not measured on 2 nodes")
        );
        assert_ne!(open.brief, open.text);
        let fails = judge_fleet_rule(&rule, &rows(2000.0));
        assert_eq!(
            fails.brief,
            fails.text.strip_suffix("; not measured on c, d").unwrap()
        );
    }
}
