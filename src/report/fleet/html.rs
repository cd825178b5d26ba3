//! The fleet as one self-contained HTML page: inline CSS, no script and no external resource
//! (a Content-Security-Policy meta tag forbids both), written as well-formed XHTML so XML
//! tools can read it too. The verdict banner, one table row per node (class `pass`, `fail` or
//! `inconclusive` on the row), then the warnings.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::super::html::{dash, page_start};
use super::super::table::fmt_value;
use super::super::xml::{attr, text};
use super::{Fleet, RowSource, threshold_text};

const CSS: &str = "
:root { --pass: #1a7f37; --fail: #cf222e; --inconclusive: #9a6700; --fg: #1f2328;
  --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; }
@media (prefers-color-scheme: dark) {
  :root { --pass: #3fb950; --fail: #f85149; --inconclusive: #d29922; --fg: #e6edf3;
    --muted: #9198a1; --line: #3d444d; --bg: #0d1117; }
}
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 0.25rem 0; }
h2 { font-size: 1.15rem; margin-top: 1.75rem; border-bottom: 1px solid var(--line); }
.banner { border-left: 0.5rem solid; padding: 0.75rem 1rem; margin: 1rem 0; }
.banner.pass { border-color: var(--pass); }
.banner.fail { border-color: var(--fail); }
.banner.inconclusive { border-color: var(--inconclusive); }
.banner .word { font-size: 1.75rem; font-weight: 700; letter-spacing: 0.05em; }
.pass .word, tr.pass td.verdict { color: var(--pass); }
.fail .word, tr.fail td.verdict { color: var(--fail); }
.inconclusive .word, tr.inconclusive td.verdict { color: var(--inconclusive); }
td.verdict { font-weight: 700; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; }
.muted, footer { color: var(--muted); font-size: 0.85rem; }
";

pub fn render(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let p = &fleet.policy;
    let v = fleet.verdict.as_str();
    let word = v.to_uppercase();
    let c = fleet.counts();
    let mut h = String::new();
    page_start(
        &mut h,
        &format!("iopscheck fleet: {} — {word}", p.name),
        CSS,
    );
    let _ = writeln!(h, "<header class=\"banner {v}\" id=\"verdict\">");
    let _ = writeln!(h, "<h1>iopscheck fleet: {}</h1>", text(&p.name));
    let _ = writeln!(h, "<p><span class=\"word\">{word}</span></p>");
    let _ = writeln!(h, "<p class=\"reason\">{}</p>", text(&fleet.reason));
    let _ = writeln!(
        h,
        "<p class=\"muted\">{} nodes: {} pass, {} fail, {} inconclusive. Every node must pass.</p>",
        c.total(),
        c.pass,
        c.fail,
        c.inconclusive
    );
    h.push_str("</header>\n<main>\n");

    h.push_str("<section id=\"policy\">\n<h2>Policy</h2>\n");
    let source = match super::super::safe_url(&p.url) {
        Some(url) => format!(
            "<a href=\"{}\" rel=\"noreferrer\">{}</a>",
            attr(url),
            text(if p.source.is_empty() { url } else { &p.source })
        ),
        None => text(&p.source),
    };
    let _ = writeln!(
        h,
        "<p><strong>{}</strong>: {}<br/>{source}</p>",
        text(&p.name),
        text(&p.description)
    );
    if fleet.rows.iter().any(|r| r.source == RowSource::History) {
        let _ = writeln!(
            h,
            "<p class=\"muted\">History files judged over runs since {}.</p>",
            fleet.since.format("%Y-%m-%d %H:%M UTC")
        );
    }
    h.push_str("</section>\n");

    h.push_str("<section id=\"nodes\">\n<h2>Nodes</h2>\n");
    if fleet.rows.is_empty() {
        h.push_str("<p class=\"muted\">No nodes.</p>\n");
    } else {
        let unit = fleet
            .head
            .as_ref()
            .map(|h| h.unit)
            .filter(|u| !u.is_empty())
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        h.push_str("<div class=\"scroll\">\n<table>\n<thead>\n<tr>");
        for (title, num) in [
            ("host", false),
            ("dir", false),
            ("engine", false),
            ("source", false),
            ("runs", true),
            ("days", true),
            (&format!("{}{unit}", fleet.value_title()), true),
            ("threshold", true),
            ("verdict", false),
            ("reason", false),
        ] {
            let class = if num { " class=\"num\"" } else { "" };
            let _ = write!(h, "<th{class}>{}</th>", text(title));
        }
        h.push_str("</tr>\n</thead>\n<tbody>\n");
        for r in &fleet.rows {
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td title=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"verdict\">{}</td><td>{}</td></tr>",
                r.verdict.as_str(),
                text(&r.host),
                text(dash(&r.dir)),
                text(dash(&r.engine)),
                attr(&r.file),
                text(r.source.as_str()),
                r.runs,
                r.days,
                r.value.map(fmt_value).unwrap_or("—".into()),
                text(&threshold_text(fleet, r)),
                r.verdict.as_str().to_uppercase(),
                text(&r.reason)
            );
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
    }
    h.push_str("</section>\n");

    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    let mut items = Vec::new();
    for r in &fleet.rows {
        for w in &r.warnings {
            items.push(format!(
                "<li><strong>{}</strong>: {}</li>",
                text(&r.label(fleet)),
                text(w)
            ));
        }
    }
    items.extend(
        fleet
            .warnings
            .iter()
            .map(|w| format!("<li>{}</li>", text(w))),
    );
    if items.is_empty() {
        h.push_str("<p class=\"muted\">None.</p>\n");
    } else {
        let _ = writeln!(h, "<ul class=\"warnings\">\n{}\n</ul>", items.join("\n"));
    }
    h.push_str("</section>\n</main>\n");
    let _ = writeln!(
        h,
        "<footer><p>Generated by iopscheck {} at {}.</p></footer>",
        env!("CARGO_PKG_VERSION"),
        fleet.generated.format("%Y-%m-%d %H:%M:%S UTC")
    );
    h.push_str("</body>\n</html>\n");
    out.write_all(h.as_bytes())
}
