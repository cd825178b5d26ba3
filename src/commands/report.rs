//! `iopscheck report`: what the history holds over a window, judged per group (host, policy,
//! directory, engine) and never mixing groups.

use std::collections::BTreeMap;
use std::io::Write as _;

use chrono::{DateTime, Local, Utc};

use crate::app::{Ctx, Outputs, exit, usage};
use crate::cli::ReportArgs;
use crate::evaluate::{self, Group, Options, Scope, Verdict};
use crate::history::{self, Record};
use crate::policy::{self, Policy};
use crate::report::Format;
use crate::runs::Records;
use crate::select::{self, Filter, Grouping};

pub fn run(args: ReportArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let loaded = policy::resolve(&args.policy)?;
    let policy = loaded.policy;
    let outputs = Outputs::from_args(&args.out)?;
    let path = crate::app::history_path(&args.history.history);
    let now = Utc::now();

    if args.list {
        let (records, skipped) = history::read(&path)?;
        for s in &skipped {
            ctx.warn(s);
        }
        return list(&records, &policy, now);
    }

    let since = match &args.since {
        Some(s) => s.start(now),
        None => select::window_start(now, policy.evidence.window.0),
    };
    let host = match args.host.as_deref() {
        Some("all") => None,
        Some(h) => Some(h.to_string()),
        // $IOPSCHECK_HOST names this node where the host name is not its own (a pod).
        None => Some(
            crate::system::host_from(None)
                .map_err(usage)?
                .unwrap_or_else(crate::system::hostname),
        ),
    };
    let dir = args.dir.as_ref().map(|d| {
        std::fs::canonicalize(d)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| d.clone())
    });
    let filter = Filter {
        host,
        dir,
        engine: args.engine.clone(),
        policy: policy.name.clone(),
        since,
    };
    // Only the policy's, the host's and the window's records are parsed in full (lines before
    // the window are passed over by their timestamp); other engines stay in, for the
    // mixed-engine warning.
    // Each record goes straight into its group as it is read.
    // The evaluation keeps of each run what judging and the tables need, and its place in
    // the file: the formats that print whole records read them again from the same open file.
    let mut grouping = Grouping::new(&filter);
    let records = match history::open_for_reading(&path)? {
        Some(file) => {
            let skipped = history::scan_runs(
                std::io::BufReader::with_capacity(history::READ_BUFFER, &file),
                &path,
                history::MAX_LINE,
                Some(since),
                |h| filter.keeps_head(h),
                |r| grouping.add(r),
            )?;
            for s in &skipped {
                ctx.warn(s);
            }
            Records::file(file, &path)
        }
        None => Records::None,
    };
    let mut evs = grouping.evaluate(&policy, now, args.out.strict, &records);
    if evs.is_empty() {
        // Say so in the chosen format: an evaluation of nothing is inconclusive.
        let mut opts = Options::new(Scope::Report, now);
        opts.strict = args.out.strict;
        let mut ev = evaluate::evaluate(&[], &policy, &opts);
        ev.reason = format!(
            "no runs of policy {} {}in {} since {}: run `iopscheck run`, or see `iopscheck report --list`",
            policy.name,
            filter
                .host
                .as_ref()
                .map(|h| format!("on host {h} "))
                .unwrap_or_default(),
            path.display(),
            since.with_timezone(&Local).format("%Y-%m-%d %H:%M")
        );
        evs.push(ev);
    }
    let sectioned = |f: Option<Format>| {
        matches!(
            f,
            None | Some(Format::Table | Format::Markdown | Format::Summary)
        )
    };
    if evs.len() > 1 && !(sectioned(outputs.stdout) && outputs.files.is_empty()) {
        let groups: Vec<String> = evs
            .iter()
            .filter_map(|e| e.group.as_ref())
            .map(|g| format!("host {} dir {} engine {}", g.host, g.dir, g.engine))
            .collect();
        return Err(usage(format!(
            "{} groups match ({}); each is judged on its own: pick one with --host, --dir or --engine, or use --format table or markdown on stdout",
            evs.len(),
            groups.join("; ")
        )));
    }
    if evs.len() > 1 {
        ctx.note(format!(
            "{} groups match; each host, directory and engine is judged on its own:",
            evs.len()
        ));
    }
    for (i, ev) in evs.iter().enumerate() {
        // summary: one line per group, nothing between
        if i > 0 && outputs.stdout != Some(Format::Summary) {
            writeln!(crate::out::stdout())?;
        }
        outputs.emit(ev, ctx)?;
    }
    let code = Verdict::worst(evs.iter().map(|e| e.verdict)).exit_code();
    // The process ends here: freeing every record of the window one by one first is 7% of
    // the time of a report over 100,000 runs, for nothing.
    std::mem::forget(evs);
    Ok(code)
}

fn list(records: &[Record], policy: &Policy, now: DateTime<Utc>) -> anyhow::Result<u8> {
    /// What the history holds for one group, counted as the records go by.
    #[derive(Default)]
    struct Tally {
        n: usize,
        first: Option<DateTime<chrono::FixedOffset>>,
        last: Option<DateTime<chrono::FixedOffset>>,
        /// Runs that never count as evidence, by reason (runs of --policy only).
        not_counted: BTreeMap<String, usize>,
    }
    let mut groups: BTreeMap<Group, Tally> = BTreeMap::new();
    for r in records {
        let row = groups.entry(Group::of(r)).or_default();
        row.n += 1;
        if r.policy == policy.name {
            let reason = if evaluate::is_future(r, now) {
                Some("dated in the future".to_string())
            } else {
                let c = crate::deviation::check(r, policy);
                (!c.is_policy_test()).then(|| crate::deviation::list(&c.deviations))
            };
            if let Some(reason) = reason {
                *row.not_counted.entry(reason).or_default() += 1;
            }
        }
        row.first = Some(row.first.map_or(r.timestamp, |f| f.min(r.timestamp)));
        row.last = Some(row.last.map_or(r.timestamp, |l| l.max(r.timestamp)));
    }
    let fmt = |t: Option<DateTime<chrono::FixedOffset>>| {
        t.map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    let rows: Vec<crate::report::GroupRow> = groups
        .iter()
        .map(|(g, row)| crate::report::GroupRow {
            host: g.host.clone(),
            policy: g.policy.clone(),
            dir: g.dir.clone(),
            engine: g.engine.clone(),
            runs: row.n,
            not_counted: if row.not_counted.is_empty() {
                vec![if g.policy == policy.name { "0" } else { "—" }.to_string()]
            } else {
                row.not_counted
                    .iter()
                    .map(|(why, n)| format!("{n}: {why}"))
                    .collect()
            },
            first: fmt(row.first),
            last: fmt(row.last),
        })
        .collect();
    let t = crate::report::groups_table(&rows, crate::terminal::stdout_width());
    writeln!(crate::out::stdout(), "{t}")?;
    Ok(exit::PASS)
}
