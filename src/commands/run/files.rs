//! The test files' removal, said on stderr when it is slow.

use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::config::Ctx;
use crate::testfile::{self, TestFiles};
use crate::units;

use super::progress::clock;

/// Test files this large, on a disk mounted with `discard`, take long enough to free that the
/// removal is said at once.
pub(super) const DISCARD_SLOW: u64 = 256 << 20;

/// Frees the (already unlinked) test files after the verdict: at once for large files on a
/// disk mounted with `discard`, else past [`removal_silent`], a line on stderr says the
/// removal is under way, then how long it took.
pub(super) fn release_files(files: testfile::Unlinked, discard: bool, ctx: &Ctx) {
    let (bytes, count) = (files.bytes(), files.count());
    let after = if discard && bytes >= DISCARD_SLOW {
        Duration::ZERO
    } else {
        // Checked when the run began (`removal_silent`).
        removal_silent().unwrap_or(REMOVAL_SILENT)
    };
    let started = Instant::now();
    let mut said = false;
    files.close_when_slow(after, || {
        said = true;
        ctx.note(format!(
            "{} (the verdict is already out)",
            removal_line(count, bytes)
        ));
    });
    if said {
        ctx.note(format!("removed in {}", clock(started.elapsed())));
    }
}

/// The durations the environment gives a run (`IOPSCHECK_FLUSH_WAIT`,
/// `IOPSCHECK_REMOVAL_NOTE_AFTER`), checked before anything runs: a bad value is an error
/// naming the variable, never the default in silence.
pub(super) fn check_env() -> anyhow::Result<()> {
    crate::commands::lock::flush_wait()?;
    removal_silent()?;
    Ok(())
}

/// How long removing the test files may take before the terminal says what is happening.
pub(super) const REMOVAL_SILENT: Duration = Duration::from_secs(1);

/// How long removing this run's test files may take before the terminal says so:
/// `$IOPSCHECK_REMOVAL_NOTE_AFTER` (a duration; 0 says it at once), else [`REMOVAL_SILENT`];
/// a value that is not a duration is an error naming the variable (`run` checks it before
/// anything runs). Not for the files left by an interrupted run: at 0, its note would name
/// files that may not be there.
pub(super) fn removal_silent() -> anyhow::Result<Duration> {
    crate::commands::lock::env_duration("IOPSCHECK_REMOVAL_NOTE_AFTER", REMOVAL_SILENT)
}

/// Removes the test files, however the runs ended, saying so on stderr when it takes longer
/// than [`removal_silent`] (freeing a large file's blocks on a disk mounted with `discard`
/// can take minutes), and how long it took.
pub(super) fn remove_files(files: TestFiles, ctx: &Ctx) -> anyhow::Result<()> {
    let (bytes, count) = (files.bytes(), files.files().len());
    let started = Instant::now();
    let mut said = false;
    files
        .remove_when_slow(removal_silent().unwrap_or(REMOVAL_SILENT), || {
            said = true;
            ctx.note(removal_line(count, bytes));
        })
        .context("cannot remove the test file")?;
    if said {
        ctx.note(format!("removed in {}", clock(started.elapsed())));
    }
    Ok(())
}

/// What the terminal says while the test files are being removed.
pub(super) fn removal_line(count: usize, bytes: u64) -> String {
    format!(
        "removing the test file{} ({}): the filesystem is freeing its blocks, which can take minutes on a disk mounted with discard",
        if count == 1 { "" } else { "s" },
        units::format_size(bytes)
    )
}
