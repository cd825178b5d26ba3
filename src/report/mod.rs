//! Output formats. Every format renders the same [`Evaluation`]; adding one is one file here
//! and one arm in [`render`]. Helpers that several formats share (which columns a run has,
//! which host/dir/engine the evaluation describes, numbers for machines) live here too.
//!
//! The warnings travel in every format, each once: table and Markdown as a list, JSON as
//! `warnings[]`, CSV as the `warnings` column of the first row, Prometheus as `# warning:`
//! comments plus the `iopscheck_warnings` count, JUnit in the suite's `<system-out>`, HTML as
//! a list. Each format's file says how it maps the rest.

mod by_day;
mod chart;
pub mod compare;
mod csv;
mod details;
mod fit;
pub mod fleet;
mod html;
mod json;
mod junit;
mod lists;
mod markdown;
mod output_file;
mod prometheus;
pub mod reply;
pub mod summary;
mod table;
mod view;
mod view_fleet;
mod view_node;
mod xml;

use std::collections::BTreeSet;
use std::io::{self, Write};

use crate::evaluate::Evaluation;
use crate::run_index::Records;

pub use lists::{GroupRow, ListRow, groups_table, list_table};
pub use output_file::OutputFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    /// The JSON result on one line (JSON Lines), for log streams: `kubectl logs … | iopscheck fleet -`.
    Jsonl,
    Csv,
    Markdown,
    Prometheus,
    Junit,
    Html,
    /// One line for a ticket: verdict, deciding figure and threshold, runs and days, caveat.
    Summary,
    /// Sentences to send the customer: the verdict in plain words, what was measured, and when
    /// inconclusive the exact fio command and how many runs over how many days to attach.
    Reply,
}

impl Format {
    pub const ALL: [Format; 10] = [
        Format::Table,
        Format::Json,
        Format::Jsonl,
        Format::Csv,
        Format::Markdown,
        Format::Prometheus,
        Format::Junit,
        Format::Html,
        Format::Summary,
        Format::Reply,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Prometheus => "prometheus",
            Format::Junit => "junit",
            Format::Html => "html",
            Format::Summary => "summary",
            Format::Reply => "reply",
        }
    }
}

/// Rendering choices that are not part of the evaluation.
#[derive(Debug, Clone, Default)]
pub struct Style {
    /// ANSI colour in the table (off with NO_COLOR or when not a terminal).
    pub color: bool,
    /// `--verbose`: the table shows each run's internals and the per-rule statistics; by
    /// default it fits one screen.
    pub verbose: bool,
}

/// Renders one evaluation in one format. `records` is where the formats that print whole
/// records (JSON's `runs[]`, the table's details inside the runs, the HTML's per-run charts)
/// read them, one at a time by each run's place: the history file, or the records of a run or
/// an import held in memory.
pub fn render(
    format: Format,
    ev: &Evaluation,
    records: &Records,
    style: &Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Table => table::render(ev, records, style, out),
        Format::Json => json::render(ev, records, out),
        Format::Jsonl => json::render_line(ev, records, out),
        Format::Csv => csv::render(ev, records, out),
        Format::Markdown => markdown::render(ev, out),
        Format::Prometheus => prometheus::render(ev, out),
        Format::Junit => junit::render(ev, out),
        Format::Html => html::render(ev, records, out),
        Format::Summary => summary::render(ev, out),
        Format::Reply => reply::render(ev, out),
    }
}

/// The metric columns of a runs table: the rules' metrics first, in the policy's order, then
/// every other metric any run has, sorted by name.
pub fn metric_columns(ev: &Evaluation) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in &ev.rules {
        if !cols.contains(&r.metric) {
            cols.push(r.metric.clone());
        }
    }
    // Records of one kind share one stored list of names: a run whose list is the one before
    // it adds nothing. (Collecting every run's names first held 3 million of them, 90 MB,
    // for a year of runs.)
    let mut rest: BTreeSet<&str> = BTreeSet::new();
    let mut last: Option<&[&str]> = None;
    for r in &ev.runs {
        let names = r.names;
        if last.is_some_and(|l| std::ptr::eq(l, names)) {
            continue;
        }
        last = Some(names);
        rest.extend(names.iter().filter(|m| !cols.iter().any(|c| c == *m)));
    }
    cols.extend(rest.into_iter().map(String::from));
    cols
}

/// What the evaluation describes: policy, host, directory and engine. A report's group says it
/// directly; for a run or an import it is read from the runs, several values joined by ",".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub policy: String,
    pub host: String,
    pub dir: String,
    pub engine: String,
}

impl Identity {
    /// "host NAME", or the import's own words when no host was stated ("host not stated (use
    /// --host)"), which already say "host".
    pub fn host_words(&self) -> String {
        if self.host.starts_with("host ") {
            self.host.clone()
        } else {
            format!("host {}", self.host)
        }
    }
}

/// The identity as the formats show it: each name read from the records with its control
/// and invisible characters shown ([`crate::printable::line`]), a line feed in a directory's
/// name included, so that none starts a line of its own.
pub fn identity(ev: &Evaluation) -> Identity {
    let shown = |s: &str| crate::printable::line(s).into_owned();
    if let Some(g) = &ev.group {
        return Identity {
            policy: shown(&g.policy),
            host: shown(&g.host),
            dir: shown(&g.dir),
            engine: shown(&g.engine),
        };
    }
    let join = |f: &dyn Fn(&crate::run_index::Run) -> &str| {
        let set: BTreeSet<&str> = ev.runs.iter().map(f).collect();
        set.into_iter().collect::<Vec<_>>().join(",")
    };
    Identity {
        policy: shown(&ev.policy.name),
        host: shown(&join(&|r| r.host.as_str())),
        dir: shown(&join(&|r| r.target.dir.as_str())),
        engine: shown(&join(&|r| r.engine.as_str())),
    }
}

/// The shape of the test the judged runs ran, as every format shows it beside the verdict:
/// "size 4 GiB, runtime 1m, filesystem ext4, overrides none". Several values are joined by
/// "/"; what no record states reads "not stated".
pub fn test_shape(ev: &Evaluation) -> String {
    fn join(values: BTreeSet<String>) -> String {
        if values.is_empty() {
            "not stated".into()
        } else {
            values.into_iter().collect::<Vec<_>>().join(" / ")
        }
    }
    // What is shown here is each run's context: a run of the context before it adds nothing.
    let mut last: Option<&std::sync::Arc<crate::run_index::RunInfo>> = None;
    let runs: Vec<&crate::run_index::Run> = ev
        .runs
        .iter()
        .filter(|r| {
            let again = last.is_some_and(|l| std::sync::Arc::ptr_eq(l, r.context()));
            last = Some(r.context());
            !again
        })
        .collect();
    let sizes: BTreeSet<String> = runs
        .iter()
        .map(|r| {
            r.job
                .size
                .map(crate::units::format_size)
                .unwrap_or_else(|| "not stated".into())
        })
        .collect();
    let runtimes: BTreeSet<String> = runs
        .iter()
        .map(|r| match r.job.runtime_s {
            Some(s) => {
                crate::units::format_duration(std::time::Duration::from_secs_f64(s.max(0.0)))
            }
            None => "not stated".into(),
        })
        .collect();
    let fs: BTreeSet<String> = runs
        .iter()
        .map(|r| {
            r.target
                .filesystem
                .clone()
                .unwrap_or_else(|| "not stated".into())
        })
        .collect();
    let overrides: BTreeSet<String> = runs
        .iter()
        .flat_map(|r| r.overrides.iter().map(|(k, v)| format!("--{k} {v}")))
        .collect();
    // The filesystems and overrides are read from the records: shown on the line.
    let shape = format!(
        "size {}, runtime {}, filesystem {}, overrides {}",
        join(sizes),
        join(runtimes),
        join(fs),
        if overrides.is_empty() {
            "none".into()
        } else {
            overrides.into_iter().collect::<Vec<_>>().join(" ")
        }
    );
    crate::printable::line(&shape).into_owned()
}

/// What stands beside the verdict in every format, one line each (see
/// `view_node::beside_verdict`).
pub fn verdict_context(ev: &Evaluation) -> Vec<String> {
    view_node::beside_verdict(ev)
}

/// The policy's source address, if it is one a browser may follow (no `javascript:` and the
/// like: policy files come from users).
pub fn safe_url(url: &str) -> Option<&str> {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url.trim())
}

/// Renders a format into the report file `out` (see [`OutputFile`]), streamed: a report
/// listing a year of runs is never held in memory.
pub fn write_file(
    format: Format,
    ev: &Evaluation,
    records: &Records,
    style: &Style,
    out: &OutputFile,
) -> io::Result<()> {
    out.publish_with(|w| render(format, ev, records, style, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metric_columns_are_every_metric_of_any_run_whatever_the_order_of_kinds() {
        let t = |h: u32| format!("2026-11-01T{h:02}:00:00Z");
        let mut odd = crate::evaluate::tests::rec(&t(1), 16.0);
        odd.metrics.insert("zz_only_here".into(), 1.0);
        let mut other = crate::evaluate::tests::rec(&t(3), 16.0);
        other.metrics.insert("aa_only_here".into(), 2.0);
        let runs = vec![
            crate::evaluate::tests::rec(&t(0), 16.0),
            odd,
            crate::evaluate::tests::rec(&t(2), 16.0),
            other,
            crate::evaluate::tests::rec(&t(4), 16.0),
        ];
        let ev = crate::evaluate::tests::swimlane_report(runs, "2026-11-02T00:00:00Z");
        let cols = metric_columns(&ev);
        let rules: Vec<&str> = ev.rules.iter().map(|r| r.metric.as_str()).collect();
        let mut rest: Vec<&str> = vec![
            "aa_only_here",
            "write_bw_mb_s",
            "write_iops",
            "write_iops_formula",
            "zz_only_here",
        ];
        rest.retain(|m| !rules.contains(m));
        let mut want: Vec<&str> = Vec::new();
        for r in &rules {
            if !want.contains(r) {
                want.push(r);
            }
        }
        want.extend(rest);
        assert_eq!(cols, want);
    }

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_no_temporary_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("result.prom");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // a symbolic link in the way is replaced, never written through
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        OutputFile::open(&p).unwrap().publish(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&p).unwrap().is_symlink());
        // 0644 less the umask, as a file made by std::fs::write: readable by a collector
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        let plain = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o644;
        assert_eq!(mode, plain, "{mode:o}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(OutputFile::open(&dir.path().join("gone/x.prom")).is_err());
    }
}
