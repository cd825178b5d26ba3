//! `iopscheck import`: read fio outputs (any version and format), judge them against the
//! policy as `run` does, and with `--record` add them to the history with their own
//! timestamps. A job of another shape is never judged silently.

mod assume;
mod blocks;
mod input;
mod notes;
mod record;
mod select;

use std::path::Path;

use self::blocks::Reading;
use self::notes::{no_series_note, of_files_counted, said_once};
use self::select::select;
use crate::config::import::ImportOutputs;
use crate::config::{Ctx, ImportConfig};
use crate::evaluate::caveat::Caveat;
use crate::evaluate::{self, Options, Scope, Warning};

pub fn run(cfg: ImportConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    let cfg = match cfg {
        // A bundle holds its own history, policy and host: it is judged as its report was.
        ImportConfig::Bundle(report) => return crate::commands::report::run(report, ctx),
        ImportConfig::Outputs(c) => c,
    };
    let ImportOutputs {
        files,
        policy,
        host,
        dir,
        assumed,
        record,
        now,
        strict,
        outputs,
    } = cfg;
    if record.is_some() {
        record::refuse_untrusted_inputs(&files)?;
    }
    let mut reading = Reading::new(&policy, &host, dir.as_deref(), assumed.as_ref());
    for path in &files {
        reading.file(path)?;
    }
    let Reading {
        candidates,
        mut notes,
        file_notes,
        ..
    } = reading;
    notes.extend(said_once(of_files_counted(file_notes, &candidates)));
    // what the user assumed comes first: it is the main caveat of such an import
    notes.sort_by_key(|n| {
        !matches!(
            n,
            Warning::InputCaveat {
                caveat: Caveat::Assumed { .. },
                ..
            }
        )
    });
    // The shape differences of the judged blocks are found again, with the deviations of
    // scale, by evaluate (crate::deviation): one rule for run, import, report and fleet.
    // What the figures contradict of an assumed job is named as the figures show it.
    let chosen = select(candidates);
    notes.extend(no_series_note(&chosen.measurements, &policy));

    if let Some(history) = &record {
        record::record(history, &chosen.records, ctx)?;
    }

    let mut opts = Options::new(Scope::Import, now);
    opts.strict = strict;
    opts.notes = notes;
    opts.contradicted = chosen.contradicted;
    let (ev, records) =
        evaluate::evaluate_left_out(chosen.records, chosen.left_out, &policy, &opts);
    outputs.emit(&ev, &records, ctx)?;
    Ok(ev.verdict.exit_code())
}

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
