//! `iopscheck import`: read fio outputs (any version and format), judge them against the
//! policy as `run` does, and with `--record` add them to the history with their own
//! timestamps. A job of another shape is never judged silently.

mod assume;
mod blocks;
mod input;
mod notes;
mod record;
mod select;

use anyhow::Context as _;
use std::path::Path;

use chrono::Utc;

use self::blocks::Reading;
use self::notes::{no_series_note, said_once};
use self::select::select;
use crate::cli::ImportArgs;
use crate::config::{Ctx, Input, Outputs};
use crate::error::usage;
use crate::evaluate::{self, Options, Scope};
use crate::policy;

pub fn run(args: ImportArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    // A bundle holds its own history, policy and host: it is judged as its report was.
    if let Some(b) = args
        .files
        .iter()
        .find(|f| crate::commands::bundle_input::is_gzip(f))
    {
        if args.files.len() > 1 {
            return Err(usage(format!(
                "{}: a bundle is read alone (it holds its own history, policy and host); give it as the only file",
                b.display()
            )));
        }
        if args.record {
            return Err(usage(format!(
                "--record: {} is a bundle, whose records are a history already; nothing was recorded",
                b.display()
            )));
        }
        if args.assume_job.is_some() {
            return Err(usage(format!(
                "--assume-job: {} is a bundle, whose records state their own job",
                b.display()
            )));
        }
        let report = crate::cli::ReportArgs {
            policy: args.policy,
            since: None,
            host: args.host,
            dir: None,
            engine: None,
            list: false,
            decide: crate::cli::DecideArgs {
                until_decided: false,
                alpha: 0.05,
                beta: 0.05,
                delta: 0.1,
                max_runs: 30,
                max_days: 7,
            },
            history: crate::cli::HistoryArgs {
                history: Some(b.clone()),
            },
            out: args.out,
        };
        return crate::commands::report::run(report, ctx);
    }
    let loaded = policy::resolve(&args.policy)?;
    let outputs = Outputs::from_args(&args.out)?;
    let mut inputs: Vec<Input> = args
        .files
        .iter()
        .map(|f| Input::new("an input", f))
        .collect();
    inputs.push(Input::new(
        "the history",
        crate::config::history_path(&args.history.history),
    ));
    inputs.extend(crate::config::policy_input(&loaded, "-p/--policy"));
    let policy = loaded.policy;
    // A customer's output is not this machine's: without --host the node is unknown.
    let host = match &args.host {
        Some(h) => crate::machine::check_host(h)
            .map_err(|e| usage(format!("--host: {e}")))?
            .to_string(),
        None if args.record => {
            return Err(usage(
                "--record: name the node the output came from with --host (a fio output does not say); nothing was recorded",
            ));
        }
        None => HOST_NOT_STATED.to_string(),
    };
    let now = Utc::now();
    let assumed = match &args.assume_job {
        Some(spec) => {
            let a = policy::resolve(spec).context("--assume-job")?;
            inputs.extend(crate::config::policy_input(&a, "--assume-job"));
            Some((spec.clone(), a.policy.job.shape()))
        }
        None => None,
    };
    outputs.refuse_inputs(&inputs)?;

    let mut reading = Reading::new(&policy, &host, args.dir.as_deref(), assumed.as_ref());
    for path in &args.files {
        reading.file(path)?;
    }
    let Reading {
        candidates,
        mut notes,
        file_notes,
        ..
    } = reading;
    notes.extend(said_once(file_notes));
    // what the user assumed comes first: it is the main caveat of such an import
    notes.sort_by_key(|n| !n.to_string().contains(ASSUMED));
    // The shape differences of the judged blocks are found again, with the deviations of
    // scale, by evaluate (crate::deviation): one rule for run, import, report and fleet.
    // What the figures contradict of an assumed job is named as the figures show it.
    let chosen = select(candidates);
    notes.extend(no_series_note(&chosen.measurements, &policy));

    if args.record {
        record::record(&args.history.history, &chosen.records, ctx)?;
    }

    let mut opts = Options::new(Scope::Import, now);
    opts.strict = args.out.strict;
    opts.notes = notes;
    opts.contradicted = chosen.contradicted;
    let (ev, records) =
        evaluate::evaluate_left_out(chosen.records, chosen.left_out, &policy, &opts);
    outputs.emit(&ev, &records, ctx)?;
    Ok(ev.verdict.exit_code())
}

/// What the output and the record say of a shape given with `--assume-job`.
pub const ASSUMED: &str = "job shape assumed by the user, not stated in the output";

/// The host of an import without `--host`.
pub const HOST_NOT_STATED: &str = "host not stated (use --host)";

/// The directory an output states: fio's `directory` option, else the directory of an
/// absolute `filename` (a device such as /dev/sdb is its own target).
fn stated_dir(shape: &crate::job::JobShape) -> Option<String> {
    if let Some(d) = &shape.directory {
        return Some(d.clone());
    }
    let f = shape.filename.as_deref()?;
    if f.starts_with("/dev/") {
        return Some(f.to_string());
    }
    let p = Path::new(f);
    if !p.is_absolute() {
        return None;
    }
    p.parent().map(|d| d.display().to_string())
}

fn display_name(n: &str) -> &str {
    if n.is_empty() { "\"\"" } else { n }
}
