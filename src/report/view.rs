//! The format-neutral view of an evaluation: what a report shows, decided once, for every
//! format to render with its own syntax and escaping only.
//!
//! A [`Table`] is a titled grid of [`Cell`]s, each with its alignment and [`Emphasis`]; the
//! formats map those to their own means (Markdown: `---:` and `**bold**`; HTML: the `num`,
//! `pass` and `fail` classes). Which columns a table has, which figures fill it, how they are
//! rounded and which ✓/✗ mark a figure earns against its rule live here, so they cannot drift
//! apart between formats.
//!
//! This file has the view's types, the runs table and the per-day table (Markdown and HTML),
//! and the per-rule marks and outcomes (Markdown, HTML, JUnit, the terminal table and its
//! by-day rows). `view_node.rs` adds the rules table and the notes, `view_fleet.rs` the
//! fleet's nodes and warnings.

use crate::evaluate::{Evaluation, RuleResult};
use crate::policy::Level;

use super::fmt_value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What a cell stresses; each format chooses how to show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emphasis {
    None,
    /// The aggregate the verdict is judged on.
    Strong,
    /// A figure that meets its rule's threshold.
    Pass,
    /// A figure that misses its rule's threshold.
    Fail,
    /// The cell says what became of a rule, in its outcome's words.
    Outcome(Outcome),
}

impl Emphasis {
    /// The mark a judged figure carries in text: " ✓", " ✗", or nothing.
    pub fn mark(self) -> &'static str {
        match self {
            Emphasis::Pass => " ✓",
            Emphasis::Fail => " ✗",
            _ => "",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    /// More about the cell (the file a run was read from), for formats with room for it.
    pub detail: Option<String>,
    pub align: Align,
    pub emphasis: Emphasis,
    /// How many columns the cell covers (1 but for a row's label).
    pub span: usize,
    /// The text is a name from a policy or a record (a metric), not our own words (Markdown
    /// sets it as code).
    pub name: bool,
}

impl Cell {
    pub fn left(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            detail: None,
            align: Align::Left,
            emphasis: Emphasis::None,
            span: 1,
            name: false,
        }
    }

    /// A name from a policy or a record, left-aligned.
    pub fn name(text: impl Into<String>) -> Cell {
        Cell {
            name: true,
            ..Cell::left(text)
        }
    }

    pub fn right(text: impl Into<String>) -> Cell {
        Cell {
            align: Align::Right,
            ..Cell::left(text)
        }
    }

    pub(super) fn strong(mut self) -> Cell {
        self.emphasis = Emphasis::Strong;
        self
    }

    /// The figure with its rule's mark.
    pub fn judged(r: &RuleResult, v: f64) -> Cell {
        let emphasis = judge(r, v);
        Cell {
            emphasis,
            ..Cell::right(format!("{}{}", fmt_value(v), emphasis.mark()))
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub title: String,
    /// The unit under or beside the title; empty for none.
    pub unit: String,
    pub align: Align,
    /// The title is a name from a policy or a record (a metric), not our own words: formats
    /// escape it (Markdown sets it as code).
    pub name: bool,
}

impl Column {
    pub(super) fn words(title: &str, align: Align) -> Column {
        Column {
            title: title.into(),
            unit: String::new(),
            align,
            name: false,
        }
    }
}

/// What a row is, for formats that style rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Plain,
    /// One run.
    Run,
    /// The aggregate the rules judge.
    Aggregate,
    /// One rule of the policy.
    Rule,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub kind: RowKind,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    /// A name the title is about (the metric of the per-day table), set apart by formats.
    pub subject: Option<String>,
    /// A stable name of the table (`runs`, `days`): HTML's class.
    pub class: &'static str,
    /// The table may be wider than a page: HTML lets it scroll.
    pub wide: bool,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// "—" for a field that is not stated (an empty host, directory or engine).
pub fn dash(s: &str) -> &str {
    if s.is_empty() { "—" } else { s }
}

/// How a figure fares against its rule: Pass or Fail, or None for an info-level rule (shown,
/// never judged).
pub fn judge(r: &RuleResult, v: f64) -> Emphasis {
    match r.level {
        Level::Info => Emphasis::None,
        _ if r.op.holds(v, r.threshold) => Emphasis::Pass,
        _ => Emphasis::Fail,
    }
}

/// Each metric a rule names, once, with its first rule (for the per-run ✓/✗ marks).
pub fn rule_columns(ev: &Evaluation) -> Vec<&RuleResult> {
    let mut cols: Vec<&RuleResult> = Vec::new();
    for r in &ev.rules {
        if !cols.iter().any(|c| c.metric == r.metric) {
            cols.push(r);
        }
    }
    cols
}

/// Whether a rule decides the verdict: a fail-level rule, or a warn-level one with `--strict`.
pub fn deciding(r: &RuleResult, strict: bool) -> bool {
    r.level == Level::Fail || (strict && r.level == Level::Warn)
}

/// What became of a rule, in words every format shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    NotMeasured,
    Meets,
    /// Missed by a rule that decides (fail level, or warn level with `--strict`).
    Fails,
    /// A warn-level rule missed without `--strict`.
    Soft,
    /// An info-level rule missed.
    ShownOnly,
}

impl Outcome {
    pub fn of(r: &RuleResult, strict: bool) -> Outcome {
        let deciding = deciding(r, strict);
        match (r.passed, r.level) {
            (None, _) => Outcome::NotMeasured,
            (Some(true), _) => Outcome::Meets,
            (Some(false), _) if deciding => Outcome::Fails,
            (Some(false), Level::Warn) => Outcome::Soft,
            (Some(false), _) => Outcome::ShownOnly,
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Outcome::NotMeasured => "not measured",
            Outcome::Meets => "meets",
            Outcome::Fails => "fails",
            Outcome::Soft => "misses the soft limit",
            Outcome::ShownOnly => "misses (shown only)",
        }
    }
}

/// The runs, one row each: number, time, host, engine, source (with the file as detail),
/// then each rule's metric with its mark; last, the aggregate of each. None without runs.
pub fn runs_table(ev: &Evaluation) -> Option<Table> {
    if ev.runs.is_empty() {
        return None;
    }
    let cols = rule_columns(ev);
    let mut columns = vec![
        Column::words("#", Align::Right),
        Column::words("time", Align::Left),
        Column::words("host", Align::Left),
        Column::words("engine", Align::Left),
        Column::words("source", Align::Left),
    ];
    columns.extend(cols.iter().map(|r| Column {
        title: r.metric.clone(),
        unit: r.unit.to_string(),
        align: Align::Right,
        name: true,
    }));
    let mut rows: Vec<Row> = ev
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let mut source = Cell::left(run.source.as_str());
            source.detail = run.source_file.clone();
            let mut cells = vec![
                Cell::right((i + 1).to_string()),
                Cell::left(run.timestamp.format("%Y-%m-%d %H:%M:%S %:z").to_string()),
                Cell::left(run.host.as_str()),
                Cell::left(run.engine.as_str()),
                source,
            ];
            cells.extend(cols.iter().map(|r| match run.metrics.get(&r.metric) {
                Some(&v) => Cell::judged(r, v),
                None => Cell::right("—"),
            }));
            Row {
                kind: RowKind::Run,
                cells,
            }
        })
        .collect();
    let mut label = Cell::left(ev.policy.aggregate.as_str()).strong();
    label.span = 5;
    let mut cells = vec![label];
    cells.extend(cols.iter().map(|r| match r.value {
        Some(v) => Cell::right(fmt_value(v)).strong(),
        None => Cell::right("—"),
    }));
    rows.push(Row {
        kind: RowKind::Aggregate,
        cells,
    });
    Some(Table {
        title: "Runs".into(),
        subject: None,
        class: "runs",
        wide: true,
        columns,
        rows,
    })
}

/// The runs per day of the primary metric: runs, mean, min and max. None without days.
pub fn days_table(ev: &Evaluation) -> Option<Table> {
    if ev.days.is_empty() {
        return None;
    }
    let columns = vec![
        Column::words("day", Align::Left),
        Column::words("runs", Align::Right),
        Column::words("mean", Align::Right),
        Column::words("min", Align::Right),
        Column::words("max", Align::Right),
    ];
    let rows = ev
        .days
        .iter()
        .map(|d| Row {
            kind: RowKind::Plain,
            cells: vec![
                Cell::left(d.date.to_string()),
                Cell::right(d.runs.to_string()),
                Cell::right(fmt_value(d.mean)),
                Cell::right(fmt_value(d.min)),
                Cell::right(fmt_value(d.max)),
            ],
        })
        .collect();
    Some(Table {
        title: "Per day".into(),
        subject: Some(ev.primary_metric().unwrap_or("").to_string()),
        class: "days",
        wide: false,
        columns,
        rows,
    })
}
