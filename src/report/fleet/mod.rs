//! The fleet: many nodes' verdicts under one policy, and the one verdict they add up to. Every
//! node must pass: the fleet fails if any node fails, is inconclusive if any node is (or has
//! no evidence at all) and none fails, and passes only when every node passes.
//!
//! `iopscheck fleet` builds a [`Fleet`] from the nodes' files; each format renders it, one
//! file per format as for a single node's evaluation (`super::render`).

mod csv;
mod html;
mod json;
mod junit;
mod markdown;
mod prometheus;
mod table;

use std::io::{self, Write};

use super::{Format, Style};
pub use crate::fleet::{Fleet, NodeRow};

/// Renders the fleet in one format.
pub fn render(format: Format, fleet: &Fleet, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Table => table::render(fleet, style, out),
        Format::Json => json::render(fleet, out),
        Format::Jsonl => json::render_line(fleet, out),
        Format::Csv => csv::render(fleet, out),
        Format::Markdown => markdown::render(fleet, out),
        Format::Prometheus => prometheus::render(fleet, out),
        Format::Junit => junit::render(fleet, out),
        Format::Html => html::render(fleet, out),
        Format::Summary => super::summary::render_fleet(fleet, out),
        Format::Reply => super::reply::render_fleet(fleet, out),
    }
}

/// Writes the fleet in one format to a file, atomically (see [`super::OutputFile`]),
/// rendered straight into it.
pub fn write_file(format: Format, fleet: &Fleet, out: &super::OutputFile) -> io::Result<()> {
    out.publish_with(|w| render(format, fleet, &Style::default(), w))
}
