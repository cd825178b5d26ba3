//! The HTML report's picture of each run: IOPS in every 500 ms interval against the
//! threshold, with the final fsync marked as its own phase.

use std::fmt::Write as _;

use super::xml::text;
use crate::evaluate::Evaluation;

/// The section, empty when no run carries a series.
pub fn section(ev: &Evaluation) -> String {
    let runs: Vec<(usize, &crate::history::Record)> = ev
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.iops_series.is_some())
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    // The threshold, when the deciding rule is in IOPS.
    let threshold = ev
        .rules
        .iter()
        .find(|r| r.unit == "IOPS")
        .map(|r| r.threshold);
    let mut h = String::from(
        "<section id=\"inside\">\n<h2>IOPS inside each run</h2>\n<p class=\"muted\">I/Os completed in each 500 ms, as fio's samples (the last, partial interval left out, as fio does); the shaded band is the final fsync, inside the measured time.</p>\n",
    );
    for (i, r) in runs {
        let s = r.iops_series.as_ref().expect("filtered");
        let _ = writeln!(
            h,
            "<figure class=\"series\"><figcaption>run {} — {}</figcaption>",
            i + 1,
            text(&r.timestamp.format("%Y-%m-%d %H:%M:%S").to_string())
        );
        h.push_str(&super::chart::series(
            s,
            threshold,
            &format!(
                "{} IOPS every {} ms in run {}",
                s.main_dir(),
                s.interval_ms,
                i + 1
            ),
        ));
        h.push_str("</figure>\n");
    }
    h.push_str("</section>\n");
    h
}
