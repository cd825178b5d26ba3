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
//! and the per-rule marks and outcomes (Markdown, HTML, JUnit, CSV's result, the terminal
//! table and its by-day rows, the charts).
//!
//! A mark never says more than the verdict can: a figure of a run that is not the policy's
//! test earns no ✓ (a pass on another test proves nothing), and no ✗ either when its test
//! could go either way (it says nothing about the policy's test); a test that only flatters
//! keeps its ✗ (a fail still fails). Such figures are shown plainly, with the reason
//! ([`judging_note`]), and a rule judged on them reads "not judged" ([`outcome`]). `view_node.rs` adds the rules table, the terminal's rule lines and per-rule
//! statistics, and the notes; `view_fleet.rs` the fleet's nodes and warnings.

use crate::deviation::Effect;
use crate::evaluate::{Evaluation, RuleResult};
use crate::policy::Level;
use crate::run_index::RunFields;

use crate::numbers::fmt_value;

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

    /// A day's figure with the mark its rule gives it on a test of `standing` ([`judge_on`]):
    /// none where the rule is undecided on figures fio printed (a day's mean of them is as
    /// coarse).
    pub fn judged(r: &RuleResult, v: f64, standing: Option<Effect>) -> Cell {
        if r.undecided.is_some() {
            return Cell::marked(v, Emphasis::None);
        }
        Cell::marked(v, judge_on(r, v, standing))
    }

    /// The figure with `emphasis`'s mark.
    pub fn marked(v: f64, emphasis: Emphasis) -> Cell {
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

/// A name read from a record (a host, a directory, an engine, a file), as a cell shows it:
/// [`dash`], with its control and invisible characters shown, a line feed included
/// ([`crate::printable::line`]): a record's text starts no line of its own.
pub fn field(s: &str) -> String {
    crate::printable::line(dash(s)).into_owned()
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

/// How a figure fares against its rule on a test that deviates from the policy's by
/// `standing` (None: the policy's test; see [`crate::deviation::Effect`]): a pass only on the
/// policy's test, a fail on it or on one that only flatters the disk; otherwise nothing,
/// shown plainly.
pub fn judge_on(r: &RuleResult, v: f64, standing: Option<Effect>) -> Emphasis {
    match (judge(r, v), standing) {
        (e, None) => e,
        (Emphasis::Fail, Some(Effect::Flatters)) => Emphasis::Fail,
        _ => Emphasis::None,
    }
}

/// How run `i`'s figure `v` fares against rule `r` ([`judge_on`]), where a figure that meets
/// the threshold is still a miss when the rule judged the run failed on more than its figure
/// (`per_run`: the level its disk sustained after its burst credits ran out).
pub fn judge_run(ev: &Evaluation, r: &RuleResult, i: usize, v: f64) -> Emphasis {
    match judge_on(r, v, run_standing(ev, i)) {
        Emphasis::Pass if r.per_run.get(i) == Some(&Some(false)) => Emphasis::Fail,
        // a figure fio printed too coarsely to tell against the threshold earns no mark
        Emphasis::Pass | Emphasis::Fail if r.per_run.get(i) == Some(&None) => Emphasis::None,
        e => e,
    }
}

/// Which way the runs judged together deviate from the policy's test (the strongest of their
/// deviations; None when they are its test): what the aggregate, the rules and the charts'
/// shading may say.
pub fn standing(ev: &Evaluation) -> Option<Effect> {
    crate::deviation::effect_of(&ev.deviations)
}

/// Which way run `i` (of `ev.runs`) deviates from the policy's test: what its figures may say.
pub fn run_standing(ev: &Evaluation, i: usize) -> Option<Effect> {
    ev.run_effects.get(i).copied().flatten()
}

/// The words for a figure, or a rule, that is not judged.
pub const NOT_JUDGED: &str = "not judged: not the policy's test";

/// Said with a runs table (every format that has one) when some runs are not the policy's
/// test: which, how, and what their marks mean. None when every run is its test.
pub fn judging_note(ev: &Evaluation) -> Option<String> {
    let mut either: Vec<usize> = Vec::new();
    let mut flatters: Vec<usize> = Vec::new();
    for i in 0..ev.runs.len() {
        match run_standing(ev, i) {
            Some(Effect::EitherWay) => either.push(i),
            Some(Effect::Flatters) => flatters.push(i),
            None => {}
        }
    }
    let n = ev.runs.len();
    let which = |runs: &[usize]| -> String {
        if runs.len() == n {
            return if n == 1 {
                "The run is".into()
            } else {
                "The runs are".into()
            };
        }
        let shown: Vec<String> = runs.iter().take(5).map(|i| (i + 1).to_string()).collect();
        let more = if runs.len() > 5 {
            format!(" and {} more", runs.len() - 5)
        } else {
            String::new()
        };
        format!(
            "Run{} {}{more} {}",
            if runs.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if runs.len() == 1 { "is" } else { "are" }
        )
    };
    let list = |effect: Effect| -> String {
        let d: Vec<String> = ev
            .deviations
            .iter()
            .filter(|d| d.effect == effect)
            .map(|d| d.to_string())
            .collect();
        d.join("; ")
    };
    let mut out = Vec::new();
    if !either.is_empty() {
        out.push(format!(
            "{} not the policy's test ({}): the figures are shown, not judged, neither met nor missed.",
            which(&either),
            list(Effect::EitherWay)
        ));
    }
    if !flatters.is_empty() {
        out.push(format!(
            "{} a test that flatters the disk ({}): a figure that misses its threshold still fails, one that meets it is not a pass.",
            which(&flatters),
            list(Effect::Flatters)
        ));
    }
    (!out.is_empty()).then(|| out.join(" "))
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
    /// Measured on runs that are not the policy's test: neither met nor missed (a miss on a
    /// test that only flatters the disk is still [`Outcome::Fails`]).
    NotJudged,
    /// Missed by a rule that decides (fail level, or warn level with `--strict`).
    Fails,
    /// A warn-level rule missed without `--strict`.
    Soft,
    /// An info-level rule missed.
    ShownOnly,
    /// Measured on figures fio printed too coarsely to tell against the threshold
    /// (`RuleResult::undecided`): neither met nor missed.
    Undecided,
}

impl Outcome {
    pub fn of(r: &RuleResult, strict: bool) -> Outcome {
        let deciding = deciding(r, strict);
        match (r.passed, r.level) {
            // measured, but against a threshold the host facts cannot resolve
            (None, _) if r.value.is_some() && !r.resolved() => Outcome::NotJudged,
            // measured, but printed too coarsely to tell
            (None, _) if r.value.is_some() && r.undecided.is_some() => Outcome::Undecided,
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
            Outcome::NotJudged => NOT_JUDGED,
            Outcome::Fails => "fails",
            Outcome::Soft => "misses the soft limit",
            Outcome::ShownOnly => "misses (shown only)",
            Outcome::Undecided => "undecided: fio printed the figure too coarsely to tell",
        }
    }
}

/// What became of rule `r` of `ev`, on the runs it was judged on: [`Outcome::of`], unless they
/// are not the policy's test ([`standing`]), where a rule they meet is not judged, and one
/// they miss is not judged either unless their test only flatters.
pub fn outcome(ev: &Evaluation, r: &RuleResult) -> Outcome {
    let raw = Outcome::of(r, ev.strict);
    match (standing(ev), raw) {
        (None, o) | (_, o @ Outcome::NotMeasured) => o,
        (Some(Effect::Flatters), Outcome::Meets) => Outcome::NotJudged,
        (Some(Effect::Flatters), o) => o,
        (Some(Effect::EitherWay), _) => Outcome::NotJudged,
    }
}

/// Run `i`'s result against the deciding rules, as CSV's `result` column and every list of
/// runs say it: `pass`, `fail` or `not measured` ([`crate::evaluate::run_result`]) on the
/// policy's test; on another, `not judged: DEVIATIONS` where its result is not one (a pass
/// on a test that flatters, any result on one that could go either way).
pub fn run_result(ev: &Evaluation, i: usize) -> std::borrow::Cow<'static, str> {
    let raw = crate::evaluate::run_result(ev, i);
    let judged = match run_standing(ev, i) {
        None => true,
        Some(Effect::Flatters) => raw != "pass",
        Some(Effect::EitherWay) => raw == "not measured",
    };
    if judged {
        raw.into()
    } else {
        let why = ev.run_deviations.get(i).unwrap_or("");
        format!("not judged: {why}").into()
    }
}

/// Whether the runs table has a row per day rather than per run: past
/// [`MAX_RUN_ROWS`](super::by_day::MAX_RUN_ROWS) runs.
pub fn runs_by_day(ev: &Evaluation) -> bool {
    ev.runs.len() > super::by_day::MAX_RUN_ROWS
}

/// The line a format shows above a runs table that has a row per day, saying so.
pub fn runs_note(ev: &Evaluation) -> Option<String> {
    runs_by_day(ev).then(|| super::by_day::note(ev.runs.len()))
}

/// The runs of a long history, a row per day (the node's calendar day, as the evidence rule
/// counts days): "N runs", the date, the engines that ran (with `engine_col`), the day's mean
/// of each rule's metric with its mark (the mark judges the mean), then the mean of each
/// `extra` metric. A run without a metric does not count towards that column's mean; a day
/// with none reads "—". The runs table past the limit and the terminal's table are built
/// from these rows.
pub fn day_rows<R: RunFields>(
    runs: impl IntoIterator<Item = R>,
    rules: &[&RuleResult],
    extra: &[&str],
    engine_col: bool,
    standing: Option<Effect>,
) -> Vec<Row> {
    let columns: Vec<&str> = rules
        .iter()
        .map(|r| r.metric.as_str())
        .chain(extra.iter().copied())
        .collect();
    super::by_day::days(runs, &columns)
        .into_iter()
        .map(|(date, d)| {
            let mut cells = vec![
                Cell::left(format!("{} runs", d.runs)),
                Cell::left(date.format("%Y-%m-%d").to_string()),
            ];
            if engine_col {
                cells.push(Cell::left(field(&d.engines.join(","))));
            }
            for i in 0..columns.len() {
                cells.push(match (d.mean(i), rules.get(i)) {
                    (None, _) => Cell::right("—"),
                    (Some(v), Some(r)) => Cell::judged(r, v, standing),
                    (Some(v), None) => Cell::right(fmt_value(v)),
                });
            }
            Row {
                kind: RowKind::Plain,
                cells,
            }
        })
        .collect()
}

/// The runs, one row each: number, time, host, engine, source (with the file as detail),
/// then each rule's metric with its mark; last, the aggregate of each. Past
/// [`MAX_RUN_ROWS`](super::by_day::MAX_RUN_ROWS) runs, one row per day instead (see
/// [`day_rows`] and [`runs_note`]). None without runs.
pub fn runs_table(ev: &Evaluation) -> Option<Table> {
    if ev.runs.is_empty() {
        return None;
    }
    let cols = rule_columns(ev);
    if runs_by_day(ev) {
        return Some(runs_table_by_day(ev, &cols));
    }
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
            source.detail = run.source_file.as_deref().map(field);
            let mut cells = vec![
                Cell::right((i + 1).to_string()),
                Cell::left(run.timestamp.format("%Y-%m-%d %H:%M:%S %:z").to_string()),
                Cell::left(field(&run.host)),
                Cell::left(field(&run.engine)),
                source,
            ];
            cells.extend(cols.iter().map(|r| match run.metrics.get(&r.metric) {
                Some(&v) => Cell::marked(v, judge_run(ev, r, i, v)),
                None => Cell::right("—"),
            }));
            Row {
                kind: RowKind::Run,
                cells,
            }
        })
        .collect();
    rows.push(aggregate_row(ev, &cols, 5));
    Some(Table {
        title: "Runs".into(),
        subject: None,
        class: "runs",
        wide: true,
        columns,
        rows,
    })
}

/// The runs table's last row: the policy's aggregate ("mean") of each rule's metric, under a
/// label spanning the `span` columns before them.
fn aggregate_row(ev: &Evaluation, cols: &[&RuleResult], span: usize) -> Row {
    let mut label = Cell::left(ev.policy.aggregate.as_str()).strong();
    label.span = span;
    let mut cells = vec![label];
    cells.extend(cols.iter().map(|r| match r.value {
        Some(v) => Cell::right(fmt_value(v)).strong(),
        None => Cell::right("—"),
    }));
    Row {
        kind: RowKind::Aggregate,
        cells,
    }
}

/// [`runs_table`] past the limit: a row per day, then the aggregate.
fn runs_table_by_day(ev: &Evaluation, cols: &[&RuleResult]) -> Table {
    let engines: std::collections::BTreeSet<&str> =
        ev.runs.iter().map(|r| r.engine.as_str()).collect();
    let engine_col = engines.len() > 1;
    let mut columns = vec![
        Column::words("runs", Align::Left),
        Column::words("day", Align::Left),
    ];
    if engine_col {
        columns.push(Column::words("engine", Align::Left));
    }
    columns.extend(cols.iter().map(|r| Column {
        title: r.metric.clone(),
        unit: r.unit.to_string(),
        align: Align::Right,
        name: true,
    }));
    let mut rows = day_rows(&ev.runs, cols, &[], engine_col, standing(ev));
    rows.push(aggregate_row(ev, cols, 2 + usize::from(engine_col)));
    Table {
        title: "Runs".into(),
        subject: None,
        class: "runs",
        wide: true,
        columns,
        rows,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::by_day::MAX_RUN_ROWS;

    /// `n` runs every 5 minutes from 2026-11-10 00:00Z, the second day's at 8 MB/s (2048
    /// IOPS by the article's formula: below 3000) and the others' at 16 MB/s (4096).
    fn evaluation(n: usize) -> Evaluation {
        let start = chrono::DateTime::parse_from_rfc3339("2026-11-10T00:00:00Z").unwrap();
        let runs: Vec<_> = (0..n)
            .map(|i| {
                let ts = start + chrono::Duration::minutes(5 * i as i64);
                let mb_s = if i / 288 == 1 { 8.0 } else { 16.0 };
                crate::evaluate::tests::rec(&ts.to_rfc3339(), mb_s)
            })
            .collect();
        crate::evaluate::tests::swimlane_report(runs, "2026-11-14T00:00:00Z")
    }

    fn texts(row: &Row) -> Vec<&str> {
        row.cells.iter().map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn up_to_the_limit_the_runs_table_has_a_row_per_run() {
        let ev = evaluation(MAX_RUN_ROWS);
        assert!(runs_note(&ev).is_none());
        let t = runs_table(&ev).unwrap();
        assert_eq!(t.columns[0].title, "#");
        // every run, then the aggregate
        assert_eq!(t.rows.len(), MAX_RUN_ROWS + 1);
        assert_eq!(t.rows[0].kind, RowKind::Run);
        assert_eq!(
            t.rows[MAX_RUN_ROWS - 1].cells[0].text,
            MAX_RUN_ROWS.to_string()
        );
    }

    #[test]
    fn past_the_limit_the_runs_table_has_a_row_per_day_with_its_mean_judged_and_says_so() {
        // three whole days of runs every five minutes
        let n = 3 * 288;
        let ev = evaluation(n);
        let note = runs_note(&ev).unwrap();
        assert!(
            note.starts_with(&format!("{n} runs: one row per day")),
            "{note}"
        );
        let t = runs_table(&ev).unwrap();
        let titles: Vec<&str> = t.columns.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "runs",
                "day",
                "write_iops_formula",
                "write_bw_mb_s",
                "write_iops"
            ]
        );
        // three days, then the aggregate over all the runs
        assert_eq!(t.rows.len(), 4);
        assert_eq!(texts(&t.rows[0])[..3], ["288 runs", "2026-11-10", "4096 ✓"]);
        assert_eq!(t.rows[0].cells[2].emphasis, Emphasis::Pass);
        assert_eq!(texts(&t.rows[1])[..3], ["288 runs", "2026-11-11", "2048 ✗"]);
        assert_eq!(t.rows[1].cells[2].emphasis, Emphasis::Fail);
        assert_eq!(texts(&t.rows[2])[..2], ["288 runs", "2026-11-12"]);
        let agg = &t.rows[3];
        assert_eq!(agg.kind, RowKind::Aggregate);
        assert_eq!(agg.cells[0].span, 2);
        // the mean of every run: (2 × 4096 + 2048) / 3
        assert_eq!(agg.cells[1].text, fmt_value(10240.0 / 3.0));
    }

    #[test]
    fn a_day_without_the_metric_reads_a_dash_not_a_zero() {
        let mut with = crate::evaluate::tests::rec("2026-11-10T10:00:00Z", 16.0);
        with.engine = "psync".into();
        let mut without = crate::evaluate::tests::rec("2026-11-11T10:00:00Z", 16.0);
        without.metrics.remove("write_iops");
        let rule = crate::evaluate::tests::rule("write_iops", 3000.0);
        let rows = day_rows(&[with, without], &[&rule], &["write_bw_mb_s"], true, None);
        let (iops, mb_s) = (fmt_value(16e6 / 4096.0), fmt_value(16.0));
        assert_eq!(
            texts(&rows[0]),
            ["1 runs", "2026-11-10", "psync", &format!("{iops} ✓"), &mb_s]
        );
        assert_eq!(
            texts(&rows[1]),
            ["1 runs", "2026-11-11", "posixaio", "—", &mb_s]
        );
    }
}
