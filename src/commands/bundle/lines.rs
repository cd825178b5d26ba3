//! This host's lines of the history, copied verbatim, and the directories they tested.

use std::collections::BTreeMap;
use std::io::Write;

use chrono::{DateTime, FixedOffset};
use serde::Deserialize;

use crate::history;

/// Directories whose mounts and devices the context describes, at most.
const MAX_TARGETS: usize = 8;

/// This host's lines of the history, byte for byte; the others are left out and counted.
#[derive(Debug, Default)]
pub struct Kept {
    /// Bytes of the kept lines, newlines included.
    pub bytes: u64,
    pub kept: usize,
    /// Records of other hosts (imported for them with `import --record --host`).
    pub other_hosts: usize,
    /// Lines that are not JSON with a host, so whose they are cannot be told.
    pub unreadable: usize,
    /// Each directory this host's lines tested, with its latest run.
    pub dirs: BTreeMap<String, DateTime<FixedOffset>>,
    /// The lines left out before a kept line, for its link to be checked (`crate::chain`).
    pub left_out: Vec<crate::chain::LeftOut>,
    /// Past this kept line, the lines left out are no longer listed.
    pub left_out_listed_to: Option<usize>,
}

impl Kept {
    /// The lines left out before the kept line after them (or, with `at_end`, after the last
    /// kept line): listed, for the links across them to be checked.
    fn after_left_out(&mut self, gap: &mut Gap, at_end: bool) {
        if gap.lines == 0 || self.left_out_listed_to.is_some() {
            *gap = Gap::default();
            return;
        }
        if self.left_out.len() < crate::evidence::MAX_LISTED_LINES {
            self.left_out.push(crate::chain::LeftOut {
                before_line: self.kept + 1,
                lines: gap.lines,
                last_sha256: gap.last.take(),
                first_prev: gap.first_prev.take(),
                broken_links: gap.broken,
            });
        } else if !at_end {
            self.left_out_listed_to = Some(self.kept);
        }
        *gap = Gap::default();
    }
}

/// Lines left out since the last kept one.
#[derive(Default)]
struct Gap {
    lines: usize,
    /// The SHA-256 of the last of them (none when it was too long to be read).
    last: Option<String>,
    /// The `chain.prev` of the first of them, when it has one.
    first_prev: Option<String>,
    /// Links among them that do not hold.
    broken: usize,
}

/// The part of a line that says whose it is and where it tested.
#[derive(Deserialize)]
struct Owner<'a> {
    #[serde(borrow)]
    host: std::borrow::Cow<'a, str>,
    #[serde(default)]
    timestamp: Loose,
    #[serde(default)]
    target: Loose,
    #[serde(default)]
    chain: Option<crate::chain::Chain>,
}

/// Any JSON value, of which only a string's text or an object's `dir` string is kept: what
/// `serde_json::Value` would give through `as_str` and `get("dir")`, without building the
/// value (a history of a million lines is read through this).
#[derive(Default)]
struct Loose {
    text: Option<String>,
    dir: Option<String>,
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Loose, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Loose, E> {
                Ok(Loose {
                    text: Some(v.to_string()),
                    dir: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Loose, A::Error> {
                let mut dir = None;
                while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
                    if k == "dir" {
                        dir = m.next_value::<Loose>()?.text;
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Loose { text: None, dir })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Loose, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Loose::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// Copies this host's lines from `history` to `out`, one line at a time (a line longer than
/// the history's limit is left out as unreadable), and counts the rest. Each kept line is
/// also given to `each` with its number and byte offset in `out`.
pub fn keep_host_lines(
    history: impl std::io::BufRead,
    host: &str,
    out: &mut impl Write,
    mut each: impl FnMut(usize, u64, &[u8]),
) -> std::io::Result<Kept> {
    let mut k = Kept::default();
    let mut failed = None;
    // The lines left out since the last kept one, and the hash of the line before (none when
    // it was too long to be read; the start's for the first line).
    let mut gap = Gap::default();
    let mut before: Option<String> = Some(crate::chain::GENESIS.into());
    history::for_each_line(history, history::MAX_LINE, |_, line| {
        let history::Line::Text(line) = line else {
            k.unreadable += 1;
            gap.lines += 1;
            gap.last = None;
            before = None;
            return;
        };
        if failed.is_some() {
            return;
        }
        let hash = crate::chain::line_hash(line);
        let owner = serde_json::from_slice::<Owner>(line);
        let mut leave_out = |chain: Option<&crate::chain::Chain>| {
            if gap.lines == 0 {
                gap.first_prev = chain.map(|c| c.prev.clone());
            } else if let (Some(c), Some(b)) = (chain, &before)
                && c.prev != *b
            {
                gap.broken += 1;
            }
            gap.lines += 1;
            gap.last = Some(hash.clone());
        };
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            leave_out(None);
            before = Some(hash);
            return;
        }
        match owner {
            Ok(o) if o.host == host => {
                if let Err(e) = out.write_all(line).and_then(|()| out.write_all(b"\n")) {
                    failed = Some(e);
                    return;
                }
                k.after_left_out(&mut gap, false);
                each(k.kept + 1, k.bytes, line);
                k.bytes += line.len() as u64 + 1;
                k.kept += 1;
                if let (Some(dir), Some(t)) = (
                    o.target.dir,
                    o.timestamp
                        .text
                        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok()),
                ) {
                    match k.dirs.get_mut(&dir) {
                        Some(latest) => *latest = (*latest).max(t),
                        None => {
                            k.dirs.insert(dir, t);
                        }
                    }
                }
            }
            Ok(o) => {
                k.other_hosts += 1;
                leave_out(o.chain.as_ref());
            }
            Err(_) => {
                k.unreadable += 1;
                leave_out(None);
            }
        }
        before = Some(hash);
    })?;
    // the lines after the last kept one: the first of them vouches for it
    k.after_left_out(&mut gap, true);
    if let Some(e) = failed {
        return Err(e);
    }
    out.flush()?;
    Ok(k)
}

/// The directories this host's runs tested, latest first.
pub(super) fn target_dirs(dirs: &BTreeMap<String, DateTime<FixedOffset>>) -> Vec<String> {
    let mut by_time: Vec<(&String, &DateTime<FixedOffset>)> = dirs.iter().collect();
    by_time.sort_by_key(|(_, t)| std::cmp::Reverse(**t));
    let mut dirs: Vec<String> = by_time
        .into_iter()
        .take(MAX_TARGETS)
        .map(|(d, _)| d.clone())
        .collect();
    if dirs.is_empty() {
        dirs.push(
            std::fs::canonicalize(".")
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| ".".into()),
        );
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_hosts_lines_are_kept_verbatim() {
        let raw =
            b"{\"host\":\"a\",\"x\":1}\n{\"host\":\"b\"}\n\n{torn\n{\"host\":\"a\", \"y\" : 2}";
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let k = keep_host_lines(&raw[..], "a", &mut out, |n, offset, line| {
            seen.push((n, offset, String::from_utf8(line.to_vec()).unwrap()))
        })
        .unwrap();
        // each kept line with its number and offset in what was written
        assert_eq!(
            seen,
            [
                (1, 0, "{\"host\":\"a\",\"x\":1}".to_string()),
                (2, 19, "{\"host\":\"a\", \"y\" : 2}".to_string())
            ]
        );
        assert_eq!(k.bytes, out.len() as u64);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"host\":\"a\",\"x\":1}\n{\"host\":\"a\", \"y\" : 2}\n"
        );
        assert_eq!((k.kept, k.other_hosts, k.unreadable), (2, 1, 1));
        // the three lines left out before the second kept one, the last of them named
        assert_eq!(
            k.left_out,
            [crate::chain::LeftOut {
                before_line: 2,
                lines: 3,
                last_sha256: Some(crate::chain::line_hash(b"{torn")),
                first_prev: None,
                broken_links: 0,
            }]
        );
    }
}
