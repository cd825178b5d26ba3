//! The fleet for people: one row per node with its runs, days, the deciding rule's aggregate
//! against the threshold and its verdict; then why each node that does not pass does not,
//! the warnings, and the fleet's verdict last.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use crate::evaluate::Verdict;

use super::super::Style;
use super::super::fit;
use super::super::table::wrap;
use super::super::view_fleet::{FleetView, fleet_view};
use super::Fleet;

/// Colours for a terminal that shows them, or none.
struct Paint {
    color: bool,
}

impl Paint {
    fn paint(&self, text: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// "PASS", "FAIL", "INCONCLUSIVE" in their colours.
    fn word(&self, v: Verdict) -> String {
        let plain = v.as_str().to_uppercase();
        match v {
            Verdict::Pass => self.paint(&plain, "32"),
            Verdict::Fail => self.paint(&plain, "31"),
            Verdict::Inconclusive => self.paint(&plain, "33"),
        }
    }
}

pub fn render(fleet: &Fleet, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let paint = Paint { color: style.color };
    let view = fleet_view(fleet);
    head(fleet, &view, out)?;
    if view.nodes.is_empty() {
        writeln!(out, "no nodes")?;
    } else {
        let text = nodes_table(&view);
        // Colour the verdict words after layout, so widths stay right.
        let text = if style.color {
            colour_verdicts(&text, &paint)
        } else {
            text
        };
        writeln!(out, "{text}")?;
    }
    writeln!(out)?;
    notes(&view, &paint, out)?;
    verdict(fleet, &paint, out)
}

/// The policy, and the window history files were judged over.
fn head(fleet: &Fleet, view: &FleetView, out: &mut dyn Write) -> io::Result<()> {
    let p = &fleet.policy;
    writeln!(
        out,
        "{}",
        wrap("policy: ", &format!("{} — {}", p.name, p.description))
    )?;
    if view.from_history {
        writeln!(
            out,
            "{}",
            wrap(
                "window: ",
                &format!(
                    "history files judged over runs since {}",
                    fleet
                        .since
                        .with_timezone(&chrono::Local)
                        .format("%Y-%m-%d %H:%M %Z")
                )
            )
        )?;
    }
    writeln!(out)
}

/// The nodes' table, laid out to the terminal's width: wide (a column per field), stacked
/// (the node's host, dir and engine under each other, and runs over days), else each node as
/// a record (cards).
fn nodes_table(view: &FleetView) -> String {
    let engine_col = view.engines_differ;
    // Which evidence each node was judged on, where they differ (else the verdict line
    // says it of all of them).
    let on_col = view
        .nodes
        .iter()
        .any(|n| n.on.text != view.nodes[0].on.text);
    let unit = if view.value.unit.is_empty() {
        String::new()
    } else {
        format!("\n{}", view.value.unit)
    };
    let mut wide = fit::table();
    let mut stacked = fit::table();
    let mut header = vec![Cell::new("host"), Cell::new("dir")];
    if engine_col {
        header.push(Cell::new("engine"));
    }
    let value_title = format!("{}{unit}", view.value.title);
    if on_col {
        header.push(Cell::new("on"));
    }
    header.extend([
        Cell::new("runs"),
        Cell::new("days"),
        Cell::new(&value_title),
        Cell::new("threshold"),
        Cell::new("verdict"),
    ]);
    wide.set_header(header);
    stacked.set_header(vec![
        Cell::new(if engine_col {
            "host\ndir\nengine"
        } else {
            "host\ndir"
        }),
        Cell::new(if on_col {
            "on\nruns\ndays"
        } else {
            "runs\ndays"
        }),
        Cell::new(value_title.replace(' ', "\n")),
        Cell::new("threshold"),
        Cell::new("verdict"),
    ]);
    for n in &view.nodes {
        let mut row = vec![Cell::new(&n.host.text), Cell::new(&n.dir.text)];
        let mut node = vec![n.host.text.as_str(), n.dir.text.as_str()];
        if engine_col {
            row.push(Cell::new(&n.engine.text));
            node.push(&n.engine.text);
        }
        let right = |s: &str| Cell::new(s).set_alignment(CellAlignment::Right);
        // Painted text would count its escape codes as columns; the word is short.
        let verdict = n.verdict_word();
        let value = n.value_marked();
        if on_col {
            row.push(Cell::new(&n.on.text));
        }
        row.extend([
            right(&n.runs.text),
            right(&n.days.text),
            right(&value),
            right(&n.threshold.text),
            Cell::new(&verdict),
        ]);
        wide.add_row(row);
        stacked.add_row(vec![
            Cell::new(node.join("\n")),
            right(&if on_col {
                format!("{}\n{}\n{}", n.on.text, n.runs.text, n.days.text)
            } else {
                format!("{}\n{}", n.runs.text, n.days.text)
            }),
            right(&value),
            right(&n.threshold.text),
            Cell::new(verdict),
        ]);
    }
    fit::first_fitting(&[wide, stacked], crate::terminal::stdout_width())
}

/// The table's verdict words in their colours, found from the right of each line (the
/// verdict is the last cell; a card's verdict line ends with the word).
fn colour_verdicts(text: &str, paint: &Paint) -> String {
    text.lines()
        .map(|l| {
            for v in [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive] {
                let plain = format!(" {} ", v.as_str().to_uppercase());
                if let Some(i) = l.rfind(&plain) {
                    return format!("{} {} {}", &l[..i], paint.word(v), &l[i + plain.len()..]);
                }
                if let Some(head) = l.strip_suffix(plain.trim()) {
                    return format!("{head}{}", paint.word(v));
                }
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why each node that does not pass does not, then the warnings, and a blank line after
/// them when there were any.
fn notes(view: &FleetView, paint: &Paint, out: &mut dyn Write) -> io::Result<()> {
    let mut said = false;
    for n in view.nodes.iter().filter(|n| n.verdict != Verdict::Pass) {
        let line = wrap(
            &format!("{}: ", n.label),
            &format!("{} — {}", n.verdict_word(), n.reason),
        );
        writeln!(
            out,
            "{}",
            line.replacen(&n.verdict_word(), &paint.word(n.verdict), 1)
        )?;
        said = true;
    }
    for note in &view.notes {
        let first = match &note.node {
            Some(label) => format!("warning: {label}: "),
            None => "warning: ".to_string(),
        };
        let text = wrap(&first, &note.text);
        writeln!(
            out,
            "{}",
            text.replacen("warning:", &paint.paint("warning:", "33"), 1)
        )?;
        said = true;
    }
    if said {
        writeln!(out)?;
    }
    Ok(())
}

/// The fleet's verdict with its reason and evidence, then the closing line that counts the
/// nodes' verdicts.
fn verdict(fleet: &Fleet, paint: &Paint, out: &mut dyn Write) -> io::Result<()> {
    let plain = fleet.verdict.as_str().to_uppercase();
    let line = wrap(
        "verdict: ",
        &format!("{plain} — {}; {}", fleet.reason, fleet.judged_on()),
    );
    let painted = match fleet.verdict {
        Verdict::Pass => paint.paint(&plain, "1;32"),
        Verdict::Fail => paint.paint(&plain, "1;31"),
        Verdict::Inconclusive => paint.paint(&plain, "1;33"),
    };
    writeln!(out, "{}", line.replacen(&plain, &painted, 1))?;
    let c = fleet.counts();
    let nouns = fleet.nouns();
    writeln!(
        out,
        "{}: {} {}: {} pass, {} fail, {} inconclusive",
        nouns.set,
        c.total(),
        nouns.of(c.total()),
        c.pass,
        c.fail,
        c.inconclusive
    )
}
