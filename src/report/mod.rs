//! Output formats. Every format renders the same [`Evaluation`]; adding one is one file here
//! and one arm in [`render`].

mod json;
mod table;

use std::io::{self, Write};
use std::path::Path;

use crate::evaluate::Evaluation;

pub use json::to_json;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    Prometheus,
    Junit,
    Html,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Prometheus => "prometheus",
            Format::Junit => "junit",
            Format::Html => "html",
        }
    }
}

/// Rendering choices that are not part of the evaluation.
#[derive(Debug, Clone, Default)]
pub struct Style {
    /// ANSI colour in the table (off with NO_COLOR or when not a terminal).
    pub color: bool,
}

/// Renders one evaluation in one format.
pub fn render(
    format: Format,
    ev: &Evaluation,
    style: &Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Table => table::render(ev, style, out),
        Format::Json => json::render(ev, out),
        other => Err(io::Error::other(format!(
            "the {} format is not available yet",
            other.as_str()
        ))),
    }
}

/// Parses `--export FORMAT=FILE`.
pub fn parse_export(s: &str) -> Result<(Format, std::path::PathBuf), String> {
    use clap::ValueEnum;
    let (f, path) = s
        .split_once('=')
        .filter(|(f, p)| !f.is_empty() && !p.is_empty())
        .ok_or_else(|| {
            format!("--export: expected FORMAT=FILE, e.g. json=result.json, not '{s}'")
        })?;
    let format = Format::from_str(f, true).map_err(|_| {
        format!("--export: unknown format '{f}'; use table, json, csv, markdown, prometheus, junit or html")
    })?;
    Ok((format, std::path::PathBuf::from(path)))
}

/// Writes a format to a file atomically: a temporary file in the same directory, fsynced,
/// then renamed over the target, so readers (node_exporter, CI) never see half a file.
pub fn write_file(format: Format, ev: &Evaluation, style: &Style, path: &Path) -> io::Result<()> {
    let mut buf = Vec::new();
    render(format, ev, style, &mut buf)?;
    write_atomic(path, &buf)
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
