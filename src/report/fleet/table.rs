//! The fleet for people: one row per node with its runs, days, the deciding rule's aggregate
//! against the threshold and its verdict; then why each node that does not pass does not,
//! the warnings, and the fleet's verdict last.

use std::io::{self, Write};

use comfy_table::{Cell, CellAlignment};

use crate::evaluate::Verdict;

use super::super::Style;
use super::super::fit;
use super::super::table::{fmt_value, wrap};
use super::{Fleet, RowSource, threshold_text};

pub fn render(fleet: &Fleet, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    let paint = |text: &str, code: &str| {
        if style.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let word = |v: Verdict| {
        let plain = v.as_str().to_uppercase();
        match v {
            Verdict::Pass => paint(&plain, "32"),
            Verdict::Fail => paint(&plain, "31"),
            Verdict::Inconclusive => paint(&plain, "33"),
        }
    };
    let p = &fleet.policy;
    writeln!(
        out,
        "{}",
        wrap("policy: ", &format!("{} — {}", p.name, p.description))
    )?;
    if fleet.rows.iter().any(|r| r.source == RowSource::History) {
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
    writeln!(out)?;

    if fleet.rows.is_empty() {
        writeln!(out, "no nodes")?;
    } else {
        let engines: std::collections::BTreeSet<&str> =
            fleet.rows.iter().map(|r| r.engine.as_str()).collect();
        let engine_col = engines.len() > 1;
        let unit = fleet
            .head
            .as_ref()
            .map(|h| h.unit)
            .filter(|u| !u.is_empty())
            .map(|u| format!("\n{u}"))
            .unwrap_or_default();
        // Wide: a column per field. Stacked: the node's host, dir and engine under each other,
        // and runs over days. Else each node as a record (cards).
        let mut wide = fit::table();
        let mut stacked = fit::table();
        let mut header = vec![Cell::new("host"), Cell::new("dir")];
        if engine_col {
            header.push(Cell::new("engine"));
        }
        let value_title = format!("{}{unit}", fleet.value_title());
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
            Cell::new("runs\ndays"),
            Cell::new(value_title.replace(' ', "\n")),
            Cell::new("threshold"),
            Cell::new("verdict"),
        ]);
        for r in &fleet.rows {
            let mut row = vec![Cell::new(&r.host), Cell::new(dash(&r.dir))];
            let mut node = vec![r.host.as_str(), dash(&r.dir)];
            if engine_col {
                row.push(Cell::new(dash(&r.engine)));
                node.push(dash(&r.engine));
            }
            let mark = match (r.value, &fleet.head, r.threshold) {
                (Some(v), Some(h), Some(t)) if h.op.holds(v, t) => " ✓",
                (Some(_), Some(_), Some(_)) => " ✗",
                _ => "",
            };
            let value = r
                .value
                .map(|v| format!("{}{mark}", fmt_value(v)))
                .unwrap_or("—".into());
            let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
            // Painted text would count its escape codes as columns; the word is short.
            let verdict = r.verdict.as_str().to_uppercase();
            row.extend([
                right(r.runs.to_string()),
                right(r.days.to_string()),
                right(value.clone()),
                right(threshold_text(fleet, r)),
                Cell::new(&verdict),
            ]);
            wide.add_row(row);
            stacked.add_row(vec![
                Cell::new(node.join("\n")),
                right(format!("{}\n{}", r.runs, r.days)),
                right(value),
                right(threshold_text(fleet, r)),
                Cell::new(verdict),
            ]);
        }
        let text = fit::first_fitting(&[wide, stacked], crate::terminal::stdout_width());
        // Colour the verdict words after layout, so widths stay right.
        let text = if style.color {
            text.lines()
                .map(|l| {
                    // The verdict is the last cell: look for it from the right.
                    for v in [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive] {
                        let plain = format!(" {} ", v.as_str().to_uppercase());
                        if let Some(i) = l.rfind(&plain) {
                            return format!("{} {} {}", &l[..i], word(v), &l[i + plain.len()..]);
                        }
                        // a record's (card's) verdict line ends with the word
                        if let Some(head) = l.strip_suffix(plain.trim()) {
                            return format!("{head}{}", word(v));
                        }
                    }
                    l.to_string()
                })
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            text
        };
        writeln!(out, "{text}")?;
    }
    writeln!(out)?;

    let mut said = false;
    for r in fleet.rows.iter().filter(|r| r.verdict != Verdict::Pass) {
        let label = r.label(fleet);
        let line = wrap(
            &format!("{label}: "),
            &format!("{} — {}", r.verdict.as_str().to_uppercase(), r.reason),
        );
        let plain = r.verdict.as_str().to_uppercase();
        writeln!(out, "{}", line.replacen(&plain, &word(r.verdict), 1))?;
        said = true;
    }
    for r in &fleet.rows {
        for w in &r.warnings {
            let text = wrap(&format!("warning: {}: ", r.label(fleet)), w);
            writeln!(
                out,
                "{}",
                text.replacen("warning:", &paint("warning:", "33"), 1)
            )?;
            said = true;
        }
    }
    for w in &fleet.warnings {
        let text = wrap("warning: ", w);
        writeln!(
            out,
            "{}",
            text.replacen("warning:", &paint("warning:", "33"), 1)
        )?;
        said = true;
    }
    if said {
        writeln!(out)?;
    }

    let c = fleet.counts();
    writeln!(
        out,
        "fleet: {} node{}: {} pass, {} fail, {} inconclusive",
        c.total(),
        if c.total() == 1 { "" } else { "s" },
        c.pass,
        c.fail,
        c.inconclusive
    )?;
    let plain = fleet.verdict.as_str().to_uppercase();
    let line = wrap("verdict: ", &format!("{plain} — {}", fleet.reason));
    let painted = match fleet.verdict {
        Verdict::Pass => paint(&plain, "1;32"),
        Verdict::Fail => paint(&plain, "1;31"),
        Verdict::Inconclusive => paint(&plain, "1;33"),
    };
    writeln!(out, "{}", line.replacen(&plain, &painted, 1))?;
    Ok(())
}

fn dash(s: &str) -> &str {
    if s.is_empty() { "—" } else { s }
}
