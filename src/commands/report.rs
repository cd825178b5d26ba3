//! `iopscheck report`: what the history holds over a window, judged per group (host, policy,
//! directory, engine) and never mixing groups.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use chrono::{DateTime, Local, Utc};

use crate::config::report::ReportTask;
use crate::config::{Ctx, ReportConfig};
use crate::error::usage;
use crate::evaluate::{self, Group, Options, Scope, Verdict};
use crate::exit::Exit;
use crate::history;
use crate::policy::Policy;
use crate::report::Format;
use crate::run_index::{Records, Run};
use crate::select::Grouping;

pub fn run(cfg: ReportConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    let ReportConfig {
        history: path,
        bundle,
        policy,
        now,
        strict,
        outputs,
        task,
    } = cfg;
    let open_history = || -> anyhow::Result<Option<std::fs::File>> {
        Ok(match &bundle {
            Some(b) => Some(b.history.try_clone()?),
            None => history::open_for_reading(&path)?,
        })
    };
    let (filter, until) = match task {
        ReportTask::List => return list(open_history()?, &path, &policy, now, ctx),
        ReportTask::Judge { filter, until } => (filter, until),
    };
    let since = filter.since;
    // Only the policy's, the host's and the window's records are parsed in full (lines before
    // the window are passed over by their timestamp); other engines stay in, for the
    // mixed-engine warning.
    // Each record goes straight into its group as it is read.
    // The evaluation keeps of each run what judging and the tables need, and its place in
    // the file: the formats that print whole records read them again from the same open file.
    // Each run holds only the figures judging reads; the others are read again from the file.
    let mut grouping = Grouping::new(&filter);
    let held = crate::evaluate::held_metrics(&policy);
    let moved = grouping.moved();
    // One fio run is one machine's: where the report may judge several hosts, each imported
    // run is named (`Run::imported`) and a record repeats only one of its own host's, so that
    // the same run under two hosts is counted for each and found there (`fleet::shared`),
    // and neither passes on it; a run repeated within one host still counts once. A report
    // of one host reads no other host's records: it names nothing (160 bytes an imported run).
    let several_hosts = filter.host.is_none();
    let records = match open_history()? {
        Some(file) => {
            let skipped = history::scan_runs_moving(
                std::io::BufReader::with_capacity(history::READ_BUFFER, &file),
                Some(&file),
                &path,
                history::MAX_LINE,
                Some(since),
                Some(moved),
                several_hosts,
                |h| filter.keeps_head(h),
                |r| grouping.add(r.holding(held)),
            )?;
            for w in history::skipped_warnings(&skipped) {
                ctx.warn(w);
            }
            Records::file(file, &path)
        }
        None => Records::None,
    };
    // --until-decided decides each group's verdict with it (a policy over raw devices judges
    // the devices as one set, without it).
    let until = until.filter(|_| policy.devices.is_none());
    let mut evs = grouping.evaluate_in(&policy, now, strict, until, &records)?;
    // One imported fio run counted in groups of two hosts is neither's evidence.
    if several_hosts {
        let mut shared = crate::fleet::shared::SharedRuns::default();
        for (i, ev) in evs.iter_mut().enumerate() {
            let runs: Vec<_> = crate::fleet::shared::counted(i, ev).collect();
            shared.add(0, runs);
        }
        shared.mark_groups(&mut evs);
    }
    // A policy over raw devices: the host's devices judged as one set, with their spread.
    if policy.devices.is_some() && !evs.is_empty() {
        return super::run_devices::report(evs, &policy, since, now, strict, &outputs, ctx);
    }
    if evs.is_empty() {
        // Say so in the chosen format: an evaluation of nothing is inconclusive.
        let mut opts = Options::new(Scope::Report, now);
        opts.strict = strict;
        opts.no_runs = Some(format!(
            "no runs of policy {} {}in {} since {}: run `iopscheck run`, or see `iopscheck report --list`",
            policy.name,
            filter
                .host
                .as_ref()
                .map(|h| format!("on host {h} "))
                .unwrap_or_default(),
            path.display(),
            since.with_timezone(&Local).format("%Y-%m-%d %H:%M")
        ));
        evs.push(evaluate::evaluate(&[], &policy, &opts));
    }
    let sectioned = |f: Option<Format>| {
        matches!(
            f,
            None | Some(Format::Table | Format::Markdown | Format::Summary | Format::Reply)
        )
    };
    if evs.len() > 1 && !(sectioned(outputs.stdout) && outputs.files.is_empty()) {
        let groups: Vec<String> = evs
            .iter()
            .filter(|e| e.group.is_some())
            .map(|e| {
                let id = crate::report::identity(e);
                format!("host {} dir {} engine {}", id.host, id.dir, id.engine)
            })
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
        outputs.emit(ev, &records, ctx)?;
    }
    // Several groups end with a line that counts their verdicts (the exit code is the worst).
    if evs.len() > 1 && matches!(outputs.stdout, Some(Format::Table | Format::Markdown)) {
        let count = |v: Verdict| evs.iter().filter(|e| e.verdict == v).count();
        let mut out = crate::out::stdout();
        writeln!(out)?;
        writeln!(
            out,
            "report: {} groups: {} pass, {} fail, {} inconclusive",
            evs.len(),
            count(Verdict::Pass),
            count(Verdict::Fail),
            count(Verdict::Inconclusive)
        )?;
        out.flush()?;
    }
    let code = Verdict::worst(evs.iter().map(|e| e.verdict)).exit_code();
    // The process ends here: freeing every record of the window one by one first is 7% of
    // the time of a report over 100,000 runs, for nothing.
    std::mem::forget(evs);
    Ok(code)
}

/// `report --list`: counted as the lines are read, each as a light run (as a report reads its
/// window): what is held is one row per group, whatever the history's size.
fn list(
    file: Option<std::fs::File>,
    path: &Path,
    policy: &Policy,
    now: DateTime<Utc>,
    ctx: &Ctx,
) -> anyhow::Result<u8> {
    let mut tally = Tally::new(policy, now);
    if let Some(file) = file {
        let skipped = history::scan_runs_of(
            std::io::BufReader::with_capacity(history::READ_BUFFER, &file),
            Some(&file),
            path,
            history::MAX_LINE,
            None,
            |_| true,
            |r| tally.add(&r),
        )?;
        for w in history::skipped_warnings(&skipped) {
            ctx.warn(w);
        }
    }
    tally.print(policy)
}

/// What the history holds per group, for `report --list`, counted as the runs are read.
struct Tally<'p> {
    now: DateTime<Utc>,
    checker: crate::deviation::Checker<'p>,
    groups: BTreeMap<Group, GroupTally>,
    /// The group of the last run counted.
    last: Option<Group>,
}

/// What the history holds for one group.
#[derive(Default)]
struct GroupTally {
    n: usize,
    first: Option<DateTime<chrono::FixedOffset>>,
    last: Option<DateTime<chrono::FixedOffset>>,
    /// Runs that never count as evidence, by reason (runs of --policy only).
    not_counted: BTreeMap<String, usize>,
}

impl<'p> Tally<'p> {
    fn new(policy: &'p Policy, now: DateTime<Utc>) -> Tally<'p> {
        Tally {
            now,
            checker: crate::deviation::Checker::new(policy),
            groups: BTreeMap::new(),
            last: None,
        }
    }

    fn add(&mut self, r: &Run) {
        let policy = self.checker.policy();
        let reason: Option<&str> = if r.policy != policy.name {
            None
        } else if r.repeat_of.is_some() {
            Some(evaluate::REPEATED)
        } else if evaluate::is_future(r, self.now) {
            Some(evaluate::FUTURE_REASON)
        } else {
            let c = self.checker.check(r);
            (!c.check.is_policy_test()).then_some(c.class.as_str())
        };
        // A history is long series of runs of one group: the group's key is built only when
        // it differs from the last line's.
        let same = self.last.as_ref().is_some_and(|g| {
            g.host == r.host
                && g.policy == r.policy
                && g.dir == r.target.dir
                && g.engine == r.engine
        });
        if !same {
            self.last = Some(Group::of(r));
        }
        let key = self.last.as_ref().expect("set above");
        if !self.groups.contains_key(key) {
            self.groups.insert(key.clone(), GroupTally::default());
        }
        let row = self.groups.get_mut(key).expect("inserted above");
        row.n += 1;
        if let Some(reason) = reason {
            match row.not_counted.get_mut(reason) {
                Some(n) => *n += 1,
                None => {
                    row.not_counted.insert(reason.to_string(), 1);
                }
            }
        }
        row.first = Some(row.first.map_or(r.timestamp, |f| f.min(r.timestamp)));
        row.last = Some(row.last.map_or(r.timestamp, |l| l.max(r.timestamp)));
    }

    fn print(self, policy: &Policy) -> anyhow::Result<u8> {
        let fmt = |t: Option<DateTime<chrono::FixedOffset>>| {
            t.map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default()
        };
        let rows: Vec<crate::report::GroupRow> = self
            .groups
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
        Ok(Exit::Pass.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::tests::rec;

    #[test]
    fn the_list_counts_each_group_whatever_the_order_its_runs_come_in() {
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let now = DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
            .unwrap()
            .to_utc();
        let at = |h: u32| format!("2026-12-01T{h:02}:00:00Z");
        let mut records = Vec::new();
        for h in 0..12 {
            let mut r = rec(&at(h), 16.0);
            match h % 4 {
                1 => r.host = "node2".into(),
                2 => r.target.dir = "/other".into(),
                _ => {}
            }
            if h == 4 || h == 8 {
                r.job.size = Some(64 << 20);
            }
            records.push(r);
        }
        let mut future = rec("2026-12-03T00:00:00Z", 16.0);
        future.host = "node2".into();
        let mut etcd = rec(&at(13), 16.0);
        etcd.policy = "etcd".into();
        records.extend([future, etcd]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        history::append(&path, &records).unwrap();
        let mut tally = Tally::new(&policy, now);
        let skipped = history::scan_runs(
            std::io::BufReader::new(std::fs::File::open(&path).unwrap()),
            &path,
            history::MAX_LINE,
            None,
            |_| true,
            |r| tally.add(&r),
        )
        .unwrap();
        assert!(skipped.is_empty());
        type Row = (String, String, String, usize, Vec<(String, usize)>, String);
        let got: Vec<Row> = tally
            .groups
            .iter()
            .map(|(g, t)| {
                (
                    g.host.clone(),
                    g.policy.clone(),
                    g.dir.clone(),
                    t.n,
                    t.not_counted.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                    format!("{} {}", t.first.unwrap(), t.last.unwrap()),
                )
            })
            .collect();
        let span = |a: u32, b: u32| {
            let t = |h: u32| DateTime::parse_from_rfc3339(&at(h)).unwrap().to_string();
            format!("{} {}", t(a), t(b))
        };
        let not_swimlane_size = "size 64 MiB instead of 4 GiB".to_string();
        let want: Vec<Row> = vec![
            (
                "node1".into(),
                "etcd".into(),
                "/data".into(),
                1,
                vec![],
                span(13, 13),
            ),
            (
                "node1".into(),
                "swimlane".into(),
                "/data".into(),
                6,
                vec![(not_swimlane_size, 2)],
                span(0, 11),
            ),
            (
                "node1".into(),
                "swimlane".into(),
                "/other".into(),
                3,
                vec![],
                span(2, 10),
            ),
            (
                "node2".into(),
                "swimlane".into(),
                "/data".into(),
                4,
                vec![(evaluate::FUTURE_REASON.into(), 1)],
                format!(
                    "{} {}",
                    DateTime::parse_from_rfc3339(&at(1)).unwrap(),
                    DateTime::parse_from_rfc3339("2026-12-03T00:00:00Z").unwrap()
                ),
            ),
        ];
        assert_eq!(got, want);
    }
}
