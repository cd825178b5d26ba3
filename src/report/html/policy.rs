//! The node report's policy section (what was judged, against which source) and the test's
//! shape in the verdict banner.

use std::fmt::Write as _;

use crate::evaluate::Evaluation;
use crate::report::view::dash;
use crate::report::view_node::{Notes, scope_words, strict_words};
use crate::report::xml::text;
use crate::report::{Identity, test_shape};

/// The test's shape and what keeps it from being the policy's, in the banner itself.
pub fn test_lines(h: &mut String, ev: &Evaluation, notes: &Notes) {
    let context = &notes.beside_verdict;
    if ev.runs.is_empty() && context.is_empty() {
        return;
    }
    h.push_str("<ul class=\"test\">\n");
    if !ev.runs.is_empty() {
        let _ = writeln!(
            h,
            "<li class=\"shape\">test: {}</li>",
            text(&test_shape(ev))
        );
    }
    for line in context {
        let _ = writeln!(h, "<li class=\"deviation\">{}</li>", text(line));
    }
    h.push_str("</ul>\n");
}

pub fn section(h: &mut String, ev: &Evaluation, id: &Identity) {
    let p = &ev.policy;
    h.push_str("<section id=\"policy\">\n<h2>Policy</h2>\n<dl>\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(h, "<dt>{}</dt><dd>{v}</dd>", text(k));
    };
    row(
        "policy",
        format!(
            "<strong>{}</strong>: {}",
            text(&p.name),
            text(&p.description)
        ),
    );
    row("vendor", text(&p.vendor));
    let source = super::page::source_link(p);
    row(
        "source",
        format!(
            "{source} <span class=\"muted\">(seen {}; test {})</span>",
            text(&p.seen),
            text(&p.test)
        ),
    );
    row("host", text(dash(&id.host)));
    row("directory", text(dash(&id.dir)));
    row("engine", text(dash(&id.engine)));
    row(
        "judged",
        text(&format!(
            "{} of {}{}",
            p.aggregate.as_str(),
            scope_words(ev.scope),
            strict_words(ev.strict)
        )),
    );
    h.push_str("</dl>\n</section>\n");
}
