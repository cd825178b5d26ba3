//! Whether the file a run or an import would record in is a history at all: appending a record
//! to another file (`--history /etc/fstab`, a typo) damages it, and the run would only find
//! out after the whole test. Decided before anything runs, for `run` and `import --record`.
//!
//! A history is a file iopscheck wrote: new, empty (or blank), or one whose first non-blank
//! line starts as every record starts, a JSON object with a record's head (`schema_version`,
//! `timestamp`, `host`, `policy`). A byte order mark before it is allowed, as the reader
//! allows it; a first line cut short by a crash (the file's only line, with no newline) counts
//! when it begins as the tool writes records. Later lines are the reader's to judge (it skips
//! a damaged one with a warning). The file's content is never printed: it may be a secret.

use std::io::{BufRead as _, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::error::usage;
use crate::history::{MAX_LINE, RecordHead, SCHEMA_VERSION};

/// Refuses (exit 2, naming the flag and the file) an existing file that is not a history.
/// What is not a regular file, a link, or unreadable is left to the history's own checks,
/// which name it.
pub fn refuse_foreign(path: &Path) -> anyhow::Result<()> {
    match first_line(path) {
        Some(First::Line(n, text)) if !is_record_head(&text) => Err(refused(path, n, &text)),
        Some(First::Torn(n, text)) if !is_record_start(&text) => Err(refused(path, n, &text)),
        Some(First::TooLong(n)) => Err(usage(format!(
            "{}: {} is not an iopscheck history: its line {n} is longer than {} KiB, not a record iopscheck wrote; iopscheck records only in a history it wrote, or in a new or empty file: check the path, or pass another file; nothing was run or recorded",
            flag(path),
            path.display(),
            MAX_LINE / 1024
        ))),
        _ => Ok(()),
    }
}

fn refused(path: &Path, n: usize, text: &[u8]) -> anyhow::Error {
    let what = match serde_json::from_slice::<serde_json::Value>(text) {
        Err(_) => "is not JSON",
        Ok(v) if !v.is_object() => "is JSON but not an object",
        Ok(_) => "is a JSON object without a record's schema_version, timestamp, host and policy",
    };
    usage(format!(
        "{}: {} is not an iopscheck history: its line {n} {what}, not a record iopscheck wrote; iopscheck records only in a history it wrote, or in a new or empty file, and never appends to another file: check the path, or pass another file; nothing was run or recorded",
        flag(path),
        path.display()
    ))
}

/// The flag that named the history: `--history`, or its variable when that is what gave it.
fn flag(path: &Path) -> &'static str {
    let from_env = std::env::var_os("IOPSCHECK_HISTORY").is_some_and(|v| Path::new(&v) == path);
    let on_line = std::env::args_os()
        .any(|a| a == "--history" || a.to_str().is_some_and(|a| a.starts_with("--history=")));
    match (from_env, on_line) {
        (true, false) => "IOPSCHECK_HISTORY",
        (false, false) => "the default history",
        _ => "--history",
    }
}

fn is_record_head(text: &[u8]) -> bool {
    serde_json::from_slice::<RecordHead>(text).is_ok()
}

/// How every record the tool writes begins.
fn is_record_start(text: &[u8]) -> bool {
    let start = format!("{{\"schema_version\":{SCHEMA_VERSION},");
    text.starts_with(start.as_bytes()) || is_record_head(text)
}

enum First {
    /// The first non-blank line (its number, trimmed), ended by a newline.
    Line(usize, Vec<u8>),
    /// The first non-blank line is the file's last and has no newline.
    Torn(usize, Vec<u8>),
    TooLong(usize),
}

/// The first non-blank line of the regular file at `path` (never through a link, never
/// blocking); None when there is none, or the file cannot be looked at here.
fn first_line(path: &Path) -> Option<First> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() || m.len() == 0 {
        return None;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let opened = f.metadata().ok()?;
    if !opened.is_file() || opened.ino() != m.ino() || opened.dev() != m.dev() {
        return None;
    }
    let mut reader = std::io::BufReader::new(f.take(64 << 20));
    let mut n = 0usize;
    let mut line = Vec::new();
    loop {
        line.clear();
        let got = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .ok()?;
        if got == 0 {
            return None;
        }
        n += 1;
        let ended = line.last() == Some(&b'\n');
        if !ended && line.len() > MAX_LINE {
            return Some(First::TooLong(n));
        }
        let mut text = line.as_slice();
        if n == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        let text = text.trim_ascii();
        if text.is_empty() {
            continue;
        }
        return Some(if ended {
            First::Line(n, text.to_vec())
        } else {
            First::Torn(n, text.to_vec())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(content: &[u8]) -> Result<(), String> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h");
        std::fs::write(&p, content).unwrap();
        refuse_foreign(&p).map_err(|e| e.to_string())
    }

    const RECORD: &str = r#"{"schema_version":1,"timestamp":"2026-11-30T10:00:00Z","host":"n1","policy":"swimlane","engine":"native/psync"}"#;

    #[test]
    fn a_history_new_empty_or_starting_with_a_record_is_accepted() {
        let d = tempfile::tempdir().unwrap();
        assert!(refuse_foreign(&d.path().join("new")).is_ok());
        for ok in [
            String::new(),
            "\n \n".into(),
            format!("{RECORD}\n"),
            format!("\u{feff}{RECORD}\nnot json\n"),
            format!("\n{RECORD}\n"),
            // a first record cut short by a crash
            RECORD[..40].to_string(),
        ] {
            assert_eq!(verdict(ok.as_bytes()), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn another_file_is_refused_naming_the_line_not_its_content() {
        for (bad, why) in [
            ("root:$6$abc:19000:0:99999:7:::\n", "line 1 is not JSON"),
            ("\n\nUUID=abc / ext4 defaults 0 1", "line 3 is not JSON"),
            ("[1,2]\n", "not an object"),
            ("{\"a\":1}\n", "without a record's"),
            (
                "{\"schema_version\":1,\"timestamp\":\"x\"}\n",
                "without a record's",
            ),
        ] {
            let e = verdict(bad.as_bytes()).unwrap_err();
            assert!(
                e.contains("is not an iopscheck history") && e.contains(why),
                "{e}"
            );
            assert!(!e.contains("$6$") && !e.contains("UUID"), "{e}");
        }
        let long = vec![b'x'; MAX_LINE + 10];
        assert!(verdict(&long).unwrap_err().contains("longer than"));
    }
}
