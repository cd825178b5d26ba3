//! The fleet in Markdown for a ticket or a wiki page: the verdict, one table row per node,
//! why each node that does not pass does not, and the warnings. Text from the files (host
//! names, directories, reasons) is escaped so it cannot become markup.

use std::io::{self, Write};

use crate::evaluate::Verdict;

use super::super::markdown::esc;
use super::super::table::fmt_value;
use super::{Fleet, RowSource, threshold_text};

fn icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅",
        Verdict::Fail => "❌",
        Verdict::Inconclusive => "❔",
    }
}

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let p = &fleet.policy;
    let word = fleet.verdict.as_str().to_uppercase();
    writeln!(
        out,
        "# iopscheck fleet: {} — {} {word}",
        esc(&p.name),
        icon(fleet.verdict)
    )?;
    writeln!(out)?;
    writeln!(out, "**{word}** — {}", esc(&fleet.reason))?;
    writeln!(out)?;
    writeln!(
        out,
        "- policy: **{}** — {}",
        esc(&p.name),
        esc(&p.description)
    )?;
    if fleet.rows.iter().any(|r| r.source == RowSource::History) {
        writeln!(
            out,
            "- window: history files judged over runs since {}",
            fleet.since.format("%Y-%m-%d %H:%M UTC")
        )?;
    }
    let c = fleet.counts();
    writeln!(
        out,
        "- nodes: {} ({} pass, {} fail, {} inconclusive)",
        c.total(),
        c.pass,
        c.fail,
        c.inconclusive
    )?;
    writeln!(out)?;

    writeln!(out, "## Nodes")?;
    writeln!(out)?;
    if fleet.rows.is_empty() {
        writeln!(out, "No nodes.")?;
    } else {
        let unit = fleet
            .head
            .as_ref()
            .map(|h| h.unit)
            .filter(|u| !u.is_empty())
            .map(|u| format!(" ({})", esc(u)))
            .unwrap_or_default();
        writeln!(
            out,
            "| host | dir | engine | runs | days | {}{unit} | threshold | verdict | reason |",
            esc(&fleet.value_title())
        )?;
        writeln!(
            out,
            "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"
        )?;
        for r in &fleet.rows {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} {} | {} |",
                esc(&r.host),
                esc_or_dash(&r.dir),
                esc_or_dash(&r.engine),
                r.runs,
                r.days,
                r.value.map(fmt_value).unwrap_or("—".into()),
                esc(&threshold_text(fleet, r)),
                icon(r.verdict),
                r.verdict.as_str(),
                esc(&r.reason)
            )?;
        }
    }
    writeln!(out)?;

    writeln!(out, "## Warnings")?;
    writeln!(out)?;
    let mut any = false;
    for r in &fleet.rows {
        for w in &r.warnings {
            writeln!(out, "- ⚠️ {}: {}", esc(&r.label(fleet)), esc(w))?;
            any = true;
        }
    }
    for w in &fleet.warnings {
        writeln!(out, "- ⚠️ {}", esc(w))?;
        any = true;
    }
    if !any {
        writeln!(out, "None.")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "<sub>iopscheck {}, generated {}</sub>",
        env!("CARGO_PKG_VERSION"),
        fleet.generated.format("%Y-%m-%d %H:%M:%S UTC")
    )?;
    Ok(())
}

fn esc_or_dash(s: &str) -> String {
    if s.is_empty() { "—".into() } else { esc(s) }
}
