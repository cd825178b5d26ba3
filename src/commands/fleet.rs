//! `iopscheck fleet`: many nodes' results, one verdict. Reads each node's `--format json`
//! output (its verdict taken as the node gave it) or history file (judged here, per host,
//! directory and engine, over the window), then renders the fleet (`report::fleet`): every
//! node must pass.

use std::io::Write;

use chrono::Utc;

use crate::app::{Ctx, Outputs};
use crate::cli::FleetArgs;
use crate::evaluate::{self, Options, Scope};
use crate::fleet::{DecidingRule, FLEET_RESULT, Fleet, Judge, cross_check, stream};
use crate::policy;
use crate::report::{self, Format, Style};
use crate::select;

use super::fleet_input;

/// A history file is read whole; anything larger is not one node's history.
const MAX_FILE_BYTES: u64 = 512 << 20;

pub fn run(args: FleetArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let loaded = policy::resolve(&args.policy)?;
    let policy = loaded.policy;
    let outputs = Outputs::from_args(&args.out)?;
    let now = Utc::now();
    let since = match &args.since {
        Some(s) => s.start(now),
        None => select::window_start(now, policy.evidence.window.0),
    };
    let judge = Judge {
        policy: &policy,
        head: DecidingRule::of(&policy),
        since,
        now,
        strict: args.out.strict,
    };

    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    for input in fleet_input::gather(&args.files, MAX_FILE_BYTES)? {
        let (name, in_dir) = (input.name.clone(), input.in_dir);
        let name = &name;
        let bytes = input.load()?;
        let node = match judge.file(name, &bytes) {
            Err(e) if in_dir && e.starts_with(FLEET_RESULT) => {
                warnings.push(format!("{name}: a fleet's result, left out"));
                continue;
            }
            r => r.map_err(|e| anyhow::anyhow!("fleet: {name}: {e}"))?,
        };
        rows.extend(node.rows);
        warnings.extend(node.warnings);
    }
    // Each node counts once, however many inputs carry it.
    let (mut rows, dupes) = stream::dedupe(rows);
    warnings.extend(dupes);
    let expect: Vec<String> = args
        .expect
        .iter()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect();
    warnings.extend(cross_check(
        &mut rows,
        &expect,
        &policy,
        judge.head.as_ref(),
    ));

    let fleet = Fleet::new(
        evaluate::evaluate(&[], &policy, &Options::new(Scope::Report, now)).policy,
        judge.head.clone(),
        since,
        rows,
        warnings,
        args.out.strict,
        now,
    );
    emit(&outputs, &fleet, ctx)?;
    Ok(fleet.verdict.exit_code())
}

/// Renders the fleet on stdout and into every `-o`/`--export` file.
fn emit(outputs: &Outputs, fleet: &Fleet, ctx: &Ctx) -> anyhow::Result<()> {
    if let Some(f) = outputs.stdout {
        let style = Style {
            color: ctx.color && f == Format::Table,
        };
        let mut out = crate::out::stdout();
        report::fleet::render(f, fleet, &style, &mut out)?;
        out.flush()?;
    }
    for (f, path) in &outputs.files {
        report::fleet::write_file(*f, fleet, path).map_err(|e| {
            anyhow::anyhow!("cannot write {} to {}: {e}", f.as_str(), path.display())
        })?;
    }
    Ok(())
}
