//! The history: one JSON record per line, append-only. Writers take an exclusive lock and
//! fsync; readers skip lines they cannot use, with a warning naming the file and line, and keep
//! the rest. Nothing here ever rewrites the file. This is file work only: what a record is,
//! and how a line is read as one, is `crate::record`.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use chrono::{DateTime, Utc};

use crate::record::{Heads, Repeats, decode, tool_timestamp};
pub use crate::record::{Record, RecordHead, SCHEMA_VERSION, Source, Target, check_metrics};
use crate::run_index::{At, Contexts, Run};

/// A line longer than this is not a record (records are a few KiB).
pub const MAX_LINE: usize = 1 << 20;
// The chain reads the lines the history reads, and hashes longer ones whole.
const _: () = assert!(crate::chain::MAX_READ == MAX_LINE);

/// A history line that was skipped, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub path: PathBuf,
    pub line: usize,
    pub reason: String,
    /// Lines skipped after this one and not named: only the first [`SKIPPED_SHOWN`] are
    /// held, the others counted on the last ([`note_skipped`]), so that a file of a million
    /// lines that are not records costs five, not a million.
    pub also: usize,
}

/// Holds `s` among the first [`SKIPPED_SHOWN`] skipped lines, else counts it on the last.
fn note_skipped(skipped: &mut Vec<Skipped>, s: Skipped) {
    let full = skipped.len() >= SKIPPED_SHOWN;
    match skipped.last_mut() {
        Some(last) if full => last.also += 1,
        _ => skipped.push(s),
    }
}

/// How many lines `skipped` stands for: those named and those counted.
pub fn skipped_count(skipped: &[Skipped]) -> usize {
    skipped.len() + skipped.iter().map(|s| s.also).sum::<usize>()
}

/// Skipped lines named one by one before "N more lines skipped": a file that is not a history
/// at all would otherwise print a warning for each of its lines.
pub const SKIPPED_SHOWN: usize = 5;

/// The warnings for `skipped` (one file's): the first [`SKIPPED_SHOWN`] with their line and
/// reason, then how many more.
pub fn skipped_warnings(skipped: &[Skipped]) -> Vec<String> {
    let mut out: Vec<String> = skipped
        .iter()
        .take(SKIPPED_SHOWN)
        .map(|s| s.to_string())
        .collect();
    let total = skipped_count(skipped);
    if total > SKIPPED_SHOWN {
        out.push(format!(
            "{}: {} more lines skipped",
            skipped[0].path.display(),
            total - SKIPPED_SHOWN
        ));
    }
    out
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: skipped: {}",
            self.path.display(),
            self.line,
            self.reason
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "history {path}: refusing it as root: other users can write there ({what}), so they could plant or alter evidence; keep the history where only root can write (as the default, /var/lib/iopscheck) and pass that path with --history"
    )]
    Unsafe { path: String, what: String },
    #[error(
        "history {path}: is {kind}, not a regular file; a history is a file of JSON lines: pass one with --history"
    )]
    NotRegular { path: String, kind: &'static str },
    #[error("history {path}: permission denied: {who} cannot {doing}; {advice}")]
    Denied {
        path: String,
        who: String,
        doing: String,
        advice: &'static str,
    },
    #[error(
        "history {path}: only {free} free on its filesystem, and this run's records need about {need}; nothing was started: free some space there, pass --history with another file, or --no-history"
    )]
    NoSpace {
        path: String,
        free: String,
        need: String,
    },
    #[error(
        "history {path}: is a symbolic link (to {target}); iopscheck never follows a link for its history, which someone could point elsewhere: give the real path with --history"
    )]
    Symlink { path: String, target: String },
    #[error(
        "history {path}: {source}; the record was not kept (the history is as it was before this append)"
    )]
    NotKept {
        path: String,
        source: std::io::Error,
    },
    #[error("history {path}: refusing to record a run of {timestamp}: {msg}; nothing was written")]
    Invalid {
        path: String,
        timestamp: String,
        msg: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> HistoryError + '_ {
    move |source| HistoryError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The default history path (contract.md): `/var/lib/iopscheck/history.jsonl` for root, else
/// `$XDG_STATE_HOME/iopscheck/history.jsonl` (`~/.local/state/...` when unset).
pub fn default_path() -> PathBuf {
    if crate::syscalls::is_root() {
        return PathBuf::from("/var/lib/iopscheck/history.jsonl");
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    state.join("iopscheck/history.jsonl")
}

/// Refuses, as root, a history that another user could have written or swapped: the file,
/// its directory or any directory above it (`crate::trust` has the rule).
fn check_trusted(path: &Path) -> Result<(), HistoryError> {
    crate::trust::check(path).map_err(|u| HistoryError::Unsafe {
        path: path.display().to_string(),
        what: u.to_string(),
    })
}

/// Refuses a history that is a symbolic link, saying so (O_NOFOLLOW alone says only "too many
/// levels of symbolic links"), or anything but a regular file: a FIFO or a device would hang
/// the reader or never end, a directory is no history. Looked at without opening it (opening
/// a device can do things).
fn check_not_symlink(path: &Path) -> Result<(), HistoryError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(HistoryError::Symlink {
            path: path.display().to_string(),
            target: std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into()),
        }),
        Ok(m) if !m.is_file() => Err(not_regular(path, &m)),
        _ => Ok(()),
    }
}

fn not_regular(path: &Path, m: &std::fs::Metadata) -> HistoryError {
    let kind = crate::syscalls::file_kind(m);
    HistoryError::NotRegular {
        path: path.display().to_string(),
        kind,
    }
}

/// An error opening or creating the history; permission denied said in words, with what to do.
fn open_err(path: &Path, doing: &str, e: std::io::Error) -> HistoryError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => HistoryError::Denied {
            path: path.display().to_string(),
            who: crate::trust::user(crate::syscalls::euid()),
            doing: doing.to_string(),
            advice: if doing == "read it" {
                "pass --history with a history you can read"
            } else {
                "pass --history with a file you can write, or leave the runs unrecorded (run --no-history; import without --record)"
            },
        },
        _ => io_err(path)(e),
    }
}

/// Opens the history with `opts`, never through a symbolic link and never blocking on what is
/// not a regular file (checked again on the open file, in case the name changed since it was
/// looked at). `None` when there is no such file.
fn open_regular(
    path: &Path,
    opts: &mut OpenOptions,
    doing: &str,
) -> Result<Option<File>, HistoryError> {
    let f = match opts
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            check_not_symlink(path)?;
            return Err(io_err(path)(e));
        }
        Err(e) => return Err(open_err(path, doing, e)),
    };
    let m = f.metadata().map_err(io_err(path))?;
    if !m.is_file() {
        return Err(not_regular(path, &m));
    }
    crate::syscalls::set_blocking(&f).map_err(io_err(path))?;
    Ok(Some(f))
}

/// The checks every reader of a history makes before trusting it (report, fleet, bundle,
/// import --record): a regular file, not a symbolic link, and as root, nothing others can
/// write.
pub fn check_for_reading(path: &Path) -> Result<(), HistoryError> {
    check_not_symlink(path)?;
    check_trusted(path)
}

/// Checks, before a run starts, that the history can be written: the path is trusted, a
/// regular file and not a link, and the file can be opened for appending, or, where there is
/// none yet, its nearest existing directory is writable; and its filesystem has `need` bytes
/// free for the records. Creates nothing: a run refused later leaves no history file and no
/// directory behind; the first record creates them.
pub fn prepare(path: &Path, need: u64) -> Result<(), HistoryError> {
    check_not_symlink(path)?;
    check_trusted(path)?;
    let mut dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let opened = open_regular(path, OpenOptions::new().append(true), "write it")?;
    if opened.is_none() {
        while !dir.exists() {
            dir = match dir.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(d) => d,
                None => Path::new("."),
            };
        }
        if let Err(e) = crate::syscalls::can_create_in(dir) {
            let doing = format!("create it in {}", dir.display());
            return Err(match open_err(path, &doing, e) {
                HistoryError::Io { path, source } => HistoryError::Io {
                    path,
                    source: std::io::Error::new(source.kind(), format!("cannot {doing}: {source}")),
                },
                other => other,
            });
        }
    }
    // Root may write into the blocks a filesystem keeps for it.
    if let Ok(s) = crate::syscalls::statvfs(dir) {
        let blocks = if crate::syscalls::is_root() {
            s.f_bfree
        } else {
            s.f_bavail
        };
        let free = blocks.saturating_mul(s.f_frsize);
        if s.f_blocks > 0 && free < need {
            return Err(HistoryError::NoSpace {
                path: path.display().to_string(),
                free: crate::units::format_size(free),
                need: crate::units::format_size(need),
            });
        }
    }
    Ok(())
}

/// Opens the history for appending (and reading its last byte), after checking the path is
/// trusted and creating its directory if needed. Never follows a symlink.
fn open_for_append(path: &Path) -> Result<File, HistoryError> {
    check_not_symlink(path)?;
    check_trusted(path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(|e| open_err(path, &format!("create {}", dir.display()), e))?;
    }
    open_regular(
        path,
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o644),
        "write it",
    )?
    .ok_or_else(|| io_err(path)(std::io::ErrorKind::NotFound.into()))
}

/// Appends records under an exclusive lock, each as one line, then fsyncs. A torn last line
/// left by a crash is closed with a newline first, so the new records start on their own line.
/// Each record's `chain` is set here, whatever it held: the hash of the line before it, read
/// from the file's last line alone (`crate::chain::next`), under the lock.
/// Not a write-and-rename (tempfile's `persist`): the history is appended to in place, never
/// replaced, so that a concurrent writer's records are never lost and the file keeps its owner.
pub fn append(path: &Path, records: &[Record]) -> Result<(), HistoryError> {
    append_checked(path, records, |_| Ok(()))
}

/// [`append`], after `check` has read the history (the file, at its start) under the same
/// exclusive lock the append takes: what `check` finds is still the whole history when the
/// records are written, whatever other writers do. An error from `check` appends nothing.
/// Nothing is opened or checked when there are no records.
pub fn append_checked<E: From<HistoryError>>(
    path: &Path,
    records: &[Record],
    check: impl FnOnce(&File) -> Result<(), E>,
) -> Result<(), E> {
    if records.is_empty() {
        return Ok(());
    }
    for r in records {
        check_metrics(&r.metrics).map_err(|msg| HistoryError::Invalid {
            path: path.display().to_string(),
            timestamp: r.timestamp.to_rfc3339(),
            msg,
        })?;
    }
    let mut f = open_for_append(path)?;
    f.lock().map_err(io_err(path))?;
    if let Err(e) = check(&f) {
        let _ = f.unlock();
        return Err(e);
    }
    Ok(append_locked(path, &mut f, records)?)
}

/// Writes `records` to `f`, which holds the exclusive lock, and unlocks it.
fn append_locked(path: &Path, f: &mut File, records: &[Record]) -> Result<(), HistoryError> {
    let len = f.metadata().map_err(io_err(path))?.len();
    // Each record chained to the line before it, read from the file's end under the lock.
    let mut link = crate::chain::next(f, len).map_err(io_err(path))?;
    let mut buf = Vec::new();
    for r in records {
        let start = buf.len();
        let chained = Record {
            chain: Some(link.clone()),
            ..r.clone()
        };
        serde_json::to_writer(&mut buf, &chained).expect("records serialise");
        link = crate::chain::Chain {
            seq: link.seq + 1,
            prev: crate::chain::line_hash(&buf[start..]),
        };
        buf.push(b'\n');
    }
    if len > 0 {
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1)).map_err(io_err(path))?;
        f.read_exact(&mut last).map_err(io_err(path))?;
        if last[0] != b'\n' {
            buf.insert(0, b'\n');
        }
    }
    // A full disk (or any failure) mid-append leaves no partial line: the file is cut back to
    // its length before the append, still under the lock, so no other writer sees the tail.
    if let Err(e) = f.write_all(&buf).and_then(|()| f.sync_all()) {
        let _ = f.set_len(len).and_then(|()| f.sync_all());
        let _ = f.unlock();
        return Err(HistoryError::NotKept {
            path: path.display().to_string(),
            source: e,
        });
    }
    f.unlock().map_err(io_err(path))?;
    Ok(())
}

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

/// Reads every usable record. A missing file is an empty history.
#[cfg_attr(not(test), allow(dead_code))]
pub fn read(path: &Path) -> Result<(Vec<Record>, Vec<Skipped>), HistoryError> {
    read_where(path, |_| true)
}

/// Reads the records whose head passes `keep`; lines that cannot be read are skipped with
/// the reason. A line `keep` rejects is not parsed further.
pub fn read_where(
    path: &Path,
    keep: impl Fn(&RecordHead) -> bool,
) -> Result<(Vec<Record>, Vec<Skipped>), HistoryError> {
    let mut records = Vec::new();
    let skipped = scan(path, None, keep, |r| records.push(r))?;
    Ok((records, skipped))
}

/// Streams the history to `each`, one record at a time, in file order, holding one line at a
/// time: memory follows what the caller keeps, not the file's size. Only records whose head
/// passes `keep` are parsed in full. With `since`, a line the tool wrote (its first keys are
/// `schema_version` and `timestamp`, in that order) whose timestamp is before `since` is passed
/// over without parsing the rest: a report over a week of a ten-year history reads the years
/// only as bytes. Such a line is not checked any further, so a line damaged after its timestamp
/// before the window is passed over silently; every line in the window is checked and named
/// when skipped. A missing file is an empty history.
pub fn scan(
    path: &Path,
    since: Option<DateTime<Utc>>,
    keep: impl Fn(&RecordHead) -> bool,
    each: impl FnMut(Record),
) -> Result<Vec<Skipped>, HistoryError> {
    let Some(f) = open_for_reading(path)? else {
        return Ok(vec![]);
    };
    scan_from(
        BufReader::with_capacity(READ_BUFFER, f),
        path,
        MAX_LINE,
        since,
        keep,
        each,
    )
}

/// Opens a history for reading after [`check_for_reading`]; `None` when there is none yet.
pub fn open_for_reading(path: &Path) -> Result<Option<File>, HistoryError> {
    check_for_reading(path)?;
    open_regular(path, OpenOptions::new().read(true), "read it")
}

pub fn read_from(
    reader: impl BufRead,
    path: &Path,
) -> Result<(Vec<Record>, Vec<Skipped>), HistoryError> {
    read_from_where(reader, path, |_| true)
}

pub fn read_from_where(
    reader: impl BufRead,
    path: &Path,
    keep: impl Fn(&RecordHead) -> bool,
) -> Result<(Vec<Record>, Vec<Skipped>), HistoryError> {
    let mut records = Vec::new();
    let skipped = scan_from(reader, path, MAX_LINE, None, keep, |r| records.push(r))?;
    Ok((records, skipped))
}

/// [`scan`] over any reader, with the longest line it holds (`max_line` bytes).
pub fn scan_from(
    reader: impl BufRead,
    path: &Path,
    max_line: usize,
    since: Option<DateTime<Utc>>,
    keep: impl Fn(&RecordHead) -> bool,
    mut each: impl FnMut(Record),
) -> Result<Vec<Skipped>, HistoryError> {
    let mut skipped = Vec::new();
    let mut heads = Heads::default();
    let prefix = format!("{{\"schema_version\":{SCHEMA_VERSION},\"timestamp\":\"");
    let skip = |n: usize, reason: String| Skipped {
        path: path.to_path_buf(),
        line: n,
        reason,
        also: 0,
    };
    for_each_line(reader, max_line, |n, line| {
        let text = match line {
            Line::Text(t) => t.trim_ascii(),
            Line::TooLong => {
                note_skipped(
                    &mut skipped,
                    skip(
                        n,
                        format!("line longer than {} KiB, not read", max_line / 1024),
                    ),
                );
                return;
            }
        };
        if text.is_empty() {
            return;
        }
        if let Some(since) = since
            && before(text, prefix.as_bytes(), since)
        {
            return;
        }
        match decode(text, |r| keep(heads.of(r)), &keep) {
            Ok(Some(r)) => each(r.into_owned()),
            Ok(None) => {}
            Err(reason) => note_skipped(&mut skipped, skip(n, reason)),
        }
    })
    .map_err(io_err(path))?;
    Ok(skipped)
}

/// Whether a line the tool wrote is from before `since`, read from its timestamp alone; false
/// when the line does not start as the tool writes records (then it is parsed in full).
fn before(text: &[u8], prefix: &[u8], since: DateTime<Utc>) -> bool {
    let Some(rest) = text.strip_prefix(prefix) else {
        return false;
    };
    let Some(end) = memchr::memchr(b'"', &rest[..rest.len().min(64)]) else {
        return false;
    };
    std::str::from_utf8(&rest[..end])
        .ok()
        .and_then(|t| tool_timestamp(t).or_else(|| DateTime::parse_from_rfc3339(t).ok()))
        .is_some_and(|t| t < since)
}

/// Bytes read from the history at a time.
pub const READ_BUFFER: usize = 1 << 16;

/// One line of input, for [`for_each_line`].
pub enum Line<'a> {
    /// The line's bytes, without the newline.
    Text(&'a [u8]),
    /// A line longer than the limit: passed over without being held.
    TooLong,
}

/// Calls `each(line_number, line)` for every line of `reader`, holding at most `max_line`
/// bytes of a line: a line within the reader's buffer is passed in place, one that spans
/// buffers is gathered up to `max_line` bytes, and a longer one is reported as
/// [`Line::TooLong`] and discarded as it is read. A last line without a newline counts.
pub fn for_each_line(
    reader: impl BufRead,
    max_line: usize,
    mut each: impl FnMut(usize, Line<'_>),
) -> std::io::Result<()> {
    for_each_line_at(reader, max_line, |n, _, line| each(n, line))
}

/// [`for_each_line`], with each line's byte offset in the reader (of its first byte).
pub fn for_each_line_at(
    mut reader: impl BufRead,
    max_line: usize,
    mut each: impl FnMut(usize, u64, Line<'_>),
) -> std::io::Result<()> {
    // A UTF-8 byte order mark (Notepad writes one) is not part of the first line's text.
    let mut each = |n: usize, at: u64, line: Line<'_>| match line {
        Line::Text(t) if at == 0 && t.starts_with(b"\xEF\xBB\xBF") => {
            each(n, 3, Line::Text(&t[3..]))
        }
        line => each(n, at, line),
    };
    let mut partial: Vec<u8> = Vec::new();
    let mut too_long = false;
    let mut n = 0usize;
    // Bytes consumed so far, and where the line being read starts.
    let mut consumed = 0u64;
    let mut start = 0u64;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if too_long || !partial.is_empty() {
                n += 1;
                each(
                    n,
                    start,
                    if too_long {
                        Line::TooLong
                    } else {
                        Line::Text(&partial)
                    },
                );
            }
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                n += 1;
                if too_long || partial.len() + i > max_line {
                    each(n, start, Line::TooLong);
                } else if partial.is_empty() {
                    each(n, start, Line::Text(&buf[..i]));
                } else {
                    partial.extend_from_slice(&buf[..i]);
                    each(n, start, Line::Text(&partial));
                }
                too_long = false;
                partial.clear();
                reader.consume(i + 1);
                consumed += i as u64 + 1;
                start = consumed;
            }
            None => {
                let len = buf.len();
                if !too_long {
                    if partial.len() + len > max_line {
                        too_long = true;
                        partial.clear();
                    } else {
                        partial.extend_from_slice(buf);
                    }
                }
                reader.consume(len);
                consumed += len as u64;
            }
        }
    }
}

/// Streams a history's records as [`Run`]s (what an evaluation keeps of a record; see
/// `crate::run_index`), each with its line's place in the file so that the whole record can be read
/// again, holding one line at a time. Lines are read by the one line codec
/// (`record::decode`), so they are accepted or skipped exactly as [`scan_from`] accepts or
/// skips them, and `since` passes over lines before the window in the same way; `keep` decides
/// from a line's head whether its run is wanted. A stream's repeats are found by their keys'
/// hashes alone: a reader of the file itself uses [`scan_runs_of`].
#[cfg_attr(not(test), allow(dead_code))]
pub fn scan_runs(
    reader: impl BufRead,
    path: &Path,
    max_line: usize,
    since: Option<DateTime<Utc>>,
    keep: impl Fn(&RecordHead) -> bool,
    each: impl FnMut(Run),
) -> Result<Vec<Skipped>, HistoryError> {
    scan_runs_of(reader, None, path, max_line, since, keep, each)
}

/// [`scan_runs`] of the history `file` itself (`reader` reads it from its start): an earlier
/// record a line may repeat is read again from it to confirm (`record::Repeats`).
pub fn scan_runs_of(
    reader: impl BufRead,
    file: Option<&File>,
    path: &Path,
    max_line: usize,
    since: Option<DateTime<Utc>>,
    keep: impl Fn(&RecordHead) -> bool,
    each: impl FnMut(Run),
) -> Result<Vec<Skipped>, HistoryError> {
    scan_runs_moving(reader, file, path, max_line, since, None, false, keep, each)
}

/// [`scan_runs_of`], with where the window starts once narrowed to the runs that could be
/// held (`RunScanner::moved`), and whether each imported run is named across hosts
/// (`RunScanner::name_imported`).
#[allow(clippy::too_many_arguments)]
pub fn scan_runs_moving(
    reader: impl BufRead,
    file: Option<&File>,
    path: &Path,
    max_line: usize,
    since: Option<DateTime<Utc>>,
    moved: Option<Rc<Cell<Option<DateTime<Utc>>>>>,
    name_imported: bool,
    keep: impl Fn(&RecordHead) -> bool,
    each: impl FnMut(Run),
) -> Result<Vec<Skipped>, HistoryError> {
    let mut scanner = RunScanner::new(path, max_line, since, keep, each);
    scanner.file = file;
    scanner.moved = moved;
    scanner.name_imported = name_imported;
    for_each_line_at(reader, max_line, |n, offset, line| {
        scanner.line(n, offset, line)
    })
    .map_err(io_err(path))?;
    Ok(scanner.finish())
}

/// [`scan_runs`] a line at a time, for a caller that reads the lines itself (`bundle`, which
/// copies a host's lines elsewhere and judges them on the way).
pub struct RunScanner<'p, K, E> {
    path: &'p Path,
    max_line: usize,
    since: Option<DateTime<Utc>>,
    prefix: String,
    keep: K,
    each: E,
    contexts: Contexts,
    heads: Heads,
    skipped: Vec<Skipped>,
    /// The runs read so far, for a record that repeats one (marked `Run::repeat_of`).
    repeats: Repeats,
    /// The history read, for reading an earlier line again (None: a stream).
    pub file: Option<&'p File>,
    /// For a fleet, and a report that judges several hosts: name each imported run across
    /// histories (`Run::imported`), and take a record as repeating only one of its own
    /// host's (the same run under two hosts is found in both hosts' evidence, and neither
    /// passes on it: `fleet::shared`). Off, a run holds no name (a report of one host needs
    /// none, and a fio run's summary is 160 bytes).
    pub name_imported: bool,
    /// Where the window starts once narrowed to the runs that could be held
    /// (`select::Grouping::moved`): the lines before it are passed over, and the runs read
    /// before it forgotten.
    pub moved: Option<Rc<Cell<Option<DateTime<Utc>>>>>,
}

impl<'p, K: Fn(&RecordHead) -> bool, E: FnMut(Run)> RunScanner<'p, K, E> {
    pub fn new(
        path: &'p Path,
        max_line: usize,
        since: Option<DateTime<Utc>>,
        keep: K,
        each: E,
    ) -> Self {
        RunScanner {
            path,
            max_line,
            since,
            prefix: format!("{{\"schema_version\":{SCHEMA_VERSION},\"timestamp\":\""),
            keep,
            each,
            contexts: Contexts::default(),
            heads: Heads::default(),
            skipped: Vec::new(),
            repeats: Repeats::default(),
            file: None,
            name_imported: false,
            moved: None,
        }
    }

    fn skip(&mut self, n: usize, reason: String) {
        note_skipped(
            &mut self.skipped,
            Skipped {
                path: self.path.to_path_buf(),
                line: n,
                reason,
                also: 0,
            },
        );
    }

    /// Line `n` (from 1), which starts at byte `offset` of the file.
    pub fn line(&mut self, n: usize, offset: u64, line: Line<'_>) {
        let raw = match line {
            Line::Text(t) => t,
            Line::TooLong => {
                let kib = self.max_line / 1024;
                self.skip(n, format!("line longer than {kib} KiB, not read"));
                return;
            }
        };
        let text = raw.trim_ascii();
        if text.is_empty() {
            return;
        }
        if let Some(start) = self.moved.as_ref().and_then(|m| m.get())
            && self.since.is_none_or(|s| s < start)
        {
            self.since = Some(start);
            self.repeats.forget_before(start.timestamp());
        }
        if let Some(since) = self.since
            && before(text, self.prefix.as_bytes(), since)
        {
            return;
        }
        let at = At::Line {
            line: n,
            offset,
            len: raw.len() as u32,
        };
        let (keep, heads) = (&self.keep, &mut self.heads);
        match decode(text, |r| keep(heads.of(r)), keep) {
            Ok(Some(r)) => {
                self.repeats.per_host = self.name_imported;
                let imported = self
                    .name_imported
                    .then(|| Repeats::imported_key(&r))
                    .flatten();
                let earlier = self.repeats.earlier(
                    &r,
                    text,
                    (n, offset, raw.len() as u32),
                    self.file,
                    imported.as_ref(),
                );
                let mut run = self.contexts.run(r, at);
                run.imported = imported;
                run.repeat_of = earlier.map(|l| u32::try_from(l).unwrap_or(u32::MAX));
                (self.each)(run)
            }
            Ok(None) => {}
            Err(reason) => self.skip(n, reason),
        }
    }

    /// The lines skipped, each with its reason.
    pub fn finish(self) -> Vec<Skipped> {
        self.skipped
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::{de_timestamp, tool_timestamp};
    use chrono::FixedOffset;
    use serde::Deserialize;

    /// A native posixaio run of the Swimlane policy on node1 in /data at `ts`, with only
    /// `write_iops`; other modules' tests start from it and change what they need.
    pub(crate) fn record(ts: &str, iops: f64) -> Record {
        let mut info = crate::record::RunInfo::new(
            "node1".into(),
            Source::Native,
            "posixaio".into(),
            crate::job::JobShape::default(),
            Target {
                dir: "/data".into(),
                ..Target::default()
            },
            "swimlane".into(),
        );
        info.tool_version = "0.1.0".into();
        let timestamp = DateTime::parse_from_rfc3339(ts).unwrap();
        let mut r = Record::measured(info, timestamp, &Default::default());
        r.metrics = [("write_iops".to_string(), iops)].into_iter().collect();
        r
    }

    #[test]
    fn append_then_read_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/history.jsonl");
        append(&p, &[record("2026-11-30T10:00:00+01:00", 3000.0)]).unwrap();
        append(&p, &[record("2026-11-30T11:00:00Z", 4000.0)]).unwrap();
        let (r, s) = read(&p).unwrap();
        assert!(s.is_empty());
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].timestamp.offset().local_minus_utc(), 3600);
        assert_eq!(r[1].metrics["write_iops"], 4000.0);
    }

    #[test]
    fn lines_skipped_past_the_few_named_are_counted_not_held() {
        let text = "not a record\n".repeat(20_000);
        for skipped in [
            scan_from(
                text.as_bytes(),
                Path::new("h.jsonl"),
                MAX_LINE,
                None,
                |_| true,
                |_| {},
            )
            .unwrap(),
            scan_runs(
                text.as_bytes(),
                Path::new("h.jsonl"),
                MAX_LINE,
                None,
                |_| true,
                |_| {},
            )
            .unwrap(),
        ] {
            assert_eq!(skipped.len(), SKIPPED_SHOWN);
            assert_eq!(skipped_count(&skipped), 20_000);
            let w = skipped_warnings(&skipped);
            assert_eq!(w.len(), SKIPPED_SHOWN + 1);
            assert_eq!(w[SKIPPED_SHOWN], "h.jsonl: 19995 more lines skipped");
        }
    }

    #[test]
    fn a_torn_line_is_skipped_and_does_not_break_later_appends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        append(&p, &[record("2026-11-30T10:00:00Z", 1.0)]).unwrap();
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"schema_version\":1,\"timest").unwrap();
        drop(f);
        append(&p, &[record("2026-11-30T12:00:00Z", 2.0)]).unwrap();
        let (r, s) = read(&p).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].line, 2);
        assert!(s[0].to_string().contains("h.jsonl:2"));
        // the record after the torn line is chained to it, as the line before it: the chain
        // goes on, and the torn line is said to be no record
        let bytes = std::fs::read(&p).unwrap();
        let c = crate::chain::check(crate::chain::bytes(&bytes), &[], None).unwrap();
        assert!(c.altered.is_empty(), "{:?}", c.altered);
        assert!(
            c.notes[0].contains("line(s) 2 are no record"),
            "{:?}",
            c.notes
        );
        assert_eq!(
            r[1].chain.as_ref().map(|c| c.prev.clone()),
            Some(crate::chain::line_hash(b"{\"schema_version\":1,\"timest"))
        );
    }

    #[test]
    fn wrong_types_and_newer_versions_are_skipped_with_the_line_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let good = serde_json::to_string(&record("2026-11-30T10:00:00Z", 1.0)).unwrap();
        let newer = good.replace("\"schema_version\":1", "\"schema_version\":2");
        let wrong = good.replace("\"host\":\"node1\"", "\"host\":42");
        std::fs::write(&p, format!("{good}\n{newer}\n{wrong}\n\n[1,2]\n")).unwrap();
        let (r, s) = read(&p).unwrap();
        assert_eq!(r.len(), 1);
        let lines: Vec<_> = s.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![2, 3, 5]);
        assert!(s[0].reason.contains("newer"));
    }

    #[test]
    fn bw_basis_reads_and_writes_the_contracts_words_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let mut r = record("2026-11-30T10:00:00Z", 1.0);
        r.bw_basis = Some(crate::measure::BwBasis::Printed);
        let good = serde_json::to_string(&r).unwrap();
        assert!(good.contains("\"bw_basis\":\"printed\""), "{good}");
        let unknown = good.replace("\"printed\"", "\"approximate\"");
        std::fs::write(&p, format!("{good}\n{unknown}\n")).unwrap();
        let (got, s) = read(&p).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].bw_basis, Some(crate::measure::BwBasis::Printed));
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].line, 2);
        assert!(s[0].reason.contains("approximate"), "{}", s[0].reason);
    }

    #[test]
    fn impossible_figures_are_neither_written_nor_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        for bad in [f64::INFINITY, f64::NAN, -1.0] {
            let e = append(&p, &[record("2026-11-30T10:00:00Z", bad)]).unwrap_err();
            assert!(e.to_string().contains("metric write_iops"), "{e}");
            assert!(!p.exists(), "nothing may be written for {bad}");
        }
        let good = serde_json::to_string(&record("2026-11-30T10:00:00Z", 1.0)).unwrap();
        let negative = good.replace("\"write_iops\":1.0", "\"write_iops\":-5.0");
        assert_ne!(good, negative);
        std::fs::write(&p, format!("{good}\n{negative}\n")).unwrap();
        let (r, s) = read(&p).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].line, 2);
        assert!(s[0].reason.contains("write_iops"), "{}", s[0].reason);
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        std::thread::scope(|s| {
            for t in 0..8 {
                let p = &p;
                s.spawn(move || {
                    for i in 0..25 {
                        append(p, &[record("2026-11-30T10:00:00Z", (t * 100 + i) as f64)]).unwrap();
                    }
                });
            }
        });
        let (r, s) = read(&p).unwrap();
        assert!(s.is_empty());
        assert_eq!(r.len(), 200);
        // and each was chained to the line before it, under the lock
        let bytes = std::fs::read(&p).unwrap();
        let c = crate::chain::check(crate::chain::bytes(&bytes), &[], None).unwrap();
        assert!(c.altered.is_empty(), "{:?}", c.altered);
        assert_eq!((c.chained_from.map(|f| f.0), c.unchained), (Some(1), None));
        assert_eq!(r[199].chain.as_ref().map(|c| c.seq), Some(200));
    }

    fn line(ts: &str, iops: f64) -> String {
        serde_json::to_string(&record(ts, iops)).unwrap()
    }

    fn scan_text(
        text: &str,
        buffer: usize,
        max_line: usize,
        since: Option<&str>,
    ) -> (Vec<f64>, Vec<Skipped>) {
        let since = since.map(|s| DateTime::parse_from_rfc3339(s).unwrap().to_utc());
        let mut got = Vec::new();
        let reader = BufReader::with_capacity(buffer, text.as_bytes());
        // The filter decides; `since` only lets lines be passed over before they are parsed.
        let keep = |h: &RecordHead| since.is_none_or(|s| h.timestamp >= s);
        let skipped = scan_from(reader, Path::new("h.jsonl"), max_line, since, keep, |r| {
            got.push(r.metrics["write_iops"])
        })
        .unwrap();
        (got, skipped)
    }

    #[test]
    fn the_window_keeps_records_at_and_after_its_start_whatever_their_offset() {
        // 10:00Z is the start. A record at 10:30+01:00 (09:30Z) is before it although its
        // text sorts after; one at 09:30-01:00 (10:30Z) is inside although its text sorts
        // before; a record written with its keys in another order takes the slow path.
        let reordered = r#"{"timestamp":"2026-11-30T10:00:01Z","schema_version":1,"host":"node1","source":"native","engine":"psync","job":{},"metrics":{"write_iops":6.0},"tool_version":"0","policy":"swimlane"}"#;
        let old_reordered = reordered
            .replace("10:00:01Z", "09:59:59Z")
            .replace("6.0", "7.0");
        let text = [
            line("2026-11-30T09:59:59Z", 1.0),
            line("2026-11-30T10:00:00Z", 2.0),
            line("2026-11-30T10:30:00+01:00", 3.0),
            line("2026-11-30T09:30:00-01:00", 4.0),
            line("2026-12-01T00:00:00Z", 5.0),
            reordered.to_string(),
            old_reordered,
        ]
        .join("\n");
        for buffer in [7, 100, 1 << 16] {
            let (got, skipped) = scan_text(&text, buffer, MAX_LINE, Some("2026-11-30T10:00:00Z"));
            assert_eq!(got, vec![2.0, 4.0, 5.0, 6.0], "buffer {buffer}");
            assert!(skipped.is_empty());
            let (all, _) = scan_text(&text, buffer, MAX_LINE, None);
            assert_eq!(all.len(), 7);
        }
    }

    #[test]
    fn corrupt_lines_in_the_window_are_named_by_line_and_the_rest_is_read() {
        let good = line("2026-11-30T12:00:00Z", 1.0);
        let torn = &good[..good.len() / 2];
        // A torn line before the window, cut after its timestamp, is passed over unread; one
        // cut before its timestamp ends cannot be placed, so it is read and reported.
        let old = line("2026-11-01T00:00:00Z", 9.0);
        let old_torn = &old[..old.len() / 2];
        let text = format!(
            "{good}\n{torn}\n\nnot json\n{old_torn}\n{}\n{good}",
            &good[..20]
        );
        for buffer in [5, 64, 1 << 16] {
            let (got, skipped) = scan_text(&text, buffer, MAX_LINE, Some("2026-11-30T00:00:00Z"));
            assert_eq!(got, vec![1.0, 1.0]);
            let named: Vec<String> = skipped.iter().map(|s| s.to_string()).collect();
            assert_eq!(
                skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
                vec![2, 4, 6]
            );
            assert!(named[0].starts_with("h.jsonl:2: skipped: "), "{named:?}");
            // Without a window, every damaged line is reported.
            let (_, all) = scan_text(&text, buffer, MAX_LINE, None);
            assert_eq!(
                all.iter().map(|s| s.line).collect::<Vec<_>>(),
                vec![2, 4, 5, 6]
            );
        }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_skipped_with_its_number_and_not_held() {
        let good = line("2026-11-30T12:00:00Z", 1.0);
        let max = good.len() + 10;
        let long = format!("{{\"pad\":\"{}\"}}", "x".repeat(max * 50));
        let text = format!("{good}\n{long}\n{good}\n{long}");
        for buffer in [3, 16, good.len(), 1 << 16] {
            let (got, skipped) = scan_text(&text, buffer, max, None);
            assert_eq!(got, vec![1.0, 1.0], "buffer {buffer}");
            assert_eq!(skipped.len(), 2);
            assert_eq!((skipped[0].line, skipped[1].line), (2, 4));
            assert!(
                skipped[0]
                    .to_string()
                    .starts_with("h.jsonl:2: skipped: line longer than")
            );
        }
        // What the reader holds of a line never exceeds the limit, however long the line.
        let mut longest = 0;
        for_each_line(
            BufReader::with_capacity(16, text.as_bytes()),
            max,
            |_, l| {
                if let Line::Text(t) = l {
                    longest = longest.max(t.len());
                }
            },
        )
        .unwrap();
        assert_eq!(longest, good.len());
    }

    /// What `scan_from` and `scan_runs` make of the same text: the records and runs kept,
    /// and the lines skipped (number and reason).
    fn both(
        text: &str,
        buffer: usize,
        max_line: usize,
        since: Option<&str>,
    ) -> (Vec<Record>, Vec<Run>, Vec<Skipped>, Vec<Skipped>) {
        let since = since.map(|s| DateTime::parse_from_rfc3339(s).unwrap().to_utc());
        let keep = |h: &RecordHead| h.host == "node1" && since.is_none_or(|s| h.timestamp >= s);
        let (mut records, mut runs) = (Vec::new(), Vec::new());
        let reader = || BufReader::with_capacity(buffer, text.as_bytes());
        let a = scan_from(reader(), Path::new("h"), max_line, since, keep, |r| {
            records.push(r)
        })
        .unwrap();
        let b = scan_runs(reader(), Path::new("h"), max_line, since, keep, |r| {
            runs.push(r)
        })
        .unwrap();
        (records, runs, a, b)
    }

    #[test]
    fn runs_are_read_as_whole_records_are_and_found_again_by_their_offset() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let mut series = record("2026-11-30T10:00:00Z", 2.0);
        series.iops_series = Some(crate::measure::Series {
            interval_ms: 500,
            write: vec![10; 20],
            last_ms: 500,
            ..Default::default()
        });
        series.invocation = Some("inv".into());
        let mut other = record("2026-11-30T11:00:00Z", 3.0);
        other.host = "node2".into();
        let good = line("2026-11-30T12:00:00Z", 4.0);
        let mut bad_series = serde_json::to_value(&series).unwrap();
        bad_series["iops_series"]["write"] = "many".into();
        let max = 4096;
        let text = [
            line("2026-11-29T09:00:00Z", 1.0),
            serde_json::to_string(&series).unwrap(),
            serde_json::to_string(&other).unwrap(),
            String::new(),
            // torn, not JSON, a series of the wrong type, longer than the limit
            good[..good.len() / 2].to_string(),
            "not json".into(),
            bad_series.to_string(),
            format!("{{\"pad\":\"{}\"}}", "x".repeat(3 * max)),
            good.replace("\"schema_version\":1", "\"schema_version\":2"),
            good.clone(),
            // another host's line that is damaged after its head: not theirs to report
            serde_json::to_string(&other)
                .unwrap()
                .replace("\"tool_version\":\"0.1.0\"", "\"tool_version\":7"),
            good.replace("12:00:00Z", "13:00:00Z"),
        ]
        .join("\r\n");
        std::fs::write(&p, &text).unwrap();
        for since in [None, Some("2026-11-30T00:00:00Z")] {
            // buffers shorter than a line, about a line, and many lines
            for buffer in [5, 300, 1 << 16] {
                let (records, runs, a, b) = both(&text, buffer, max, since);
                assert_eq!(a, b, "the same lines skipped for the same reasons");
                assert_eq!(
                    b.iter().map(|s| s.line).collect::<Vec<_>>(),
                    [5, 6, 7, 8, 9],
                    "{b:?}"
                );
                assert_eq!(runs.len(), records.len());
                assert_eq!(runs.len(), if since.is_some() { 3 } else { 4 });
                let file = File::open(&p).unwrap();
                let again = crate::run_index::Records::file(file, &p);
                let mut reader = again.reader();
                for (run, rec) in runs.iter().zip(&records) {
                    assert_eq!(run.timestamp, rec.timestamp);
                    assert_eq!(run.metrics, rec.metrics);
                    assert_eq!(run.host, rec.host);
                    assert_eq!(run.invocation.as_deref(), rec.invocation.as_deref());
                    assert_eq!(run.has_series, rec.iops_series.is_some());
                    let whole = reader.with(run, |r| r.clone()).unwrap();
                    assert_eq!(&whole, rec, "found again by offset (buffer {buffer})");
                }
            }
        }
    }

    #[test]
    fn runs_of_one_context_share_it_and_a_changed_history_is_said_to_have_changed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let mut moved = record("2026-11-30T12:00:00Z", 3.0);
        moved.target.dir = "/other".into();
        append(
            &p,
            &[
                record("2026-11-30T10:00:00Z", 1.0),
                record("2026-11-30T11:00:00Z", 2.0),
                moved,
            ],
        )
        .unwrap();
        let mut runs = Vec::new();
        let f = File::open(&p).unwrap();
        scan_runs(
            BufReader::new(&f),
            &p,
            MAX_LINE,
            None,
            |_| true,
            |r| runs.push(r),
        )
        .unwrap();
        let shared = |a: &Run, b: &Run| std::ptr::eq::<crate::run_index::RunInfo>(&**a, &**b);
        assert!(shared(&runs[0], &runs[1]));
        assert!(!shared(&runs[1], &runs[2]));
        assert_eq!(runs[2].target.dir, "/other");
        // The file replaced by another of other records: the first run's place now holds
        // another record, which is refused rather than shown as that run's.
        let records = crate::run_index::Records::file(f, &p);
        let other = line("2026-11-29T00:00:00Z", 9.0);
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, format!("{other}\n")).unwrap();
        let fresh = crate::run_index::Records::file(File::open(&p).unwrap(), &p);
        assert!(
            records.reader().with(&runs[0], |_| ()).is_ok(),
            "the open file is kept"
        );
        let e = fresh
            .reader()
            .with(&runs[1], |_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed since it was read"), "{e}");
    }

    #[test]
    fn the_tools_timestamps_are_read_as_chrono_reads_them() {
        let mut cases: Vec<String> = [
            "2026-11-30T10:00:00Z",
            "2026-11-30T10:00:00+01:00",
            "2026-11-30T10:00:00-09:30",
            "2024-02-29T23:59:59+14:00",
            "2023-02-29T00:00:00Z",
            "2016-12-31T23:59:60Z",
            "2026-11-30T10:00:00.5Z",
            "2026-11-30t10:00:00Z",
            "2026-11-30 10:00:00Z",
            "2026-11-30T10:00:00z",
            "2026-11-30T10:00:00+0100",
            "2026-11-30T10:00:00+01:00 ",
            "2026-11-30T10:00:00+01:0x",
            "2026-11-30T10:00:00+24:00",
            "2026-11-30T10:00:00-00:00",
            "0000-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-23:59",
            "+2026-11-30T10:00:00Z",
            "2026-1-30T10:00:00Z",
            "2026-11-30T1:00:00Z",
            "2026-11-30T10:00:00",
            "２026-11-30T10:00:00Z",
            "",
        ]
        .map(String::from)
        .to_vec();
        for y in [0, 1970, 2000, 2024, 2100] {
            for m in [0, 1, 2, 12, 13] {
                for d in [0, 1, 28, 29, 30, 31, 32] {
                    for (h, mi, sec) in [
                        (0, 0, 0),
                        (23, 59, 59),
                        (24, 0, 0),
                        (12, 60, 0),
                        (12, 0, 60),
                    ] {
                        for off in ["Z", "+00:00", "+05:45", "-12:00", "+23:59", "-23:60"] {
                            cases
                                .push(format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{sec:02}{off}"));
                        }
                    }
                }
            }
        }
        #[derive(Deserialize)]
        struct Chrono {
            #[allow(dead_code)]
            t: DateTime<FixedOffset>,
        }
        #[derive(Deserialize)]
        struct Ours {
            #[serde(deserialize_with = "de_timestamp")]
            #[allow(dead_code)]
            t: DateTime<FixedOffset>,
        }
        let mut read = 0;
        for s in &cases {
            let chrono: Option<DateTime<FixedOffset>> = s.parse().ok();
            if let Some(t) = tool_timestamp(s) {
                read += 1;
                let c = chrono.unwrap_or_else(|| panic!("{s}: chrono refuses it"));
                assert_eq!((t, t.offset()), (c, c.offset()), "{s}");
                // and the strict parser of `before`
                let strict = DateTime::parse_from_rfc3339(s).unwrap();
                assert_eq!((t, t.offset()), (strict, strict.offset()), "{s}");
            }
            let json = serde_json::json!({ "t": s }).to_string();
            let (a, b) = (
                serde_json::from_str::<Chrono>(&json).map(|x| (x.t, *x.t.offset())),
                serde_json::from_str::<Ours>(&json).map(|x| (x.t, *x.t.offset())),
            );
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{s}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{s}"),
                (a, b) => panic!("{s}: chrono {a:?}, ours {b:?}"),
            }
        }
        // Not a number other than a string either.
        for json in [
            r#"{"t":5}"#,
            r#"{"t":null}"#,
            r#"{"t":"\u0032026-11-30T10:00:00Z"}"#,
        ] {
            let a = serde_json::from_str::<Chrono>(json).map(|x| x.t);
            let b = serde_json::from_str::<Ours>(json).map(|x| x.t);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{json}");
        }
        assert!(read > 300, "the tool's own form is read directly ({read})");
    }

    #[test]
    fn lines_are_counted_with_windows_newlines_and_a_missing_last_newline() {
        let good = line("2026-11-30T12:00:00Z", 1.0);
        let text = format!("{good}\r\n{good}\r\n\r\n{{bad\r\n{good}");
        let (got, skipped) = scan_text(&text, 8, MAX_LINE, None);
        assert_eq!(got.len(), 3);
        assert_eq!(skipped.iter().map(|s| s.line).collect::<Vec<_>>(), vec![4]);
    }
}
