//! `iopscheck fleet`: many nodes' results, one verdict. Reads each node's `--format json`
//! output (judged again here from the runs it carries) or history file (judged here, per
//! host, directory and engine, over the window), each as it streams in, then renders the
//! fleet (`report::fleet`): every node must pass.

use std::io::Write;

use crate::config::{Ctx, FleetConfig, Input, Outputs};
use crate::error::usage;
use crate::evaluate::PolicyInfo;
use crate::fleet::{DecidingRule, Fleet, InputError, Judge, cross_check, stream};
use crate::report::{self, Format, Style};

use super::fleet_input;

pub fn run(cfg: FleetConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    let FleetConfig {
        files,
        policy,
        now,
        since,
        expect,
        require_evidence,
        until,
        strict,
        outputs,
    } = cfg;
    let judge = Judge {
        policy: &policy,
        head: DecidingRule::of(&policy),
        since,
        now,
        strict,
        until: until.is_some(),
    };

    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    let mut shared = crate::fleet::shared::SharedRuns::default();
    let inputs = fleet_input::gather(&files)?;
    // A file found in a directory may be where this command writes: the fleet's own result
    // of an earlier day is left out and replaced, anything else is an input kept from harm.
    let output_among = |name: &str| outputs.replaces(&Input::new("", name));
    for input in inputs {
        let name = &input.name;
        let node = match judge.input(name, input.open()?, input.is_stdin()) {
            Err(InputError::FleetResult) if input.in_dir => {
                warnings.push(format!("{name}: a fleet's result, left out"));
                continue;
            }
            r => r.map_err(|e| anyhow::anyhow!("fleet: {name}: {e}"))?,
        };
        if input.in_dir
            && let Some(i) = output_among(name)
        {
            return Err(usage(format!(
                "{} is an input ({name}, a node's result in a directory given): writing it would replace it; give the output another file",
                outputs.flag(i)
            )));
        }
        shared.add(rows.len(), node.imported);
        rows.extend(node.rows);
        warnings.extend(node.warnings);
    }
    // One fio run in two nodes' evidence is neither's.
    shared.mark(&mut rows);
    // Each node counts once, however many inputs carry it.
    let (mut rows, dupes) = stream::dedupe(rows);
    warnings.extend(dupes);
    warnings.extend(cross_check(
        &mut rows,
        &expect,
        &policy,
        judge.head.as_ref(),
    ));
    // --until-decided: a second pass over the rows, once N (the nodes judged) is known.
    let family = until.map(|s| crate::fleet::decide_family(&mut rows, &s));

    let (min_runs, min_days) = (policy.evidence.min_runs, policy.evidence.min_days);
    if require_evidence {
        crate::fleet::require_evidence(&mut rows, min_runs, min_days);
    }
    let fleet = Fleet::new(
        PolicyInfo::of(&policy),
        judge.head.clone(),
        since,
        rows,
        warnings,
        strict,
        now,
    )
    .with_evidence(min_runs, min_days, require_evidence);
    let mut fleet = match family {
        Some(f) => fleet.with_family(f),
        None => fleet,
    };
    // The policy's rules over the fleet (Confluent's identical brokers), after the nodes'.
    fleet.judge_rules(&policy.fleet);
    emit(&outputs, &fleet, ctx)?;
    Ok(fleet.verdict.exit_code())
}

/// Renders the fleet on stdout and into every `-o`/`--export` file.
pub(super) fn emit(outputs: &Outputs, fleet: &Fleet, ctx: &Ctx) -> anyhow::Result<()> {
    if let Some(f) = outputs.stdout {
        let style = Style {
            color: ctx.color && f == Format::Table,
            verbose: outputs.verbose,
        };
        let mut out = crate::out::stdout();
        report::fleet::render(f, fleet, &style, &mut out)?;
        out.flush()?;
    }
    for (i, (f, path)) in outputs.files.iter().enumerate() {
        report::fleet::write_file(*f, fleet, outputs.opened(i)).map_err(|e| {
            anyhow::anyhow!("cannot write {} to {}: {e}", f.as_str(), path.display())
        })?;
    }
    Ok(())
}
