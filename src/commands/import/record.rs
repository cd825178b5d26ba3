//! `--record`: the imported runs appended to the history, all or none.

use std::path::Path;

use crate::config::Ctx;
use crate::error::usage;
use crate::history::{self, Record};

/// Appends the imported runs, refusing all of them if any is already in the history for the
/// same host: nothing half-recorded.
pub(super) fn record(path: &Path, records: &[Record], ctx: &Ctx) -> anyhow::Result<()> {
    let (existing, skipped) = history::read(path)?;
    for w in history::skipped_warnings(&skipped) {
        ctx.warn(w);
    }
    let dups: Vec<String> = records
        .iter()
        .filter(|r| {
            existing.iter().any(|e| {
                e.host == r.host && e.source_digest.is_some() && e.source_digest == r.source_digest
            })
        })
        .map(|r| r.source_file.clone().unwrap_or_default())
        .collect();
    // the same run recorded from another of its outputs (its JSON, text or terse)
    let again: Vec<String> = records
        .iter()
        .filter_map(|r| {
            let id = r.fio_run.as_ref()?;
            let e = existing.iter().find(|e| {
                e.host == r.host
                    && e.source_digest != r.source_digest
                    && e.fio_run.as_ref().is_some_and(|x| x.same_run(id))
            })?;
            Some(format!(
                "{} is the same fio run as {}, recorded at {} (the same job, runtime, I/O counts and figures, in another format)",
                r.source_file.as_deref().unwrap_or("-"),
                e.source_file.as_deref().unwrap_or("a run"),
                e.timestamp.to_rfc3339()
            ))
        })
        .collect();
    if dups.is_empty() && !again.is_empty() {
        return Err(usage(format!(
            "--record: {} for host {} in {}; one fio run is one run, however many of its outputs are given: nothing was recorded",
            again.join("; "),
            records[0].host,
            path.display()
        )));
    }
    if !dups.is_empty() {
        let mut names = dups;
        names.dedup();
        return Err(usage(format!(
            "--record: {} already recorded for host {} in {}; nothing was recorded (remove the duplicate from the command, or use --host for another node)",
            names.join(", "),
            records[0].host,
            path.display()
        )));
    }
    history::append(path, records)?;
    ctx.note(format!(
        "recorded {} run{} in {}",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        path.display()
    ));
    Ok(())
}
