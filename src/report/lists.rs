//! The listing tables: `policy list` and `report --list`. Each is offered wide (one column per
//! field), then stacked (related fields under each other in one column), then as records:
//! the first that fits the terminal is printed, so that no cell is ever wrapped.

use comfy_table::{Cell, CellAlignment};

use super::fit;

/// One policy as `policy list` shows it.
pub struct ListRow {
    pub name: String,
    pub vendor: String,
    /// The job in parts: rw and block size, the engines, the flags (queue depth, direct, fsync).
    pub job: [String; 3],
    /// The deciding and soft rules, one per line.
    pub checks: Vec<String>,
    /// prescribed or assumed.
    pub test: String,
    /// "built-in" or the file it came from.
    pub origin: String,
    /// When the source was read.
    pub seen: String,
    /// "source seen … (over a year ago): check it is current; the source: URL" for a source read more than a year ago.
    pub stale: Option<String>,
}

/// `policy list` at `width` columns.
pub fn list_table(rows: &[ListRow], width: usize) -> String {
    let mut wide = fit::table();
    wide.set_header(vec!["name", "vendor", "test job", "checks", "test"]);
    let mut stacked = fit::table();
    stacked.set_header(vec!["policy\nvendor\ntest", "test job", "checks"]);
    for r in rows {
        let job: Vec<&str> = r
            .job
            .iter()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        let origin = (r.origin != "built-in").then_some(r.origin.as_str());
        // A source read long ago is marked in the row and noted in full under the table.
        let test = match &r.stale {
            Some(_) => format!("{}\nseen {} (old)", r.test, r.seen),
            None => r.test.clone(),
        };
        wide.add_row(vec![
            r.name.clone(),
            r.vendor.clone(),
            match origin {
                Some(o) => format!("{}\n({o})", job.join(" ")),
                None => job.join(" "),
            },
            r.checks.join("\n"),
            test.clone(),
        ]);
        let mut who = vec![r.name.as_str(), r.vendor.as_str(), test.as_str()];
        who.extend(origin);
        stacked.add_row(vec![who.join("\n"), job.join("\n"), r.checks.join("\n")]);
    }
    let mut out = fit::first_fitting(&[wide, stacked], width);
    for r in rows {
        if let Some(note) = &r.stale {
            out.push('\n');
            out.push_str(&crate::terminal::wrap(
                &format!("{}: ", r.name),
                note,
                width,
            ));
        }
    }
    out
}

/// One group of the history as `report --list` shows it.
pub struct GroupRow {
    pub host: String,
    pub policy: String,
    pub dir: String,
    pub engine: String,
    pub runs: usize,
    /// `N: reason` per reason runs of the policy are not counted; `0` or `—` when none.
    pub not_counted: Vec<String>,
    pub first: String,
    pub last: String,
}

/// `report --list` at `width` columns.
pub fn groups_table(rows: &[GroupRow], width: usize) -> String {
    let mut wide = fit::table();
    wide.set_header(vec![
        "host",
        "policy",
        "directory",
        "engine",
        "runs",
        "not counted",
        "first",
        "last",
    ]);
    let mut stacked = fit::table();
    stacked.set_header(vec![
        "host\ndirectory",
        "policy\nengine",
        "runs",
        "not counted",
        "first\nlast",
    ]);
    for r in rows {
        // Read from the records: shown on one line each, whatever they hold.
        let [host, policy, dir, engine] =
            [&r.host, &r.policy, &r.dir, &r.engine].map(|s| crate::printable::line(s));
        let runs = || Cell::new(r.runs).set_alignment(CellAlignment::Right);
        wide.add_row(vec![
            Cell::new(&host),
            Cell::new(&policy),
            Cell::new(&dir),
            Cell::new(&engine),
            runs(),
            Cell::new(r.not_counted.join("\n")),
            Cell::new(&r.first),
            Cell::new(&r.last),
        ]);
        // A reason lists its deviations with "; ": one per line when stacked.
        let reasons: Vec<String> = r
            .not_counted
            .iter()
            .map(|l| l.replace("; ", ";\n   "))
            .collect();
        stacked.add_row(vec![
            Cell::new(format!("{host}\n{dir}")),
            Cell::new(format!("{policy}\n{engine}")),
            runs(),
            Cell::new(reasons.join("\n")),
            Cell::new(format!("{}\n{}", r.first, r.last)),
        ]);
    }
    fit::first_fitting(&[wide, stacked], width)
}
