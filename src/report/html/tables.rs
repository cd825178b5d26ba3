//! The node report's tables, rendered from the view (`report/view.rs`, `report/view_node.rs`):
//! the runs (with every metric of each run folded away), the rules, the per-day figures with
//! their chart.

use std::fmt::Write as _;

use crate::evaluate::Evaluation;
use crate::report::view::{self, Align, Emphasis, Outcome, RowKind, Table};
use crate::report::xml::{attr, text};
use crate::report::{chart, view_node};
use crate::run_index::{RecordReader, Records, WithAll};

/// `records` is where a run's figures it does not hold are read again (`Run::holding`).
pub fn runs_section(h: &mut String, ev: &Evaluation, records: &Records) -> std::io::Result<()> {
    h.push_str("<section id=\"runs\">\n<h2>Runs</h2>\n");
    match view::runs_table(ev) {
        Some(t) => runs_table(h, ev, &t, records)?,
        None => {
            let _ = writeln!(h, "<p>{}</p>", text(view_node::no_runs_words(ev)));
        }
    }
    not_counted(h, ev);
    h.push_str("</section>\n");
    Ok(())
}

/// The runs table, then every metric of each run (or each day), folded away.
fn runs_table(
    h: &mut String,
    ev: &Evaluation,
    t: &Table,
    records: &Records,
) -> std::io::Result<()> {
    if let Some(note) = view::runs_note(ev) {
        let _ = writeln!(h, "<p class=\"muted\">{}</p>", text(&note));
    }
    if let Some(note) = view::judging_note(ev) {
        let _ = writeln!(h, "<p class=\"not-judged\">{}</p>", text(&note));
    }
    table(h, t);

    // Every metric the runs have, folded away: a <details> element needs no script.
    let all = crate::report::metric_columns(ev);
    let mut reader = records.reader();
    if view::runs_by_day(ev) {
        return all_metrics_by_day(h, ev, &all, &mut reader);
    }
    h.push_str("<details><summary>All metrics of each run</summary>\n<div class=\"scroll\"><table class=\"all-metrics\">\n<thead><tr><th class=\"num\">#</th><th>directory</th>");
    for m in &all {
        let _ = write!(h, "<th class=\"num\">{}</th>", text(m));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (i, run) in ev.runs.iter().enumerate() {
        let _ = write!(
            h,
            "<tr><td class=\"num\">{}</td><td>{}</td>",
            i + 1,
            text(&crate::printable::line(&run.target.dir))
        );
        let figures = reader.metrics(run)?;
        for m in &all {
            let cell = figures
                .get(m)
                .map(|&v| crate::numbers::fmt_value(v))
                .unwrap_or("—".into());
            let _ = write!(h, "<td class=\"num\">{}</td>", text(&cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table></div>\n</details>\n");
    Ok(())
}

/// The runs left out of the verdict, each with the reason, under their own heading.
fn not_counted(h: &mut String, ev: &Evaluation) {
    let Some(t) = view_node::not_counted_table(ev) else {
        return;
    };
    let _ = writeln!(h, "<h3 id=\"not-counted\">{}</h3>", text(&t.title));
    if let Some(note) = view_node::not_counted_note(ev) {
        let _ = writeln!(h, "<p class=\"muted\">{}</p>", text(&note));
    }
    table(h, &t);
}

/// Past the runs table's limit, every metric's mean per day (as the runs table has a row per
/// day), folded away like the per-run one.
fn all_metrics_by_day(
    h: &mut String,
    ev: &Evaluation,
    all: &[String],
    reader: &mut RecordReader,
) -> std::io::Result<()> {
    h.push_str("<details><summary>All metrics, the mean of each day's runs</summary>\n<div class=\"scroll\"><table class=\"all-metrics\">\n<thead><tr><th>runs</th><th>day</th>");
    for m in all {
        let _ = write!(h, "<th class=\"num\">{}</th>", text(m));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    let names: Vec<&str> = all.iter().map(String::as_str).collect();
    // Each run with every figure, read again one at a time where it holds only some.
    let mut failed = None;
    let runs = ev.runs.iter().map_while(|run| match reader.metrics(run) {
        Ok(metrics) => Some(WithAll { run, metrics }),
        Err(e) => {
            failed = Some(e);
            None
        }
    });
    let rows = view::day_rows(runs, &[], &names, false, None);
    if let Some(e) = failed {
        return Err(e);
    }
    for row in rows {
        h.push_str("<tr>");
        for c in &row.cells {
            let class = if c.align == Align::Right {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", text(&c.text));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table></div>\n</details>\n");
    Ok(())
}

pub fn rules_section(h: &mut String, ev: &Evaluation) {
    h.push_str("<section id=\"rules\">\n<h2>Rules</h2>\n");
    match view_node::rules_table(ev) {
        Some(t) => table(h, &t),
        None => h.push_str("<p>The policy has no rules.</p>\n"),
    }
    h.push_str("</section>\n");
}

pub fn days_section(h: &mut String, ev: &Evaluation) {
    if ev.days.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<section id=\"days\">\n<h2>Per day ({})</h2>",
        text(ev.primary_metric().unwrap_or(""))
    );
    if let Some(rule) = ev.primary_rule() {
        h.push_str("<p class=\"muted\">Each day's mean (dot), the 95% interval of that mean where the day has two runs or more (shaded bar), and the range of its runs, lowest to highest (thin line).</p>\n");
        h.push_str(&chart::days(ev, rule));
    }
    if let Some(t) = view::days_table(ev) {
        table(h, &t);
    }
    h.push_str("</section>\n");
}

/// A view table as an HTML table: right-aligned cells in the `num` class, judged figures in
/// `pass` or `fail`, runs and the aggregate as row classes (the aggregate's strength is its
/// row's style), a cell's detail in parentheses, a wide table in a scrolling box.
fn table(h: &mut String, t: &Table) {
    if t.wide {
        h.push_str("<div class=\"scroll\">");
    }
    let _ = write!(h, "<table class=\"{}\">\n<thead><tr>", attr(t.class));
    for c in &t.columns {
        let class = match c.align {
            Align::Right => " class=\"num\"",
            Align::Left => "",
        };
        let unit = if c.unit.is_empty() {
            String::new()
        } else {
            format!("<br/>{}", text(&c.unit))
        };
        let _ = write!(h, "<th{class}>{}{unit}</th>", text(&c.title));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        h.push_str(match row.kind {
            RowKind::Plain => "<tr>",
            RowKind::Run => "<tr class=\"run\">",
            RowKind::Aggregate => "<tr class=\"aggregate\">",
            RowKind::Rule => "<tr class=\"rule\">",
        });
        for c in &row.cells {
            let mut classes: Vec<&str> = Vec::new();
            if c.align == Align::Right {
                classes.push("num");
            }
            match c.emphasis {
                Emphasis::Pass => classes.push("pass"),
                Emphasis::Fail => classes.push("fail"),
                Emphasis::Outcome(o) => classes.extend(match o {
                    Outcome::Meets => ["result", "pass"].as_slice(),
                    Outcome::Fails => &["result", "fail"],
                    Outcome::Soft => &["result", "soft"],
                    Outcome::NotMeasured
                    | Outcome::ShownOnly
                    | Outcome::NotJudged
                    | Outcome::Undecided => &["result"],
                }),
                Emphasis::None | Emphasis::Strong => {}
            }
            let mut attrs = String::new();
            if !classes.is_empty() {
                let _ = write!(attrs, " class=\"{}\"", classes.join(" "));
            }
            if c.span > 1 {
                let _ = write!(attrs, " colspan=\"{}\"", c.span);
            }
            let detail = c
                .detail
                .as_deref()
                .map(|d| format!(" ({})", text(d)))
                .unwrap_or_default();
            let _ = write!(h, "<td{attrs}>{}{detail}</td>", text(&c.text));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>");
    if t.wide {
        h.push_str("</div>");
    }
    h.push('\n');
}
