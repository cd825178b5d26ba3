//! The fleet in Markdown for a ticket or a wiki page: the verdict, one table row per node,
//! why each node that does not pass does not, and the warnings. Text from the files (host
//! names, directories, reasons) is escaped so it cannot become markup.

use std::io::{self, Write};

use super::super::markdown::{esc, verdict_icon};
use super::super::view_fleet::fleet_view;
use super::Fleet;

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let p = &fleet.policy;
    let view = fleet_view(fleet);
    let word = fleet.verdict.as_str().to_uppercase();
    writeln!(
        out,
        "# iopscheck {}: {} — {} {word}",
        fleet.nouns().set,
        esc(&p.name),
        verdict_icon(fleet.verdict)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "**{word}** {} — {}",
        esc(&fleet.judged_on()),
        esc(&fleet.reason)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "- policy: **{}** — {}",
        esc(&p.name),
        esc(&p.description)
    )?;
    if view.from_history {
        writeln!(
            out,
            "- window: history files judged over runs since {}",
            fleet.since.format("%Y-%m-%d %H:%M UTC")
        )?;
    }
    let c = fleet.counts();
    writeln!(
        out,
        "- {}s: {} ({} pass, {} fail, {} inconclusive)",
        fleet.nouns().one,
        c.total(),
        c.pass,
        c.fail,
        c.inconclusive
    )?;
    writeln!(out)?;

    writeln!(
        out,
        "## {}",
        if fleet.of_devices { "Devices" } else { "Nodes" }
    )?;
    writeln!(out)?;
    if view.nodes.is_empty() {
        writeln!(out, "No nodes.")?;
    } else {
        let unit = if view.value.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", esc(&view.value.unit))
        };
        writeln!(
            out,
            "| host | dir | engine | judged on | runs | days | {}{unit} | threshold | verdict | reason |",
            esc(&view.value.title)
        )?;
        writeln!(
            out,
            "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"
        )?;
        for n in &view.nodes {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} {} | {} |",
                esc(&n.host.text),
                esc(&n.dir.text),
                esc(&n.engine.text),
                n.on.text,
                n.runs.text,
                n.days.text,
                n.value.text,
                esc(&n.threshold.text),
                verdict_icon(n.verdict),
                n.verdict.as_str(),
                esc(&n.reason)
            )?;
        }
    }
    writeln!(out)?;

    writeln!(out, "## Warnings")?;
    writeln!(out)?;
    for note in &view.notes {
        match &note.node {
            Some(label) => writeln!(out, "- ⚠️ {}: {}", esc(label), esc(&note.text))?,
            None => writeln!(out, "- ⚠️ {}", esc(&note.text))?,
        }
    }
    if view.notes.is_empty() {
        writeln!(out, "None.")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "<sub>iopscheck {}, generated {}</sub>",
        crate::version::VERSION,
        fleet.generated.format("%Y-%m-%d %H:%M:%S UTC")
    )?;
    Ok(())
}
