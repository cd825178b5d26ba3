//! `iopscheck report`: what the history holds over a window, judged per group (host, policy,
//! directory, engine) and never mixing groups.

use std::collections::BTreeMap;
use std::io::Write as _;

use chrono::{DateTime, Local, NaiveDate, TimeZone, Utc};

use crate::app::{Ctx, Outputs, exit, usage};
use crate::cli::ReportArgs;
use crate::evaluate::{self, Evaluation, Group, Options, Scope, Verdict};
use crate::history::{self, Record};
use crate::policy::{self, Policy};
use crate::report::Format;

/// Parses `--since`: a duration back from `now` (7d, 36h) or a date (2026-11-28, local
/// midnight) or an RFC 3339 timestamp.
pub fn parse_since(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if let Ok(d) = crate::units::parse_duration(s) {
        return Ok(evaluate::window_start(now, d));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s.trim()) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d") {
        let midnight = d.and_hms_opt(0, 0, 0).expect("valid time");
        if let Some(t) = Local.from_local_datetime(&midnight).earliest() {
            return Ok(t.with_timezone(&Utc));
        }
    }
    Err(format!(
        "--since: '{s}' is neither a duration (7d, 36h) nor a date (2026-11-28)"
    ))
}

/// Which records a report looks at.
pub struct Filter {
    pub host: Option<String>,
    pub dir: Option<String>,
    pub engine: Option<String>,
    pub policy: String,
    pub since: DateTime<Utc>,
}

impl Filter {
    /// The part of the filter a history line's head can answer: policy, host and window.
    pub fn keeps_head(&self, h: &history::Head) -> bool {
        h.policy == self.policy
            && self.host.as_ref().is_none_or(|x| &h.host == x)
            && h.timestamp.with_timezone(&Utc) >= self.since
    }

    pub fn keeps(&self, r: &Record) -> bool {
        r.policy == self.policy
            && self.host.as_ref().is_none_or(|h| &r.host == h)
            && self.dir.as_ref().is_none_or(|d| &r.target.dir == d)
            && self.engine.as_ref().is_none_or(|e| &r.engine == e)
            && evaluate::in_window(r, self.since)
    }
}

/// Evaluates every group of records that passes the filter. Takes the records by value: a
/// year of history is moved into its groups, not copied.
pub fn evaluate_groups(
    records: Vec<Record>,
    policy: &Policy,
    filter: &Filter,
    now: DateTime<Utc>,
    strict: bool,
) -> Vec<Evaluation> {
    // Engines used on each node, test and directory in the window, for the mixed-engine
    // warning; then the groups themselves.
    let mut engines: BTreeMap<(String, String, String), BTreeMap<String, usize>> = BTreeMap::new();
    let mut groups: BTreeMap<Group, Vec<Record>> = BTreeMap::new();
    let all_engines = Filter {
        engine: None,
        host: filter.host.clone(),
        dir: filter.dir.clone(),
        policy: filter.policy.clone(),
        since: filter.since,
    };
    for r in records {
        if !all_engines.keeps(&r) {
            continue;
        }
        *engines
            .entry((r.host.clone(), r.policy.clone(), r.target.dir.clone()))
            .or_default()
            .entry(r.engine.clone())
            .or_default() += 1;
        if filter.keeps(&r) {
            groups.entry(Group::of(&r)).or_default().push(r);
        }
    }
    groups
        .into_iter()
        .map(|(g, recs)| {
            let mut opts = Options::new(Scope::Report, now);
            opts.strict = strict;
            if let Some(e) = engines.get(&(g.host.clone(), g.policy.clone(), g.dir.clone())) {
                opts.other_engines = e
                    .iter()
                    .filter(|(name, _)| **name != g.engine)
                    .map(|(k, v)| (k.clone(), *v))
                    .collect();
            }
            let mut ev = evaluate::evaluate(recs, policy, &opts);
            ev.group = Some(g);
            ev
        })
        .collect()
}

/// The worst verdict decides the exit code: fail, then inconclusive, then pass.
pub fn worst(evs: &[Evaluation]) -> Verdict {
    if evs.iter().any(|e| e.verdict == Verdict::Fail) {
        Verdict::Fail
    } else if evs.is_empty() || evs.iter().any(|e| e.verdict == Verdict::Inconclusive) {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}

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
        Some(s) => parse_since(s, now).map_err(usage)?,
        None => evaluate::window_start(now, policy.evidence.window.0),
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
    let mut records = Vec::new();
    let skipped = history::scan(
        &path,
        Some(since),
        |h| filter.keeps_head(h),
        |r| records.push(r),
    )?;
    for s in &skipped {
        ctx.warn(s);
    }
    let mut evs = evaluate_groups(records, &policy, &filter, now, args.out.strict);
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
    Ok(worst(&evs).exit_code())
}

fn list(records: &[Record], policy: &Policy, now: DateTime<Utc>) -> anyhow::Result<u8> {
    #[derive(Default)]
    struct Row {
        n: usize,
        first: Option<DateTime<chrono::FixedOffset>>,
        last: Option<DateTime<chrono::FixedOffset>>,
        /// Runs that never count as evidence, by reason (runs of --policy only).
        not_counted: BTreeMap<String, usize>,
    }
    let mut groups: BTreeMap<Group, Row> = BTreeMap::new();
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
