//! A set of one host's raw devices judged by its policy's spread rules (`devices.spread`,
//! policy/devices.rs): each as a fleet rule over the devices' rows, said in the devices' terms
//! and, for IBM's bound, with IBM's difference percentage.

use super::{FleetRuleResult, NodeRow};
use crate::policy::devices::{Bound, SpreadRule};

/// Judges a spread rule over the devices' rows: as a fleet rule, said in the device's terms
/// and, for IBM's bound, with IBM's difference percentage.
pub fn judge(rule: &SpreadRule, rows: &[NodeRow]) -> FleetRuleResult {
    let mut r = super::judge_fleet_rule(&rule.as_fleet_rule(), rows);
    let head_fleet = format!(
        "fleet rule {}: max/min across nodes ≤ {}",
        rule.metric,
        crate::numbers::fmt_precise(r.max_over_min)
    );
    let head = format!(
        "spread of {} across devices: {}",
        rule.metric,
        rule.describe()
    );
    let mut text = r.text.replacen(&head_fleet, &head, 1);
    if let (Bound::MaxDiffPct(_), Some(ratio)) = (rule.bound, r.ratio) {
        let pct = if ratio.is_finite() {
            100.0 * (1.0 - 1.0 / ratio)
        } else {
            100.0
        };
        text = text.replacen(
            &format!("max/min {}", crate::numbers::fmt_precise(ratio)),
            &format!("difference {pct:.2}%"),
            1,
        );
    }
    r.text = text
        .replace(
            "cannot be judged on one node; give every node's results to compare them",
            "cannot be judged on one device; name every drive of the type with --device to compare them",
        )
        .replace("over every node", "over every device")
        .replace("fewer than two nodes", "fewer than two devices");
    // A spread measured by another test than the policy's says nothing of the policy's: it
    // could be wider or narrower. Never a verdict, either way.
    let off: Vec<&str> = rows
        .iter()
        .filter(|row| row.standing.is_some())
        .map(|row| row.dir.as_str())
        .collect();
    if !off.is_empty() && r.passed.is_some() {
        r.passed = None;
        let measured = r.text.strip_prefix(&format!("{head}: ")).unwrap_or(&r.text);
        r.text = format!(
            "{head}: not judged, the runs of {} are not the policy's test (on them it {measured})",
            off.join(", ")
        );
    }
    r
}
