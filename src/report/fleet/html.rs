//! The fleet as one self-contained HTML page: inline CSS, no script and no external resource
//! (a Content-Security-Policy meta tag forbids both), written as well-formed XHTML so XML
//! tools can read it too. The verdict banner, one table row per node (class `pass`, `fail` or
//! `inconclusive` on the row), then the warnings.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::super::chart;
use super::super::html::{CSS, banner, page_end, page_start, source_link};
use super::super::view_fleet::{FleetView, fleet_view};
use super::super::xml::{attr, text};
use super::Fleet;

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let p = &fleet.policy;
    let word = fleet.verdict.as_str().to_uppercase();
    let c = fleet.counts();
    let n = fleet.nouns().one;
    let view = fleet_view(fleet);
    let mut h = String::new();
    page_start(
        &mut h,
        &format!("iopscheck {}: {} — {word}", fleet.nouns().set, p.name),
        CSS,
    );
    banner(
        &mut h,
        fleet.verdict,
        &format!("iopscheck {}: {}", fleet.nouns().set, p.name),
        &fleet.judged_on(),
        &fleet.reason,
    );
    let _ = writeln!(
        h,
        "<p class=\"muted\">{} {n}s: {} pass, {} fail, {} inconclusive. Every {n} must pass.</p>",
        c.total(),
        c.pass,
        c.fail,
        c.inconclusive
    );
    h.push_str("</header>\n<main>\n");

    h.push_str("<section id=\"policy\">\n<h2>Policy</h2>\n");
    let source = source_link(p);
    let _ = writeln!(
        h,
        "<p><strong>{}</strong>: {}<br/>{source}</p>",
        text(&p.name),
        text(&p.description)
    );
    if view.from_history {
        let _ = writeln!(
            h,
            "<p class=\"muted\">History files judged over runs since {}.</p>",
            fleet.since.format("%Y-%m-%d %H:%M UTC")
        );
    }
    h.push_str("</section>\n");

    nodes_chart(&mut h, fleet, &view);

    h.push_str("<section id=\"nodes\">\n<h2>Nodes</h2>\n");
    if view.nodes.is_empty() {
        h.push_str("<p class=\"muted\">No nodes.</p>\n");
    } else {
        let unit = if view.value.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", view.value.unit)
        };
        h.push_str("<div class=\"scroll\">\n<table>\n<thead>\n<tr>");
        for (title, num) in [
            ("host", false),
            ("dir", false),
            ("engine", false),
            ("source, judged on", false),
            ("runs", true),
            ("days", true),
            (&format!("{}{unit}", view.value.title), true),
            ("threshold", true),
            ("verdict", false),
            ("reason", false),
        ] {
            let class = if num { " class=\"num\"" } else { "" };
            let _ = write!(h, "<th{class}>{}</th>", text(title));
        }
        h.push_str("</tr>\n</thead>\n<tbody>\n");
        for n in &view.nodes {
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td class=\"node\">{}</td>{}<td class=\"node\">{}</td><td title=\"{}\">{}<br/><span class=\"muted\">{}</span></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"verdict\">{}</td><td class=\"reason\">{}</td></tr>",
                n.verdict.as_str(),
                text(&n.host.text),
                path_cell(&n.dir.text),
                text(&n.engine.text),
                attr(n.source.detail.as_deref().unwrap_or("")),
                text(&n.source.text),
                n.on.text,
                n.runs.text,
                n.days.text,
                n.value.text,
                text(&n.threshold.text),
                n.verdict_word(),
                text(&n.reason)
            );
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
    }
    h.push_str("</section>\n");

    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    let items: Vec<String> = view
        .notes
        .iter()
        .map(|note| match &note.node {
            Some(label) => format!(
                "<li><strong>{}</strong>: {}</li>",
                text(label),
                text(&note.text)
            ),
            None => format!("<li>{}</li>", text(&note.text)),
        })
        .collect();
    if items.is_empty() {
        h.push_str("<p class=\"muted\">None.</p>\n");
    } else {
        let _ = writeln!(h, "<ul class=\"warnings\">\n{}\n</ul>", items.join("\n"));
    }
    h.push_str("</section>\n");
    page_end(&mut h, fleet.generated);
    out.write_all(h.as_bytes())
}

/// A directory's cell: the path may break after each `/` (and anywhere in a name longer than
/// the column, by the stylesheet's `td.path`), so that long paths of many nodes keep the
/// table within the page; the whole path is its title too, the tooltip a browser shows.
fn path_cell(path: &str) -> String {
    format!(
        "<td class=\"path\" title=\"{}\">{}</td>",
        attr(path),
        text(path).replace('/', "/<wbr/>")
    )
}

/// Each node's deciding figure as a bar, failures first, with its threshold.
fn nodes_chart(h: &mut String, fleet: &Fleet, view: &FleetView) {
    let Some(head) = fleet.head.as_ref() else {
        return;
    };
    if view.nodes.is_empty() {
        return;
    }
    let bars: Vec<chart::NodeBar> = fleet
        .rows
        .iter()
        .zip(&view.nodes)
        .map(|(r, n)| chart::NodeBar {
            label: n.label.clone(),
            value: r.value,
            threshold: r.threshold,
            verdict: r.verdict.as_str(),
            tip: format!(
                "{}: {} {}, {} — {}",
                n.label,
                view.value.title,
                n.value.text,
                n.threshold.text,
                n.verdict_word()
            ),
        })
        .collect();
    let _ = writeln!(
        h,
        "<section id=\"nodes-chart\">\n<h2>{} per node</h2>",
        text(&view.value.title)
    );
    if bars.len() > chart::NODES_DRAWN {
        let _ = writeln!(
            h,
            "<p class=\"muted\">The first {} nodes, failures first; the table lists all {}.</p>",
            chart::NODES_DRAWN,
            bars.len()
        );
    }
    h.push_str(&chart::nodes(&bars, head.unit));
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_may_break_after_each_slash_and_keeps_its_whole_text_as_its_title() {
        assert_eq!(
            super::path_cell("/var/lib/a<b"),
            "<td class=\"path\" title=\"/var/lib/a&lt;b\">/<wbr/>var/<wbr/>lib/<wbr/>a&lt;b</td>"
        );
        assert_eq!(
            super::path_cell("—"),
            "<td class=\"path\" title=\"—\">—</td>"
        );
    }
}
