//! `iopscheck policy list | show | check`.

use std::io::Write;

use crate::config::{Ctx, PolicyConfig};
use crate::exit::Exit;
use crate::policy::{self, BUILTIN, Level, SYSTEM_POLICY_DIR};
use crate::report::ListRow;

pub fn run(cfg: PolicyConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    match cfg {
        PolicyConfig::List { names: true } => {
            let mut out = crate::out::stdout();
            for n in crate::policy::names(std::path::Path::new(SYSTEM_POLICY_DIR)) {
                writeln!(out, "{n}")?;
            }
            Ok(Exit::Pass.code())
        }
        PolicyConfig::List { names: false } => list(ctx),
        PolicyConfig::Show(loaded) => {
            let mut out = crate::out::stdout();
            out.write_all(loaded.yaml.as_bytes())?;
            if !loaded.yaml.ends_with('\n') {
                out.write_all(b"\n")?;
            }
            // Which engines' runs are this policy's test, said where the file does not say it.
            if loaded.policy.engines.is_empty() {
                writeln!(
                    out,
                    "# engines: not listed, so only the job's ioengine ({}) runs this policy's test; list them, the default first, to accept others, e.g. engines: [{}, io_uring]",
                    loaded.policy.job.ioengine, loaded.policy.job.ioengine
                )?;
            }
            Ok(Exit::Pass.code())
        }
        PolicyConfig::Diff { from, to } => diff(&from, &to),
        PolicyConfig::Check { file, loaded } => {
            let p = &loaded.policy;
            let deciding: Vec<String> = p
                .deciding_rules()
                .map(|r| format!("{} {}", r.metric, r.describe_threshold()))
                .chain(
                    p.fleet
                        .iter()
                        .filter(|f| f.level == Level::Fail)
                        .map(fleet_rule_text),
                )
                .collect();
            ctx.note(format!(
                "{}: ok — policy {} ({}), {} rule{}, deciding: {}",
                file.display(),
                p.name,
                p.vendor,
                p.rules.len(),
                if p.rules.len() == 1 { "" } else { "s" },
                deciding.join("; ")
            ));
            Ok(Exit::Pass.code())
        }
    }
}

/// `policy diff A [B]`: what changed from A to B, by section; without B, from the built-in
/// policy of A's name to A (how an edited copy departs from the vendor's). "no differences"
/// when they judge alike; exit 0 either way (the differences are information, not a verdict).
fn diff(from: &policy::Loaded, to: &policy::Loaded) -> anyhow::Result<u8> {
    let shown = |l: &policy::Loaded| match &l.origin {
        policy::Origin::BuiltIn => format!("built-in {}", l.policy.name),
        policy::Origin::File(p) => p.display().to_string(),
    };
    let sections = policy::diff(&from.policy, &to.policy);
    let mut out = crate::out::stdout();
    writeln!(out, "{} → {}", shown(from), shown(to))?;
    if sections.is_empty() {
        writeln!(
            out,
            "no differences in rules, thresholds, job, engines, evidence or source"
        )?;
    }
    for s in sections {
        writeln!(out, "{}:", s.name)?;
        for l in s.lines {
            writeln!(out, "  {l}")?;
        }
    }
    Ok(Exit::Pass.code())
}

fn list(ctx: &Ctx) -> anyhow::Result<u8> {
    let mut rows = Vec::new();
    for (name, yaml) in BUILTIN {
        let p = policy::parse(yaml, name).map_err(|e| anyhow::anyhow!("built-in {e}"))?;
        rows.push((p, "built-in".to_string()));
    }
    if let Ok(entries) = std::fs::read_dir(SYSTEM_POLICY_DIR) {
        let mut paths: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect();
        paths.sort();
        for path in paths {
            match policy::load_file(&path) {
                Ok(l) => rows.push((l.policy, path.display().to_string())),
                Err(e) => ctx.warn(format!("skipping {e}")),
            }
        }
    }
    let today = chrono::Utc::now().date_naive();
    let rows: Vec<ListRow> = rows.iter().map(|(p, o)| ListRow::of(p, o, today)).collect();
    writeln!(
        crate::out::stdout(),
        "{}",
        crate::report::list_table(&rows, crate::terminal::stdout_width())
    )?;
    Ok(Exit::Pass.code())
}

/// "fleet: total_iops max/min ≤ 1.1" for a rule over the fleet.
fn fleet_rule_text(f: &policy::FleetRule) -> String {
    format!(
        "fleet: {} max/min ≤ {}",
        f.metric,
        crate::numbers::fmt_precise(f.max_over_min)
    )
}

impl ListRow {
    fn of(p: &policy::Policy, origin: &str, today: chrono::NaiveDate) -> ListRow {
        let checks = p
            .rules
            .iter()
            .filter(|r| r.level != Level::Info)
            .map(|r| {
                format!(
                    "{} {}{}",
                    r.metric,
                    r.describe_threshold(),
                    if r.level == Level::Warn {
                        " (warn)"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        let mut checks: Vec<String> = checks;
        checks.extend(
            p.fleet
                .iter()
                .filter(|f| f.level != Level::Info)
                .map(fleet_rule_text),
        );
        let j = &p.job;
        let engines: Vec<String> = p.accepted_engines().iter().map(|e| e.to_string()).collect();
        let mut flags = Vec::new();
        if j.iodepth > 1 {
            flags.push(format!("qd{}", j.iodepth));
        }
        if j.direct {
            flags.push("direct".to_string());
        }
        if j.fdatasync > 0 {
            flags.push("fdatasync".to_string());
        }
        ListRow {
            name: p.name.clone(),
            vendor: p.vendor.clone(),
            job: [
                format!("{} {}", j.rw, crate::units::format_size_fio(j.bs.0)),
                engines.join("|"),
                flags.join(" "),
            ],
            checks,
            test: p.source.test.to_string(),
            origin: origin.to_string(),
            seen: p.source.seen.to_string(),
            stale: crate::evaluate::Warning::stale_source(&p.source, today).map(|w| w.to_string()),
        }
    }
}
