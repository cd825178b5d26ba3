//! The format-neutral view of a fleet, as `view.rs` is of one node's evaluation: the node
//! table's columns and each node's cells, the fleet's notes. Which figure a node shows, how it
//! is rounded, the mark it earns against its threshold, what an empty field reads as, and how
//! a warning names its node are decided here once; the fleet's formats (`fleet/`) lay the
//! cells out in their own syntax and leave out what they have no room for.

use crate::deviation::Effect;
use crate::evaluate::Verdict;
use crate::fleet::{Fleet, NodeRow, RowSource};

use super::view::{Align, Cell, Column, Emphasis, field};
use crate::numbers::fmt_precise;
use crate::numbers::fmt_value;

/// One node's row, every cell as the formats show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// "node1", or "node1 /data posixaio" where the host has several rows.
    pub label: String,
    pub host: Cell,
    /// The directory, "—" when not stated.
    pub dir: Cell,
    /// The engine, "—" when not stated.
    pub engine: Cell,
    /// Where the verdict came from (result, history, missing), with the file as its detail.
    pub source: Cell,
    pub runs: Cell,
    pub days: Cell,
    /// The deciding rule's aggregate ("—" when not measured), emphasised Pass or Fail against
    /// the node's threshold; the text carries no mark (see [`Emphasis::mark`]).
    pub value: Cell,
    /// "≥ 3000", or empty without a threshold.
    pub threshold: Cell,
    pub verdict: Verdict,
    pub reason: String,
    /// Which evidence the verdict is of: "sitting", "history" or "nothing".
    pub on: Cell,
}

impl Node {
    /// The value as the terminal shows it: with its ✓/✗ mark.
    pub fn value_marked(&self) -> String {
        format!("{}{}", self.value.text, self.value.emphasis.mark())
    }

    /// "PASS", "FAIL", "INCONCLUSIVE".
    pub fn verdict_word(&self) -> String {
        self.verdict.as_str().to_uppercase()
    }
}

/// A note about the fleet: a node's warning (with the node's label) or one about the set of
/// files.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub node: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FleetView {
    /// The value column: "mean write_iops_formula" (or "value" without a deciding rule) and
    /// its unit.
    pub value: Column,
    /// The nodes run on more than one engine (the terminal shows the column only then).
    pub engines_differ: bool,
    /// Some node was judged from a history, over the fleet's window.
    pub from_history: bool,
    pub nodes: Vec<Node>,
    /// The nodes' warnings, node by node, then those about the set of files.
    pub notes: Vec<Note>,
}

/// "≥ 3000" for a row: the threshold it was judged against, with the policy's operator.
fn threshold_text(fleet: &Fleet, row: &NodeRow) -> String {
    match (&fleet.head, row.threshold) {
        (Some(h), Some(t)) => format!("{} {}", h.op, fmt_precise(t)),
        _ => String::new(),
    }
}

fn node(fleet: &Fleet, r: &NodeRow) -> Node {
    let met = match (r.value, &fleet.head, r.threshold) {
        (Some(v), Some(h), Some(t)) if h.op.holds(v, t) => Emphasis::Pass,
        (Some(_), Some(_), Some(_)) => Emphasis::Fail,
        _ => Emphasis::None,
    };
    // As a node's own report marks it: a ✓ only on the policy's test, a ✗ on it or on a test
    // that only flatters; a figure of another test is shown plainly (the reason says why).
    let emphasis = match (met, r.standing) {
        (e, None) => e,
        (Emphasis::Fail, Some(Effect::Flatters)) => Emphasis::Fail,
        _ => Emphasis::None,
    };
    let mut source = Cell::left(r.source.as_str());
    source.detail = Some(field(&r.file));
    Node {
        label: r.label(fleet),
        host: Cell::left(field(&r.host)),
        dir: Cell::left(field(&r.dir)),
        engine: Cell::left(field(&r.engine)),
        source,
        runs: Cell::right(r.runs.to_string()),
        days: Cell::right(r.days.to_string()),
        value: Cell {
            emphasis,
            ..Cell::right(r.value.map(fmt_value).unwrap_or("—".into()))
        },
        threshold: Cell::right(threshold_text(fleet, r)),
        verdict: r.verdict,
        reason: r.reason.clone(),
        on: Cell::left(r.basis().as_str()),
    }
}

pub fn fleet_view(fleet: &Fleet) -> FleetView {
    let nodes: Vec<Node> = fleet.rows.iter().map(|r| node(fleet, r)).collect();
    // A warning several nodes share is said once, with how many and which (the first few):
    // "smaller than RAM" on eight alike nodes is one line, not eight.
    let mut shared: Vec<(String, Vec<String>)> = Vec::new();
    for (r, n) in fleet.rows.iter().zip(&nodes) {
        for w in &r.warnings {
            match shared.iter_mut().find(|(t, _)| t == w) {
                Some((_, labels)) => labels.push(n.label.clone()),
                None => shared.push((w.clone(), vec![n.label.clone()])),
            }
        }
    }
    const NAMED: usize = 3;
    let mut notes: Vec<Note> = shared
        .into_iter()
        .map(|(text, labels)| {
            let node = match labels.len() {
                1 => labels[0].clone(),
                n if n <= NAMED => format!("{n} {}s ({})", fleet.nouns().one, labels.join(", ")),
                n => format!(
                    "{n} {}s ({}, and {} more)",
                    fleet.nouns().one,
                    labels[..NAMED].join(", "),
                    n - NAMED
                ),
            };
            Note {
                node: Some(node),
                text,
            }
        })
        .collect();
    notes.extend(fleet.warnings.iter().map(|w| Note {
        node: None,
        text: w.clone(),
    }));
    let engines: std::collections::BTreeSet<&str> =
        fleet.rows.iter().map(|r| r.engine.as_str()).collect();
    FleetView {
        value: Column {
            title: fleet.value_title(),
            unit: fleet.head.as_ref().map(|h| h.unit).unwrap_or("").into(),
            align: Align::Right,
            name: true,
        },
        engines_differ: engines.len() > 1,
        from_history: fleet.rows.iter().any(|r| r.source == RowSource::History),
        nodes,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::tests::{fleet, row};

    #[test]
    fn every_format_gets_the_same_marks_dashes_labels_and_notes() {
        let mut low = row("node2", Verdict::Fail, 2500.0);
        low.warnings.push("only one day of runs".into());
        let mut bare = row("node2", Verdict::Pass, 4000.0);
        bare.dir = String::new();
        bare.engine = "io_uring".into();
        let mut f = fleet(vec![row("node1", Verdict::Pass, 3500.0), low, bare]);
        f.warnings.push("node3.json was given twice".into());
        let v = fleet_view(&f);

        assert_eq!(v.value.title, "mean write_iops_formula");
        assert_eq!(v.value.unit, "IOPS");
        assert!(v.engines_differ && v.from_history);
        let marks: Vec<String> = v.nodes.iter().map(Node::value_marked).collect();
        assert_eq!(marks, ["3500 ✓", "4000 ✓", "2500 ✗"]);
        assert_eq!(v.nodes[1].dir.text, "—");
        assert_eq!(v.nodes[2].label, "node2 /data posixaio");
        assert_eq!(v.nodes[2].threshold.text, "≥ 3000");
        assert_eq!(v.nodes[2].verdict_word(), "FAIL");
        assert_eq!(
            v.notes,
            [
                Note {
                    node: Some("node2 /data posixaio".into()),
                    text: "only one day of runs".into()
                },
                Note {
                    node: None,
                    text: "node3.json was given twice".into()
                },
            ]
        );
    }
}
