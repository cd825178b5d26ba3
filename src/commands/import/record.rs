//! `--record`: the imported runs appended to the history, all or none.

use std::io::BufReader;
use std::path::Path;

use crate::config::Ctx;
use crate::error::usage;
use crate::history::{self, Record};

/// As root, the outputs `--record` makes root's evidence of are judged as the history is
/// (`crate::trust`): an output others could have written or swapped is refused before it is
/// read. Judged without `--record`, a customer's output is read wherever it is.
pub(super) fn refuse_untrusted_inputs(files: &[std::path::PathBuf]) -> anyhow::Result<()> {
    for f in files.iter().filter(|f| f.as_os_str() != "-") {
        crate::trust::check_read(f).map_err(|u| {
            usage(format!(
                "--record: {}: refusing, as root, to record a fio output other users can write ({u}): they could have written its figures; copy it where only root can write (install -m 0644 FILE /root/), or judge it without --record; nothing was recorded",
                f.display()
            ))
        })?;
    }
    Ok(())
}

/// Appends the imported runs, refusing all of them if any is already in the history, for
/// whichever host: one fio run is one run of one machine, and nothing is half-recorded. The
/// history is read for that, one line at a time, under the exclusive lock the append takes,
/// so that two imports at once cannot both find the run missing and both record it.
pub(super) fn record(path: &Path, records: &[Record], ctx: &Ctx) -> anyhow::Result<()> {
    history::append_checked(path, records, |f| -> anyhow::Result<()> {
        let mut dups: Vec<String> = Vec::new();
        let mut again: Vec<String> = Vec::new();
        let reader = BufReader::with_capacity(history::READ_BUFFER, f);
        let skipped = history::scan_from(
            reader,
            path,
            history::MAX_LINE,
            None,
            |_| true,
            |e| {
                for r in records {
                    let file = r.source_file.as_deref().unwrap_or("-");
                    if e.source_digest.is_some() && e.source_digest == r.source_digest {
                        dups.push(format!("{file} already recorded for host {}", e.host));
                    } else if let Some(id) = &r.fio_run
                        && e.fio_run.as_ref().is_some_and(|x| x.same_run(id))
                    {
                        // the same run recorded from another of its outputs (JSON, text, terse)
                        again.push(format!(
                            "{file} is the same fio run as {}, recorded for host {} at {} (the same job, runtime, I/O counts and figures)",
                            e.source_file.as_deref().unwrap_or("a run"),
                            e.host,
                            e.timestamp.to_rfc3339()
                        ));
                    }
                }
            },
        )?;
        for w in history::skipped_warnings(&skipped) {
            ctx.warn(w);
        }
        if dups.is_empty() && again.is_empty() {
            return Ok(());
        }
        dups.dedup();
        again.dedup();
        dups.extend(again);
        Err(usage(format!(
            "--record: {} in {}; one fio run is one run of one machine, however many of its outputs are given and for whichever host: nothing was recorded",
            dups.join("; "),
            path.display()
        )))
    })?;
    ctx.note(format!(
        "recorded {} run{} in {}",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        path.display()
    ));
    Ok(())
}
