//! Evidence a vendor can verify: a bundle's manifest (every member's SHA-256, the tool's version
//! and commit, each history line's SHA-256 and the chain over them) and its check, which says
//! exactly what was altered, with line numbers.
//!
//! The chain links each history line to the one before: `link(0)` is 64 zeros, `link(n)` is
//! the SHA-256 of `link(n-1)` (as hex) followed by line n (without its newline). Its head, the
//! last link, changes with any line edited, dropped, added or moved.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The manifest's name in a bundle.
pub const MANIFEST: &str = "manifest.json";

/// The history member whose lines the manifest lists.
pub const HISTORY: &str = "history.jsonl";

/// Past this many lines the manifest keeps the chain's head only (a million lines would make
/// a 70 MB manifest): an alteration is still caught, its line no longer named.
pub const MAX_LISTED_LINES: usize = 200_000;

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A writer that hashes what passes through it (a member copied from a file).
#[derive(Default)]
pub struct Sha256Writer(Sha256);

impl Sha256Writer {
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

impl std::io::Write for Sha256Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The link after `prev` for `line` (without its newline).
pub fn link(prev: &str, line: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update(line);
    hex(&h.finalize())
}

/// The chain's start.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    pub sha256: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HistoryEntry {
    pub lines: usize,
    /// Each line's SHA-256 (without its newline), in order; absent past
    /// [`MAX_LISTED_LINES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_sha256: Option<Vec<String>>,
    pub chain_head: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool: serde_json::Value,
    pub generated: String,
    pub host: String,
    /// Every other member of the bundle, by its name inside the bundle's directory.
    pub files: BTreeMap<String, FileEntry>,
    pub history: HistoryEntry,
}

/// What the manifest says of a history: its lines' hashes and the chain, read line by line.
#[derive(Default)]
pub struct HistoryDigest {
    lines: usize,
    hashes: Vec<String>,
    head: String,
    whole: Sha256,
    bytes: u64,
}

impl HistoryDigest {
    pub fn new() -> HistoryDigest {
        HistoryDigest {
            head: GENESIS.to_string(),
            ..Default::default()
        }
    }

    /// One line, newline included if it has one.
    pub fn line(&mut self, raw: &[u8]) {
        self.whole.update(raw);
        self.bytes += raw.len() as u64;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        self.lines += 1;
        self.head = link(&self.head, line);
        if self.hashes.len() < MAX_LISTED_LINES {
            self.hashes.push(sha256_hex(line));
        }
    }

    pub fn finish(self) -> (FileEntry, HistoryEntry) {
        let listed = self.lines <= MAX_LISTED_LINES;
        (
            FileEntry {
                sha256: hex(&self.whole.finalize()),
                bytes: self.bytes,
            },
            HistoryEntry {
                lines: self.lines,
                line_sha256: listed.then_some(self.hashes),
                chain_head: self.head,
            },
        )
    }
}

/// The digest of a whole history held in memory.
pub fn digest_history(bytes: &[u8]) -> (FileEntry, HistoryEntry) {
    let mut d = HistoryDigest::new();
    for l in bytes.split_inclusive(|&b| b == b'\n') {
        d.line(l);
    }
    d.finish()
}

/// What a check found: each alteration in words, the first most important.
#[derive(Debug, Default)]
pub struct Findings {
    pub altered: Vec<String>,
    pub notes: Vec<String>,
}

/// Checks a bundle's members (name inside the bundle's directory → bytes) against its
/// manifest.
pub fn check_bundle(members: &BTreeMap<String, Vec<u8>>) -> Findings {
    let mut f = Findings::default();
    let Some(raw) = members.get(MANIFEST) else {
        f.altered.push(format!(
            "no {MANIFEST}: the bundle cannot be verified (made by an iopscheck without manifests, or its manifest was removed)"
        ));
        return f;
    };
    let manifest: Manifest = match serde_json::from_slice(raw) {
        Ok(m) => m,
        Err(e) => {
            f.altered.push(format!("{MANIFEST} is not a manifest: {e}"));
            return f;
        }
    };
    f.notes.push(format!(
        "made {} for host {} by {}",
        manifest.generated,
        manifest.host,
        manifest
            .tool
            .get("version")
            .and_then(|v| v.as_str())
            .map(|v| format!("iopscheck {v}"))
            .unwrap_or_else(|| "an unnamed tool".into())
    ));
    for (name, want) in &manifest.files {
        match members.get(name) {
            None => f
                .altered
                .push(format!("{name}: missing (the manifest lists it)")),
            Some(b) => {
                let got = sha256_hex(b);
                if got != want.sha256 {
                    if name == HISTORY {
                        history_findings(b, &manifest.history, &mut f);
                    } else {
                        f.altered.push(format!(
                            "{name}: altered (SHA-256 {got}, the manifest says {})",
                            want.sha256
                        ));
                    }
                }
            }
        }
    }
    for name in members.keys() {
        if name != MANIFEST && !manifest.files.contains_key(name) {
            f.altered
                .push(format!("{name}: added (the manifest does not list it)"));
        }
    }
    // the history's chain, whatever the file's hash said
    if let Some(h) = members.get(HISTORY) {
        let (_, got) = digest_history(h);
        if got.chain_head != manifest.history.chain_head
            && !f.altered.iter().any(|a| a.starts_with(HISTORY))
        {
            f.altered.push(format!(
                "{HISTORY}: its chain head is {}, the manifest says {}",
                got.chain_head, manifest.history.chain_head
            ));
        }
    }
    f
}

/// Which lines of a history differ from the manifest's list, by line number.
fn history_findings(bytes: &[u8], want: &HistoryEntry, f: &mut Findings) {
    let got: Vec<String> = bytes
        .split_inclusive(|&b| b == b'\n')
        .map(|l| sha256_hex(l.strip_suffix(b"\n").unwrap_or(l)))
        .collect();
    let Some(list) = &want.line_sha256 else {
        f.altered.push(format!(
            "{HISTORY}: altered ({} lines, the manifest says {}; the manifest lists no line hashes for a history this long)",
            got.len(),
            want.lines
        ));
        return;
    };
    let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, h) in list.iter().enumerate() {
        at.entry(h.as_str()).or_default().push(i + 1);
    }
    let mut seen = vec![false; list.len()];
    let mut items = Vec::new();
    for (i, h) in got.iter().enumerate() {
        let n = i + 1;
        match at.get(h.as_str()) {
            Some(places) => {
                let original = places
                    .iter()
                    .copied()
                    .find(|&p| !seen[p - 1])
                    .unwrap_or(places[0]);
                seen[original - 1] = true;
                if original != n {
                    items.push((n, format!("line {n} was line {original}")));
                }
            }
            None => items.push((
                n,
                format!("line {n} altered (it is no line of the original)"),
            )),
        }
    }
    for (i, s) in seen.iter().enumerate() {
        if !s {
            items.push((i + 1, format!("original line {} missing", i + 1)));
        }
    }
    // a dropped line moves every later one up: say the drop, not each move
    let dropped: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| !**s)
        .map(|(i, _)| i + 1)
        .collect();
    let added = got.len() + dropped.len() > list.len();
    let shifted_only = |text: &str| {
        text.contains(" was line ")
            && !added
            && !dropped.is_empty()
            && text
                .rsplit(' ')
                .next()
                .and_then(|o| o.parse::<usize>().ok())
                .zip(text.split(' ').nth(1).and_then(|n| n.parse::<usize>().ok()))
                .is_some_and(|(orig, now)| {
                    orig == now + dropped.iter().filter(|&&d| d < orig).count()
                })
    };
    let shown: Vec<String> = items
        .into_iter()
        .filter(|(_, t)| !shifted_only(t))
        .map(|(_, t)| t)
        .collect();
    f.altered.push(format!(
        "{HISTORY}: {} ({} lines, the manifest says {})",
        if shown.is_empty() {
            "altered".to_string()
        } else {
            shown.join("; ")
        },
        got.len(),
        want.lines
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_chain_changes_with_any_line_and_its_place() {
        let (_, a) = digest_history(b"one\ntwo\n");
        let (_, b) = digest_history(b"two\none\n");
        let (_, c) = digest_history(b"one\n");
        assert_ne!(a.chain_head, b.chain_head);
        assert_ne!(a.chain_head, c.chain_head);
        assert_eq!(a.lines, 2);
    }
}
