//! More of the format-neutral view of one node's evaluation (`view.rs` has its types and the
//! runs and per-day tables): the rules table, and the notes that stand beside the verdict or
//! under the report (deviations, caveats, runs not counted, differences from the policy's
//! test, warnings), each worded once for every format.

use crate::evaluate::{Evaluation, Scope};

use super::view::{Align, Cell, Column, Emphasis, Outcome, Row, RowKind, Table};
use super::{fmt_precise, fmt_value};

/// One row per rule: level, metric, the aggregate, the 95% interval of the mean (with two runs
/// or more), the runs' range, the threshold, the outcome and the policy's note. None for a
/// policy without rules.
pub fn rules_table(ev: &Evaluation) -> Option<Table> {
    if ev.rules.is_empty() {
        return None;
    }
    let columns = vec![
        Column::words("level", Align::Left),
        Column::words("metric", Align::Left),
        Column::words(ev.policy.aggregate.as_str(), Align::Right),
        Column::words("95% interval", Align::Right),
        Column::words("min–max", Align::Right),
        Column::words("threshold", Align::Right),
        Column::words("result", Align::Left),
        Column::words("note", Align::Left),
    ];
    let rows = ev
        .rules
        .iter()
        .map(|r| {
            let stats = ev.summary.metrics.get(&r.metric);
            let ci = stats
                .filter(|s| s.n > 1)
                .map(|s| format!("{}–{}", fmt_value(s.ci95_low), fmt_value(s.ci95_high)))
                .unwrap_or("—".into());
            let range = stats
                .map(|s| format!("{}–{}", fmt_value(s.min), fmt_value(s.max)))
                .unwrap_or("—".into());
            let outcome = Outcome::of(r, ev.strict);
            let marginal = if r.marginal { " (marginal)" } else { "" };
            Row {
                kind: RowKind::Rule,
                cells: vec![
                    Cell::left(r.level.as_str()),
                    Cell::name(r.metric.as_str()),
                    Cell::right(r.value.map(fmt_precise).unwrap_or("—".into())),
                    Cell::right(ci),
                    Cell::right(range),
                    Cell::right(format!("{} {} {}", r.op, fmt_precise(r.threshold), r.unit)),
                    Cell {
                        emphasis: Emphasis::Outcome(outcome),
                        ..Cell::left(format!("{}{marginal}", outcome.words()))
                    },
                    Cell::left(r.note.as_deref().unwrap_or("")),
                ],
            }
        })
        .collect();
    Some(Table {
        title: "Rules".into(),
        subject: None,
        class: "rules",
        wide: true,
        columns,
        rows,
    })
}

/// What stands beside the verdict in every format, one line each: the deviations from the
/// policy's test (and which way they can move the result), the caveats, the runs not counted.
pub fn beside_verdict(ev: &Evaluation) -> Vec<String> {
    let mut out = Vec::new();
    for d in &ev.deviations {
        out.push(format!(
            "not the policy's test: {d} ({})",
            match d.effect {
                crate::deviation::Effect::Flatters => "flatters the disk",
                crate::deviation::Effect::EitherWay => "could go either way",
            }
        ));
    }
    for c in &ev.caveats {
        out.push(format!("caveat: {c}"));
    }
    for n in &ev.not_counted {
        out.push(n.to_string());
    }
    out
}

/// What the runs judged are, in words: "the history over the window".
pub fn scope_words(s: Scope) -> &'static str {
    match s {
        Scope::Run => "the runs of this invocation",
        Scope::Import => "imported fio outputs",
        Scope::Report => "the history over the window",
    }
}

/// Said after what was judged when warn-level rules decide too; empty otherwise.
pub fn strict_words(strict: bool) -> &'static str {
    if strict {
        "; strict: warn-level rules decide too"
    } else {
        ""
    }
}

/// The notes of a report, worded once.
#[derive(Debug, Clone, PartialEq)]
pub struct Notes {
    /// See [`beside_verdict`].
    pub beside_verdict: Vec<String>,
    /// Where the evidence stands against the policy's rule, its window, and (outside a
    /// report) that a report applies it.
    pub evidence: String,
    /// How the runs' job differs from the policy's test.
    pub differences: Vec<String>,
    pub warnings: Vec<String>,
}

pub fn notes(ev: &Evaluation) -> Notes {
    Notes {
        beside_verdict: beside_verdict(ev),
        evidence: format!(
            "{} (window {}){}",
            ev.evidence.advice(),
            ev.evidence.window,
            if ev.scope == Scope::Report {
                ""
            } else {
                "; a report over the history applies this rule"
            }
        ),
        differences: ev.differences.iter().map(|d| d.to_string()).collect(),
        warnings: ev.warnings.iter().map(|w| w.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::evaluate::{Options, Scope, evaluate};

    /// The rules table's header and rows as Markdown and as HTML show them, cell by cell.
    fn both(runs: Vec<crate::history::Record>) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-03T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let ev = evaluate(runs, &policy, &Options::new(Scope::Report, now));
        let mut md = Vec::new();
        super::super::markdown::render(&ev, &mut md).unwrap();
        let md = String::from_utf8(md).unwrap();
        let rules = md.split("## Rules\n\n").nth(1).unwrap();
        let md_rows = rules
            .lines()
            .take_while(|l| l.starts_with('|'))
            .filter(|l| !l.starts_with("| ---"))
            .map(|l| {
                l.trim_matches('|')
                    .split(" | ")
                    .map(|c| c.trim().trim_matches('`').replace('\\', ""))
                    .map(|c| {
                        c.trim_start_matches(['✅', '❌', '⚠', '\u{fe0f}', ' '])
                            .to_string()
                    })
                    .collect()
            })
            .collect();
        let mut html = Vec::new();
        super::super::html::render(&ev, &mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        let table = html.split("<table class=\"rules\">").nth(1).unwrap();
        let table = table.split("</table>").next().unwrap();
        let html_rows = table
            .split("</tr>")
            .filter(|r| r.contains("<t"))
            .map(|r| {
                // "<th>a</th><td class=..>b</td>": each cell's text ends where "</t" begins.
                let mut pieces: Vec<&str> = r.split("</t").collect();
                pieces.pop();
                pieces
                    .iter()
                    .filter_map(|c| c.rsplit_once('>').map(|(_, t)| t))
                    .map(|t| t.replace("&lt;", "<").replace("&gt;", ">"))
                    .collect()
            })
            .collect();
        (md_rows, html_rows)
    }

    #[test]
    fn markdown_and_html_show_the_same_rules_table() {
        let runs = (0..4)
            .map(|i| {
                crate::evaluate::tests::rec(
                    &format!("2026-11-0{}T10:00:00Z", 1 + i % 2),
                    11.0 + i as f64,
                )
            })
            .collect();
        let (md, html) = both(runs);
        assert_eq!(
            md[0][..5],
            ["level", "metric", "mean", "95% interval", "min–max"]
        );
        assert_eq!(md.len(), 4, "a header and the policy's three rules: {md:?}");
        assert_eq!(md, html);
    }
}
