//! A self-contained HTML report to attach to a ticket or archive: one file, inline CSS and
//! inline SVG charts, no script and no external resource (a Content-Security-Policy meta tag
//! forbids both), readable offline in any browser.
//!
//! It is written as well-formed XHTML (every element closed, void elements self-closed, only
//! XML's own entities), so XML tools can read it as well as browsers. The page, top to
//! bottom, and where each part is written:
//!
//! | part | file |
//! | --- | --- |
//! | the document, the verdict banner, the footer (shared with the fleet's page) | `page.rs` |
//! | the policy and what was judged | `policy.rs` |
//! | the runs chart, IOPS inside each run | `charts.rs` (drawn by `report/chart/`) |
//! | the runs, the rules, the per-day figures and chart | `tables.rs` (the tables are `report/view*.rs`'s) |
//! | the evidence, the differences, the warnings | `notes.rs` |
//!
//! The stylesheet, shared with the fleet page, is `report/report.css`.

use std::io::{self, Write};

use crate::evaluate::Evaluation;
use crate::run_index::Records;

use super::view_node;

mod charts;
mod notes;
mod page;
mod policy;
mod tables;

pub(super) use page::{banner, page_end, page_start, source_link};

/// The stylesheet of every HTML page, the node report's and the fleet's: one file, put inline
/// in each page at build time (the pages load nothing).
pub(super) const CSS: &str = include_str!("../report.css");

pub fn render(ev: &Evaluation, records: &Records, out: &mut dyn Write) -> io::Result<()> {
    let mut h = String::new();
    let id = super::identity(ev);
    let p = &ev.policy;
    let word = ev.verdict.as_str().to_uppercase();
    let on = if id.host.is_empty() {
        String::new()
    } else {
        format!(" on {}", id.host)
    };
    let notes = view_node::notes(ev);

    page_start(&mut h, &format!("iopscheck: {} — {word}{on}", p.name), CSS);
    banner(
        &mut h,
        ev.verdict,
        &format!("iopscheck: {}{on}", p.name),
        &ev.judged_on(),
        &ev.reason,
    );
    policy::test_lines(&mut h, ev, &notes);
    h.push_str("</header>\n<main>\n");

    // Written section by section as each is built: the page is never held whole.
    let mut flush = |h: &mut String| -> io::Result<()> {
        out.write_all(h.as_bytes())?;
        h.clear();
        Ok(())
    };
    policy::section(&mut h, ev, &id);
    charts::runs_section(&mut h, ev);
    flush(&mut h)?;
    charts::series_section(&mut h, ev, records)?;
    flush(&mut h)?;
    tables::runs_section(&mut h, ev, records)?;
    flush(&mut h)?;
    tables::rules_section(&mut h, ev);
    tables::days_section(&mut h, ev);
    notes::evidence_section(&mut h, &notes);
    notes::warnings_section(&mut h, &notes);

    page_end(&mut h, ev.generated);
    flush(&mut h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;

    #[test]
    fn verdict_class_names_exist_for_each_verdict() {
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Inconclusive] {
            assert!(CSS.contains(&format!(".banner.{}", v.as_str())));
            assert!(CSS.contains(&format!("text.verdict-{}", v.as_str())));
        }
    }
}
