//! The node report's closing sections: the evidence rule and how the runs' job differs from
//! the policy's test, then the warnings, as the view words them (`report/view_node.rs`).

use std::fmt::Write as _;

use crate::report::view_node::Notes;
use crate::report::xml::text;

pub fn evidence_section(h: &mut String, notes: &Notes) {
    h.push_str("<section id=\"evidence\">\n<h2>Evidence</h2>\n");
    let _ = writeln!(h, "<p>{}</p>", text(&notes.evidence));
    if !notes.differences.is_empty() {
        h.push_str("<p>Differences from the policy's test:</p>\n<ul class=\"differences\">\n");
        for d in &notes.differences {
            let _ = writeln!(h, "<li>{}</li>", text(d));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

pub fn warnings_section(h: &mut String, notes: &Notes) {
    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    if notes.warnings.is_empty() {
        h.push_str("<p class=\"muted\">None.</p>\n");
    } else {
        h.push_str("<ul class=\"warnings\">\n");
        for w in &notes.warnings {
            let _ = writeln!(h, "<li class=\"warning\">{}</li>", text(w));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}
