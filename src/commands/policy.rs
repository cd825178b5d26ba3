//! `iopscheck policy list | show | check`.

use std::io::Write;

use crate::app::{Ctx, exit};
use crate::cli::PolicyCommand;
use crate::policy::{self, BUILTIN, Level, SYSTEM_POLICY_DIR};

pub fn run(cmd: PolicyCommand, ctx: &Ctx) -> anyhow::Result<u8> {
    match cmd {
        PolicyCommand::List { names: true } => {
            let mut out = crate::out::stdout();
            for n in crate::suggest::policy_names(std::path::Path::new(SYSTEM_POLICY_DIR)) {
                writeln!(out, "{n}")?;
            }
            Ok(exit::PASS)
        }
        PolicyCommand::List { names: false } => list(ctx),
        PolicyCommand::Show { name } => {
            let loaded = policy::resolve(&name)?;
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
            Ok(exit::PASS)
        }
        PolicyCommand::Check { file } => {
            let loaded = policy::load_file(&file)?;
            let p = &loaded.policy;
            let deciding: Vec<String> = p
                .deciding_rules()
                .map(|r| format!("{} {} {}", r.metric, r.op, r.threshold))
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
            Ok(exit::PASS)
        }
    }
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
    let rows: Vec<ListRow> = rows.iter().map(|(p, o)| ListRow::of(p, o)).collect();
    writeln!(
        crate::out::stdout(),
        "{}",
        crate::report::list_table(&rows, crate::terminal::stdout_width())
    )?;
    Ok(exit::PASS)
}

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
}

impl ListRow {
    fn of(p: &policy::Policy, origin: &str) -> ListRow {
        let checks = p
            .rules
            .iter()
            .filter(|r| r.level != Level::Info)
            .map(|r| {
                format!(
                    "{} {} {} {}{}",
                    r.metric,
                    r.op,
                    r.threshold,
                    crate::metrics::unit(&r.metric),
                    if r.level == Level::Warn {
                        " (warn)"
                    } else {
                        ""
                    }
                )
            })
            .collect();
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
        }
    }
}
