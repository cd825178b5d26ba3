//! The table for people: the policy and what was tested, one row per run, the aggregate,
//! spread and threshold rows, the rules, the per-day figures (report), the evidence, the
//! warnings, and the verdict last, where the eye lands. Kept within the terminal's width:
//! the engine column appears only when runs differ, seconds only when two runs share a
//! minute, and prose is word-wrapped with a hanging indent.

use std::io::{self, Write};

use chrono::Datelike;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets};

use crate::evaluate::{Evaluation, RuleResult, Scope, Verdict, Warning};
use crate::numbers::fmt_value;
use crate::policy::Level;
use crate::run_index::Records;

use super::view_node::Role;

fn column_title(r: &RuleResult) -> String {
    let unit = if r.unit.is_empty() {
        String::new()
    } else {
        format!("\n{}", r.unit)
    };
    format!("{}{}", r.metric, unit)
}

/// Word-wraps `text` after `first` (e.g. "warning: ") to the output's width (the terminal's or
/// `COLUMNS`, 80 to 200; 100 when piped), continuation lines
/// indented under the text. A word longer than a line (a URL) stays whole on its own line.
pub fn wrap(first: &str, text: &str) -> String {
    crate::terminal::wrap(first, text, crate::terminal::stdout_width())
}

/// The table for people, top to bottom: what was tested, the runs, the runs not counted, the
/// rules, the details (with --verbose), the evidence, the warnings, and the verdict.
pub fn render(
    ev: &Evaluation,
    records: &Records,
    style: &super::Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    heading(ev, style, out)?;
    let columns = Columns::of(ev);
    let mut t = runs_table(ev, &columns, out)?;
    summary_rows(ev, &columns, style, &mut t);
    let (hidden, judging_said) = print_runs(ev, &columns, t, style, out)?;

    // The runs left out of the verdict, each with the reason, as Markdown and HTML list them.
    if let (Some(note), Some(list)) = (
        super::view_node::not_counted_note(ev),
        not_counted(ev, crate::terminal::stdout_width()),
    ) {
        writeln!(out, "{}", wrap("not counted: ", &note))?;
        writeln!(out, "{list}")?;
        writeln!(out)?;
    }
    rules(ev, style, out)?;

    // What --verbose adds, named in one line at the end when it is left out.
    let mut behind: Vec<&str> = Vec::new();
    details(ev, records, style, &mut behind, out)?;

    // After a run, where this node's history stands; in a report, the rule being applied.
    let label = if ev.scope == Scope::Run {
        "history: "
    } else {
        "evidence: "
    };
    // A run's and an import's verdict line says where the evidence stands: without
    // --verbose, this line only where it says more (runs that do not count).
    let line = ev.evidence_line();
    if style.verbose || ev.scope == Scope::Report || line != ev.evidence.advice() {
        writeln!(out, "{}", wrap(label, &line))?;
        writeln!(out)?;
    }

    let notes = super::view_node::notes(ev);
    warnings(ev, &notes, style, &mut behind, out)?;
    // What is left out, in one line: the columns this width hides and the runs' internals.
    if !behind.is_empty() || (!hidden.is_empty() && !style.verbose) {
        writeln!(
            out,
            "(more with --verbose; every figure with --format json)"
        )?;
    }
    verdict(ev, judging_said, style, out)
}

/// `text` in the ANSI colour `code` where the style has colour.
fn paint(style: &super::Style, text: &str, code: &str) -> String {
    if style.color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The policy (and its source with --verbose), and the target or group tested.
fn heading(ev: &Evaluation, style: &super::Style, out: &mut dyn Write) -> io::Result<()> {
    let p = &ev.policy;
    writeln!(
        out,
        "{}",
        wrap("policy: ", &format!("{} — {}", p.name, p.description))
    )?;
    // The policy's sources with --verbose (and in `policy show`, Markdown, HTML).
    if style.verbose {
        writeln!(out, "{}", wrap("source: ", &p.source))?;
        writeln!(
            out,
            "{}",
            wrap(
                "        ",
                &format!("{} (seen {}; test {})", p.url, p.seen, p.test)
            )
        )?;
    }
    let id = super::identity(ev);
    if !ev.runs.is_empty() || ev.group.is_some() {
        writeln!(
            out,
            "{}",
            wrap(
                if ev.group.is_some() {
                    "group: "
                } else {
                    "target: "
                },
                &format!("{}, dir {}, engine {}", id.host_words(), id.dir, id.engine)
            )
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The runs table's columns: the run, its time (and engine where the runs differ), each
/// rule's metric once, then runtime and end fsync where the runs measured them.
struct Columns<'e> {
    metrics: Vec<&'e RuleResult>,
    /// The runs' other figures shown: (metric, column title).
    extra: Vec<(&'static str, &'static str)>,
    engine_col: bool,
    /// How a run's time is written: the year only when the runs span more than one, seconds
    /// only when two runs share a minute.
    time_fmt: &'static str,
}

impl<'e> Columns<'e> {
    fn of(ev: &'e Evaluation) -> Columns<'e> {
        // Columns: the run, then each rule's metric once, then runtime and end fsync.
        let mut metrics: Vec<&RuleResult> = Vec::new();
        for r in &ev.rules {
            if !metrics.iter().any(|m| m.metric == r.metric) {
                metrics.push(r);
            }
        }
        let extra: Vec<(&str, &str)> = [
            ("write_runtime_ms", "runtime\nms"),
            ("read_runtime_ms", "runtime\nms"),
            ("end_fsync_ms", "end fsync\nms"),
        ]
        .into_iter()
        .filter(|(m, _)| ev.runs.iter().any(|r| r.metrics.contains_key(*m)))
        .filter(|(m, _)| !metrics.iter().any(|r| r.metric == *m))
        .collect();
        // read and write runtimes are the same column title; keep one
        let extra: Vec<(&str, &str)> = extra
            .iter()
            .enumerate()
            .filter(|(i, (_, t))| extra[..*i].iter().all(|(_, u)| u != t))
            .map(|(_, e)| *e)
            .collect();

        // The engine is in the line above unless the runs differ; seconds only when two runs
        // share a minute: both keep the table within 100 columns for the usual three rules.
        let engines: std::collections::BTreeSet<&str> =
            ev.runs.iter().map(|r| r.engine.as_str()).collect();
        let engine_col = engines.len() > 1;
        // Only for a row per run: past the limit the table has a row per day.
        let minutes: std::collections::BTreeSet<String> = if super::view::runs_by_day(ev) {
            Default::default()
        } else {
            ev.runs
                .iter()
                .map(|r| r.timestamp.format("%Y-%m-%d %H:%M").to_string())
                .collect()
        };
        // The year only when the runs span more than one.
        let years: std::collections::BTreeSet<i32> =
            ev.runs.iter().map(|r| r.timestamp.year()).collect();
        let time_fmt = match (years.len() > 1, minutes.len() < ev.runs.len()) {
            (true, true) => "%Y-%m-%d %H:%M:%S",
            (true, false) => "%Y-%m-%d %H:%M",
            (false, true) => "%m-%d %H:%M:%S",
            (false, false) => "%m-%d %H:%M",
        };
        Columns {
            metrics,
            extra,
            engine_col,
            time_fmt,
        }
    }

    /// The columns before the first figure, after the row's label.
    fn lead(&self) -> usize {
        usize::from(self.engine_col) + 1
    }

    /// `n` empty cells.
    fn blank(n: usize) -> Vec<Cell> {
        (0..n).map(|_| Cell::new("")).collect()
    }
}

/// The runs table's header and a row per run (or per day, for a long history, whose note is
/// written first).
fn runs_table(ev: &Evaluation, c: &Columns, out: &mut dyn Write) -> io::Result<Table> {
    let (metrics, extra, engine_col) = (&c.metrics, &c.extra, c.engine_col);
    let mut t = Table::new();
    // Cells are never wrapped: a figure split over two lines is misread.
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec![Cell::new("run"), Cell::new("time")];
    if engine_col {
        header.push(Cell::new("engine"));
    }
    header.extend(metrics.iter().map(|r| Cell::new(column_title(r))));
    header.extend(extra.iter().map(|(_, t)| Cell::new(*t)));
    t.set_header(header);

    // A long history is summarised by day (by_day.rs); otherwise a row per run.
    let extra_metrics: Vec<&str> = extra.iter().map(|(m, _)| *m).collect();
    let by_day = super::by_day::rows(
        &ev.runs,
        metrics,
        &extra_metrics,
        engine_col,
        super::view::standing(ev),
    );
    if let Some(rows) = &by_day {
        writeln!(out, "{}", wrap("", &super::by_day::note(ev.runs.len())))?;
        for row in rows {
            t.add_row(row.clone());
        }
    }
    let runs = if by_day.is_some() { &[][..] } else { &ev.runs };
    for (i, run) in runs.iter().enumerate() {
        let mut row = vec![
            Cell::new(i + 1),
            Cell::new(run.timestamp.format(c.time_fmt)),
        ];
        if engine_col {
            row.push(Cell::new(&run.engine));
        }
        for r in metrics {
            let text = match run.metrics.get(&r.metric) {
                Some(&v) => format!(
                    "{}{}",
                    fmt_value(v),
                    super::view::judge_run(ev, r, i, v).mark()
                ),
                None => "—".into(),
            };
            row.push(Cell::new(text).set_alignment(CellAlignment::Right));
        }
        for (m, _) in extra {
            let text = run
                .metrics
                .get(*m)
                .map(|v| fmt_value(*v))
                .unwrap_or("—".into());
            row.push(Cell::new(text).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    Ok(t)
}

/// The rows under the runs: the aggregate, the range (with --verbose or by day), the spread
/// and the threshold.
fn summary_rows(ev: &Evaluation, c: &Columns, style: &super::Style, t: &mut Table) {
    let (metrics, extra, lead) = (&c.metrics, &c.extra, c.lead());
    let blank = Columns::blank;
    let agg = ev.policy.aggregate;
    let mut row = vec![Cell::new(agg.as_str())];
    row.extend(blank(lead));
    for r in metrics {
        row.push(
            Cell::new(r.value.map(fmt_value).unwrap_or("—".into()))
                .set_alignment(CellAlignment::Right),
        );
    }
    for (m, _) in extra {
        let text = ev
            .summary
            .metrics
            .get(*m)
            .map(|s| fmt_value(s.aggregate(agg)))
            .unwrap_or("—".into());
        row.push(Cell::new(text).set_alignment(CellAlignment::Right));
    }
    t.add_row(row);

    // A row under the runs: its label, then one right-aligned figure per rule's metric.
    let figures_row = |label: &str, figure: &dyn Fn(&RuleResult) -> String| {
        let mut row = vec![Cell::new(label)];
        row.extend(blank(lead));
        for r in metrics {
            row.push(Cell::new(figure(r)).set_alignment(CellAlignment::Right));
        }
        row.extend(extra.iter().map(|_| Cell::new("")));
        row
    };
    let stats = |r: &RuleResult, f: &dyn Fn(&crate::evaluate::Stats) -> String| {
        ev.summary
            .metrics
            .get(&r.metric)
            .map(f)
            .unwrap_or("—".into())
    };
    if ev.runs.len() > 1 {
        // A row per run shows the range itself: the row with --verbose, or by day.
        if style.verbose || super::view::runs_by_day(ev) {
            t.add_row(figures_row("min–max", &|r| {
                stats(r, &|s| format!("{}–{}", fmt_value(s.min), fmt_value(s.max)))
            }));
        }
        t.add_row(figures_row("stdev", &|r| {
            stats(r, &|s| {
                format!("{} ({:.0}%)", fmt_value(s.stdev), s.cv * 100.0)
            })
        }));
    }
    t.add_row(figures_row("threshold", &|r| {
        format!(
            "{}{}",
            r.threshold_text(crate::numbers::fmt_threshold),
            match r.level {
                Level::Fail => "",
                Level::Warn => " (warn)",
                Level::Info => " (shown)",
            }
        )
    }));
}

/// The runs table within the terminal's width (or what stands for it where there are no
/// runs), and the note on how the runs were judged. The columns hidden, and whether the note
/// was said.
fn print_runs(
    ev: &Evaluation,
    c: &Columns,
    mut t: Table,
    style: &super::Style,
    out: &mut dyn Write,
) -> io::Result<(Vec<String>, bool)> {
    let (metrics, extra, engine_col) = (&c.metrics, &c.extra, c.engine_col);
    // Narrow terminal: the least important columns go, right to left: runtime and end fsync,
    // then the rules that are only shown. The deciding rules always stay.
    let first_metric = 2 + usize::from(engine_col);
    let mut hideable: Vec<(usize, String)> = extra
        .iter()
        .enumerate()
        .rev()
        .map(|(i, (_, title))| (first_metric + metrics.len() + i, title.replace('\n', " ")))
        .collect();
    hideable.extend(
        metrics
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, r)| r.level == Level::Info)
            .map(|(i, r)| (first_metric + i, r.metric.clone())),
    );
    let hidden = super::fit::hide_until_fits(&mut t, &hideable, crate::terminal::stdout_width());
    let mut judging_said = false;
    if ev.runs.is_empty() {
        writeln!(out, "{}", wrap("", super::view_node::no_runs_words(ev)))?;
    } else {
        writeln!(out, "{t}")?;
        if !hidden.is_empty() && style.verbose {
            writeln!(
                out,
                "{}",
                wrap(
                    "",
                    &format!(
                        "(not shown at this width: {}; --format json has every figure)",
                        hidden.join(", ")
                    )
                )
            )?;
        }
        // Without --verbose, where every run deviates, the verdict's reason and the lines
        // beside it say so.
        let all_deviate = ev.run_effects.iter().all(|e| e.is_some());
        if let Some(note) = super::view::judging_note(ev).filter(|_| style.verbose || !all_deviate)
        {
            writeln!(out, "{}", wrap("", &note))?;
            judging_said = true;
        }
    }
    writeln!(out)?;
    Ok((hidden, judging_said))
}

/// One line per rule, the outcome first and the comparison true as written; a missed rule
/// that decides is red, a missed soft limit yellow.
fn rules(ev: &Evaluation, style: &super::Style, out: &mut dyn Write) -> io::Result<()> {
    let rule_lines = super::view_node::rule_lines(ev);
    let width = rule_lines
        .iter()
        .map(|l| l.metric.chars().count())
        .max()
        .unwrap_or(0);
    for l in rule_lines
        .iter()
        .filter(|l| style.verbose || l.role != Role::Shown)
    {
        // Painted before it is padded, so that colour codes do not count as columns.
        let word = l.role.words();
        let pad = " ".repeat(8usize.saturating_sub(word.chars().count()));
        let head = format!("{} {word}", l.mark);
        let head = match (l.mark, l.role) {
            ("✗", Role::Decides) => paint(style, &head, "31"),
            ("✗", Role::Soft) => paint(style, &head, "33"),
            _ => head,
        } + &pad;
        let marginal = if l.marginal { " (undecided)" } else { "" };
        // The note under the runs table says why.
        let judged = if l.not_judged { " (not judged)" } else { "" };
        writeln!(
            out,
            "  {head} {:<width$}  {}, needs {}{marginal}{judged}",
            l.metric, l.value, l.needs
        )?;
        if let Some(why) = &l.fails_on {
            writeln!(out, "{}", wrap("      fails: ", why))?;
        }
        if let Some(note) = l.note.as_ref().filter(|_| style.verbose) {
            writeln!(out, "{}", wrap("      ", note))?;
        }
        // The runs table marks each miss; the list with --verbose.
        for (n, figure) in l.misses.iter().filter(|_| style.verbose) {
            writeln!(out, "      ✗ run {n}: {figure}, needs {}", l.needs)?;
        }
        if l.more_misses > 0 && style.verbose {
            writeln!(
                out,
                "      and {} more runs below the threshold",
                l.more_misses
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}

/// With --verbose (a report's statistics always): inside each run, the days of a report, the
/// statistics per rule. What is left out goes to `behind`.
fn details(
    ev: &Evaluation,
    records: &Records,
    style: &super::Style,
    behind: &mut Vec<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    // Inside each run: fio's sample figures, slat, the final fsync's share, the disks (with
    // --verbose; by default the output fits one screen, and says where they are).
    let inside = super::details::lines(&ev.runs, records)?;
    if !inside.is_empty() && style.verbose {
        writeln!(out, "inside the runs:")?;
        for l in inside {
            writeln!(out, "{l}")?;
        }
        writeln!(out)?;
    } else if !inside.is_empty() {
        behind.push("each run's internals");
    }

    if ev.scope == Scope::Report
        && let Some(t) = super::view::days_table(ev)
    {
        writeln!(out, "per day ({}):", t.subject.as_deref().unwrap_or(""))?;
        for row in &t.rows {
            let [day, runs, mean, min, max] = &row.cells[..] else {
                unreachable!("the per-day table has five columns")
            };
            writeln!(
                out,
                "  {}  runs {:>3}  mean {:>10}  min {:>10}  max {:>10}",
                day.text, runs.text, mean.text, min.text, max.text
            )?;
        }
        writeln!(out)?;
    }

    // Per rule: how sure the aggregate is (a report always; a run or import with several
    // runs, with --verbose).
    let stats_shown = ev.scope == Scope::Report || (ev.runs.len() > 1 && style.verbose);
    if ev.scope != Scope::Report && ev.runs.len() > 1 && !style.verbose {
        behind.push("per-rule statistics");
    }
    if stats_shown && let Some(stats) = super::view_node::rule_stats_table(ev) {
        let mut t = super::fit::from_view(&stats);
        let hideable = [
            (4, "median".to_string()),
            (2, "days".to_string()),
            (5, "stdev".to_string()),
        ];
        super::fit::hide_until_fits(&mut t, &hideable, crate::terminal::stdout_width());
        writeln!(out, "per rule:")?;
        writeln!(out, "{t}")?;
        writeln!(out)?;
    }
    Ok(())
}

/// The warnings, each once; without --verbose, what was found without the advice, and no
/// deviation's warning where a line beside the verdict names it. What is left out goes to
/// `behind`.
fn warnings(
    ev: &Evaluation,
    notes: &super::view_node::Notes,
    style: &super::Style,
    behind: &mut Vec<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    // A deviation's warning restates a line beside the verdict (with why it matters): said
    // with --verbose, where there is room for it.
    let restated = |w: &Warning| {
        !style.verbose
            && matches!(w, Warning::NotPolicysTest(_))
            && !notes.beside_verdict.is_empty()
    };
    let shown: Vec<(&Warning, &String)> = ev
        .warnings
        .iter()
        .zip(&notes.warnings)
        .filter(|(w, _)| !restated(w))
        .collect();
    if shown.len() < notes.warnings.len() {
        behind.push("why each deviation matters");
    }
    for (warning, whole) in &shown {
        // Without --verbose, what was found (a headline of 40 characters or more: a shorter
        // one says too little alone); the advice after it with --verbose.
        let headline = warning.headline().to_string();
        let w: &str =
            if !style.verbose && headline.len() < whole.len() && headline.chars().count() >= 40 {
                if !behind.contains(&"each warning's advice") {
                    behind.push("each warning's advice");
                }
                &headline
            } else {
                whole
            };
        let text = wrap("warning: ", w);
        let text = text.replacen("warning:", &paint(style, "warning:", "33"), 1);
        writeln!(out, "{text}")?;
    }
    if !shown.is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

/// The test's shape, what keeps it from being the policy's (unless said already), and the
/// verdict with its reason, last, where the eye lands.
fn verdict(
    ev: &Evaluation,
    judging_said: bool,
    style: &super::Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    // The test's shape and what keeps it from being the policy's, beside the verdict.
    if !ev.runs.is_empty() {
        writeln!(out, "{}", wrap("test: ", &super::test_shape(ev)))?;
    }
    for (deviation, line) in super::view_node::beside_verdict_lines(ev) {
        // The note under the runs table, or the verdict's reason, named the deviation
        // already.
        if let Some(d) = deviation
            && !style.verbose
            && (judging_said || ev.reason_names == Some(d.effect))
        {
            continue;
        }
        writeln!(out, "{}", wrap("  ", &line))?;
    }
    let verdict = match ev.verdict {
        Verdict::Pass => paint(style, "PASS", "1;32"),
        Verdict::Fail => paint(style, "FAIL", "1;31"),
        Verdict::Inconclusive => paint(style, "INCONCLUSIVE", "1;33"),
    };
    // Wrapped on the plain word, painted after, so colour codes do not count as columns.
    let plain = ev.verdict.as_str().to_uppercase();
    let line = wrap(
        "verdict: ",
        &format!("{plain} {} — {}", ev.judged_on(), ev.reason),
    );
    writeln!(out, "{}", line.replacen(&plain, &verdict, 1))?;
    Ok(())
}

/// The runs left out of the verdict ([`not_counted_table`](super::view_node::not_counted_table))
/// within `width`: a column per field; else the time over the other fields but the reason,
/// beside the reason with one deviation a line; else a card per run. None when every run
/// counted.
fn not_counted(ev: &Evaluation, width: usize) -> Option<String> {
    let view = super::view_node::not_counted_table(ev)?;
    let wide = super::fit::from_view(&view);
    // The view's columns: the time first, the reason last, what the run was between them.
    let stack = |texts: Vec<&str>| -> Vec<String> {
        let Some((why, rest)) = texts.split_last() else {
            return vec![];
        };
        let Some((time, about)) = rest.split_first() else {
            return vec![why.to_string()];
        };
        vec![
            format!("{time}\n{}", about.join(", ")),
            why.replace("; ", ";\n"),
        ]
    };
    let mut stacked = super::fit::table();
    stacked.set_header(stack(
        view.columns.iter().map(|c| c.title.as_str()).collect(),
    ));
    for row in &view.rows {
        stacked.add_row(stack(row.cells.iter().map(|c| c.text.as_str()).collect()));
    }
    Some(super::fit::first_fitting(&[wide, stacked], width))
}

#[cfg(test)]
mod tests {
    use crate::policy::Level;
    use crate::run_index::Records;

    #[test]
    fn a_missed_deciding_rule_is_red_and_a_missed_soft_limit_yellow_and_the_columns_still_line_up()
    {
        // two runs at 8 MB/s: 2048 IOPS by the formula, below swimlane's 3000
        let runs = ["2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z"]
            .map(|ts| crate::evaluate::tests::rec(ts, 8.0))
            .to_vec();
        let (mut ev, records) =
            crate::evaluate::tests::swimlane_report_held(runs, "2026-11-03T00:00:00Z");
        // the second rule as a soft limit that is missed
        ev.rules[1].level = Level::Warn;
        ev.rules[1].passed = Some(false);
        let text = |color: bool| {
            let mut out = Vec::new();
            super::render(
                &ev,
                &records,
                &crate::report::Style {
                    color,
                    verbose: true,
                },
                &mut out,
            )
            .unwrap();
            String::from_utf8(out).unwrap()
        };
        let plain = text(false);
        let painted = text(true);
        assert!(
            plain.contains("  ✗ decides  write_iops_formula  mean"),
            "{plain}"
        );
        assert!(plain.contains("  ✗ soft     write_bw_mb_s  "), "{plain}");
        assert!(
            painted.contains("  \x1b[31m✗ decides\x1b[0m  write_iops_formula  mean"),
            "{painted}"
        );
        assert!(
            painted.contains("  \x1b[33m✗ soft\x1b[0m     write_bw_mb_s  "),
            "{painted}"
        );
    }

    /// Two runs of Swimlane's test, a quick look (64 MiB for 10 s) and a run dated two days
    /// ahead of the report: the last two are left out of the verdict.
    fn mixed() -> (crate::evaluate::Evaluation, Records) {
        use crate::evaluate::tests::rec;
        let mut quick = rec("2026-12-01T11:00:00Z", 90.0);
        quick.job.size = Some(64 << 20);
        quick.job.runtime_s = Some(10.0);
        let runs = vec![
            rec("2026-12-01T10:00:00Z", 16.0),
            quick,
            rec("2026-12-01T12:00:00Z", 16.0),
            rec("2026-12-04T09:00:00Z", 16.0),
        ];
        crate::evaluate::tests::swimlane_report_held(runs, "2026-12-02T12:00:00Z")
    }

    /// Whitespace runs as one space, the table's rules as none: what a cell's text reads as
    /// once the lines it was split on are put together.
    fn words(s: &str) -> String {
        s.replace(['│', '┆'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_runs_not_counted_are_listed_each_with_its_time_and_reason_within_the_width() {
        let (ev, _) = mixed();
        assert_eq!((ev.runs.len(), ev.excluded.len()), (2, 2));
        let view = crate::report::view_node::not_counted_table(&ev).unwrap();
        for width in [80, 120, 200] {
            let text = super::not_counted(&ev, width).unwrap();
            for l in text.lines() {
                assert!(l.chars().count() <= width, "{width}: {l}\n{text}");
            }
            // Each run's time and reason, in the view's words; a reason's deviations may
            // stand one a line.
            for row in &view.rows {
                let (time, why) = (&row.cells[0].text, &row.cells[4].text);
                assert!(text.contains(time.as_str()), "{width}: {time}\n{text}");
                for part in why.split("; ") {
                    assert!(words(&text).contains(part), "{width}: {part}\n{text}");
                }
            }
            assert!(text.contains("(check the node's clock)"), "{text}");
        }
        // Wide enough, a column per field, a line per run.
        let wide = super::not_counted(&ev, 200).unwrap();
        let row = wide
            .lines()
            .find(|l| l.contains("2026-12-04 09:00:00"))
            .unwrap();
        assert!(
            words(row).contains("node1 posixaio native dated in the future"),
            "{wide}"
        );
    }

    #[test]
    fn the_table_lists_the_runs_left_out_under_the_runs_and_says_why_when_none_counted() {
        let text = |(ev, records): &(crate::evaluate::Evaluation, Records)| {
            let mut out = Vec::new();
            super::render(ev, records, &crate::report::Style::default(), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let mixed = text(&mixed());
        let listed = mixed
            .split("\nnot counted: 2 runs left out of the verdict, each with the reason.\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{mixed}"));
        assert!(listed.contains("2026-12-01 11:00:00"), "{mixed}");
        assert!(listed.contains("2026-12-04 09:00:00"), "{mixed}");
        // Under the runs judged (their table ends first), above the rules.
        let at = mixed.find("\nnot counted:").unwrap();
        assert!(mixed.find('└').unwrap() < at, "{mixed}");
        assert!(listed.contains(" decides "), "{mixed}");

        // Only runs left out: no table of runs, the list instead of "no runs".
        let alone = text(&mixed_left_out());
        assert!(
            alone.contains(
                "No run counted towards the verdict; the runs left out are listed below."
            ),
            "{alone}"
        );
        assert!(alone.contains("not counted: 2 runs left out"), "{alone}");
        assert!(!alone.contains("no runs\n"), "{alone}");
    }

    /// [`mixed`] without the runs of the policy's test.
    fn mixed_left_out() -> (crate::evaluate::Evaluation, Records) {
        use crate::evaluate::tests::rec;
        let mut quick = rec("2026-12-01T11:00:00Z", 90.0);
        quick.job.size = Some(64 << 20);
        quick.job.runtime_s = Some(10.0);
        let runs = vec![quick, rec("2026-12-04T09:00:00Z", 16.0)];
        crate::evaluate::tests::swimlane_report_held(runs, "2026-12-02T12:00:00Z")
    }

    /// One run of Swimlane's test changed by `change`, judged as `run` judges it.
    fn judged(
        change: impl Fn(&mut crate::history::Record),
    ) -> (crate::evaluate::Evaluation, Records) {
        let mut r = crate::evaluate::tests::rec("2026-12-01T10:00:00Z", 16.0);
        change(&mut r);
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
            .unwrap()
            .to_utc();
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let opts = crate::evaluate::Options::new(crate::evaluate::Scope::Run, now);
        crate::evaluate::evaluate_left_out(vec![r], Vec::new(), &policy, &opts)
    }

    /// The table of `ev` (`verbose` or not).
    fn table(ev: &crate::evaluate::Evaluation, records: &Records, verbose: bool) -> String {
        let mut out = Vec::new();
        let style = crate::report::Style {
            color: false,
            verbose,
        };
        super::render(ev, records, &style, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// One run changed by `change`, judged, and its table printed (`verbose` or not).
    fn one_run(
        change: impl Fn(&mut crate::history::Record),
        verbose: bool,
    ) -> (crate::evaluate::Evaluation, String) {
        let (ev, records) = judged(change);
        let text = table(&ev, &records, verbose);
        (ev, text)
    }

    #[test]
    fn a_deviation_is_listed_beside_the_verdict_unless_the_reason_names_it() {
        let small = |r: &mut crate::history::Record| r.job.size = Some(64 << 20);
        let other_bs = |r: &mut crate::history::Record| r.job.bs = Some(8192);
        let unmeasured = |r: &mut crate::history::Record| {
            r.job.size = Some(64 << 20);
            r.metrics.clear();
        };
        // (the change, whether the reason names its deviation)
        type Change<'a> = &'a dyn Fn(&mut crate::history::Record);
        let cases: [(Change, bool); 3] = [(&small, true), (&other_bs, true), (&unmeasured, false)];
        for (i, (change, named)) in cases.into_iter().enumerate() {
            let (ev, text) = one_run(change, false);
            assert_eq!(ev.deviations.len(), 1, "case {i}: {:?}", ev.deviations);
            let d = &ev.deviations[0];
            let line = format!("\n  not the policy's test: {d} (");
            assert_eq!(
                ev.reason_names == Some(d.effect),
                named,
                "case {i}: {}",
                ev.reason
            );
            // What the type claims the reason says, it says.
            assert_eq!(
                ev.reason.contains(&d.to_string()),
                named,
                "case {i}: {}",
                ev.reason
            );
            assert_eq!(text.contains(&line), !named, "case {i}: {line}\n{text}");
            // --verbose lists it always.
            let (_, verbose) = one_run(change, true);
            assert!(verbose.contains(&line), "case {i}: {line}\n{verbose}");
        }
    }

    #[test]
    fn the_table_prints_each_warnings_headline_without_verbose_and_its_sentence_with_it() {
        let (mut ev, records) =
            judged(|r: &mut crate::history::Record| r.target.filesystem = Some("ext4".into()));
        let printed =
            |ev: &crate::evaluate::Evaluation, verbose: bool| words(&table(ev, &records, verbose));
        let mut shortened = 0;
        for w in crate::evaluate::warning_examples() {
            let (whole, headline) = (w.to_string(), w.headline().to_string());
            ev.warnings = vec![w];
            let short = printed(&ev, false);
            // A headline under 40 characters says too little alone: the whole sentence.
            let expected = if headline.chars().count() >= 40 {
                shortened += usize::from(headline != whole);
                &headline
            } else {
                &whole
            };
            let line = format!("warning: {} ", words(expected));
            assert!(short.contains(&line), "{line}\n{short}");
            if expected != &whole {
                assert!(!short.contains(&words(&whole)), "{whole}\n{short}");
                assert!(short.contains("more with --verbose"), "{short}");
            }
            let verbose = printed(&ev, true);
            let line = format!("warning: {} ", words(&whole));
            assert!(verbose.contains(&line), "{line}\n{verbose}");
        }
        assert!(shortened > 20, "{shortened}");
    }
}
