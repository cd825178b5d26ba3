//! A set of one host's raw devices judged by its policy's spread rules (`devices.spread`,
//! policy/devices.rs): each as a fleet rule over the devices' rows, said in the devices' terms
//! and, for IBM's bound, with IBM's difference percentage.

use super::spread::{self, FleetRuleResult, Terms};
use super::{NodeRow, Nouns};
use crate::policy::devices::SpreadRule;

/// Judges a spread rule over the devices' rows: as a fleet rule, said in the devices' terms
/// and, for IBM's bound, with IBM's difference percentage. A spread measured by another test
/// than the policy's says nothing of the policy's: it could be wider or narrower, so it is
/// never a verdict, either way.
pub fn judge(rule: &SpreadRule, rows: &[NodeRow]) -> FleetRuleResult {
    let bound = rule.as_fleet_rule();
    let terms = Terms {
        rule: format!(
            "spread of {} across devices: {}",
            rule.metric,
            rule.describe()
        ),
        nouns: Nouns::DEVICES,
        bound: rule.bound,
        give_all: "name every drive of the type with --device to compare them",
    };
    let mut found = spread::judge(&bound, rows, &terms);
    let off: Vec<&str> = rows
        .iter()
        .filter(|row| row.standing.is_some())
        .map(|row| row.dir.as_str())
        .collect();
    if !off.is_empty() && found.passed.is_some() {
        found.passed = None;
        let not_judged = |said: &str| {
            format!(
                "not judged, the runs of {} are not the policy's test (on them it {said})",
                off.join(", ")
            )
        };
        found.said = not_judged(&found.said);
        found.said_brief = not_judged(&found.said_brief);
    }
    found.result(&bound, &terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;
    use crate::policy::Level;
    use crate::policy::devices::Bound;

    fn dev(path: &str, v: Option<f64>) -> NodeRow {
        let mut r = super::super::tests::row("node1", Verdict::Pass, 0.0);
        r.dir = path.into();
        r.figures = v
            .map(|v| ("read_iops_mean".to_string(), v))
            .into_iter()
            .collect();
        r
    }

    fn rule(bound: Bound) -> SpreadRule {
        SpreadRule {
            metric: "read_iops_mean".into(),
            bound,
            level: Level::Fail,
            note: None,
        }
    }

    /// What a spread rule says in each case, word for word, for both kinds of bound and with
    /// a device off the policy's test: the text `run --device` and `report` carry.
    #[test]
    fn a_spread_says_each_case_in_the_devices_terms() {
        let sets: Vec<Vec<NodeRow>> = vec![
            vec![dev("/dev/a", Some(1000.0)), dev("/dev/b", Some(1050.0))],
            vec![dev("/dev/a", Some(1000.0)), dev("/dev/b", Some(2000.0))],
            vec![dev("/dev/a", Some(1000.0)), dev("/dev/b", Some(0.0))],
            vec![
                dev("/dev/a", Some(1000.0)),
                dev("/dev/b", Some(1050.0)),
                dev("/dev/c", None),
            ],
            vec![
                dev("/dev/a", Some(1000.0)),
                dev("/dev/b", Some(2000.0)),
                dev("/dev/c", None),
            ],
            vec![dev("/dev/a", Some(1000.0))],
            vec![dev("/dev/a", Some(1000.0)), dev("/dev/c", None)],
            vec![dev("/dev/a", None)],
        ];
        let mut said: Vec<(Option<bool>, String)> = Vec::new();
        for b in [Bound::MaxDiffPct(10.0), Bound::MaxOverMin(1.1)] {
            for s in &sets {
                let r = judge(&rule(b), s);
                said.push((r.passed, r.text));
                let mut off = s.clone();
                off[0].standing = Some(crate::deviation::Effect::Flatters);
                let r = judge(&rule(b), &off);
                said.push((r.passed, r.text));
            }
        }
        let expected: &[(Option<bool>, &str)] = &[
            (
                Some(true),
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: meets it, difference 4.76% (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS)",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: not judged, the runs of /dev/a are not the policy's test (on them it meets it, difference 4.76% (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS))",
            ),
            (
                Some(false),
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: fails, difference 50.00% (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: not judged, the runs of /dev/a are not the policy's test (on them it fails, difference 50.00% (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it)",
            ),
            (
                Some(false),
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: fails, difference 100.00% (node1 /dev/a 1000 IOPS / node1 /dev/b 0 IOPS) exceeds it",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: not judged, the runs of /dev/a are not the policy's test (on them it fails, difference 100.00% (node1 /dev/a 1000 IOPS / node1 /dev/b 0 IOPS) exceeds it)",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged over every device: difference 4.76% (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS) so far; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged over every device: difference 4.76% (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS) so far; not measured on node1 /dev/c",
            ),
            (
                Some(false),
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: fails, difference 50.00% (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: not judged, the runs of /dev/a are not the policy's test (on them it fails, difference 50.00% (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it; not measured on node1 /dev/c)",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged on one device; name every drive of the type with --device to compare them",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged on one device; name every drive of the type with --device to compare them",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged: fewer than two devices measured it; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged: fewer than two devices measured it; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged: fewer than two devices measured it; not measured on node1",
            ),
            (
                None,
                "spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: cannot be judged: fewer than two devices measured it; not measured on node1",
            ),
            (
                Some(true),
                "spread of read_iops_mean across devices: max/min ≤ 1.1: meets it, max/min 1.05 (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS)",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: not judged, the runs of /dev/a are not the policy's test (on them it meets it, max/min 1.05 (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS))",
            ),
            (
                Some(false),
                "spread of read_iops_mean across devices: max/min ≤ 1.1: fails, max/min 2 (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: not judged, the runs of /dev/a are not the policy's test (on them it fails, max/min 2 (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it)",
            ),
            (
                Some(false),
                "spread of read_iops_mean across devices: max/min ≤ 1.1: fails, max/min unbounded (node1 /dev/a 1000 IOPS / node1 /dev/b 0 IOPS) exceeds it",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: not judged, the runs of /dev/a are not the policy's test (on them it fails, max/min unbounded (node1 /dev/a 1000 IOPS / node1 /dev/b 0 IOPS) exceeds it)",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged over every device: max/min 1.05 (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS) so far; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged over every device: max/min 1.05 (node1 /dev/b 1050 IOPS / node1 /dev/a 1000 IOPS) so far; not measured on node1 /dev/c",
            ),
            (
                Some(false),
                "spread of read_iops_mean across devices: max/min ≤ 1.1: fails, max/min 2 (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: not judged, the runs of /dev/a are not the policy's test (on them it fails, max/min 2 (node1 /dev/b 2000 IOPS / node1 /dev/a 1000 IOPS) exceeds it; not measured on node1 /dev/c)",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged on one device; name every drive of the type with --device to compare them",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged on one device; name every drive of the type with --device to compare them",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged: fewer than two devices measured it; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged: fewer than two devices measured it; not measured on node1 /dev/c",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged: fewer than two devices measured it; not measured on node1",
            ),
            (
                None,
                "spread of read_iops_mean across devices: max/min ≤ 1.1: cannot be judged: fewer than two devices measured it; not measured on node1",
            ),
        ];
        assert_eq!(said.len(), expected.len());
        for (s, e) in said.iter().zip(expected) {
            assert_eq!((s.0, s.1.as_str()), *e);
        }
    }
}
