//! More of the format-neutral view of one node's evaluation (`view.rs` has its types and the
//! runs and per-day tables): the rules table, the rule lines and the per-rule statistics (the
//! terminal's), and the notes that stand beside the verdict or under the report (deviations,
//! caveats, runs not counted, differences from the policy's test, warnings), each worded once
//! for every format.

use crate::evaluate::{Evaluation, Scope};
use crate::policy::Level;

use super::view::{Align, Cell, Column, Emphasis, Outcome, Row, RowKind, Table};
use crate::numbers::{fmt_precise, fmt_value};

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
                .map(|s| {
                    if s.bounded() {
                        format!("{}–{}", fmt_value(s.ci95_low), fmt_value(s.ci95_high))
                    } else {
                        TOO_FEW.into()
                    }
                })
                .unwrap_or("—".into());
            let range = stats
                .map(|s| format!("{}–{}", fmt_value(s.min), fmt_value(s.max)))
                .unwrap_or("—".into());
            let outcome = super::view::outcome(ev, r);
            let marginal = if r.marginal { " (undecided)" } else { "" };
            Row {
                kind: RowKind::Rule,
                cells: vec![
                    Cell::left(r.level.as_str()),
                    Cell::name(r.metric.as_str()),
                    Cell::right(r.value.map(fmt_value).unwrap_or("—".into())),
                    Cell::right(ci),
                    Cell::right(range),
                    Cell::right(format!("{} {}", r.threshold_text(fmt_precise), r.unit)),
                    Cell {
                        emphasis: Emphasis::Outcome(outcome),
                        ..Cell::left(format!(
                            "{}{marginal}{}",
                            outcome.words(),
                            r.fails_on
                                .as_deref()
                                .map(|w| format!(": {w}"))
                                .unwrap_or_default()
                        ))
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

/// How many of the runs left out of the verdict the Markdown and HTML reports list one by one
/// (the newest); `--format csv` lists every one.
pub const NOT_COUNTED_LISTED: usize = super::by_day::MAX_RUN_ROWS;

/// The runs left out of the verdict (not the policy's test, dated in the future), one row each
/// in time order: time, host, engine, source (with the file as detail) and why it was not
/// counted, in the words the CSV's `result` and the JSON's `not_counted[].reason` use. Past
/// [`NOT_COUNTED_LISTED`] runs, the newest that many ([`not_counted_note`] says so). Their
/// figures are left out: they are not evidence, and `--format csv` has them. None when every
/// run counted.
pub fn not_counted_table(ev: &Evaluation) -> Option<Table> {
    if ev.excluded.is_empty() {
        return None;
    }
    // In time order already: the runs of other tests as the history has them, then those
    // dated in the future, which are later than any other.
    let listed = &ev.excluded[ev.excluded.len().saturating_sub(NOT_COUNTED_LISTED)..];
    let columns = vec![
        Column::words("time", Align::Left),
        Column::words("host", Align::Left),
        Column::words("engine", Align::Left),
        Column::words("source", Align::Left),
        Column::words("not counted because", Align::Left),
    ];
    let rows = listed
        .iter()
        .map(|(run, why)| {
            let mut source = Cell::left(run.source.as_str());
            source.detail = run.source_file.as_deref().map(super::view::field);
            Row {
                // Plain: a row of the runs judged is a `Run`.
                kind: RowKind::Plain,
                cells: vec![
                    Cell::left(run.timestamp.format("%Y-%m-%d %H:%M:%S %:z").to_string()),
                    Cell::left(super::view::field(&run.host)),
                    Cell::left(super::view::field(&run.engine)),
                    source,
                    Cell::left(why.as_str()),
                ],
            }
        })
        .collect();
    Some(Table {
        title: "Not counted".into(),
        subject: None,
        class: "not-counted",
        wide: true,
        columns,
        rows,
    })
}

/// What the runs section says in place of the runs table when no run counted: "No runs.", or,
/// when runs were left out, that they are listed below it.
pub fn no_runs_words(ev: &Evaluation) -> &'static str {
    if ev.excluded.is_empty() {
        "No runs."
    } else {
        "No run counted towards the verdict; the runs left out are listed below."
    }
}

/// Said above the runs not counted: how many, and past [`NOT_COUNTED_LISTED`] that only the
/// newest are listed. None when every run counted.
pub fn not_counted_note(ev: &Evaluation) -> Option<String> {
    let n = ev.excluded.len();
    if n == 0 {
        return None;
    }
    let mut note = format!(
        "{n} run{} left out of the verdict, each with the reason",
        if n == 1 { "" } else { "s" }
    );
    if n > NOT_COUNTED_LISTED {
        note.push_str(&format!(
            "; the newest {NOT_COUNTED_LISTED} are listed, --format csv lists every one with its figures"
        ));
    }
    note.push('.');
    Some(note)
}

/// What a rule does to the verdict: it decides it (fail level, or warn level with `--strict`),
/// it is a soft limit (warn level), or it is only shown (info level).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Decides,
    Soft,
    Shown,
}

impl Role {
    pub fn of(r: &crate::evaluate::RuleResult, strict: bool) -> Role {
        if super::view::deciding(r, strict) {
            Role::Decides
        } else if r.level == Level::Warn {
            Role::Soft
        } else {
            Role::Shown
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Role::Decides => "decides",
            Role::Soft => "soft",
            Role::Shown => "shown",
        }
    }
}

/// How many failing runs a rule lists under it before "and N more".
pub const RUNS_LISTED: usize = 5;

/// One rule as a line of prose: `✓ decides  write_iops_formula  mean 29203 IOPS, needs ≥ 3000`,
/// the policy's note under it, and under a deciding rule the runs that miss it. Its figures
/// are rounded as the runs table's (`fmt_value`).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLine {
    /// "✓" met, "✗" missed, "?" not measured, "–" not judged (`not_judged`).
    pub mark: &'static str,
    pub role: Role,
    pub metric: String,
    /// The aggregate with its unit ("mean 29203 IOPS"), or "not measured".
    pub value: String,
    /// The comparison the figure must hold: "≥ 3000".
    pub needs: String,
    pub marginal: bool,
    /// Measured on runs that are not the policy's test: neither met nor missed
    /// ([`Outcome::NotJudged`]).
    pub not_judged: bool,
    pub note: Option<String>,
    /// Under a deciding rule judged on more than one run: the first [`RUNS_LISTED`] runs that
    /// miss it (where their test can fail: the policy's, or one that only flatters), each as its number (from 1) and its figure with the unit ("2554 IOPS").
    pub misses: Vec<(usize, String)>,
    /// How many more runs miss it than are listed.
    pub more_misses: usize,
    /// Why it fails although its aggregate meets the threshold ([`RuleResult::fails_on`]).
    pub fails_on: Option<String>,
}

/// The rules, one [`RuleLine`] each, in the policy's order.
pub fn rule_lines(ev: &Evaluation) -> Vec<RuleLine> {
    ev.rules
        .iter()
        .map(|r| {
            let role = Role::of(r, ev.strict);
            let unit = if r.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", r.unit)
            };
            let mut misses = Vec::new();
            let mut more_misses = 0;
            if role == Role::Decides && ev.runs.len() > 1 {
                // The first few are listed; the others, perhaps a year of them, only counted.
                for (n, v) in ev
                    .runs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, run)| run.metrics.get(&r.metric).map(|&v| (i + 1, v)))
                    .filter(|&(n, v)| super::view::judge_run(ev, r, n - 1, v) == Emphasis::Fail)
                {
                    if misses.len() < RUNS_LISTED {
                        misses.push((n, format!("{}{unit}", fmt_value(v))));
                    } else {
                        more_misses += 1;
                    }
                }
            }
            let not_judged = super::view::outcome(ev, r) == Outcome::NotJudged;
            RuleLine {
                mark: match r.passed {
                    None => "?",
                    Some(_) if not_judged => "–",
                    Some(true) => "✓",
                    Some(false) => "✗",
                },
                not_judged,
                role,
                metric: r.metric.clone(),
                value: match r.value {
                    Some(v) => format!("{} {}{unit}", r.aggregate.as_str(), fmt_value(v)),
                    None => "not measured".into(),
                },
                needs: r.threshold_text(crate::numbers::fmt_threshold),
                marginal: r.marginal,
                note: r.note.clone(),
                misses,
                more_misses,
                fails_on: r.fails_on.clone(),
            }
        })
        .collect()
}

/// How sure each judged rule's aggregate is: one row per warn- or fail-level rule whose
/// metric was measured — rule, runs, days, mean, median, stdev, CV, the 95% interval of the
/// mean and the threshold. None when no such rule was measured.
pub fn rule_stats_table(ev: &Evaluation) -> Option<Table> {
    let columns = [
        ("rule", Align::Left),
        ("n", Align::Right),
        ("days", Align::Right),
        ("mean", Align::Right),
        ("median", Align::Right),
        ("stdev", Align::Right),
        ("CV", Align::Right),
        ("95% CI", Align::Right),
        ("threshold", Align::Right),
    ]
    .into_iter()
    .map(|(title, align)| Column::words(title, align))
    .collect();
    let rows: Vec<Row> = ev
        .rules
        .iter()
        .filter(|r| r.level != Level::Info)
        .filter_map(|r| {
            let st = ev.summary.metrics.get(&r.metric)?;
            let days: std::collections::BTreeSet<_> = ev
                .runs
                .iter()
                .filter(|run| run.metrics.contains_key(&r.metric))
                .map(crate::evaluate::day_of)
                .collect();
            Some(Row {
                kind: RowKind::Rule,
                cells: vec![
                    Cell::name(r.metric.as_str()),
                    Cell::right(st.n.to_string()),
                    Cell::right(days.len().to_string()),
                    Cell::right(fmt_value(st.mean)),
                    Cell::right(fmt_value(st.median)),
                    Cell::right(fmt_value(st.stdev)),
                    Cell::right(format!("{:.0}%", st.cv * 100.0)),
                    Cell::right(if st.bounded() {
                        format!("{}–{}", fmt_value(st.ci95_low), fmt_value(st.ci95_high))
                    } else {
                        TOO_FEW.into()
                    }),
                    Cell::right(r.threshold_text(crate::numbers::fmt_threshold)),
                ],
            })
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: "Per rule".into(),
        subject: None,
        class: "rule-stats",
        wide: false,
        columns,
        rows,
    })
}

/// What stands beside the verdict in every format, one line each: the deciding figure over
/// the latest day beside the window's (when the window holds more than one day), the
/// deviations from the policy's test (and which way they can move the result), the caveats,
/// the runs not counted.
pub fn beside_verdict(ev: &Evaluation) -> Vec<String> {
    beside_verdict_lines(ev)
        .into_iter()
        .map(|(_, line)| line)
        .collect()
}

/// [`beside_verdict`]'s lines, each with the deviation it names, if it names one.
pub fn beside_verdict_lines(
    ev: &Evaluation,
) -> Vec<(Option<&crate::deviation::Deviation>, String)> {
    let mut out = Vec::new();
    if let Some(r) = ev.primary_rule()
        && let (Some(l), Some(v)) = (&r.latest_day, r.value)
        && ev.evidence.dates() > 1
    {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", r.unit)
        };
        out.push((
            None,
            format!(
                "latest day {}: {} {} {}{unit} over {} run{} (the window's: {}{unit})",
                l.date,
                r.aggregate.as_str(),
                r.metric,
                fmt_value(l.value),
                l.runs,
                if l.runs == 1 { "" } else { "s" },
                fmt_value(v),
            ),
        ));
    }
    for d in &ev.deviations {
        out.push((
            Some(d),
            format!(
                "{}: {d} ({})",
                d.headline(),
                match (d.effect, d.is_unknown()) {
                    (crate::deviation::Effect::Flatters, false) => "flatters the disk",
                    (crate::deviation::Effect::Flatters, true) => "unknown, could flatter the disk",
                    (crate::deviation::Effect::EitherWay, false) => "could go either way",
                    (crate::deviation::Effect::EitherWay, true) => "unknown, could go either way",
                }
            ),
        ));
    }
    for c in &ev.caveats {
        out.push((None, format!("caveat: {c}")));
    }
    for n in &ev.not_counted {
        out.push((None, n.to_string()));
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
            ev.evidence_line(),
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

/// What the interval's cell says where the runs are too few for one (`Stats::bounded`).
pub const TOO_FEW: &str = "too few runs";

#[cfg(test)]
mod tests {
    use crate::numbers::fmt_value;

    /// The rules table's header and rows as Markdown and as HTML show them, cell by cell.
    fn both(runs: Vec<crate::history::Record>) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
        let (ev, records) =
            crate::evaluate::tests::swimlane_report_held(runs, "2026-11-03T00:00:00Z");
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
        super::super::html::render(&ev, &records, &mut html).unwrap();
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

    /// Eight runs over two days under swimlane: the first at 16 MB/s (4096 IOPS by the
    /// formula), the seven after it at 8 MB/s (2048: below 3000).
    fn eight_runs() -> crate::evaluate::Evaluation {
        let runs: Vec<_> = (0..8)
            .map(|i| {
                crate::evaluate::tests::rec(
                    &format!("2026-11-0{}T1{i}:00:00Z", 1 + i / 4),
                    if i == 0 { 16.0 } else { 8.0 },
                )
            })
            .collect();
        crate::evaluate::tests::swimlane_report(runs, "2026-11-03T00:00:00Z")
    }

    #[test]
    fn a_deciding_rule_lists_the_first_runs_that_miss_it_and_counts_the_rest() {
        let ev = eight_runs();
        let lines = super::rule_lines(&ev);
        assert_eq!(lines.len(), ev.rules.len());
        let decides = &lines[0];
        assert_eq!(decides.metric, "write_iops_formula");
        assert_eq!(decides.role, super::Role::Decides);
        // the mean, (4096 + 7 × 2048) / 8, misses 3000
        assert_eq!(decides.mark, "✗");
        let unit = ev.rules[0].unit;
        assert_eq!(
            decides.value,
            format!("mean {} {unit}", fmt_value(18432.0 / 8.0))
        );
        assert_eq!(decides.needs, "≥ 3000");
        let listed: Vec<usize> = decides.misses.iter().map(|(n, _)| *n).collect();
        assert_eq!(listed, [2, 3, 4, 5, 6], "run 1 meets the rule");
        assert_eq!(decides.misses[0].1, format!("{} {unit}", fmt_value(2048.0)));
        assert_eq!(decides.more_misses, 2);
        // the info-level rules are only shown, and list no runs
        for l in &lines[1..] {
            assert_eq!(l.role, super::Role::Shown, "{l:?}");
            assert!(l.misses.is_empty() && l.more_misses == 0, "{l:?}");
        }
    }

    #[test]
    fn the_rule_statistics_judge_only_the_rules_that_can_decide() {
        let ev = eight_runs();
        let t = super::rule_stats_table(&ev).unwrap();
        let titles: Vec<&str> = t.columns.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "rule",
                "n",
                "days",
                "mean",
                "median",
                "stdev",
                "CV",
                "95% CI",
                "threshold"
            ]
        );
        // swimlane's other two rules are info-level: shown, never judged
        assert_eq!(t.rows.len(), 1);
        let cells: Vec<&str> = t.rows[0].cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(cells[..3], ["write_iops_formula", "8", "2"]);
        assert_eq!(cells[3], fmt_value(18432.0 / 8.0));
        assert_eq!(cells[4], fmt_value(2048.0), "the median");
        assert_eq!(cells[8], "≥ 3000");
    }

    #[test]
    fn past_the_limit_the_newest_runs_not_counted_are_listed_and_the_note_says_so() {
        let n = super::NOT_COUNTED_LISTED + 50;
        let start = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap();
        let runs: Vec<_> = (0..n)
            .map(|i| {
                let ts = start + chrono::Duration::minutes(10 * i as i64);
                let mut r = crate::evaluate::tests::rec(&ts.to_rfc3339(), 16.0);
                r.job.size = Some(64 << 20);
                r
            })
            .collect();
        let ev = crate::evaluate::tests::swimlane_report(runs, "2026-11-10T00:00:00Z");
        assert!(ev.runs.is_empty());
        assert_eq!(
            super::no_runs_words(&ev),
            "No run counted towards the verdict; the runs left out are listed below."
        );
        let t = super::not_counted_table(&ev).unwrap();
        assert_eq!(t.rows.len(), super::NOT_COUNTED_LISTED);
        // the newest: from the 51st run on
        let first = start + chrono::Duration::minutes(10 * 50);
        assert_eq!(
            t.rows[0].cells[0].text,
            first.format("%Y-%m-%d %H:%M:%S %:z").to_string()
        );
        assert_eq!(t.rows[0].cells[4].text, "size 64 MiB instead of 4 GiB");
        let note = super::not_counted_note(&ev).unwrap();
        assert_eq!(
            note,
            format!(
                "{n} runs left out of the verdict, each with the reason; the newest 200 are listed, --format csv lists every one with its figures."
            )
        );
        // every run counted: nothing to list
        let ev = eight_runs();
        assert!(super::not_counted_table(&ev).is_none());
        assert!(super::not_counted_note(&ev).is_none());
        assert_eq!(super::no_runs_words(&ev), "No runs.");
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
